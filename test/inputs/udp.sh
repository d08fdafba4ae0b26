#!/bin/sh
# UDP report listener: telemetry reports sent over loopback to `intspect -u`
# give the same records as the offline run of the capture they came from
# (timestamps and the outer addresses aside: they are the listener's).
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/test/inputs/lib.sh"

port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
make_reports 400 4 3 1-4

"$bld/intspect" -C "$tmp/rules.conf" -u "127.0.0.1:$port" >"$tmp/live.raw" 2>"$tmp/live.err" &
pid=$!
sleep 0.5
sent=$(python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.01)
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
[ "$rc" -eq 0 ] && ok "listener exits cleanly on SIGINT" || bad "listener exit status $rc"
[ "$sent" -eq 400 ] && ok "400 reports sent" || bad "sent $sent reports"
grep -q "^intspect: 400 packets" "$tmp/live.err" && ok "400 datagrams received" || { bad "received count"; cat "$tmp/live.err"; }
grep -q "400 packets received by the kernel, 0 dropped" "$tmp/live.err" && ok "kernel drop counter reported" \
	|| { bad "kernel counters"; cat "$tmp/live.err"; }
same_as_offline "$tmp/live.raw"
grep -q '"meta.report_index":2' "$tmp/live.raw" && ok "coalesced reports handed out one by one" \
	|| bad "coalesced reports"
# the receive buffer: 32 MiB as root; capped by net.core.rmem_max without
# the privilege, and said once
grep -q "note: UDP receive buffer" "$tmp/live.err" && bad "root: the buffer said capped" ||
	ok "root: 32 MiB receive buffer, nothing to say"
if [ "$(id -u)" = 0 ] && command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1 &&
   [ "$(cat /proc/sys/net/core/rmem_max)" -lt 33554432 ]; then
	# a copy nobody may run (the build may sit in a directory only root enters)
	chmod 755 "$tmp"
	cp "$bld/intspect" "$tmp/intspect-nobody" && chmod 755 "$tmp/intspect-nobody"
	runuser -u nobody -- "$tmp/intspect-nobody" -u "127.0.0.1:$port" -q --control none -w 2 \
		2>"$tmp/nobody.err" &
	npid=$!
	sleep 0.5
	kill -INT "$npid" 2>/dev/null; pkill -INT -u nobody -x intspect-nobody 2>/dev/null
	wait "$npid"
	[ "$(grep -c 'note: UDP receive buffer [0-9]* KiB, not the 32 MiB asked: the kernel.s net.core.rmem_max' "$tmp/nobody.err")" = 1 ] &&
		ok "without privilege: the capped buffer said once (2 workers)" ||
		{ bad "capped buffer note"; cat "$tmp/nobody.err"; }
fi
# drops with no datagram after them (a burst into a stopped listener):
# the kernel's counter is read at exit, so received + dropped = sent
printf 'input { buffer-size = 1 }\n' >"$tmp/small.conf"
"$bld/intspect" -C "$tmp/small.conf" -u "127.0.0.1:$port" -q 2>"$tmp/burst.err" &
pid=$!
sleep 0.5
kill -STOP "$pid"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(20000):
    s.sendto(b"x" * 200, ("127.0.0.1", int(sys.argv[1])))' "$port"
kill -CONT "$pid"
sleep 1
kill -INT "$pid"
wait "$pid"
pid=""
python3 - "$tmp/burst.err" <<'EOF' && ok "a burst into a stopped listener: received + dropped = sent" ||
import re, sys
m = re.search(r'(\d+) packets received by the kernel, (\d+) dropped', open(sys.argv[1]).read())
r, d = int(m.group(1)), int(m.group(2))
assert d > 0 and r + d == 20000, (r, d)
EOF
	{ bad "drops counted at exit"; cat "$tmp/burst.err"; }
# a stop while a batch of datagrams is being handed out: the batch goes
# through first (they left the socket; nothing else would count them).
# strace holds each recvmmsg's return 2 s: the first brings 1 datagram,
# the second the 50 sent meanwhile, and SIGTERM comes while it is held
if command -v strace >/dev/null 2>&1; then
	strace -f -o /dev/null -e trace=recvmmsg -e inject=recvmmsg:delay_exit=2000000 \
		"$bld/intspect" -u "127.0.0.1:$port" -q --control none 2>"$tmp/batch.err" &
	spid=$!
	sleep 1
	python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"x" * 100, ("127.0.0.1", int(sys.argv[1])))
time.sleep(0.5)
for i in range(50):
    s.sendto(b"x" * 100, ("127.0.0.1", int(sys.argv[1])))' "$port"
	sleep 2.5
	pkill -TERM -P "$spid" -x intspect 2>/dev/null || pkill -TERM -f "intspect -u 127.0.0.1:$port"
	wait "$spid"
	grep -q "^intspect: 51 packets" "$tmp/batch.err" &&
		ok "a stop mid-batch: the 51 datagrams read are handled" ||
		{ bad "a stop mid-batch"; cat "$tmp/batch.err"; }
