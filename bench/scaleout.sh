#!/bin/sh
# bench/scaleout.sh - scaling out through Kafka (README.md, "Scaling out"):
# reports per second one consumer instance takes from a local broker, and
# the latency from a report to the merged record of its window.
#
#   ./setup.sh build && bench/scaleout.sh [REPORTS] [REPS]
#
# 1. Consumption: REPORTS telemetry reports (default 1,000,000; v2.0, 6
#    hops, 9 metric sets, 64 flows) are forwarded once into a 4-partition
#    topic (intspect -r --forward). Then, REPS times (default 3), a new
#    consumer group of one intspect -k reads all of them, running
#      decode only               (no rules)
#      the 9-function query      (bench/lib.sh's q9, written as partial
#                                 windows to /dev/null)
#    with -c REPORTS, so that it stops at the last one. The time of the
#    same consumer stopping at the first report (-c 1: joining the group,
#    the first fetch) is subtracted: reports/s = (REPORTS - 1) / (t(all) -
#    t(first)), medians, next to the same work read from the capture file
#    (-r), the ceiling of one core.
# 2. Latency: reports paced at RATE/s (default 2,000) for 10 s into
#    intspect -u --forward; 2 consumers of a group write partial windows of
#    100 ms to a topic; a merge writes the records to a file, which a
#    reader stamps as lines arrive. Latency = arrival - window end (packet
#    time is the forwarder's receive time, the same clock): percentiles
#    over the windows.
# The broker is test/services/kafka.sh's, on /dev/shm when there is room,
# sharing the machine's cores with everything else.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-1000000}
reps=${2:-3}
rate=${RATE:-2000}
svc=$top/test/services/kafka.sh
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
if [ -z "${BENCH_TMP:-}" ] && [ -d /dev/shm ] &&
	[ "$(df -Pk /dev/shm | awk 'NR == 2 { print $4 }')" -gt $((4 * 1024 * 1024)) ]; then
	BENCH_TMP=/dev/shm
fi
tmp=$(mktemp -d "${BENCH_TMP:-/tmp}/intspect-sobench.XXXXXX")
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	sh "$svc" stop "$tmp/broker" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

addr=$(sh "$svc" start "$tmp/broker")
sh "$svc" topic "$tmp/broker" 4 reports rt parts
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
secs_of() { sed -n 's/^intspect: \([0-9.]*\) s, .*/\1/p' "$1" | tail -n 1; }

"$bld/intgen" -o "$tmp/b.pcap" -n "$n" --seed 1 --format report --report-version 2.0 --hops 6 \
	--bitmap 0xFF80 --flows 64 >/dev/null
"$bld/intspect" -r "$tmp/b.pcap" --forward "kafka:$addr/reports" 2>"$tmp/fwd.err"
grep -q "$n acknowledged" "$tmp/fwd.err" || { cat "$tmp/fwd.err" >&2; exit 1; }

cat >"$tmp/q9.conf" <<'CONF'
file-output out { path = "/dev/null" }
query-report q9 {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.latency)", "avg(int.hop_latencies)", "max(int.hop_queue_occups)", "p99(int.latency)"}
  group-by = {"ip.2.src", "ip.2.dst"}
  output-channel = {out}
  output-format = partial
}
CONF

consume() {     # COUNT [rules...]: seconds of a new group's consumer stopping at COUNT
	count=$1
	shift
	"$bld/intspect" -k "$addr/reports@bench$(date +%s%N)" -c "$count" -q "$@" >/dev/null \
		2>"$tmp/c.err" || true
	secs_of "$tmp/c.err"
}

echo "intspect -k from Kafka on 127.0.0.1 ($addr), $(date -u +%Y-%m-%d), $(nproc) cores," \
	"$n reports in 4 partitions, median of $reps"
