#!/bin/sh
# test/soak/run.sh [SECONDS [RATE]] - intspect under a steady load while
# its services fail: telemetry reports at RATE a second (default 1000) to
# the UDP listener for SECONDS (default 60; SOAK_SECONDS too), two workers,
# every record to a real Redis (a list), a real Kafka broker (idempotent
# producer) and a file. A third of the way in Redis is stopped (saving what
# it took) and started again; at two thirds the Kafka broker is; a Kafka
# consumer reading the topic all along is paused for a while in between.
#
# Checked at the end:
#   - every report sent was received (the kernel dropped none);
#   - each channel: queued = delivered + dropped;
#   - the file holds exactly the delivered records; Redis holds exactly
#     the delivered records, each once (a batch resent after a restart may
#     repeat one: counted and removed before comparing); the records the
#     broker acknowledged are all in the topic (read again at the end);
#   - resident memory is flat once the faults are over: sampled every
#     second, it rises by at most 2 MiB over the last fifth of the samples
#     (6 MiB in a run under 10 minutes, whose rings are still warming up;
#     2 MiB more in an AddressSanitizer build).
# The samples and the counters are printed (the figures of the README
# come from a 30-minute run: test/soak/run.sh 1800).
# Exit 77 without redis-server, java or kcat.
set -u
src=${top_srcdir:-.}
bld=$(cd "${top_builddir:-.}" && pwd)
secs=${1:-${SOAK_SECONDS:-60}}
rate=${2:-1000}
tmp=$(mktemp -d)
pids=""
. "$src/test/tools/checks.sh"
rsvc=$src/test/services/redis.sh
ksvc=$src/test/services/kafka.sh

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	sh "$rsvc" stop "$tmp/redis" >/dev/null 2>&1
	sh "$ksvc" stop "$tmp/kafka" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for c in redis-server redis-cli kcat java python3; do
	command -v "$c" >/dev/null 2>&1 || { echo "soak: $c not installed: skipped"; exit 77; }
done
rport=$(sh "$rsvc" start "$tmp/redis") || { echo "soak: redis did not start: skipped"; exit 77; }
kaddr=$(sh "$ksvc" start "$tmp/kafka") || { echo "soak: kafka did not start: skipped"; exit 77; }
rcli() { redis-cli -p "$rport" "$@"; }

"$bld/intgen" -o "$tmp/r.pcap" -n 500 --seed 5 --format report --report-version 2.0 --hops 4 \
	>/dev/null 2>&1 || { bad "intgen"; summary soak; exit 1; }
uport=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/soak.conf" <<CONF
redis-output r { port = $rport; mode = rpush; key = "soak"; queue-records = 200000 }
kafka-output k {
  brokers = "$kaddr"
  topic = "soak"
  queue-records = 200000
  property "enable.idempotence" = "true"
}
file-output f { path = "$tmp/soak.json"; flush-ms = 50 }
event-report each {
  event = "int_report.seq_num"
  attributes = {"meta.packet_index", "int_report.node_id", "ip.src", "int.hop_latencies"}
  output-channel = {r, k, f}
}
CONF
# Under AddressSanitizer freed memory waits in a quarantine (256 MiB by
# default) before reuse: resident memory would climb to that whatever the
# program does. A small one keeps the check about the program.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4:thread_local_quarantine_size_kb=256 \
	"$bld/intspect" -C "$tmp/soak.conf" -u "127.0.0.1:$uport" -w 2 -q >/dev/null 2>"$tmp/soak.err" &
ipid=$!
pids="$ipid"
sleep 1
# a consumer of the topic for the whole run
kcat -b "$kaddr" -t soak -C -o beginning -q -f '%s\n' >"$tmp/consumed" 2>/dev/null &
cpid=$!
pids="$pids $cpid"
python3 "$src/test/soak/pace.py" "$tmp/r.pcap" 127.0.0.1 "$uport" "$rate" "$secs" >"$tmp/sent" &
spid=$!
pids="$pids $spid"

