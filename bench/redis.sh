#!/bin/sh
# bench/redis.sh - records per second from intspect into Redis on loopback,
# and what the channel costs the packet path.
#
#   ./setup.sh build && bench/redis.sh [PACKETS] [REPS]
#
# Starts a throwaway redis-server (test/services/redis.sh), writes an intgen
# capture (default 2,000,000 packets: INT v1.0, 3 hops, UDP, 64 flows) and
# runs an event report that writes one record per packet (~130 bytes of
# JSON). For PUBLISH (no subscriber, then one redis-cli subscriber),
# RPUSH and XADD, with drop-policy = block so that nothing is dropped and
# the run lasts as long as Redis needs: records/s = the delivered counter
# over the wall time of the whole run (start to drained). Then the packet
# path: packets/s (intspect -q) with the channel disabled (enable = false:
# the rules run and submit, records are counted dropped) and enabled with
# the default drop-newest queue (the packet thread never waits: what it
# costs is CPU shared with the channel thread and redis-server). Median of
# REPS runs; numbers, not assertions.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bld=${BUILD:-$top/build/rel}
n=${1:-2000000}
reps=${2:-3}
tmp=${BENCH_TMP:-/tmp/intspect-bench-redis}
batch=${BATCH:-4096}
[ -x "$bld/intspect" ] || { echo "build first: ./setup.sh build" >&2; exit 2; }
mkdir -p "$tmp"
sub=""
cleanup() {
	[ -n "$sub" ] && kill "$sub" 2>/dev/null || true
	sh "$top/test/services/redis.sh" stop "$tmp/redis" >/dev/null 2>&1
}
trap cleanup EXIT
P=$(sh "$top/test/services/redis.sh" start "$tmp/redis") || { echo "cannot start redis-server" >&2; exit 2; }
cap=$tmp/ev.pcap
[ -f "$cap" ] || "$bld/intgen" -o "$cap" -n "$n" --seed 1 --int-version 1.0 --hops 3 --flows 64 >/dev/null

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }

# conf FILE SECTION-KEYS: the rule and a redis-output r with those keys
conf() {
	cat >"$1" <<EOF
redis-output r { port = $P; $2 }
event-report ev {
  event = "int.num_hop"
  attributes = {"ip.src", "ip.dst", "int.hop_latencies"}
  output-channel = {r}
}
EOF
}

# recs LABEL KEYS: records/s, median of REPS
recs() {
	conf "$tmp/r.conf" "batch = $batch; drop-policy = block; $2"
	: >"$tmp/runs"
	i=0
	while [ "$i" -lt "$reps" ]; do
		redis-cli -p "$P" FLUSHALL >/dev/null
		t0=$(now)
		"$bld/intspect" -C "$tmp/r.conf" -r "$cap" -q 2>"$tmp/err" >/dev/null
		t1=$(now)
		d=$(sed -n 's/^intspect: channel r: [0-9]* records queued, \([0-9]*\) delivered.*/\1/p' "$tmp/err")
		awk -v d="$d" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f\n", d / (b - a) }' >>"$tmp/runs"
		i=$((i + 1))
	done
	awk -v l="$1" -v m="$(median <"$tmp/runs")" -v d="$d" \
		'BEGIN { printf "  %-36s %6.2f M records/s   (%d delivered per run)\n", l, m / 1e6, d }'
	grep -E 'dropped|refused|redis' "$tmp/err" | grep -v ' 0 dropped' || true
}

# pps LABEL KEYS: packets/s of the -q summary, median of REPS
pps() {
	conf "$tmp/p.conf" "$2"
	: >"$tmp/runs"
	i=0
	while [ "$i" -lt "$reps" ]; do
		redis-cli -p "$P" FLUSHALL >/dev/null
		"$bld/intspect" -C "$tmp/p.conf" -r "$cap" -q 2>"$tmp/err" >/dev/null
		sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p' "$tmp/err" >>"$tmp/runs"
		i=$((i + 1))
	done
	m=$(median <"$tmp/runs")
	line=$(sed -n 's/^intspect: channel r: //p' "$tmp/err")
	awk -v l="$1" -v m="$m" -v b="${base:-$m}" -v s="$line" \
		'BEGIN { printf "  %-36s %6.2f Mpps  %6.1f%%   %s\n", l, m / 1e6, 100 * m / b, s }'
	[ -n "${base:-}" ] || base=$m
}

echo "intspect -> Redis $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(date -u +%Y-%m-%d), $(nproc) cores, $n packets, batch $batch, median of $reps"
echo "records/s (one record per packet, drop-policy = block, wall time to drained):"
recs "PUBLISH, no subscriber" "mode = publish; channel = bench"
# redis-cli reads slower than intspect publishes: no output buffer limit,
# so that it stays subscribed (the server buffers what it has not read).
redis-cli -p "$P" CONFIG SET client-output-buffer-limit "pubsub 0 0 0" >/dev/null
redis-cli -p "$P" SUBSCRIBE bench >/dev/null 2>&1 &
sub=$!
sleep 0.2
recs "PUBLISH, one redis-cli subscriber" "mode = publish; channel = bench"
kill "$sub" 2>/dev/null || true
sub=""
recs "RPUSH" "mode = rpush; key = bench"
recs "XADD" "mode = xadd; key = bench"
recs "XADD MAXLEN ~ 100000" "mode = xadd; key = bench; stream-maxlen = 100000"
echo "packets/s of the packet path (-q), relative to the channel disabled:"
base=""
pps "channel disabled" "enable = false"
pps "PUBLISH, drop-newest" "mode = publish; channel = bench; batch = $batch"
pps "RPUSH, drop-newest" "mode = rpush; key = bench; batch = $batch"
pps "XADD, drop-newest" "mode = xadd; key = bench; batch = $batch"
