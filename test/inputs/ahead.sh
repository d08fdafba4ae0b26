#!/bin/sh
# Keys looked up ahead (src/filters/ahead.c): once a rule's table holds
# 16,384 keys, items are held a few at a time while the next ones' keys
# are looked up: pointing into a mapped capture file, or copied (standard
# input: libpcap reuses its buffer). The records must be the same, in the
# same order, from both, and the same as 2 workers' (items cross cores:
# nothing is held), and the summary says how many items were looked up
# ahead. Cases: a per-flow delta event with a band and an
# idle timeout (expiry records at ticks, between held items), a query
# grouped by flow whose windows close mid-capture, a flow monitor whose
# intervals do, an event keyed by switch path and queue ids (per-hop
# arrays) and one with a where condition, next to a per-hop rule (not
# looked up ahead); -c stopping mid-way; coalesced reports (several items
# a packet); 2 workers running a query whose windows merge (each worker
# holds its own items); a table that never grows large (nothing held, no
# count printed).
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

# 40,000 flows, each met twice (every flow once per round, in a random order)
"$bld/intgen" -o "$tmp/flows.pcap" -n 80000 --flows 40000 --flow-order shuffle --seed 7 >/dev/null ||
	{ echo "FAIL intgen"; exit 1; }
"$bld/intgen" -o "$tmp/reports.pcap" -n 30000 --format report --report-version 2.0 --coalesce 3 \
	--flows 30000 --flow-order shuffle --seed 8 >/dev/null || { echo "FAIL intgen reports"; exit 1; }

cat >"$tmp/rules.conf" <<CONF
stdout-output { drop-policy = block }
event-report per-flow {
  event = "int.hop_queue_occups"
  delta-cond = {"int.hop_queue_occups"}
  delta-band = 1000
  delta-key = {"ip.src", "ip.dst", "udp.src_port"}
  idle-timeout-ms = 2
  attributes = {"ip.src", "ip.dst", "udp.src_port", "int.hop_queue_occups"}
}
event-report latency-where {
  event = "int.latency"
  where = "int.latency > 1000"
  delta-cond = {"int.latency"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "int.latency"}
}
event-report per-path {
  event = "int.hop_switch_ids"
  delta-cond = {"int.hop_latencies"}
  delta-key = {"int.hop_switch_ids", "int.hop_queue_ids"}
  max-keys = 200000
  attributes = {"int.hop_switch_ids"}
}
query-report per-flow-q {
  ms-period = 40
  select = {"count()", "avg(int.hop_latencies)", "max(int.latency)"}
  group-by = {"ip.src", "ip.dst", "udp.src_port"}
}
flow-monitor fm {
  match = {"ip.src", "ip.dst", "udp.src_port"}
  query-interval = 20
  buffer = 4
  counters = {"sum(int.hop_latencies)", "max(int.hop_queue_occups)"}
}
event-report per-hop {
  event = "int.hop_queue_occups"
  per-hop = true
  delta-cond = {"int.hop_queue_occups"}
  delta-band = 5000
  delta-key = {"int.hop_switch_ids"}
  attributes = {"int.hop_switch_ids", "int.hop_queue_occups"}
}
CONF

# rule_lines FILE: the rules' counters, without the count looked up ahead
rule_lines() {
	grep "report \|flow-monitor " "$1" | sed 's/, [0-9]* looked up ahead//'
}

