#!/bin/sh
# bench/dta.sh - the DTA stores (src/plugins/dta): what one core applies
# and answers per second, and what intspect does with DTA reports end to
# end.
#
#   bench/dta.sh [--quick] [--instructions]
#
# 1. bench/dta_bench.c, built here with gcc (or DTA_BENCH=/path/to/a/built
#    one), run 3 times: the median of each figure in millions of
#    operations per second on one thread, and its ratio to the floor (the
#    same loop hashing the key with MurmurHash64A and touching one random
#    slot of a 2^20-slot store): Key-Write inserts (N = 1, 2, 4; one
#    writer, and atomic writers) and queries at a load of 0.5, Append and
#    poll, Key-Increment updates and estimates, Sketch-Merge columns.
# 2. Key-Write queryability against the load factor W/M beside DTA's
#    model (one run: the figures are exact for the keys drawn).
# 3. End to end, when INTSPECT and INTGEN (default build/rel/intspect and
#    build/rel/intgen) exist and know DTA: intgen writes 2,000,000 DTA
#    reports (mix of Key-Write, Append, Key-Increment and Postcarder, 1
#    data word, DTA_KEYS distinct keys, default 524288), and intspect -r
#    applies them to a key-write, an append and a key-increment store:
#    reports/s (its own -q figure, the wall clock's and per CPU-second,
#    median of 3) next to libpcap's bare read loop (PCAP_FLOOR, default
#    build/rel/bench/pcap_floor).
#
# --quick: a smoke test of a few seconds (short figures, 1 trial, 100,000
# reports). --instructions: also the instructions per operation of each
# figure (valgrind's callgrind, two runs of 2^18 and 2^19 operations, the
# difference: exact counts, where times on a shared machine are not).
# Files go to a directory of their own under $TMPDIR (or /tmp) and
# /dev/shm, removed at the end.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
quick=0
instr=0
for a in "$@"; do
	case $a in
	--quick) quick=1 ;;
	--instructions) instr=1 ;;
	*) echo "usage: bench/dta.sh [--quick] [--instructions]" >&2; exit 2 ;;
	esac
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/intspect-dta.XXXXXX")
shm=$tmp
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	shm=$(mktemp -d /dev/shm/intspect-dta.XXXXXX)
fi
trap 'rm -rf "$tmp" "$shm"' EXIT
trap 'exit 130' INT TERM
. "$top/bench/lib.sh"           # median, measure

if [ "$quick" = 1 ]; then
	secs=0.02 runs=3 n=100000 reps=1 quick_flag=--quick
else
	secs=0.3 runs=3 n=2000000 reps=3 quick_flag=
fi

# 1. the stores, one thread
if [ -n "${DTA_BENCH:-}" ]; then
	bench=$DTA_BENCH
else
	bench=$tmp/dta_bench
	${CC:-gcc} -std=gnu11 -O2 -march=x86-64-v2 -Wall -Wextra -Werror -I"$top" -o "$bench" \
		"$top/bench/dta_bench.c" "$top/src/plugins/dta/store.c" -lpthread -lm
fi
echo "DTA stores, $(date -u +%Y-%m-%d), $(nproc) cores, one thread, median of $runs runs" \
	"(millions of operations per second; stores in $shm)"
i=1
while [ "$i" -le "$runs" ]; do
	"$bench" --rates -t "$secs" --dir "$shm" >"$tmp/rates.$i"
	i=$((i + 1))
done
# the median of LABEL's figure over the runs
figure() {
	awk -F': ' -v l="$1" '$1 == l { split($2, a, " "); print a[1] }' "$tmp"/rates.* | median
}
floor=$(figure "dta floor hash+touch N=1 slots=2^20")
grep '^dta ' "$tmp/rates.1" | while IFS= read -r line; do
	label=${line%%: *}
	note=$(echo "$line" | sed 's/^[^:]*: [0-9.]* M\/s//')
	awk -v l="$label" -v m="$(figure "$label")" -v f="$floor" -v note="$note" \
		'BEGIN { printf "%s: %.2f M/s  (%.2f of the floor)%s\n", l, m, m / f, note }'
done

# 2. queryability against the load factor
echo
"$bench" --table $quick_flag --dir "$shm"