: >"$tmp/rss"
t=0
lastfault=0
# a loaded machine may spend much of the run restarting the broker: past
# the sender's end, sampling goes on (intspect draining) until 6 samples
# follow the last fault, which the memory check below needs
while kill -0 "$spid" 2>/dev/null || { [ "$lastfault" -gt 0 ] && [ "$t" -lt $((lastfault + 6)) ]; }; do
	sleep 1
	t=$((t + 1))
	echo "$t $(sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$ipid/status" 2>/dev/null)" >>"$tmp/rss"
	if [ "$t" -eq $((secs / 3)) ]; then
		rpid=$(cat "$tmp/redis/redis.pid")
		rcli SHUTDOWN SAVE >/dev/null 2>&1
		while kill -0 "$rpid" 2>/dev/null; do sleep 0.05; done
		sleep 2
		sh "$rsvc" start "$tmp/redis" "$rport" >/dev/null || bad "redis restart"
		echo "  ${t}s: Redis stopped (saving) and started again"
	elif [ "$t" -eq $((secs / 2)) ]; then
		kill -STOP "$cpid"
		echo "  ${t}s: Kafka consumer paused"
	elif [ "$t" -eq $((secs * 2 / 3)) ]; then
		sh "$ksvc" stop "$tmp/kafka" >/dev/null 2>&1
		sleep 2
		sh "$ksvc" start "$tmp/kafka" >/dev/null || bad "kafka restart"
		kill -CONT "$cpid"
		lastfault=$t
		echo "  ${t}s: Kafka broker stopped and started again, consumer resumed"
	fi
done
wait "$spid"
sent=$(cat "$tmp/sent")
sleep 2
kill -INT "$ipid"
wait "$ipid"
rc=$?
pids="$cpid"

