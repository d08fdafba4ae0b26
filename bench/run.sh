#!/bin/sh
# bench/run.sh - throughput of intspect against the bare libpcap read loop,
# measured in the same run. Prints packets/second (median of REPS runs)
# and the ratio to the floor for each workload.
#
#   ./setup.sh build && bench/run.sh [PACKETS] [REPS]
#
# Workloads, on captures written by intgen (default 2,000,000 packets):
#   (a) 230-byte packets, 3-hop INT v1.0 (bitmap 0xFC00) over UDP, 64 flows
#   (b) telemetry report v2.0, 6 hops, all 9 metric sets (bitmap 0xFF80)
#   (c) as (b) with mixed hop counts 1-6
# and for each: the floor, decode only, a 9-function query report with 2
# group-by keys (with 1 and 2 workers), a delta-cond event report, a
# 14-attribute event report per packet to a file.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-2000000}
reps=${2:-5}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }

. "$top/bench/lib.sh"


# pps with the event's output file removed first: the file channel
# appends, and five runs' records (up to 6 GiB) made the kernel's
# writeback the measure
pps_fresh() {
	rm -f "$tmp/ev14.json"
	pps "$@"
}

run_capture() {   # name
	name=$1
	cap=$(capture "$name")
	desc=$(description "$name")
	echo "($name) $desc: $n packets, $(($(stat -c %s "$cap") / 1024 / 1024)) MiB"
	: >"$tmp/floor"
	i=0
	while [ "$i" -lt "$reps" ]; do
		"$bld/bench/pcap_floor" "$cap" 2>/dev/null >>"$tmp/floor"
		i=$((i + 1))
	done
	floor=$(median <"$tmp/floor")
	awk -v f="$floor" 'BEGIN { printf "  %-34s %8.2f Mpps   100.0%% of the floor\n", "libpcap read loop (floor)", f / 1e6 }'
	measure "decode only" "$floor" pps -r "$cap"
	cp "$tmp/last" "$tmp/med-$name-decode"
	measure "9-function query, 2 group-by keys" "$floor" pps -r "$cap" -C "$tmp/q9.conf"
	cp "$tmp/last" "$tmp/med-$name-query"
	measure "the same query, 2 workers" "$floor" pps -r "$cap" -C "$tmp/q9.conf" -w 2
	cp "$tmp/last" "$tmp/med-$name-query2"
	measure "delta-cond event per flow" "$floor" pps -r "$cap" -C "$tmp/delta.conf"
	measure "14-attribute event to a file" "$floor" pps_fresh -r "$cap" -C "$tmp/ev14.conf"
	cp "$tmp/last" "$tmp/med-$name-ev14"
	rm -f "$tmp/ev14.json"
}

# (c) against (b), where the work is the same (the delta event is not:
# with mixed hop counts its path changes, and it writes a record for most
# of (c)'s packets): goal, no slower
compare_bc() {
	echo "mixed hop counts (c) against (b), packets/s (goal: no slower, 1.00x or more)"
	for k in decode:"decode only" query:"9-function query" query2:"the same query, 2 workers" \
		 ev14:"14-attribute event to a file"; do
		awk -v l="${k#*:}" -v b="$(cat "$tmp/med-b-${k%%:*}")" -v c="$(cat "$tmp/med-c-${k%%:*}")" \
			'BEGIN { r = c / b; printf "  %-34s %5.2fx   %s\n", l, r, (r >= 1 ? "met" : "not met") }'
	done
}

echo "intspect benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, median of $reps runs"
for w in a b c; do
	run_capture "$w"
done
compare_bc
peak=$( { /usr/bin/time -f '%M' "$bld/intspect" -r "$(capture b)" -C "$tmp/q9.conf" -q >/dev/null 2>"$tmp/rss"; } 2>&1; tail -1 "$tmp/rss")
echo "peak RSS, query report on (b): ${peak} KiB"
