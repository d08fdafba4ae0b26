#!/bin/sh
# bench/kafka.sh - records per second from one intspect process to a Kafka
# broker on the loopback, and what the channel costs the packet path.
#
#   ./setup.sh build && bench/kafka.sh [PACKETS] [REPS]
#
# Workload: an event report with one record per packet (3 attributes,
# ~170-byte JSON records keyed by flow) over an intgen capture of PACKETS
# packets (default 2,000,000; INT v1.0, 3 hops, 64 flows), channel
# drop-policy = block so that no record is dropped and the reader runs at
# the channel's pace. Each run is timed from start to exit, which includes
# waiting for the last acknowledgement:
#   records/s  = acked records (the kafka type's counter) / wall time
#   packets/s  = intspect's own figure (-q) with the kafka channel, against
#                the same rule writing to a file on /dev/null; the
#                difference is the channel's cost per packet.
# Median of REPS runs (default 5) after one warm-up run (the broker's JIT).
#
# The broker is test/services/kafka.sh's, with its data on /dev/shm when
# there is room (the VM's disk writeback otherwise dominates the variance;
# set BENCH_TMP to choose). KAFKA_BROKERS=host:port uses a running broker
# instead. The broker shares the machine's cores with intspect.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-2000000}
reps=${2:-5}
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
if [ -z "${BENCH_TMP:-}" ] && [ -d /dev/shm ] &&
	[ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((4 * 1024 * 1024)) ]; then
	BENCH_TMP=/dev/shm
fi
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/intspect-kbench.XXXXXX")
cleanup() {
	[ -n "${KAFKA_BROKERS:-}" ] || sh "$top/test/services/kafka.sh" stop "$tmp/broker" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

if [ -n "${KAFKA_BROKERS:-}" ]; then
	addr=$KAFKA_BROKERS
else
	addr=$(sh "$top/test/services/kafka.sh" start "$tmp/broker")
fi

cap=$tmp/bench.pcap
"$bld/intgen" -o "$cap" -n "$n" --seed 1 --int-version 1.0 --hops 3 --bitmap 0xFC00 \
	--flows 64 --size 230 >/dev/null

rule='event-report ev {
  event = "int.num_hop"
  attributes = {"ip.src", "ip.dst", "int.latency"}
  output-channel = {out}
}'
cat >"$tmp/kafka.conf" <<EOF
kafka-output out { brokers = "$addr"; topic = "bench"; drop-policy = block; shutdown-ms = 120000 }
$rule
EOF
cat >"$tmp/file.conf" <<EOF
file-output out { path = "/dev/null"; drop-policy = block }
$rule
EOF

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
pps_of() { sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p' "$1"; }

run_kafka() {   # appends "records/s pps" to $tmp/kafka.runs
	t0=$(now)
	"$bld/intspect" -C "$tmp/kafka.conf" -r "$cap" -q >/dev/null 2>"$tmp/err"
	t1=$(now)
	acked=$(sed -n 's/^intspect: channel out: kafka: \([0-9]*\) acked.*/\1/p' "$tmp/err")
	dropped=$(sed -n 's/^intspect: channel out: .* delivered, \([0-9]*\) dropped.*/\1/p' "$tmp/err")
	[ -n "$acked" ] || { cat "$tmp/err" >&2; echo "no acked counter" >&2; exit 1; }
	[ "${dropped:-1}" -eq 0 ] || echo "warning: $dropped records dropped" >&2
	echo "$acked $t0 $t1 $(pps_of "$tmp/err")" |
		awk '{ printf "%.0f %s %s\n", $1 / ($3 - $2), $4, $1 }' >>"$tmp/kafka.runs"
}

echo "intspect -> Kafka on 127.0.0.1 ($addr), $(date -u +%Y-%m-%d), $(nproc) cores," \
	"$n packets, median of $reps runs"
: >"$tmp/kafka.runs"
run_kafka                       # warm-up: the broker's JIT, the topic's creation
: >"$tmp/kafka.runs"
: >"$tmp/file.runs"
i=0
while [ "$i" -lt "$reps" ]; do
	run_kafka
	"$bld/intspect" -C "$tmp/file.conf" -r "$cap" -q >/dev/null 2>"$tmp/ferr"
	pps_of "$tmp/ferr" >>"$tmp/file.runs"
	i=$((i + 1))
done
rps=$(cut -d' ' -f1 "$tmp/kafka.runs" | median)
kpps=$(cut -d' ' -f2 "$tmp/kafka.runs" | median)
fpps=$(median <"$tmp/file.runs")
echo "  runs (records/s):  $(cut -d' ' -f1 "$tmp/kafka.runs" | tr '\n' ' ')"
awk -v r="$rps" -v k="$kpps" -v f="$fpps" -v acked="$(cut -d' ' -f3 "$tmp/kafka.runs" | head -n 1)" 'BEGIN {
	printf "  records/s to Kafka, all acked (wall):  %10.0f   (%d acked per run)\n", r, acked
	printf "  packets/s, same rule to /dev/null:     %10.0f\n", f
	printf "  packets/s, with the kafka channel:     %10.0f   (%.0f ns more per packet)\n", k, 1e9 / k - 1e9 / f
}'