# counters of channel NAME: queued delivered dropped retried reconnects acked
counters() {
	sed -n "s/^intspect: channel $1: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped, \([0-9]*\) retried, \([0-9]*\) reconnects, \([0-9]*\) acknowledged$/\1 \2 \3 \4 \5 \6/p" "$tmp/soak.err"
}
recv=$(sed -n 's/^intspect: \([0-9]*\) packets received by the kernel, \([0-9]*\) dropped$/\1 \2/p' "$tmp/soak.err")
[ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || bad "intspect exit status $rc" "$tmp/soak.err"
[ "$recv" = "$sent 0" ] && ok "$sent reports sent in ${secs}s at $rate/s, all received (kernel: $recv)" ||
	bad "reports: sent $sent, kernel received/dropped: $recv" "$tmp/soak.err"

for ch in r k f; do
	set -- $(counters "$ch") x x x x x x
	eval "q_$ch=$1 d_$ch=$2 x_$ch=$3 re_$ch=$4 c_$ch=$5 a_$ch=$6"
	if [ "$1" = "$sent" ] && [ "$1" -eq $(($2 + $3)) ] 2>/dev/null; then
		ok "channel $ch: $1 queued = $2 delivered + $3 dropped ($4 retried, $5 reconnects, $6 acknowledged)"
	else
		bad "channel $ch: queued $1 delivered $2 dropped $3 (sent $sent)" "$tmp/soak.err"
	fi
done

# the file: exactly the delivered records
lines=$(wc -l <"$tmp/soak.json" | tr -d ' ')
[ "$lines" = "$d_f" ] && ok "file: $lines records, as delivered" || bad "file: $lines lines, $d_f delivered"

# Redis: the delivered records, each once (a resent batch may repeat one)
rcli --raw LRANGE soak 0 -1 >"$tmp/redis.got"
total=$(wc -l <"$tmp/redis.got" | tr -d ' ')
uniq_n=$(sort -u "$tmp/redis.got" | wc -l | tr -d ' ')
sort -u "$tmp/soak.json" >"$tmp/file.sorted"
stray=$(sort -u "$tmp/redis.got" | comm -23 - "$tmp/file.sorted" | wc -l | tr -d ' ')
if [ "$uniq_n" = "$d_r" ] && [ "$stray" = 0 ]; then
	ok "redis: $uniq_n distinct records = delivered, each one the file has ($((total - uniq_n)) repeated by a resent batch)"
else
	bad "redis: $uniq_n distinct ($total in all, $stray not in the file), $d_r delivered"
fi

# Kafka: every acknowledged record in the topic (read again from the
# start once the run is over); the consumer that was paused read on
kill "$cpid" 2>/dev/null
kcat -b "$kaddr" -t soak -C -o beginning -e -q -f '%s\n' >"$tmp/topic" 2>"$tmp/topic.err"
kuniq=$(sort -u "$tmp/topic" | wc -l | tr -d ' ')
kstray=$(sort -u "$tmp/topic" | comm -23 - "$tmp/file.sorted" | wc -l | tr -d ' ')
paused=$(sort -u "$tmp/consumed" | wc -l | tr -d ' ')
if [ "$kuniq" -ge "$a_k" ] && [ "$kuniq" -le "$d_k" ] && [ "$a_k" -gt 0 ] && [ "$kstray" = 0 ]; then
	ok "kafka: the topic has $kuniq distinct records, the $a_k acknowledged among them ($(($(wc -l <"$tmp/topic") - kuniq)) repeated; the consumer paused mid-run read $paused)"
else
	bad "kafka: the topic has $kuniq distinct ($kstray not in the file), $a_k acknowledged, $d_k delivered" "$tmp/topic.err"
fi

# resident memory: flat once the faults are over. A backlog held through
# an outage takes memory that stays (the allocator keeps it for the next
# one): steps at the faults are expected, growth between them is not. Over
# the last fifth of the run, and 3 samples past the last fault (the
# client's reconnection takes its buffers: on a loaded machine the
# sampling lags and the broker's restart can fall inside that fifth),
# memory must not rise by more than 2 MiB
# (4 MiB in an AddressSanitizer build, whose allocator holds caches and a
# quarantine, made small here, of its own).
awk -v n="$(wc -l <"$tmp/rss")" -v from=$((lastfault + 3)) '$2 != "" {
	if (peak == "" || $2 > peak) peak = $2
	if (NR > n * 4 / 5 && $1 > from) { if (lo == "") lo = $2; if ($2 > hi) hi = $2 }
} END {
	printf "%d %d %d\n", peak, lo, hi
}' "$tmp/rss" >"$tmp/rss.sum"
# lo: where the last fifth starts (memory given back after a backlog
# drains is no growth); hi: its largest
read -r rpeak rlo rhi <"$tmp/rss.sum"
slack=2048 how=""
if [ "$secs" -lt 600 ]; then
	# a short run: the channels' rings are still being touched for the
	# first time (a few hundred KiB a second here); a leak of the records
	# (three channels, 1,000 a second) would take several MiB a second
	slack=6144 how=" (a short run: within 6 MiB)"
fi
if grep -q -a __asan_init "$bld/intspect" 2>/dev/null; then
	slack=$((slack + 2048)) how=" (AddressSanitizer build, ${secs}s: within $(((slack + 2048) / 1024)) MiB)"
fi
echo "  resident memory (MiB, each 10% of the run): $(awk -v n="$(wc -l <"$tmp/rss")" '
	NR % (int(n / 10) > 0 ? int(n / 10) : 1) == 0 { printf "%.1f ", $2 / 1024 }' "$tmp/rss")"
if [ "$(wc -l <"$tmp/rss")" -lt 10 ] || [ "${rlo:-0}" -eq 0 ]; then
	bad "memory: too few samples of /proc/$ipid/status" "$tmp/rss"
elif [ $((rhi - rlo)) -le "$slack" ]; then
	ok "memory flat after the faults$how: $((rlo / 1024)) MiB at the start of the last fifth of the run, $((rhi / 1024)) at the most in it, $((rpeak / 1024)) MiB at the most in all"
else
	bad "memory grew after the faults: $((rlo / 1024)) to $((rhi / 1024)) MiB over the last fifth of the run" "$tmp/rss"
fi
summary soak
