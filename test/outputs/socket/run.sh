#!/bin/sh
# test/outputs/socket/run.sh - the socket channel end to end: intspect on
# intgen captures, real readers on loopback (the socat commands of
# outputs/README.md, and reader.py for one that never reads).
#   - udp, tcp, unix, unix-dgram: the reader gets exactly intspect's stdout
#     for the same rules, in order; BOTH (MMT-Probe's): a Unix and a TCP
#     reader each get exactly that;
#   - a TCP reader that goes away mid-run and comes back (intspect fed
#     slowly through a pipe by feed.py): reconnect counted, every record
#     delivered once, queued == delivered + dropped;
#   - a TCP reader that shuts down its sending side: nothing written to
#     that connection, every record on the next one;
#   - udp to a name of ::1 then 127.0.0.1 (a hosts file in a mount
#     namespace) with the reader on 127.0.0.1: refused, then the next
#     address gets the rest;
#   - a reader that stops reading does not slow intspect (packets/s, best
#     of 3, against the same rules with the channel disabled);
#   - no reader at all: intspect still ends within shutdown-ms and counts
#     the records as dropped;
#   - a stop (SIGINT, SIGTERM) while records wait: a producer blocked on a
#     full queue gives up shutdown-ms after it, a second signal stops at
#     once, as does the first while the channel drains; every record
#     counted, exit 3;
#   - config errors with file:line:col.
# Env: top_srcdir, top_builddir (default .). Needs socat and python3.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
here=$src/test/outputs/socket
tmp=$(mktemp -d /tmp/socket-test.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() { echo "socket: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

if ! command -v socat >/dev/null 2>&1; then
	bad "socat is not installed (apt-get install socat)"
	finish
fi

# ---- helpers ----------------------------------------------------------------

# free_port SOCK_STREAM|SOCK_DGRAM: a port the kernel just had free
free_port() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, getattr(socket, sys.argv[1]))
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])' "$1"
}

# bound tcp|udp PORT: something listens (tcp) or is bound (udp) there
bound() {
	hex=$(printf '%04X' "$2")
	if [ "$1" = tcp ]; then files="/proc/net/tcp /proc/net/tcp6" state=0A
	else files="/proc/net/udp /proc/net/udp6" state=07; fi
	cat $files 2>/dev/null |
		awk -v p=":$hex" -v s=$state '$2 ~ p"$" && $4 == s { f = 1 } END { exit !f }'
}

# lines_at_least FILE N [PATTERN]
lines_at_least() {
	n=$(grep -c -- "${3:-}" "$1" 2>/dev/null)
	[ "${n:-0}" -ge "$2" ]
}

# wait_for CMD...: until CMD succeeds, at most 5 s
wait_for() {
	i=0
	while ! "$@"; do
		i=$((i + 1))
		[ "$i" -ge 250 ] && return 1
		sleep 0.02
	done
}

alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! alive "$1"; }

# start CMD...: in the background, stdout in $out; sets $pid
start() {
	"$@" >"$out" 2>>"$tmp/readers.err" &
	pid=$!
	pids="$pids $pid"
}
stop() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; }

# stats ERRFILE CHANNEL: "queued delivered dropped retried reconnects"
stats() {
	sed -n "s/^intspect: channel $2: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped, \([0-9]*\) retried, \([0-9]*\) reconnects, [0-9]* acknowledged$/\1 \2 \3 \4 \5/p" "$1"
}

# rules CHANNEL: an event record per packet and per-flow windows
rules() {
	cat <<EOF
event-report hops {
  event = "int.num_hop"
  attributes = {"ip.src", "int.hop_latencies"}
  output-channel = {$1}
}
query-report flows {
  ms-period = 100
  select = {"count()", "avg(int.latency)", "max(int.hop_queue_occups)"}
  group-by = {"ip.src"}
  output-channel = {$1}
}
EOF
}

# conf FILE SECTION-BODY: a socket-output section "out" and the rules
conf() {
	{ printf 'socket-output out {\n%s\n}\n' "$2"; rules out; } >"$1"
}

