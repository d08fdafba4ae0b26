#!/bin/sh
# bench/instructions.sh - instructions per packet of the packet thread
# (valgrind's callgrind: exact counts, unlike times on a shared machine)
# for each workload of bench/run.sh: decode only, the 9-function query,
# the delta event, the 14-attribute event to a file in JSON and in CSV. A run of 1 packet
# is subtracted (start-up: plugins, rules, channels).
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

# instructions of the main (packet) thread of one run
count() {
	rm -f "$tmp"/cg.out*
	# its exit status is not the count's business (a channel's drops)
	valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$tmp/cg.out" \
		"$bld/intspect" "$@" -q >/dev/null 2>&1 || true
	sed -n 's/^summary: //p; s/^totals: //p' "$tmp/cg.out-01" | head -1
}

echo "intspect instructions per packet (callgrind, packet thread), $n packets, $(date -u +%Y-%m-%d)"
printf '  %-4s %10s %10s %10s %10s %10s\n' "" decode query delta ev14 ev14csv
for w in a b c; do
	cap=$(capture "$w")
	one="$tmp/$w-one.pcap"
	# the first packet alone, for the start-up cost
	python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); import struct; \
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"; \
l = struct.unpack(e + "I", d[32:36])[0]; open(sys.argv[2], "wb").write(d[:40 + l])' "$cap" "$one"
	line=""
	for rules in "" "$tmp/q9.conf" "$tmp/delta.conf" "$tmp/ev14.conf" "$tmp/ev14csv.conf"; do
		set -- -r "$cap"
		[ -n "$rules" ] && set -- "$@" -C "$rules"
		all=$(count "$@")
		set -- -r "$one"
		[ -n "$rules" ] && set -- "$@" -C "$rules"
		base=$(count "$@")
		line="$line $(( (all - base) / (n - 1) ))"
	done
	# shellcheck disable=SC2086
	printf '  (%s) %10s %10s %10s %10s %10s\n' "$w" $line
	# shellcheck disable=SC2086
	set -- $line
	worst_decode=$(( ${worst_decode:-0} > $1 ? ${worst_decode:-0} : $1 ))
	worst_query=$(( ${worst_query:-0} > $2 ? ${worst_query:-0} : $2 ))
	worst_ev=$(( ${worst_ev:-0} > $4 ? ${worst_ev:-0} : $4 ))
	worst_csv=$(( ${worst_csv:-0} > $5 ? ${worst_csv:-0} : $5 ))
done
# the goals (ten times MMT-Probe 1.6 on its own rule blocks), in
# instructions a packet (README, "Performance"); the delta event has none
met() { [ "$1" -le "$2" ] && echo met || echo "not met"; }
printf '  goal%10s %10s %10s %10s %10s   (every workload)\n' 600 1700 - 4000 4000
printf '      %10s %10s %10s %10s %10s\n' "$(met "$worst_decode" 600)" "$(met "$worst_query" 1700)" - \
	"$(met "$worst_ev" 4000)" "$(met "$worst_csv" 4000)"
rm -f "$tmp"/cg.out* "$tmp/ev14.json" "$tmp/ev14.csv"
