#!/bin/sh
# bench/memory.sh - peak resident memory with 1,000,000 distinct flows:
# a per-flow delta event report, a per-flow query report (3 functions, one
# of them per hop), and both; then the event keyed by switch path and
# queues of bench/workers.sh on workload (a) (max-keys 4,000,000, 32,768
# keys held: what a table allowed far more keys than it holds takes).
# Prints numbers; asserts nothing.
#
#   ./setup.sh build && bench/memory.sh
#
# The capture has exactly 1,000,000 flows of 2 packets each (intgen
# --flow-order shuffle: every flow once per round of 1,000,000 packets; a
# random draw per packet would reach only 86% of them in 2,000,000
# packets), all in one 10 s query window, so every group is alive when the
# window closes and a million records leave at once. The flows counted are
# the query's records (one per ip.src/ip.dst pair); a run that dropped
# records says so, since it would not have held them. The run without
# rules (none) is the mapped capture's pages; "both" is printed next to
# its goal.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
flows=1000000
packets=2000000
mkdir -p "$tmp"
n=$packets
. "$top/bench/lib.sh"      # generated; the keyed event below
cap="$tmp/flows1m-shuffle.pcap"
generated "$cap" -n $packets --flows $flows --flow-order shuffle --seed 3
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
/usr/bin/time -f '%M' "$bld/intspect" -r "$cap" -q >/dev/null 2>"$tmp/m-none.err"
for r in event query both; do
	/usr/bin/time -f '%M' "$bld/intspect" -C "$tmp/m-$r.conf" -r "$cap" -q \
		>/dev/null 2>"$tmp/m-$r.err"
done
# query-report NAME: M matched, W windows, R records, D dropped, ...
seen=$(sed -n 's/.*query-report per-flow-q: .* \([0-9]*\) records,.*/\1/p' "$tmp/m-query.err")
echo "intspect peak RSS, $packets packets, $seen distinct flows (records to /dev/null)"
printf '  %-6s %7d MiB\n' none $(($(tail -1 "$tmp/m-none.err") / 1024))
for r in event query both; do
	rss=$(tail -1 "$tmp/m-$r.err")
	lost=$(sed -n 's/.*channel stdout: .* \([0-9]*\) dropped,.*/\1/p' "$tmp/m-$r.err")
	printf '  %-6s %7d MiB' "$r" $((rss / 1024))
	[ "$r" = both ] && printf '   (goal: 256 MiB, %s)' "$([ $((rss / 1024)) -le 256 ] && echo met || echo not met)"
	[ "${lost:-0}" = 0 ] || printf '   (%s records dropped: not comparable)' "$lost"
	echo
done
# the keyed event (bench/lib.sh: its rule and workload (a), 2M packets)
capa=$(capture a)
/usr/bin/time -f '%M' "$bld/intspect" -C "$tmp/keyed.conf" -r "$capa" -q >/dev/null 2>"$tmp/m-keyed.err"
printf '  %-6s %7d MiB   (event per switch path and queues, (a))\n' keyed \
	$(($(tail -1 "$tmp/m-keyed.err") / 1024))
