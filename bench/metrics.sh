#!/bin/sh
# bench/metrics.sh - INTCollector's figures for the metric tables (metrics
# { ... }, dsl/README.md) on workload (b), telemetry reports v2.0 with 6
# hops and 9 metric sets:
#   - CPU efficiency as INTCollector measured it: packets per second per 1%
#     of one core (user + system time of the whole process; INTCollector
#     reported 154.8 kpps per 1% with XDP), median of RUNS, records written
#     as line protocol to a file;
#   - the points written against one point per table a report (every
#     matched report, or hop, of every table): the reduction event
#     detection gives, with the bands below;
#   - with influxd installed: points per second delivered to a real
#     InfluxDB over HTTP (test/services/influxdb.sh on loopback), every
#     point (drop-policy = block, no shutdown deadline), bodies plain and
#     gzip'd.
#
#   ./setup.sh build && bench/metrics.sh [PACKETS [RUNS]]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-200000}
runs=${2:-5}
tmp=${BENCH_TMP:-/tmp/intspect-bench}
mkdir -p "$tmp"
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
. "$top/bench/lib.sh"
cap=$(capture b)

metrics_conf() {        # FILE CHANNEL-SECTION
	cat >"$1" <<CONF
$2
metrics net {
  latency-threshold = 20000
  hop-latency-band = 5000
  tx-utilization-band = 200000
  queue-occupancy-band = 20000
  push-interval-ms = 10000
  idle-timeout-ms = 60000
  output-channel = {out}
}
CONF
}
metrics_conf "$tmp/metrics.conf" "file-output out { path = \"$tmp/metrics.lp\"; format = influx; queue-records = 4000000; queue-bytes = 1073741824 }"

echo "metric tables on workload (b): $(description b), $n packets, $(date -u +%Y-%m-%d)"
i=0
: >"$tmp/metrics.eff"
while [ "$i" -lt "$runs" ]; do
	/usr/bin/time -f "%e %U %S" -o "$tmp/metrics.time" \
		"$bld/intspect" -C "$tmp/metrics.conf" -r "$cap" -q 2>"$tmp/metrics.err" >/dev/null
	read -r el us sy <"$tmp/metrics.time"
	awk -v n="$n" -v el="$el" -v us="$us" -v sy="$sy" 'BEGIN {
		cpu = (us + sy) / el * 100; pps = n / el
		printf "%.1f %.0f %.0f\n", pps / 1000 / cpu, pps, cpu }' >>"$tmp/metrics.eff"
	i=$((i + 1))
done
sort -n "$tmp/metrics.eff" | awk -v r="$runs" 'NR == int((r + 1) / 2) {
	printf "  CPU efficiency: %s kpps per 1%% of a core (%s packets/s at %s%% CPU; median of %d)\n", $1, $2, $3, r }'
matched=$(sed -n 's/.*event-report net_[a-z_]*: \([0-9]*\) matched.*/\1/p' "$tmp/metrics.err" | awk '{ s += $1 } END { print s }')
records=$(sed -n 's/.*event-report net_[a-z_]*: [0-9]* matched, \([0-9]*\) records.*/\1/p' "$tmp/metrics.err" | awk '{ s += $1 } END { print s }')
awk -v m="$matched" -v r="$records" 'BEGIN {
	printf "  points: %d written, %d with one point per table a report or hop: %.1f%% fewer\n", r, m, 100 * (1 - r / m) }'
sed -n 's/^intspect: event-report \(net_[a-z_]*\): \([0-9]*\) matched, \([0-9]*\) records.*/    \1: \3 of \2/p' "$tmp/metrics.err"

if command -v influxd >/dev/null 2>&1; then
	svc=$top/test/services/influxdb.sh
	trap 'sh "$svc" stop "$tmp/influxd" >/dev/null 2>&1' EXIT
	rm -rf "$tmp/influxd"
	ports=$(sh "$svc" start "$tmp/influxd")
	for gz in false true; do
		metrics_conf "$tmp/metrics-influx.conf" "influxdb-output out { port = ${ports% *}; database = \"int_$gz\"; create-database = true; gzip = $gz; batch = 5000; queue-records = 4000000; queue-bytes = 1073741824; drop-policy = block; shutdown-ms = 600000 }"
		/usr/bin/time -f "%e" -o "$tmp/influx.time" \
			"$bld/intspect" -C "$tmp/metrics-influx.conf" -r "$cap" -q 2>"$tmp/influx.err" >/dev/null || true
		d=$(sed -n 's/.*channel out: [0-9]* records queued, \([0-9]*\) delivered.*/\1/p' "$tmp/influx.err")
		ratio=$(sed -n 's/.*gzip: .*(\(.*\))$/, bodies gzip'"'"'d to \1/p' "$tmp/influx.err")
		# (time writes "Command exited with non-zero status N" first then)
		awk -v d="$d" -v el="$(tail -n 1 "$tmp/influx.time")" -v gz="$gz" -v ratio="$ratio" 'BEGIN {
			printf "  InfluxDB (HTTP, loopback, batches of 5000, gzip = %s): %d points delivered in %.2f s, %.0f points/s%s\n", gz, d, el, d / el, ratio }'
	done
else
	echo "  InfluxDB: influxd not installed, not measured"
fi
