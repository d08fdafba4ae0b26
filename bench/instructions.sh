#!/bin/sh
# bench/instructions.sh - instructions per packet of the whole process,
# every thread (the packet thread, the output channels'), and of the
# packet thread alone (valgrind's callgrind: exact counts, unlike times
# on a shared machine) for each workload of bench/run.sh: decode only,
# the 9-function query, the delta event, the 14-attribute event to a file
# in JSON and in CSV. A run of 1 packet is subtracted (start-up: plugins,
# rules, channels). The goals (README, "Performance") are in instructions
# a packet of the whole process.
#
#   ./setup.sh build && bench/instructions.sh [PACKETS]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-200000}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
. "$top/bench/lib.sh"

# instructions of one run: of every thread, then of the main (packet)
# thread, on one line
count() {
	rm -f "$tmp"/cg.out*
	# its exit status is not the count's business (a channel's drops)
	valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg.out" \
		"$bld/intspect" "$@" -q >/dev/null 2>&1 || true
	for f in "$tmp"/cg.out-*; do
		sed -n 's/^summary: //p; s/^totals: //p' "$f" | head -1
	done | awk -v main="$(sed -n 's/^summary: //p; s/^totals: //p' "$tmp/cg.out-01" | head -1)" \
		'{ all += $1 } END { printf "%d %d\n", all, main }'
}

echo "intspect instructions per packet (callgrind), $n packets, $(date -u +%Y-%m-%d):"
echo "the whole process (every thread), and below it the packet thread alone"
printf '  %-4s %10s %10s %10s %10s %10s\n' "" decode query delta ev14 ev14csv
for w in a b c; do
	cap=$(capture "$w")
	one="$tmp/$w-one.pcap"
	# the first packet alone, for the start-up cost
	python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); import struct; \
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"; \
l = struct.unpack(e + "I", d[32:36])[0]; open(sys.argv[2], "wb").write(d[:40 + l])' "$cap" "$one"
	line="" main=""
	for rules in "" "$tmp/q9.conf" "$tmp/delta.conf" "$tmp/ev14.conf" "$tmp/ev14csv.conf"; do
		set -- -r "$cap"
		[ -n "$rules" ] && set -- "$@" -C "$rules"
		all=$(count "$@")
		set -- -r "$one"
		[ -n "$rules" ] && set -- "$@" -C "$rules"
		base=$(count "$@")
		line="$line $(( (${all% *} - ${base% *}) / (n - 1) ))"
		main="$main $(( (${all#* } - ${base#* }) / (n - 1) ))"
	done
	# shellcheck disable=SC2086
	printf '  (%s) %10s %10s %10s %10s %10s\n' "$w" $line
	# shellcheck disable=SC2086
	printf '  %-4s %10s %10s %10s %10s %10s\n' "" $main
	# shellcheck disable=SC2086
	set -- $line
	eval "got_$w='$1 $2 $4 $5'"
done
# the goals, in instructions a packet of the whole process, derived from
# MMT-Probe 1.6 on a 3-hop capture like (a); MMT-Probe decodes neither (b)
# nor (c) past their UDP header (bench/README.md, "MMT-Probe on these
# workloads"). Judged on every workload.
met() {         # COLUMN GOAL: met or not, workload by workload
	col=$1 goal=$2 out=""
	for w in a b c; do
		eval "v=\$got_$w"
		# shellcheck disable=SC2086
		set -- $v
		eval "x=\${$col}"
		if [ "$x" -le "$goal" ]; then out="$out ($w) met"; else out="$out ($w) not met"; fi
	done
	echo "$out"
}
echo "  goals (whole process):"
echo "    decode only <= 600:$(met 1 600)"
echo "    9-function query <= 1700:$(met 2 1700)"
echo "    14-attribute event as JSON <= 4000:$(met 3 4000)"
echo "    14-attribute event as CSV <= 4000:$(met 4 4000)"
rm -f "$tmp"/cg.out* "$tmp/ev14.json" "$tmp/ev14.csv"