# instructions per operation (optional)
if [ "$instr" = 1 ]; then
	echo
	if ! command -v valgrind >/dev/null; then
		echo "instructions: skipped (valgrind is not installed)"
	else
		echo "instructions per operation (callgrind; 2^19 operations minus 2^18, setup cancelled):"
		# total instructions of one run of FIGURE for OPS operations
		count() {
			rm -f "$tmp"/cg.out*
			valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
				"$bench" --rates --ops "$2" --only "$1" --dir "$shm" >/dev/null 2>&1
			sed -n 's/^summary: //p; s/^totals: //p' "$tmp/cg.out" | head -1
		}
		grep '^dta ' "$tmp/rates.1" | while IFS= read -r line; do
			label=${line%%: *}
			label=${label#dta }
			one=$(count "$label" 262144)
			two=$(count "$label" 524288)
			printf '  %-72s %6d\n' "$label" $(((two - one) / 262144))
		done
		rm -f "$tmp"/cg.out*
	fi
fi

# 3. end to end
echo
INTSPECT=${INTSPECT:-$top/build/rel/intspect}
INTGEN=${INTGEN:-$top/build/rel/intgen}
PCAP_FLOOR=${PCAP_FLOOR:-$top/build/rel/bench/pcap_floor}
keys=${DTA_KEYS:-524288}
if [ ! -x "$INTSPECT" ] || [ ! -x "$INTGEN" ]; then
	echo "end to end: skipped (no $INTSPECT or $INTGEN: ./setup.sh build, or set INTSPECT and INTGEN)"
	exit 0
fi
cat >"$tmp/dta.conf" <<CONF
dta-store kv { type = key-write; file = "$shm/bench.kv.dta"; slots = 1048576; redundancy = 2; value-bytes = 4 }
dta-store ev { type = append; file = "$shm/bench.ev.dta"; lists = 4; entries = 65536; value-bytes = 4 }
dta-store cnt { type = key-increment; file = "$shm/bench.cnt.dta"; rows = 4; columns = 65536 }
CONF
if ! "$INTSPECT" -T "$tmp/dta.conf" >/dev/null 2>&1; then
	echo "end to end: skipped ($INTSPECT does not take dta-store sections: built before the DTA collector?)"
	exit 0
fi
# Postcarder reports on hop 0 only: a 4-byte value has one word (hops
# beyond it are rejected, which would skip the store)
cap=$tmp/dta-$n.pcap
if ! "$INTGEN" --format dta -n "$n" --dta-op mix --dta-words 1 --dta-hops 1 --dta-keys "$keys" \
	--seed 1 -o "$cap" >/dev/null 2>&1; then
	echo "end to end: skipped ($INTGEN does not write DTA reports: built before --format dta?)"
	exit 0
fi
asan=
if grep -q __asan_init "$INTSPECT" 2>/dev/null; then
	asan="  (an AddressSanitizer build: slow, not the release figure)"
fi
echo "end to end: $INTSPECT -r, $n DTA reports (Key-Write, Append, Key-Increment, Postcarder" \
	"in equal shares, 1 word, $keys keys), $(($(stat -c %s "$cap") / 1024 / 1024)) MiB, median of $reps$asan"
echo "  stores: key-write 2^20 slots N=2, append 4 x 65536, key-increment 4 x 2^16"
# one run: the reports/s intspect reports (-q); the wall clock's in
# $tmp/wall, per CPU-second (user + system, every thread) in $tmp/cpu
timer=
[ -x /usr/bin/time ] && timer=/usr/bin/time
e2e() {
	t0=$(date +%s%N)
	if [ -n "$timer" ]; then
		"$timer" -f '%U %S' -o "$tmp/e2e.time" \
			"$INTSPECT" -C "$tmp/dta.conf" -r "$cap" -q >/dev/null 2>"$tmp/e2e.err"
		awk -v n="$n" '{ printf "%.0f\n", n / ($1 + $2) }' "$tmp/e2e.time" >>"$tmp/cpu"
	else
		"$INTSPECT" -C "$tmp/dta.conf" -r "$cap" -q >/dev/null 2>"$tmp/e2e.err"
	fi
	t1=$(date +%s%N)
	echo "$n $t0 $t1" | awk '{ printf "%.0f\n", $1 / (($3 - $2) / 1e9) }' >>"$tmp/wall"
	sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p' "$tmp/e2e.err"
}
: >"$tmp/wall"
: >"$tmp/cpu"
if [ -x "$PCAP_FLOOR" ]; then
	: >"$tmp/floor"
	i=0
	: >"$tmp/floorcpu"
	while [ "$i" -lt "$reps" ]; do
		if [ -n "$timer" ]; then
			"$timer" -f '%U %S' -o "$tmp/floor.time" "$PCAP_FLOOR" "$cap" 2>/dev/null >>"$tmp/floor"
			# (the clock ticks 10 ms: a run shorter than 50 ms gives no figure)
			awk -v n="$n" '$1 + $2 >= 0.05 { printf "%.0f\n", n / ($1 + $2) }' \
				"$tmp/floor.time" >>"$tmp/floorcpu"
		else
			"$PCAP_FLOOR" "$cap" 2>/dev/null >>"$tmp/floor"
		fi
		i=$((i + 1))
	done
	pfloor=$(median <"$tmp/floor")
	awk -v f="$pfloor" 'BEGIN { printf "  %-34s %8.2f M reports/s   100.0%% of the floor\n", "libpcap read loop (floor)", f / 1e6 }'
	measure "intspect -r, 3 dta-stores" "$pfloor" e2e | sed 's/ Mpps / M reports\/s /'
else
	: >"$tmp/runs"
	i=0
	while [ "$i" -lt "$reps" ]; do
		e2e >>"$tmp/runs"
		i=$((i + 1))
	done
	awk -v m="$(median <"$tmp/runs")" 'BEGIN { printf "  %-34s %8.2f M reports/s   (no %s: no floor)\n", "intspect -r, 3 dta-stores", m / 1e6, "pcap_floor" }'
fi
awk -v m="$(median <"$tmp/wall")" 'BEGIN { printf "  %-34s %8.2f M reports/s   (start-up, store files and exit included)\n", "the same, wall clock", m / 1e6 }'
if [ -s "$tmp/cpu" ]; then
	fc=
	[ -s "$tmp/floorcpu" ] && fc=$(median <"$tmp/floorcpu")
	awk -v m="$(median <"$tmp/cpu")" -v f="$fc" 'BEGIN {
		printf "  %-34s %8.2f M reports/s   (user + system time, every thread)\n", "the same, per CPU-second", m / 1e6
		if (f != "")
			printf "  %-34s %8.2f M reports/s   (intspect: %.1f%% of it)\n", "the floor, per CPU-second", f / 1e6, 100 * m / f }'
fi
sed -n 's/^dta: \([0-9]* reports\).*), \([0-9]* applied\), .*, \([0-9]* rejected\), \([0-9]* shed\).*/  (last run: \1, \2, \3, \4)/p' "$tmp/e2e.err"
