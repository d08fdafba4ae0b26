#!/bin/sh
# bench/workers.sh - 2 workers against 1 on capture files: the 9-function
# query (its avg(diff()) keeps the window's ends: every function merges,
# so the workers take the batches in any order and nothing crosses cores)
# and the same without diff(); the delta event per flow and an event
# keyed by switch path and queues (not the flow), each run where its
# items were read and settled in the file's order, a batch at a time
# (src/filters/event_batch.c). Each
# repetition runs 1 worker, then 2, on the same
# capture: the ratio is the median of the per-repetition ratios. The
# records of 1 and 2 workers are compared once per rule.
#
# "2 runs at once" is what this machine gives two independent one-worker
# runs of the same rule at once (their summed rate over the repetition's
# one-worker run), measured in the same repetitions: the ceiling of the
# 2-worker figure beside it (on 2 CPUs a rule that writes many records
# has its output's thread besides, in both). Each goal is also printed
# as that share of the ceiling (1.8x of 2x: 90%), the median of the
# per-repetition shares: on a VM whose second CPU gives less than a
# whole one, that is the figure the workers control.
#
#   ./setup.sh build && bench/workers.sh [PACKETS] [REPS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-2000000}
reps=${2:-7}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
. "$top/bench/lib.sh"

# pair LABEL GOAL ARGS...: 1 and 2 workers, and two one-worker runs at
# once, interleaved
pair() {
	label=$1 goal=$2
	shift 2
	: >"$tmp/r1"; : >"$tmp/r2"; : >"$tmp/ratio"; : >"$tmp/m"; : >"$tmp/share"
	i=0
	while [ "$i" -lt "$reps" ]; do
		one=$(pps "$@" -w 1)
		two=$(pps "$@" -w 2)
		pps "$@" -w 1 >"$tmp/m1" &
		both=$(pps "$@" -w 1)
		wait
		echo "$one" >>"$tmp/r1"
		echo "$two" >>"$tmp/r2"
		awk -v a="$one" -v b="$two" 'BEGIN { printf "%.4f\n", b / a }' >>"$tmp/ratio"
		awk -v a="$one" -v x="$(cat "$tmp/m1")" -v y="$both" \
			'BEGIN { printf "%.4f\n", (x + y) / a }' >>"$tmp/m"
		# the 2 workers' rate over the 2 runs' at once, this repetition
		awk -v t="$two" -v x="$(cat "$tmp/m1")" -v y="$both" \
			'BEGIN { printf "%.4f\n", t / (x + y) }' >>"$tmp/share"
		i=$((i + 1))
	done
	awk -v l="$label" -v o="$(median <"$tmp/r1")" -v t="$(median <"$tmp/r2")" \
	    -v r="$(median <"$tmp/ratio")" -v g="$goal" -v m="$(median <"$tmp/m")" \
    -v s="$(median <"$tmp/share")" \
		'BEGIN { printf "  %-30s %6.2f -> %6.2f Mpps   %5.2fx", l, o / 1e6, t / 1e6, r
			 if (g == "-") printf " (no goal)"
			 else printf " (goal %.1fx: %s)", g, (r >= g ? "met" : "not met")
			 printf "; 2 runs at once %.2fx\n", m
			 # the goal read on this machine: a share of what two
			 # independent runs reach at once (1.8x of 2.0x: 90%)
			 if (g != "-")
				 printf "  %-30s 2 workers = %.0f%% of 2 runs at once (goal %.0f%%: %s)\n", "",
					100 * s, 50 * g, (s >= g / 2 ? "met" : "not met") }'
	# how the items were split: by the keys' owners for rules whose state
	# goes to an owner (what that split alone allows: every item's work
	# on its owner, nothing else shared), by who read which batch for
	# rules that merge
	"$bld/intspect" "$@" -w 2 -q 2>&1 >/dev/null | sed -n 's/^intspect: 2 workers handled \([0-9]*\) + \([0-9]*\) items$/\1 \2/p' |
		awk '{ m = $1 > $2 ? $1 : $2; printf "  %-30s %d + %d items: %.0f%% on one worker\n", "", $1, $2, 100 * m / ($1 + $2) }'
}

# same_records ARGS...: events of 1 and 2 workers, in their order (events
# settled in order: byte for byte; a record dropped is a difference too:
# the summaries say how many)
same_records() {
	"$bld/intspect" "$@" -w 1 2>"$tmp/err1" >"$tmp/rec1"
	"$bld/intspect" "$@" -w 2 2>"$tmp/err2" >"$tmp/rec2"
	if grep -q " [1-9][0-9]* dropped" "$tmp/err1" "$tmp/err2"; then
		echo "  RECORDS DROPPED: $(grep -h " dropped" "$tmp/err1" "$tmp/err2" | tr '\n' ' ')"
	elif cmp -s "$tmp/rec1" "$tmp/rec2"; then
		echo "  records of 2 workers = 1 worker, in order ($(wc -l <"$tmp/rec1") records)"
	else
		echo "  RECORDS DIFFER between 1 and 2 workers"
	fi
}

echo "intspect workers, $(date -u +%Y-%m-%d), $(nproc) CPUs, median of $reps interleaved runs"
for w in a b c; do
	cap=$(capture "$w")
	echo "($w) $(description "$w"): $n packets"
	pair "9-function query" 1.8 -r "$cap" -C "$tmp/q9.conf"
	pair "8 functions, no diff()" - -r "$cap" -C "$tmp/q8.conf"
	pair "delta event per flow" 1.8 -r "$cap" -C "$tmp/delta.conf"
	pair "event per switch path, queues" 1.6 -r "$cap" -C "$tmp/keyed.conf"
	same_records -r "$cap" -C "$tmp/keyed.conf"
done
