#!/bin/sh
# metrics { ... }: INTCollector's metric tables are the event reports
# dsl/README.md says they stand for. The records of a metrics section
# equal, byte for byte on one worker and as a set on two, those of the
# seven event reports written out by hand from that definition (the
# reports themselves are tested against models: rules/perhop, rules/expiry,
# rules/refmodel). Errors: an unknown table (with a suggestion), a band
# and a threshold for one metric.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

cat >"$tmp/m.conf" <<'CONF'
metrics net {
  latency-threshold = 5000
  hop-latency-band = 1000
  tx-utilization-band = 100000
  queue-occupancy-band = 20000
  push-interval-ms = 200
  idle-timeout-ms = 40
  max-keys = 100000
}
CONF
flow='"ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.proto", "udp.src_port", "udp.dst_port", "tcp.src_port", "tcp.dst_port"'
# NAME PER-HOP KEYS COND MODE: one table by hand
table() {
	cat <<CONF
event-report net_$1 {
  per-hop = $2
  event = $(echo "$4" | sed 's/,.*//')
  delta-key = {$3}
  delta-cond = {$4}
  $5
  keepalive-ms = 200
  idle-timeout-ms = 40
  max-keys = 100000
  attributes = {$3, $4}
}
CONF
}
{
	table flow_path false "$flow" '"int.hop_switch_ids"' ''
	table flow_latency false "$flow" '"int.latency"' 'delta-threshold = 5000'
	table flow_hop_latency true "$flow, \"int.hop_switch_ids\"" '"int.hop_latencies"' 'delta-band = 1000'
	table egress_tx true '"int.hop_switch_ids", "int.hop_egress_port_ids"' '"int.hop_tx_utilizes"' 'delta-band = 100000'
	table queue_occupancy true '"int.hop_switch_ids", "int.hop_queue_ids"' '"int.hop_queue_occups"' 'delta-band = 20000'
	table queue_congestion true '"int.hop_switch_ids", "int.hop_congestion_queue_ids"' '"int.hop_congestions"' ''
	table l4s true '"int.hop_switch_ids", "int.hop_queue_ids"' '"int.hop_l4s_mark", "int.hop_l4s_drop"' ''
} >"$tmp/byhand.conf"

# reports with every metric set (v2.0: tx utilization), and INT v0.5 for
# congestion, L4S for mark and drop
"$bld/intgen" -o "$tmp/a.pcap" -n 2000 --seed 4 --format report --report-version 2.0 \
	--coalesce 2 --hops 1-5 --flows 16 --pps 1000 --bitmap 0xFF80 2>/dev/null
"$bld/intgen" -o "$tmp/b.pcap" -n 500 --seed 5 --int-version 0.5 --bitmap 0xFF00 --flows 8 --pps 1000 2>/dev/null
"$bld/intgen" -o "$tmp/c.pcap" -n 500 --seed 6 --dialect l4s --flows 8 --pps 1000 2>/dev/null
for cap in a b c; do
	"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/$cap.pcap" >"$tmp/m.out" 2>"$tmp/m.err"
	rc=$?
	"$bld/intspect" -C "$tmp/byhand.conf" -r "$tmp/$cap.pcap" >"$tmp/h.out" 2>"$tmp/h.err"
	n=$(wc -l <"$tmp/m.out" | tr -d ' ')
	tables=$(sed -n 's/.*"report":"net_\([a-z_0-9]*\)".*/\1/p' "$tmp/m.out" | sort -u | tr '\n' ' ')
	if [ "$rc" -eq 0 ] && [ "$n" -gt 100 ] && cmp -s "$tmp/m.out" "$tmp/h.out"; then
		ok "capture $cap: the metrics section writes the reports' $n records (tables: $tables)"
	else
		{ diff "$tmp/h.out" "$tmp/m.out" | head; cat "$tmp/m.err"; } >"$tmp/d"
		bad "capture $cap: metrics and the reports by hand differ (exit $rc, $n records)" "$tmp/d"
	fi
	for w in 2 4; do
		"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/$cap.pcap" -w $w 2>/dev/null | sort >"$tmp/m$w.out"
		sort "$tmp/m.out" | cmp -s - "$tmp/m$w.out" && [ -s "$tmp/m$w.out" ] &&
			ok "capture $cap: $w workers, the same records" ||
			bad "capture $cap: $w workers differ"
	done
done
for want in flow_path flow_latency flow_hop_latency egress_tx queue_occupancy; do
	"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/a.pcap" 2>/dev/null | grep -q "\"report\":\"net_$want\"" ||
		bad "no record of table $want on capture a"
done
"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/b.pcap" 2>/dev/null | grep -q '"report":"net_queue_congestion"' &&
	ok "INT v0.5: queue congestion records" || bad "no queue congestion record"
"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/c.pcap" 2>/dev/null | grep -q '"report":"net_l4s"' &&
	ok "L4S: mark and drop records" || bad "no L4S record"

printf 'metrics { tables = {"queues"} }\n' >"$tmp/e1.conf"
"$bld/intspect" -T "$tmp/e1.conf" 2>"$tmp/e"
grep -q ":1:21: error: unknown metric table 'queues' (did you mean 'queue'?); known: flow-path," "$tmp/e" &&
	ok "an unknown table: refused, with a suggestion" || bad "unknown table" "$tmp/e"
printf 'metrics {\n  latency-band = 10\n  latency-threshold = 5\n}\n' >"$tmp/e2.conf"
"$bld/intspect" -T "$tmp/e2.conf" 2>"$tmp/e"
grep -q ":3:3: error: latency: give a band or a threshold, not both" "$tmp/e" &&
	ok "a band and a threshold: refused" || bad "band and threshold" "$tmp/e"
# a table's keys are checked though the table is not chosen
printf 'metrics {\n  tables = {"queue"}\n  latency-band = "abc"\n  hop-latency-threshold = -7\n}\n' >"$tmp/e3.conf"
"$bld/intspect" -T "$tmp/e3.conf" 2>"$tmp/e"
[ $? = 2 ] && grep -q ":3:18: error: 'latency-band' expects a number" "$tmp/e" &&
	grep -q ":4:27: error: 'hop-latency-threshold' must be between 0 and" "$tmp/e" &&
	ok "the keys of a table not chosen: checked" || bad "keys of a table not chosen" "$tmp/e"
# a metrics section without a NAME: its reports are the tables' own names
printf 'metrics {\n  output-channel = {stdout}\n}\n' >"$tmp/anon.conf"
"$bld/intspect" -C "$tmp/anon.conf" -r "$src/test/data/gen-rules-8.pcap" 2>"$tmp/anon.err" >/dev/null
n=$(grep -c '^intspect: event-report \(flow_path\|flow_latency\|flow_hop_latency\|egress_tx\|queue_occupancy\|queue_congestion\|l4s\): ' "$tmp/anon.err")
[ "$n" = 7 ] && ok "metrics without a NAME: the seven reports flow_path, ... l4s" || bad "unnamed metrics ($n reports)" "$tmp/anon.err"
summary metrics