fi
# two workers, two SO_REUSEPORT sockets on the port; 32 senders (source
# ports) for the kernel to spread
"$bld/intspect" -C "$tmp/rules.conf" -u "127.0.0.1:$port" -w 2 >"$tmp/rp.raw" 2>"$tmp/rp.err" &
pid=$!
sleep 0.5
python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.01 32 >/dev/null
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
[ "$rc" -eq 0 ] && grep -q "^intspect: 400 packets" "$tmp/rp.err" &&
	grep -q "400 packets received by the kernel, 0 dropped" "$tmp/rp.err" \
	&& ok "reuseport: 400 datagrams over two sockets, counters summed" || { bad "reuseport run"; cat "$tmp/rp.err"; }
shares_read "$tmp/rp.err" 2
"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/r.pcap" >"$tmp/offline.raw" 2>/dev/null
same_set_as "$tmp/rp.raw" "$tmp/offline.raw"
# one sender: the kernel gives every datagram to one worker's socket, the
# other worker's share stays quiet while it is sent the items it owns
# (a flow monitor keyed by flow); waiting on its quiet socket, it must
# still take them all (it took 64 a wait: the rest was dropped at its
# full ring)
printf 'flow-monitor fm { match = {"ip.src", "ip.dst"}; query-interval = 3600000 }\n' >"$tmp/fm.conf"
"$bld/intspect" -C "$tmp/fm.conf" -u "127.0.0.1:$port" -w 2 >/dev/null 2>"$tmp/fm.err" &
pid=$!
sleep 0.5
python3 "$src/test/soak/pace.py" "$tmp/r.pcap" 127.0.0.1 "$port" 10000 2 >"$tmp/fm.sent"
sleep 0.5
kill -INT "$pid"
wait "$pid"
pid=""
got=$(sed -n 's/^intspect: [0-9]* packets ([0-9]* bytes), \([0-9]*\) telemetry items.*/\1/p' "$tmp/fm.err")
matched=$(sed -n 's/.*flow-monitor fm: \([0-9]*\) matched.*/\1/p' "$tmp/fm.err")
[ -n "$got" ] && [ "$got" -gt 30000 ] && [ "$matched" = "$got" ] && ! grep -q "items dropped" "$tmp/fm.err" &&
	ok "one busy share, one quiet: every item reaches its owner ($matched items, $(cat "$tmp/fm.sent") datagrams sent)" ||
	{ bad "one busy share, one quiet: items lost on the way"; cat "$tmp/fm.err"; }
"$bld/intspect" -u 70000 -q 2>"$tmp/e" ; rc=$?
[ "$rc" -ne 0 ] && grep -q "expected PORT" "$tmp/e" && ok "bad port is an error" || bad "bad port"
# drop-policy = block would stall a live input: refused with its position
printf 'file-output { path = "%s/x.json"\n  drop-policy = block }\nevent-report e { event = "int.latency"; output-channel = {file} }\n' "$tmp" >"$tmp/block.conf"
"$bld/intspect" -C "$tmp/block.conf" -u "127.0.0.1:$port" 2>"$tmp/block.err"; rc=$?
[ "$rc" -eq 2 ] && grep -q "block.conf:2:3: drop-policy = block is for capture files" "$tmp/block.err" \
	&& ok "block policy refused on a live input" || { bad "block policy on a live input"; cat "$tmp/block.err"; }
# SIGUSR1 prints the counters while running
"$bld/intspect" -C "$tmp/rules.conf" -u "127.0.0.1:$port" >/dev/null 2>"$tmp/usr1.err" &
pid=$!
sleep 0.5
python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" >/dev/null
sleep 0.3
kill -USR1 "$pid"
sleep 0.3
kill -INT "$pid"
wait "$pid"
pid=""
[ "$(grep -c "^intspect: 400 packets (" "$tmp/usr1.err")" -eq 2 ] && ok "SIGUSR1 prints the counters" \
	|| { bad "SIGUSR1 counters"; cat "$tmp/usr1.err"; }
# on a live input, idle time closes windows on the wall clock: a window of
# 200 ms is written while no report comes, before any stop
printf 'query-report idle {\n  ms-period = 200\n  select = {"count()"}\n  output-channel = {f}\n}\nfile-output f { path = "%s/idle.json" }\n' \
	"$tmp" >"$tmp/idle.conf"
"$bld/intspect" -C "$tmp/idle.conf" -u "127.0.0.1:$port" -q --control none 2>"$tmp/idle.err" &
pid=$!
sleep 0.5
python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0 >/dev/null
sleep 1.5
n=$(python3 -c 'import json, sys; print(sum(json.loads(l)["count()"] for l in open(sys.argv[1])))' "$tmp/idle.json" 2>/dev/null)
kill -INT "$pid"; wait "$pid"; pid=""
items=$("$bld/intspect" -r "$tmp/r.pcap" -q 2>&1 | sed -n 's/^intspect: 400 packets ([0-9]* bytes), \([0-9]*\) telemetry items.*/\1/p')
[ "${n:-0}" -eq "${items:-1}" ] && ok "idle: the windows of the $items reports written on the wall clock, before the stop" ||
	bad "idle windows: ${n:-no} of ${items:-?} reports counted before the stop"
echo "udp: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