"$bld/intgen" -o "$tmp/a.pcap" -n 300 --seed 7 --flows 4 --hops 1-4 --pps 1000 2>/dev/null
rules stdout >"$tmp/stdout.conf"
"$bin" -C "$tmp/stdout.conf" -r "$tmp/a.pcap" >"$tmp/want" 2>/dev/null
nwant=$(wc -l <"$tmp/want")
check "reference records from stdout ($nwant)" test "$nwant" -gt 300

# ---- each socket type: exactly the stdout records, in order ------------------

# deliver NAME [paced]: run intspect with $tmp/NAME.conf (paced: fed a
# packet a millisecond), reader output in $tmp/NAME.got
deliver() {
	if [ $# -gt 1 ]; then
		python3 "$here/feed.py" --delay-ms 1 "$tmp/a.pcap" |
			"$bin" -C "$tmp/$1.conf" -r - >/dev/null 2>"$tmp/$1.err"
	else
		"$bin" -C "$tmp/$1.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/$1.err"
	fi
	wait_for lines_at_least "$tmp/$1.got" "$nwant"
	sleep 0.1                       # nothing more comes
	stop "$pid"
	check "$1: records equal stdout's" cmp -s "$tmp/want" "$tmp/$1.got"
	check "$1: counters" test "$(stats "$tmp/$1.err" out)" = "$nwant $nwant 0 0 0"
}

# UDP has no flow control: a burst larger than the reader's receive buffer
# (some 150 small datagrams by default) is lost in its kernel, so intspect
# is paced and flushes often.
port=$(free_port SOCK_DGRAM)
conf "$tmp/udp.conf" "  type = udp
  hostname = \"127.0.0.1\"
  port = $port
  flush-ms = 20"
out=$tmp/udp.got start socat -u UDP-RECV:"$port" -
wait_for bound udp "$port"
deliver udp paced

port=$(free_port SOCK_STREAM)
conf "$tmp/tcp.conf" "  type = INTERNET        # MMT-Probe's word for tcp
  hostname = \"localhost\"
  port = $port"
out=$tmp/tcp.got start socat -u TCP-LISTEN:"$port",reuseaddr,fork -
wait_for bound tcp "$port"
deliver tcp

sock=$tmp/intspect.sock
conf "$tmp/unix.conf" "  type = UNIX
  descriptor = \"$sock\""
out=$tmp/unix.got start socat -u UNIX-LISTEN:"$sock",fork,unlink-early -
wait_for test -S "$sock"
deliver unix

conf "$tmp/unix-dgram.conf" "  type = unix-dgram
  path = \"$sock\""
rm -f "$sock"
out=$tmp/unix-dgram.got start socat -u UNIX-RECV:"$sock" -
wait_for test -S "$sock"
deliver unix-dgram

# ---- BOTH: a Unix and a TCP reader get the same records ------------------------
bsock=$tmp/both.sock
port=$(free_port SOCK_STREAM)
conf "$tmp/both.conf" "  type = Both                     # MMT-Probe's: unix and tcp at once
  descriptor = \"$bsock\"
  server-address = \"127.0.0.1\"  # MMT-Probe's older name for hostname
  port = $port"
out=$tmp/both-unix.got start socat -u UNIX-LISTEN:"$bsock",fork,unlink-early -
bu=$pid
wait_for test -S "$bsock"
out=$tmp/both-tcp.got start socat -u TCP-LISTEN:"$port",reuseaddr,fork -
bt=$pid
wait_for bound tcp "$port"
"$bin" -C "$tmp/both.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/both.err"
wait_for lines_at_least "$tmp/both-unix.got" "$nwant"
wait_for lines_at_least "$tmp/both-tcp.got" "$nwant"
sleep 0.1                       # nothing more comes
stop "$bu"
stop "$bt"
check "both: the unix reader's records equal stdout's" cmp -s "$tmp/want" "$tmp/both-unix.got"
check "both: the tcp reader's records equal stdout's" cmp -s "$tmp/want" "$tmp/both-tcp.got"
check "both: counters" test "$(stats "$tmp/both.err" out)" = "$nwant $nwant 0 0 0"

# ---- a TCP reader that goes away and comes back ------------------------------
# feed.py holds packet 100 until gate1 and packet 200 until gate2: reader 1
# gets the records of the first 100 packets and is killed; packets 100-199
# come while nobody listens (the records wait in the queue); reader 2 starts
# and the rest comes.
port=$(free_port SOCK_STREAM)
conf "$tmp/re.conf" "  type = tcp
  hostname = \"127.0.0.1\"
  port = $port
  flush-ms = 20"
out=$tmp/r1.got start socat -u TCP-LISTEN:"$port",reuseaddr -
r1=$pid
wait_for bound tcp "$port"
python3 "$here/feed.py" "$tmp/a.pcap" 100:"$tmp/gate1" 200:"$tmp/gate2" |
	"$bin" -C "$tmp/re.conf" -r - >/dev/null 2>"$tmp/re.err" &
ipid=$!
pids="$pids $ipid"
wait_for lines_at_least "$tmp/r1.got" 100 '"report":"hops"'
stop "$r1"
touch "$tmp/gate1"
sleep 0.5                               # connections refused meanwhile
out=$tmp/r2.got start socat -u TCP-LISTEN:"$port",reuseaddr -
r2=$pid
wait_for bound tcp "$port"
touch "$tmp/gate2"
wait "$ipid"
wait_for dead "$r2"
cat "$tmp/r1.got" "$tmp/r2.got" >"$tmp/re.got"
check "reconnect: reader 1 got the first 100 packets' records" \
	test "$(grep -c '"report":"hops"' "$tmp/r1.got")" -eq 100
check "reconnect: records of both readers equal stdout's, each once" \
	cmp -s "$tmp/want" "$tmp/re.got"
read -r q d x r c <<EOF
$(stats "$tmp/re.err" out)
EOF
check "reconnect: delivered ($d) + dropped ($x) == queued ($q) == $nwant" \
	test "$((d + x))" -eq "${q:-0}" -a "${q:-0}" -eq "$nwant"
check "reconnect: counted ($c)" test "${c:-0}" -ge 1
check "reconnect: retried while the reader was away ($r)" test "${r:-0}" -gt 0

# ---- a reader that shuts down its sending side -----------------------------
# Its FIN is taken for a reader gone (outputs/README.md): nothing is
# written into that connection; the records wait, and the next
# connection gets them all. No packet comes before the reader's shutdown
# (feed.py's gate), so the FIN is there before any record.
port=$(free_port SOCK_STREAM)
conf "$tmp/shut.conf" "  type = tcp
  hostname = \"127.0.0.1\"
  port = $port
  flush-ms = 20"
out=$tmp/shut.log start python3 "$here/reader.py" shutwr tcp "$port" "$tmp/shut.got"
sr=$pid
wait_for bound tcp "$port"
python3 "$here/feed.py" "$tmp/a.pcap" 0:"$tmp/shut.got.shut" |
	"$bin" -C "$tmp/shut.conf" -r - >/dev/null 2>"$tmp/shut.err"
wait_for lines_at_least "$tmp/shut.got.2" "$nwant"
sleep 0.1                       # nothing more comes
stop "$sr"
check "a reader that shuts down writing: nothing written to that connection" \
	test -f "$tmp/shut.got.1" -a ! -s "$tmp/shut.got.1"
check "a reader that shuts down writing: the next connection gets every record, in order" \
	cmp -s "$tmp/want" "$tmp/shut.got.2"
read -r q d x r c <<EOF
$(stats "$tmp/shut.err" out)
EOF
check "a reader that shuts down writing: counted a reconnect ($c), $d delivered, $x dropped" \
	test "${c:-0}" -ge 1 -a "${d:-0}" -eq "$nwant" -a "${x:-1}" -eq 0

# ---- UDP: the name's next address after a port unreachable ------------------
# A name that is ::1 then 127.0.0.1 (a hosts file of the test's, in a
# mount namespace of its own), the reader on 127.0.0.1 only: the first
# datagrams to ::1 are refused (ICMP), and the rest go to 127.0.0.1.
if unshare -m true 2>/dev/null &&
   python3 -c 'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM).bind(("::1", 0))' 2>/dev/null; then
	printf '::1 twoaddr\n127.0.0.1 twoaddr\n' >"$tmp/hosts"
	port=$(free_port SOCK_DGRAM)
	conf "$tmp/next.conf" "  type = udp
  hostname = \"twoaddr\"
  port = $port
  flush-ms = 20"
	out=$tmp/next.got start socat -u UDP4-RECV:"$port",bind=127.0.0.1 -
	nr=$pid
	wait_for bound udp "$port"
	python3 "$here/feed.py" --delay-ms 1 "$tmp/a.pcap" |
		unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' sh "$tmp/hosts" \
			"$bin" -C "$tmp/next.conf" -r - >/dev/null 2>"$tmp/next.err"
	sleep 0.3                       # the last datagrams arrive
	stop "$nr"
	got=$(wc -l <"$tmp/next.got")
	# what came is the end of the records, most of them
	check "udp, a name of ::1 then 127.0.0.1, the reader on 127.0.0.1: $got of $nwant records, the last ones in order" \
		sh -c "[ $got -gt $((nwant / 2)) ] && [ $got -lt $nwant ] &&
		       tail -n $got '$tmp/want' | cmp -s - '$tmp/next.got'"
else
	echo "skip udp next address: no mount namespace or no IPv6 loopback"
fi

# ---- a reader that stops reading does not slow intspect ----------------------
# One record per packet (the most a channel gets), 200,000 packets; the
# reader accepts and never reads (reader.py), so the socket buffers and then
# the queue (4096 records) fill and records are dropped at submit. Against
# the same rules with the channel disabled (enable = false: nothing opened,
# records counted dropped at submit). packets/s from -q, best of 3, runs
# interleaved.
"$bld/intgen" -o "$tmp/big.pcap" -n 200000 --seed 3 --flows 64 2>/dev/null
port=$(free_port SOCK_STREAM)
for what in stalled none; do
	enable=true
	[ "$what" = none ] && enable=false
	conf "$tmp/perf-$what.conf" "  enable = $enable
  type = tcp
  hostname = \"127.0.0.1\"
  port = $port
  queue-records = 4096
  shutdown-ms = 100"
done
out=/dev/null start python3 "$here/reader.py" stall tcp "$port"
wait_for bound tcp "$port"
best_none=0 best_stalled=0
for i in 1 2 3; do
	for what in none stalled; do
		"$bin" -C "$tmp/perf-$what.conf" -r "$tmp/big.pcap" -q >/dev/null 2>"$tmp/perf-$what.err"
		pps=$(sed -n 's/.* \([0-9]*\) packets\/s.*/\1/p' "$tmp/perf-$what.err")
		eval "best=\$best_$what"
		[ "${pps:-0}" -gt "$best" ] && eval "best_$what=$pps"
	done
done
ratio=$((best_stalled * 100 / (best_none > 0 ? best_none : 1)))
echo "# packets/s, best of 3: channel disabled $best_none, reader stalled $best_stalled ($ratio%)"
# The ratio is 88-115% run to run on the 2-core VM (some 5% of it the cost
# of submitting and dropping a record per packet, the rest noise), so the
# 10% goal is printed, not asserted. What is asserted would catch a channel
# that blocks the packet path: that run would crawl or never end.
check "stalled reader: packets/s not held back ($ratio% of no channel, >= 50%)" \
	test "$ratio" -ge 50
read -r q d x r c <<EOF
$(stats "$tmp/perf-stalled.err" out)
EOF
check "stalled reader: delivered ($d) + dropped ($x) == queued ($q), some dropped" \
	test "$((d + x))" -eq "${q:-0}" -a "${x:-0}" -gt 0

# ---- nobody listening ----------------------------------------------------------
port=$(free_port SOCK_STREAM)
conf "$tmp/none.conf" "  type = tcp
  hostname = \"127.0.0.1\"
  port = $port
  shutdown-ms = 300"
t0=$(date +%s%N)
"$bin" -C "$tmp/none.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/none.err"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "no reader: exits in ${ms} ms (shutdown-ms 300)" test "$ms" -lt 3000
read -r q d x r c <<EOF
$(stats "$tmp/none.err" out)
EOF
check "no reader: every record counted dropped" test "$q $d $x $c" = "$nwant 0 $nwant 0"
check "no reader: says why" grep -q "channel out: never connected: connect to 127.0.0.1 port $port: Connection refused" "$tmp/none.err"

# the defaults, in what a channel that never connected says: unix to
# /tmp/probe-output.sock, tcp to localhost; both names each connection
printf 'socket-output out { type = unix; connect-timeout-ms = 50; shutdown-ms = 200 }\nevent-report e { event = "int.num_hop"; output-channel = {out} }\n' >"$tmp/du.conf"
"$bin" -C "$tmp/du.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/du.err"
check "unix without path: the default /tmp/probe-output.sock" \
	grep -q 'channel out: never connected: connect to /tmp/probe-output.sock: ' "$tmp/du.err"
port=$(free_port SOCK_STREAM)
printf 'socket-output out { type = both; port = %s; path = "%s/none.sock"; shutdown-ms = 200 }\nevent-report e { event = "int.num_hop"; output-channel = {out} }\n' \
	"$port" "$tmp" >"$tmp/db.conf"
"$bin" -C "$tmp/db.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/db.err"
check "both without hostname: localhost, and each connection that never connected named" sh -c \
	"grep -q 'channel out: never connected: connect to localhost port $port: ' '$tmp/db.err' &&
	 grep -q 'channel out: never connected: connect to $tmp/none.sock: ' '$tmp/db.err'"

# ---- a stop while records wait (SIGINT, SIGTERM) -----------------------------
# stopped NAME CONF SIGNALS...: intspect -C CONF on $tmp/big.pcap, each
# signal sent after "AFTER-SECONDS:SIGNAL"; "rc ms" once it ended (or
# "hung" after 10 s), stderr in $tmp/NAME.err
"$bld/intgen" -o "$tmp/big.pcap" -n 20000 --seed 3 2>/dev/null
stopped() {
	name=$1 cf=$2
	shift 2
	t0=$(date +%s%N)
	"$bin" -C "$cf" -r "$tmp/big.pcap" >/dev/null 2>"$tmp/$name.err" &
	sp=$!
	for s in "$@"; do
		sleep "${s%%:*}"
		kill -"${s#*:}" "$sp"
	done
	i=0
	while kill -0 "$sp" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 "$sp" 2>/dev/null; then
		kill -9 "$sp"; wait "$sp"; echo hung
	else
		wait "$sp"; echo "$? $(( ($(date +%s%N) - t0) / 1000000 ))"
	fi
}
port=$(free_port SOCK_STREAM)
# no reader, a queue of 16 records that blocks the packets when full
printf 'socket-output out { type = tcp; hostname = "127.0.0.1"; port = %s; connect-timeout-ms = 50; queue-records = 16; drop-policy = block; shutdown-ms = %s }\nevent-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {out} }\n' \
	"$port" 500 >"$tmp/block.conf"
sed 's/shutdown-ms = 500/shutdown-ms = 30000/' "$tmp/block.conf" >"$tmp/block30.conf"
read -r rc ms <<EOF
$(stopped block "$tmp/block.conf" 1:INT)
EOF
read -r q d x r c <<EOF
$(stats "$tmp/block.err" out)
EOF
check "blocked on a full queue, SIGINT: ends shutdown-ms (500) after it, exit 3 ($rc, $ms ms)" \
	sh -c "[ '$rc' = 3 ] && [ '$ms' -lt 4000 ]"
check "blocked, SIGINT: every record queued counted dropped ($q queued, $d delivered, $x dropped)" \
	sh -c "[ '$q' -ge 16 ] && [ '$d' = 0 ] && [ '$x' = '$q' ] && grep -q '^intspect: [0-9]* packets' '$tmp/block.err'"
read -r rc ms <<EOF
$(stopped block30 "$tmp/block30.conf" 1:INT 0.5:TERM)
EOF
check "blocked, shutdown-ms 30000: a second signal stops at once, exit 3 ($rc, $ms ms)" \
	sh -c "[ '$rc' = 3 ] && [ '$ms' -lt 4500 ] && grep -q 'stopped at once (signal)' '$tmp/block30.err'"
read -r q d x r c <<EOF
$(stats "$tmp/block30.err" out)
EOF
check "blocked, second signal: the counters said ($q queued, $x dropped)" sh -c "[ '$q' -ge 16 ] && [ '$x' = '$q' ]"
# the input ended, the channel drains for 30 s: the first signal stops it
printf 'socket-output out { type = tcp; hostname = "127.0.0.1"; port = %s; connect-timeout-ms = 50; shutdown-ms = 30000 }\nevent-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {out} }\n' \
	"$port" >"$tmp/drain.conf"
t0=$(date +%s%N)
"$bin" -C "$tmp/drain.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/drain.err" &
sp=$!
i=0
while ! grep -q '^intspect: 300 packets' "$tmp/drain.err" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT "$sp"
i=0
while kill -0 "$sp" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -0 "$sp" 2>/dev/null && kill -9 "$sp"
wait "$sp"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
read -r q d x r c <<EOF
$(stats "$tmp/drain.err" out)
EOF
check "draining for shutdown-ms 30000, SIGINT: stops at once, the counters said, exit 3 ($rc, $ms ms)" \
	sh -c "[ '$rc' = 3 ] && [ '$ms' -lt 5000 ] && [ '$q' = 300 ] && [ '$x' = 300 ] && grep -q 'stopped at once (signal)' '$tmp/drain.err'"

# ---- configuration errors --------------------------------------------------------
# bad_conf NAME SECTION-BODY "LINE:COL: MESSAGE": a run and -T both exit 2
# with "FILE:LINE:COL: error: MESSAGE" (one validation path).
bad_conf() {
	conf "$tmp/$1.conf" "$2"
	want="$tmp/$1.conf:$(printf '%s' "$3" | sed 's/: /: error: /')"
	"$bin" -C "$tmp/$1.conf" -r "$tmp/a.pcap" >/dev/null 2>"$tmp/$1.err"
	rc=$?
	check "config $1: exit 2" test "$rc" -eq 2
	check "config $1: message at line:col" grep -qF "$want" "$tmp/$1.err"
	"$bin" -T "$tmp/$1.conf" >/dev/null 2>"$tmp/$1.terr"
	rc=$?
	check "config $1: -T exits 2" test "$rc" -eq 2
	check "config $1: -T says the same" grep -qF "$want" "$tmp/$1.terr"
}
bad_conf typo "  type = tcp
  port = 5000
  hostnme = \"x\"" "4:3: unknown key 'hostnme' for a socket output (did you mean 'hostname'?)"
bad_conf both "  type = BOTH" "2:3: a both socket output needs 'port' (1 to 65535) for its TCP connection"
bad_conf alias "  type = tcp
  hostname = \"127.0.0.1\"
  port = 5000
  server-address = \"127.0.0.1\"" "5:3: 'hostname' and 'server-address' are the same setting (server-address is MMT-Probe's name); give one"
bad_conf noport "  type = udp" "2:3: a udp socket output needs 'port' (1 to 65535)"
# a host name is resolved when the config is read (.invalid never
# resolves: RFC 2606); the resolver's reason follows
bad_conf nohost "  type = tcp
  hostname = \"no-such-host.invalid\"
  port = 9" "3:3: cannot resolve no-such-host.invalid: "
bad_conf badtype "  enable = true
  type = \"udp6\"" "3:3: bad value 'udp6' for type: expected udp, tcp, unix, unix-dgram or both"

finish