# same NAME CAPTURE [ARGS...]: the mapped file (held items point into it),
# standard input (held items are copies) and 2 workers (items cross
# cores: nothing is held)
same() {
	name=$1 cap=$2
	shift 2
	"$bld/intspect" -r "$cap" -C "$tmp/rules.conf" "$@" >"$tmp/file.out" 2>"$tmp/file.err"
	"$bld/intspect" -r - -C "$tmp/rules.conf" "$@" <"$cap" >"$tmp/stdin.out" 2>"$tmp/stdin.err"
	"$bld/intspect" -r "$cap" -C "$tmp/rules.conf" -w 2 "$@" >"$tmp/w2.out" 2>"$tmp/w2.err"
	n=$(wc -l <"$tmp/file.out")
	if [ "$n" -gt 1000 ] && cmp -s "$tmp/file.out" "$tmp/stdin.out"; then
		ok "$name: the same $n records in the same order from the file and stdin"
	else
		bad "$name: records differ ($n from the file, $(wc -l <"$tmp/stdin.out") from stdin)"
		diff "$tmp/file.out" "$tmp/stdin.out" | head -5
	fi
	if grep -v "packets/s" "$tmp/file.err" >"$tmp/file.sum" &&
	   grep -v "packets/s" "$tmp/stdin.err" >"$tmp/stdin.sum" && cmp -s "$tmp/file.sum" "$tmp/stdin.sum"; then
		ok "$name: the same counters from the file and stdin, looked up ahead included"
	else
		bad "$name: counters differ"
		diff "$tmp/file.sum" "$tmp/stdin.sum" | head -6
	fi
	sort "$tmp/file.out" >"$tmp/file.sorted"
	sort "$tmp/w2.out" >"$tmp/w2.sorted"
	rule_lines "$tmp/file.err" >"$tmp/file.rules"
	rule_lines "$tmp/w2.err" >"$tmp/w2.rules"
	if cmp -s "$tmp/file.sorted" "$tmp/w2.sorted" && cmp -s "$tmp/file.rules" "$tmp/w2.rules" &&
	   ! grep -q "looked up ahead" "$tmp/w2.err"; then
		ok "$name: the same records and rule counters as 2 workers, which hold nothing"
	else
		bad "$name: 2 workers differ ($(wc -l <"$tmp/w2.out") records)"
		diff "$tmp/file.rules" "$tmp/w2.rules" | head -6
	fi
	ahead=$(sed -n 's/.*event-report per-flow: .* \([0-9]*\) looked up ahead$/\1/p' "$tmp/file.err")
	qahead=$(sed -n 's/.*query-report per-flow-q: .* \([0-9]*\) looked up ahead$/\1/p' "$tmp/file.err")
	mahead=$(sed -n 's/.*flow-monitor fm: .* \([0-9]*\) looked up ahead$/\1/p' "$tmp/file.err")
	if [ "${ahead:-0}" -gt 0 ] && [ "${qahead:-0}" -gt 0 ] && [ "${mahead:-0}" -gt 0 ]; then
		ok "$name: $ahead event, $qahead query and $mahead monitor items looked up ahead"
	else
		bad "$name: looked up ahead: '${ahead:-}' '${qahead:-}' '${mahead:-}'"
	fi
	# a key of per-hop arrays too, not a per-hop rule
	if grep -q "event-report per-path: .* [1-9][0-9]* looked up ahead" "$tmp/file.err" &&
	   ! grep -q "event-report per-hop: .*ahead" "$tmp/file.err"; then
		ok "$name: a key of per-hop arrays looked up ahead, a per-hop rule not"
	else
		bad "$name: $(grep "per-path\|per-hop:" "$tmp/file.err")"
	fi
}

same "inline INT, 40,000 flows" "$tmp/flows.pcap"
grep -q "keys expired" "$tmp/file.err" && [ "$(sed -n 's/.*per-flow: .* \([0-9]*\) keys expired.*/\1/p' "$tmp/file.err")" -gt 0 ] &&
	ok "idle keys expired at ticks between held items" || bad "no key expired: the ticks were not exercised"
same "-c 50000" "$tmp/flows.pcap" -c 50000
same "3 reports a packet" "$tmp/reports.pcap"

# 2 workers, a query whose windows merge: each worker holds its items
# (pointing into the file, or copied from standard input's batches)
sed -n '/^query-report per-flow-q/,/^}/p' "$tmp/rules.conf" >"$tmp/query.conf"
"$bld/intspect" -r "$tmp/flows.pcap" -C "$tmp/query.conf" -w 2 >"$tmp/q2.out" 2>"$tmp/q2.err"
"$bld/intspect" -r - -C "$tmp/query.conf" -w 2 <"$tmp/flows.pcap" >"$tmp/q2s.out" 2>"$tmp/q2s.err"
"$bld/intspect" -r "$tmp/flows.pcap" -C "$tmp/query.conf" >"$tmp/q1.out" 2>/dev/null
n=$(wc -l <"$tmp/q2.out")
if [ "$n" -gt 1000 ] && cmp -s "$tmp/q2.out" "$tmp/q2s.out" && cmp -s "$tmp/q2.out" "$tmp/q1.out" &&
   grep -q "query-report per-flow-q: .* [1-9][0-9]* looked up ahead" "$tmp/q2.err" &&
   grep -q "query-report per-flow-q: .* [1-9][0-9]* looked up ahead" "$tmp/q2s.err"; then
	ok "2 workers: the same $n query records from the file, stdin and 1 worker, looked up ahead"
else
	bad "2 workers: $(wc -l <"$tmp/q2s.out") from stdin, $(wc -l <"$tmp/q1.out") with 1 worker; $(grep -o '[0-9]* looked up ahead' "$tmp/q2.err" "$tmp/q2s.err")"
fi

# a table that stays small: nothing held, no count
"$bld/intgen" -o "$tmp/few.pcap" -n 20000 --flows 64 --seed 9 >/dev/null
"$bld/intspect" -r "$tmp/few.pcap" -C "$tmp/rules.conf" >"$tmp/few.out" 2>"$tmp/few.err"
"$bld/intspect" -r - -C "$tmp/rules.conf" <"$tmp/few.pcap" >"$tmp/few2.out" 2>"$tmp/few2.err"
if ! grep -q "looked up ahead" "$tmp/few.err" "$tmp/few2.err" && cmp -s "$tmp/few.out" "$tmp/few2.out"; then
	ok "64 flows: nothing looked up ahead, the same records"
else
	bad "64 flows: $(grep -o '[0-9]* looked up ahead' "$tmp/few.err" "$tmp/few2.err")"
fi

summary ahead
