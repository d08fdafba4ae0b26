#!/bin/sh
# bench/memory.sh - peak resident memory with 1,000,000 distinct flows:
# a per-flow delta event report, a per-flow query report (3 functions, one
# of them per hop), and both. Prints numbers; asserts nothing.
#
#   ./setup.sh build && bench/memory.sh
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
cap="$tmp/flows1m.pcap"
[ -f "$cap" ] || "$bld/intgen" -o "$cap" -n 2000000 --flows 1000000 --seed 3 >/dev/null
event='event-report per-flow {
  event = "int.hop_switch_ids"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  max-keys = 1000000
  attributes = {"ip.src"}
}'
query='query-report per-flow-q {
  ms-period = 10000
  select = {"count()", "avg(int.hop_latencies)", "p99(int.latency)"}
  group-by = {"ip.src", "ip.dst"}
  max-groups = 1000000
}'
printf '%s\n' "$event" >"$tmp/m-event.conf"
printf '%s\n' "$query" >"$tmp/m-query.conf"
printf '%s\n%s\n' "$event" "$query" >"$tmp/m-both.conf"
flows=$("$bld/intspect" -C "$tmp/m-query.conf" -r "$cap" -q 2>&1 >/dev/null |
	sed -n 's/.* \([0-9]*\) records,.*/\1/p')
echo "intspect peak RSS, 2,000,000 packets, $flows distinct flows (records to /dev/null)"
for r in event query both; do
	rss=$(/usr/bin/time -f '%M' "$bld/intspect" -C "$tmp/m-$r.conf" -r "$cap" -q 2>&1 >/dev/null | tail -1)
	printf '  %-6s %7d MiB\n' "$r" $((rss / 1024))
done
