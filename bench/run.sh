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

cat >"$tmp/q9.conf" <<CONF
query-report q9 {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.latency)", "avg(int.hop_latencies)", "max(int.hop_queue_occups)", "avg(diff(meta.timestamp))"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {stdout}
}
CONF
cat >"$tmp/delta.conf" <<CONF
event-report delta {
  event = "int.hop_latencies"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "ip.dst", "int.hop_switch_ids"}
  output-channel = {stdout}
}
CONF
cat >"$tmp/ev14.conf" <<CONF
file-output { path = "$tmp/ev14.json" }
event-report ev14 {
  event = "int.hop_latencies"
  attributes = {"meta.timestamp", "ip.src", "ip.dst", "udp.src_port", "udp.dst_port", "int.num_hop",
                "int.latency", "int.hop_switch_ids", "int.hop_ingress_port_ids", "int.hop_egress_port_ids",
                "int.hop_queue_ids", "int.hop_queue_occups", "int.hop_ingress_times", "int.hop_egress_times"}
  output-channel = {file}
}
CONF

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# pps of one intspect run (from its -q summary)
pps() {
	"$bld/intspect" "$@" -q 2>&1 >/dev/null | sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p'
}

measure() {     # label floor-pps command...
	label=$1 floor=$2
	shift 2
	i=0
	: >"$tmp/runs"
	while [ "$i" -lt "$reps" ]; do
		"$@" >>"$tmp/runs"
		i=$((i + 1))
	done
	m=$(median <"$tmp/runs")
	awk -v l="$label" -v m="$m" -v f="$floor" \
		'BEGIN { printf "  %-34s %8.2f Mpps   %5.1f%% of the floor\n", l, m / 1e6, 100 * m / f }'
}

run_capture() {   # name description intgen-args...
	name=$1 desc=$2
	shift 2
	cap="$tmp/$name.pcap"
	[ -f "$cap" ] || "$bld/intgen" -o "$cap" -n "$n" --seed 1 "$@"
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
	measure "9-function query, 2 group-by keys" "$floor" pps -r "$cap" -C "$tmp/q9.conf"
	measure "the same query, 2 workers" "$floor" pps -r "$cap" -C "$tmp/q9.conf" -w 2
	measure "delta-cond event per flow" "$floor" pps -r "$cap" -C "$tmp/delta.conf"
	measure "14-attribute event to a file" "$floor" pps -r "$cap" -C "$tmp/ev14.conf"
	rm -f "$tmp/ev14.json"
}

echo "intspect benchmark, $(date -u +%Y-%m-%d), $(nproc) cores, median of $reps runs"
run_capture a "INT v1.0 3 hops over UDP, 230 B, 64 flows" \
	--int-version 1.0 --hops 3 --bitmap 0xFC00 --flows 64 --size 230
run_capture b "report v2.0, 6 hops, 9 metric sets" \
	--format report --report-version 2.0 --hops 6 --bitmap 0xFF80 --flows 64
run_capture c "report v2.0, 1-6 hops, 9 metric sets" \
	--format report --report-version 2.0 --hops 1-6 --bitmap 0xFF80 --flows 64
peak=$( { /usr/bin/time -f '%M' "$bld/intspect" -r "$tmp/b.pcap" -C "$tmp/q9.conf" -q >/dev/null 2>"$tmp/rss"; } 2>&1; tail -1 "$tmp/rss")
echo "peak RSS, query report on (b): ${peak} KiB"
