#!/bin/sh
# bench/flows.sh - rules on a million flows, where every key lookup misses
# the cache: the packets/s of a per-flow delta event, a per-flow query (3
# functions, one per hop, one quantile) and both, on bench/memory.sh's
# capture (1,000,000 flows of 2 packets, shuffled), from the mapped file
# and from standard input (libpcap; held packets are copied), one worker,
# and from the file with 2 workers, median of REPS runs; decode only next
# to them; and how many items the rules looked up ahead
# (src/filters/ahead.c); then the query on 200,000 flows of 10 packets
# with 1 and 2 workers. Numbers, no assertion.
#
#   ./setup.sh build && bench/flows.sh [REPS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
reps=${1:-5}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
n=2000000
. "$top/bench/lib.sh"      # generated
cap="$tmp/flows1m-shuffle.pcap"         # as bench/memory.sh makes it
generated "$cap" -n 2000000 --flows 1000000 --flow-order shuffle --seed 3
cat >"$tmp/f-event.conf" <<'CONF'
event-report per-flow {
  event = "int.hop_switch_ids"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  max-keys = 1000000
  attributes = {"ip.src"}
}
CONF
cat >"$tmp/f-query.conf" <<'CONF'
query-report per-flow-q {
  ms-period = 10000
  select = {"count()", "avg(int.hop_latencies)", "p99(int.latency)"}
  group-by = {"ip.src", "ip.dst"}
  max-groups = 1000000
}
CONF
cat "$tmp/f-event.conf" "$tmp/f-query.conf" >"$tmp/f-both.conf"

# rate FROM RULES: the median packets/s (records to /dev/null)
rate() {
	from=$1
	if [ "$2" = none ]; then set --; else set -- -C "$tmp/f-$2.conf"; fi
	: >"$tmp/f-runs"
	i=0
	while [ "$i" -lt "$reps" ]; do
		if [ "$from" = file2 ]; then
			"$bld/intspect" -r "$cap" "$@" -w 2 -q 2>"$tmp/f-err" >/dev/null || true
		elif [ "$from" = file ]; then
			"$bld/intspect" -r "$cap" "$@" -q 2>"$tmp/f-err" >/dev/null || true
		else
			"$bld/intspect" -r - "$@" -q <"$cap" 2>"$tmp/f-err" >/dev/null || true
		fi
		sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p' "$tmp/f-err" >>"$tmp/f-runs"
		i=$((i + 1))
	done
	median <"$tmp/f-runs"
}

echo "intspect on 1,000,000 flows (2M packets), median of $reps, $(date -u +%Y-%m-%d)"
printf '  %-12s %14s %14s %14s   %s\n' rules "file Mpps" "stdin Mpps" "2 workers" "items looked up ahead (file)"
for r in none event query both; do
	f=$(rate file "$r")
	ahead=$(sed -n 's/.* \([0-9]*\) looked up ahead$/\1/p' "$tmp/f-err" | tr '\n' ' ')
	s=$(rate stdin "$r")
	w=$(rate file2 "$r")
	awk -v r="$r" -v f="$f" -v s="$s" -v w="$w" -v a="${ahead:--}" \
		'BEGIN { printf "  %-12s %14.2f %14.2f %14.2f   %s\n", r == "none" ? "decode only" : r, f / 1e6, s / 1e6, w / 1e6, a }'
done
# fewer groups, more packets each (200,000 flows of 10 packets, one window
# at the end): the query's merge then costs less than its packets
cap="$tmp/flows200k.pcap"
generated "$cap" -n 2000000 --flows 200000 --flow-order shuffle --seed 3
one=$(rate file query)
two=$(rate file2 query)
awk -v o="$one" -v t="$two" 'BEGIN { printf "  query on 200,000 flows of 10 packets: 1 worker %.2f Mpps, 2 workers %.2f Mpps (%.2fx)\n", o / 1e6, t / 1e6, t / o }'

