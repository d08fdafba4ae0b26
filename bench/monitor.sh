#!/bin/sh
# bench/monitor.sh - flow monitors (issue: SDN-Mon on the collector).
#
#   ./setup.sh build && bench/monitor.sh [PACKETS] [REPS]
#
# 1. Packets/s with a flow monitor on the 5-tuple over 180,000 flows (INT
#    v1.0, 3 hops over UDP, each flow drawn at random), sampling 1.0 and
#    0.5, next to the bare libpcap read loop and decode only, measured in
#    the same run (median of REPS).
# 2. The round trip of `get` (every flow, as JSON) through the control
#    socket for 0, 1,000 and 8,000 flows (median of 20 requests, from the
#    request sent to the response line read whole), next to SDN-Mon's
#    1.6 ms to 158 ms on its switch.
# 3. The cost of a reload in packets: 20 reloads (the flow monitor kept,
#    a query changed each time) while 50,000 reports/s flow into
#    intspect -u for 4 s, on 1 and 2 workers: packets sent, counted by the
#    monitor (which keeps them across reloads), dropped by the kernel.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-2000000}
reps=${2:-5}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }

. "$top/bench/lib.sh"
monitor_conf() {        # FILE SAMPLING
	cat >"$1" <<CONF
file-output f { path = "/dev/null"; queue-records = 4000000 }
flow-monitor five {
  match = {"ip.src", "ip.dst", "ip.proto", "udp.src_port", "udp.dst_port"}
  sampling = $2
  query-interval = 1000
  buffer = 4
  max-entries = 262144
  output-channel = {f}
}
CONF
}

cap="$tmp/mon180k-$n.pcap"
[ -f "$cap" ] || "$bld/intgen" -o "$cap" -n "$n" --seed 1 --int-version 1.0 --hops 3 \
	--flows 180000 --size 230 >/dev/null
monitor_conf "$tmp/mon1.conf" 1
monitor_conf "$tmp/mon05.conf" 0.5
echo "flow monitor benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, median of $reps runs"
echo "INT v1.0, 3 hops over UDP, 230 B, 180,000 5-tuple flows: $n packets"
: >"$tmp/floor"
for _ in $(seq "$reps"); do "$bld/bench/pcap_floor" "$cap" 2>/dev/null >>"$tmp/floor"; done
floor=$(median <"$tmp/floor")
awk -v f="$floor" 'BEGIN { printf "  %-34s %8.2f Mpps   100.0%% of the floor\n", "libpcap read loop (floor)", f / 1e6 }'
measure "decode only" "$floor" pps -r "$cap"
measure "flow monitor, sampling 1.0" "$floor" pps -r "$cap" -C "$tmp/mon1.conf"
measure "flow monitor, sampling 0.5" "$floor" pps -r "$cap" -C "$tmp/mon05.conf"
flows=$("$bld/intspect" -r "$cap" -C "$tmp/mon1.conf" -q 2>&1 >/dev/null |
	sed -n 's/.*flow-monitor five: [0-9]* matched, \([0-9]*\) flows.*/\1/p')
echo "  (flows in the monitor at sampling 1.0: $flows)"

# 2. get through the control socket, intspect -u holding N flows
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "get round trip (every flow as JSON, median of 20):"
for flows in 0 1000 8000; do
	monitor_conf "$tmp/get.conf" 1
	rm -f "$tmp/get.sock"
	"$bld/intspect" -C "$tmp/get.conf" -u "127.0.0.1:$port" --control "$tmp/get.sock" \
		>/dev/null 2>"$tmp/get.err" &
	pid=$!
	for _ in $(seq 50); do [ -S "$tmp/get.sock" ] && break; sleep 0.1; done
	if [ "$flows" -gt 0 ]; then
		"$bld/intgen" -o "$tmp/get.pcap" -n "$flows" --seed 2 --format report \
			--report-version 2.0 --flows "$flows" --flow-order shuffle >/dev/null 2>&1
		python3 "$top/test/inputs/send_reports.py" "$tmp/get.pcap" 127.0.0.1 "$port" 200 0.005 >/dev/null
		sleep 0.5
	fi
	python3 - "$tmp/get.sock" "$flows" <<'PY'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
f = s.makefile("rwb")
times = []
for _ in range(21):
    t = time.perf_counter()
    f.write(b'{"cmd":"get","name":"five"}\n')
    f.flush()
    line = f.readline()             # the whole response, not parsed
    times.append(time.perf_counter() - t)
got = json.loads(line)["flows"]
times = sorted(times[1:])
print(f"  {int(sys.argv[2]):6d} flows ({got} returned, {len(line) // 1024} KiB): "
      f"{times[len(times) // 2] * 1e3:7.2f} ms")
PY
	kill -INT "$pid"
	wait "$pid" || true
done
echo "  (SDN-Mon on its switch: 1.6 ms for 0 entries to 158 ms for 8,000)"

echo "reload while 50,000 reports/s flow (4 s, 20 reloads):"
"$bld/intgen" -o "$tmp/rl.pcap" -n 2000 --seed 3 --format report --report-version 2.0 \
	--flows 64 >/dev/null 2>&1
for w in 1 2; do
	rm -f "$tmp/rl.sock"
	rl_conf() {     # PERIOD
		cat >"$tmp/rl.conf" <<CONF
file-output f { path = "$tmp/rl.out" }
flow-monitor fm { match = {"ip.src", "ip.dst"}; query-interval = 3600000; output-channel = {f} }
query-report q { ms-period = $1; select = {"count()"}; output-channel = {f} }
CONF
	}
	rl_conf 1000000
	"$bld/intspect" -C "$tmp/rl.conf" -u "127.0.0.1:$port" -w $w --control "$tmp/rl.sock" \
		>/dev/null 2>"$tmp/rl.err" &
	pid=$!
	for _ in $(seq 50); do [ -S "$tmp/rl.sock" ] && break; sleep 0.1; done
	python3 "$top/test/soak/pace.py" "$tmp/rl.pcap" 127.0.0.1 "$port" 50000 4 >"$tmp/rl.sent" &
	sender=$!
	t0=$(date +%s%N)
	ok=0
	for i in $(seq 20); do
		sleep 0.15
		rl_conf $((1000000 + i))
		"$bld/intspect-ctl" -s "$tmp/rl.sock" reload >/dev/null 2>&1 && ok=$((ok + 1))
	done
	t1=$(date +%s%N)
	wait $sender
	sleep 0.3
	kill -INT "$pid"
	wait "$pid" || true
	sent=$(cat "$tmp/rl.sent")
	counted=$(python3 -c 'import json,sys; print(sum(json.loads(l)["packets"] for l in open(sys.argv[1]) if "\"fm\"" in l))' "$tmp/rl.out")
	drops=$(sed -n 's/.*packets received by the kernel, \([0-9]*\) dropped.*/\1/p' "$tmp/rl.err")
	ring=$(sed -n 's/^intspect: \([0-9]*\) items dropped.*/\1/p' "$tmp/rl.err")
	echo "  $w worker(s): $ok of 20 reloads done, $sent reports sent, $counted counted by the monitor, ${drops:-?} dropped by the kernel, ${ring:-0} on the way to a worker (reload + request: $(( (t1 - t0) / 20000000 - 150 )) ms each on average)"
	rm -f "$tmp/rl.out"
done
