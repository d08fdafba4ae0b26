#!/bin/sh
# Merged query windows written by every worker (src/filters/query_share.c):
# once a merged window holds 4,096 groups, the workers cut its records in
# slices, write them at once and hand them over in turn. The records must
# be one worker's, in the same order, byte for byte: JSON on standard
# output and MMT-Probe's CSV in a file (one rule, two formats), a small
# window between large ones (written whole in its turn), line protocol
# (written whole by the merger, in its turn), windows of another period
# ending between, and a partial-window rule (its states' order depends on
# which worker saw what: compared as the groups it names) whose end
# records come after the last share. 2 and 3 workers, twice each. And
# the packets beyond max-groups of workers, counted whatever table holds
# them at the end.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

# 12,000 flows over 1.5 s: windows of ~10,000 and ~8,000 flows
"$bld/intgen" -o "$tmp/c.pcap" -n 30000 --flows 12000 --flow-order shuffle --hops 1-6 --seed 5 \
	--pps 20000 >/dev/null || { echo "FAIL intgen"; exit 1; }

cat >"$tmp/rules.conf" <<CONF
stdout-output { drop-policy = block }
file-output csvf { path = "$tmp/q.csv"; format = csv; drop-policy = block }
file-output inf { path = "$tmp/q.influx"; format = influx; drop-policy = block }
file-output part { path = "$tmp/q.partial"; drop-policy = block }
query-report flows {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "p50(int.latency)",
            "avg(int.hop_latencies)", "max(int.hop_queue_occups)", "last(ip.src)", "avg(diff(meta.timestamp))"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {stdout, csvf}
}
query-report influx-flows {
  ms-period = 1000
  select = {"count()", "avg(int.latency)"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {inf}
}
query-report per-length {
  ms-period = 1000
  select = {"count()", "avg(int.latency)"}
  group-by = {"int.num_hop"}
  output-channel = {stdout}
}
query-report ports {
  ms-period = 500
  select = {"count()", "min(int.latency)", "avg(int.hop_latencies)"}
  group-by = {"udp.src_port"}
  output-channel = {stdout}
}
query-report partial-flows {
  ms-period = 1000
  output-format = partial
  select = {"count()", "avg(int.latency)", "p50(int.latency)"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {part}
}
CONF

# run W TAG: records of W workers into $tmp/*.TAG
run() {
	rm -f "$tmp/q.csv" "$tmp/q.influx" "$tmp/q.partial"
	"$bld/intspect" -r "$tmp/c.pcap" -C "$tmp/rules.conf" -w "$1" >"$tmp/out.$2" 2>"$tmp/err.$2" ||
		echo "exit status $?" >>"$tmp/err.$2"
	mv "$tmp/q.csv" "$tmp/csv.$2"
	mv "$tmp/q.influx" "$tmp/inf.$2"
	# a partial record's window, first packet and key; the end record
	sed -n 's/.*"window_end":\([0-9]*\),"first":\([0-9]*\),"key":"\([0-9a-f]*\)".*/\1 \2 \3/p; /"end":true/p' \
		"$tmp/q.partial" | sort >"$tmp/part.$2"
	tail -1 "$tmp/q.partial" | grep -q '"end":true' && echo "the end record last" >>"$tmp/part.$2"
	grep -E "query-report|exit status" "$tmp/err.$2" >"$tmp/count.$2"
}

run 1 1
groups=$(grep -c '"report":"flows"' "$tmp/out.1")
[ "$groups" -ge 16000 ] && grep -q '"report":"ports"' "$tmp/out.1" && grep -q '"report":"per-length"' "$tmp/out.1" &&
	ok "1 worker: $groups records of the flow query in 2 windows" ||
	bad "1 worker: $groups records of the flow query, or a rule missing" "$tmp/err.1"
for w in 2 3 2 3; do
	run "$w" "$w"
	cmp -s "$tmp/out.1" "$tmp/out.$w" && ok "$w workers: JSON records and their order are one worker's" ||
		{ diff "$tmp/out.1" "$tmp/out.$w" | head -5 >"$tmp/d"; bad "$w workers: JSON records differ" "$tmp/d"; }
	cmp -s "$tmp/csv.1" "$tmp/csv.$w" && ok "$w workers: MMT-Probe CSV file is one worker's" ||
		bad "$w workers: CSV differs"
	cmp -s "$tmp/inf.1" "$tmp/inf.$w" && ok "$w workers: line protocol (written whole in its turn) is one worker's" ||
		bad "$w workers: line protocol differs"
	grep -q "the end record last" "$tmp/part.1" && cmp -s "$tmp/part.1" "$tmp/part.$w" &&
		ok "$w workers: partial windows name the same groups, the end record last" ||
		bad "$w workers: partial windows differ"
	cmp -s "$tmp/count.1" "$tmp/count.$w" && ok "$w workers: the rules' counters are one worker's" ||
		{ diff "$tmp/count.1" "$tmp/count.$w" >"$tmp/d"; bad "$w workers: counters differ" "$tmp/d"; }
done
# max-groups reached on every worker: a worker's packets beyond it are
# counted in its window's table, which a closed window, then a merge, hand
# around (they were lost with the table: 2 workers said 99 of ~29,700)
printf 'stdout-output { drop-policy = block }\nquery-report few {\n  ms-period = 100000\n  max-groups = 100\n  select = {"count()"}\n  group-by = {"ip.src", "ip.dst"}\n}\n' >"$tmp/few.conf"
beyond() {
	"$bld/intspect" -r "$tmp/c.pcap" -C "$tmp/few.conf" -w "$1" 2>&1 >/dev/null |
		sed -n 's/.* \([0-9]*\) packets beyond max-groups.*/\1/p'
}
b1=$(beyond 1)
for w in 2 3; do
	bw=$(beyond "$w")
	# each worker admits at most 100 flows' packets, the merge 100 groups
	[ -n "$b1" ] && [ -n "$bw" ] && [ "$b1" -gt 29000 ] && [ "$bw" -ge $((b1 - 1000)) ] && [ "$bw" -le 30000 ] &&
		ok "$w workers: $bw packets beyond max-groups counted (one worker: $b1)" ||
		bad "$w workers: ${bw:-?} packets beyond max-groups counted, one worker ${b1:-?}"
done
summary "merge share"