for work in decode q9; do
	set --
	[ "$work" = q9 ] && set -- -C "$tmp/q9.conf"
	: >"$tmp/rates"
	: >"$tmp/file"
	i=0
	while [ "$i" -lt "$reps" ]; do
		all=$(consume "$n" "$@")
		first=$(consume 1 "$@")
		awk -v n="$n" -v a="$all" -v f="$first" 'BEGIN { printf "%.0f\n", (n - 1) / (a - f) }' >>"$tmp/rates"
		"$bld/intspect" -r "$tmp/b.pcap" -q "$@" 2>&1 >/dev/null |
			sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p' >>"$tmp/file"
		i=$((i + 1))
	done
	awk -v w="$work" -v k="$(median <"$tmp/rates")" -v f="$(median <"$tmp/file")" 'BEGIN {
		printf "  %-22s %9.0f reports/s from Kafka   %9.0f from the file (%.0f%%)\n", w, k, f, 100 * k / f }'
	echo "    runs: $(tr '\n' ' ' <"$tmp/rates")"
done

# ---- 2. latency
cat >"$tmp/rt.body" <<'CONF'
query-report rt {
  ms-period = 100
  select = {"count()", "avg(int.latency)", "p99(int.latency)"}
  group-by = {"int.num_hop"}
  output-channel = {out}
  OUTFMT
}
CONF
sed 's/OUTFMT//' "$tmp/rt.body" >"$tmp/m.conf"
printf 'file-output out { path = "%s"; flush-ms = 1 }\nmerge { instances = 2 }\n' "$tmp/merged.json" >>"$tmp/m.conf"
for k in 1 2; do
	sed 's/OUTFMT/output-format = partial/' "$tmp/rt.body" >"$tmp/c$k.conf"
	printf 'kafka-output out { brokers = "%s"; topic = "parts"; linger-ms = 1 }\nprobe-id = %d\n' \
		"$addr" "$k" >>"$tmp/c$k.conf"
done
"$bld/intgen" -o "$tmp/rt.pcap" -n 2000 --seed 3 --format report --report-version 2.0 --hops 1-6 \
	--bitmap 0xFF80 >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
: >"$tmp/merged.json"
python3 - "$tmp/merged.json" "$tmp/stamps" <<'PY' &
import sys, time
f, out = open(sys.argv[1]), open(sys.argv[2], "w")
while True:
    line = f.readline()
    if not line:
        time.sleep(0.0005)
        continue
    out.write(f"{time.time():.6f} {line}")
    out.flush()
PY
pids="$pids $!"
"$bld/intspect" -C "$tmp/m.conf" --merge "kafka:$addr/parts@merge" 2>"$tmp/m.err" &
mp=$!
"$bld/intspect" -k "$addr/rt@g" -C "$tmp/c1.conf" 2>"$tmp/c1.err" &
c1=$!
"$bld/intspect" -k "$addr/rt@g" -C "$tmp/c2.conf" 2>"$tmp/c2.err" &
c2=$!
"$bld/intspect" -u "127.0.0.1:$port" --forward "kafka:$addr/rt" 2>"$tmp/f.err" &
fp=$!
pids="$pids $mp $c1 $c2 $fp"
sleep 6
python3 "$top/test/soak/pace.py" "$tmp/rt.pcap" 127.0.0.1 "$port" "$rate" 10 >"$tmp/sent"
sleep 2
kill $fp $c1 $c2 $mp 2>/dev/null || true
wait $fp $c1 $c2 $mp 2>/dev/null || true
python3 - "$tmp/stamps" "$rate" <<'PY'
import json, sys
lat = {}
for line in open(sys.argv[1]):
    t, rec = line.split(" ", 1)
    o = json.loads(rec)
    end = o["window_end"]
    lat[end] = min(lat.get(end, 1e18), float(t) - end)   # the window's first record
v = sorted(lat.values())[1:-1]      # the first and last windows are cut by the run
if not v:
    sys.exit("no merged window")
q = lambda p: v[min(len(v) - 1, int(p * len(v)))] * 1000
print(f"  latency, report -> merged record (2 consumers, 100 ms windows, {sys.argv[2]} reports/s): "
      f"p50 {q(0.5):.1f} ms, p90 {q(0.9):.1f} ms, max {v[-1] * 1000:.1f} ms after the window's end "
      f"({len(v)} windows)")
PY
