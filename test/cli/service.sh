#!/bin/sh
# Running as a daemon without a service manager: --pidfile, -Z and
# --syslog.
#
#  -Z USER (root): once the input is open the process is USER (uid, gid,
#  no capability left), the UDP port opened before still receives, a pid
#  file the user may not remove is emptied at exit; an unknown user is
#  refused with exit 2.
#  --pidfile: the file holds the running process's id, is removed at exit
#  (SIGTERM), and a path that cannot be written is refused with exit 2.
#  --syslog: in a mount namespace of its own whose /dev/log is a socket
#  this test reads, intspect's messages arrive as syslog datagrams (ident
#  "intspect" with its pid, daemon facility, error/warning/info severity)
#  and still reach stderr, line for line. Needs root and unshare(1): that
#  part is skipped otherwise.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$(cd "$bld" && pwd)/intspect
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"
pcap=$src/test/data/int-v2.1-md-udp.pcap

# ---- --pidfile ----
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" -u "127.0.0.1:$port" -q --pidfile "$tmp/intspect.pid" 2>"$tmp/pid.err" &
pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
	[ -s "$tmp/intspect.pid" ] && break
	sleep 0.2
done
if [ "$(cat "$tmp/intspect.pid" 2>/dev/null)" = "$pid" ]; then
	ok "--pidfile: the file holds the running process's id"
else
	bad "--pidfile: '$(cat "$tmp/intspect.pid" 2>/dev/null)' in the file, the process is $pid" "$tmp/pid.err"
fi
# a second instance given the same file: refused, the file left to the first
"$bin" -r "$pcap" -q --pidfile "$tmp/intspect.pid" 2>"$tmp/pid2.err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "^intspect: --pidfile $tmp/intspect.pid: held by a running intspect (pid $pid)" \
	"$tmp/pid2.err" && [ "$(cat "$tmp/intspect.pid" 2>/dev/null)" = "$pid" ] &&
	ok "--pidfile: a second instance refused, the first one's file untouched" ||
	bad "--pidfile, a second instance: exit $rc, file '$(cat "$tmp/intspect.pid" 2>/dev/null)'" "$tmp/pid2.err"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
[ "$rc" -eq 0 ] && [ ! -e "$tmp/intspect.pid" ] && ok "--pidfile: removed at exit (SIGTERM, exit 0)" ||
	bad "--pidfile: exit $rc, file $( [ -e "$tmp/intspect.pid" ] && echo left || echo removed)" "$tmp/pid.err"
"$bin" -r "$pcap" -q --pidfile "$tmp/no/such/dir/x.pid" 2>"$tmp/e"
rc=$?
[ "$rc" -eq 2 ] && grep -q "^intspect: --pidfile $tmp/no/such/dir/x.pid: No such file or directory" "$tmp/e" &&
	ok "--pidfile: an unwritable path: exit 2, the reason" || bad "--pidfile unwritable: exit $rc" "$tmp/e"
# a file a process that died left (no lock on it): taken over
echo 999999 >"$tmp/stale.pid"
"$bin" -r "$pcap" -q --pidfile "$tmp/stale.pid" 2>"$tmp/e"
rc=$?
[ "$rc" -eq 0 ] && [ ! -e "$tmp/stale.pid" ] && ok "--pidfile: a stale file taken over, removed at exit" ||
	bad "--pidfile stale: exit $rc" "$tmp/e"

# ---- -Z USER ----
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
	echo "skip -Z: needs root and the user nobody"
else
	mkdir "$tmp/out" && chmod 777 "$tmp/out"
	chmod 755 "$tmp"        # nobody may enter, not write
	cat >"$tmp/z.conf" <<CONF
event-report e { event = "int_report.seq_num"; attributes = {"ip.src"}; output-channel = {"f"} }
file-output f { path = "$tmp/out/z.json" }
CONF
	port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$bin" -Z nobody -u "127.0.0.1:$port" -C "$tmp/z.conf" --pidfile "$tmp/z.pid" \
		--control "$tmp/z.sock" 2>"$tmp/z.err" &
	pid=$!
	sleep 0.7
	# the control socket, made as root before -Z, is the user's, 0600
	owner=$(stat -c '%U %a' "$tmp/z.sock" 2>/dev/null)
	"$(dirname "$bin")/intspect-ctl" -s "$tmp/z.sock" rules >"$tmp/z.rules" 2>&1
	[ "$owner" = "nobody 600" ] && grep -q "^event	e	yes" "$tmp/z.rules" &&
		ok "-Z nobody: the control socket is nobody's, mode 0600, and answers" ||
		bad "-Z nobody: control socket '$owner'" "$tmp/z.rules"
	uid=$(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status" 2>/dev/null)
	gid=$(awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status" 2>/dev/null)
	caps=$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
	nuid=$(id -u nobody) ngid=$(id -g nobody)
	[ "$uid" = "$nuid $nuid $nuid $nuid" ] && [ "$gid" = "$ngid $ngid $ngid $ngid" ] &&
		[ "$caps" = "0000000000000000" ] &&
		ok "-Z nobody: real, effective, saved and file uid and gid are nobody's, no capability" ||
		bad "-Z nobody: Uid '$uid', Gid '$gid', CapEff '$caps'" "$tmp/z.err"
	python3 "$src/test/inputs/send_reports.py" "$src/test/data/gen-report-v2.0-coalesced.pcap" \
		127.0.0.1 "$port" 50 0.01 >/dev/null
	sleep 0.5
	kill -TERM "$pid"
	wait "$pid"
	rc=$?
	pid=""
	grep -q "^intspect: running as nobody (uid $nuid, gid $ngid)" "$tmp/z.err" && [ "$rc" -eq 0 ] &&
		ok "-Z nobody: says so, exits 0" || bad "-Z nobody: exit $rc" "$tmp/z.err"
	n=$(grep -c '"report":"e"' "$tmp/out/z.json" 2>/dev/null)
	[ "${n:-0}" -eq 12 ] && ok "-Z nobody: the UDP port opened as root still receives (12 records)" ||
		bad "-Z nobody: ${n:-0} records, 12 expected" "$tmp/z.err"
	[ -f "$tmp/z.pid" ] && [ ! -s "$tmp/z.pid" ] &&
		ok "-Z nobody: a pid file nobody may not remove is emptied at exit" ||
		bad "-Z nobody: pid file $( [ -f "$tmp/z.pid" ] && echo "holds '$(cat "$tmp/z.pid")'" || echo gone)" "$tmp/z.err"
	# the default control socket (/run/intspect, here a tmpfs of a mount
	# namespace): removed at exit by the user it runs as
	if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
		unshare -m sh -c 'mount -t tmpfs none /run && {
			"$1" -Z nobody -u "127.0.0.1:$2" -q 2>"$3" & p=$!
			sleep 0.7; ls -ld /run/intspect /run/intspect/control.sock >"$4" 2>&1
			kill -TERM $p; wait $p; echo "exit $?" >>"$4"
			ls /run/intspect >>"$4" 2>&1; }' sh "$bin" "$port" "$tmp/zd.err" "$tmp/zd.out"
		grep -q "control.sock" "$tmp/zd.out" && grep -q "^exit 0" "$tmp/zd.out" &&
			[ "$(sed -n '/^exit/,$p' "$tmp/zd.out" | grep -c control.sock)" = 0 ] &&
			ok "-Z nobody: the default control socket removed at exit" ||
			bad "-Z nobody: default control socket" "$tmp/zd.out"
	fi
	"$bin" -Z no-such-user-here -r "$pcap" -q 2>"$tmp/e"
	rc=$?
	[ "$rc" -eq 2 ] && grep -q "^intspect: -Z no-such-user-here: no such user" "$tmp/e" &&
		ok "-Z with an unknown user: exit 2, said" || bad "-Z unknown user: exit $rc" "$tmp/e"
	chmod 700 "$tmp"
fi

# ---- where the control socket goes by default (a live input) ----
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
ctlbin=$(dirname "$bin")/intspect-ctl
udpport() { python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# waitsock PATH: until a socket is there (5 s at most)
waitsock() { i=0; while [ ! -S "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done; [ -S "$1" ]; }
# systemd's RuntimeDirectory=
mkdir -p "$tmp/rd"
RUNTIME_DIRECTORY=$tmp/rd "$bin" -u "127.0.0.1:$(udpport)" -q 2>"$tmp/rd.err" &
spid=$!
waitsock "$tmp/rd/control.sock"
# a second one with the same default, once the first has it: its own, said
RUNTIME_DIRECTORY=$tmp/rd "$bin" -u "127.0.0.1:$(udpport)" -q 2>"$tmp/rd2.err" &
spid2=$!
waitsock "$tmp/rd/control.sock" && waitsock "$tmp/rd/control.$spid2.sock" &&
	"$ctlbin" -s "$tmp/rd/control.sock" stats >/dev/null 2>&1 &&
	INTSPECT_CONTROL=$tmp/rd/control.$spid2.sock "$ctlbin" stats >/dev/null 2>&1 &&
	grep -q "note: the default control socket is in use; this one listens on $tmp/rd/control.$spid2.sock" "$tmp/rd2.err"
check "\$RUNTIME_DIRECTORY/control.sock; a second instance takes control.PID.sock and says so; \$INTSPECT_CONTROL" \
	test $? -eq 0
kill -TERM "$spid" "$spid2"; wait "$spid"; wait "$spid2"
check "both sockets removed at exit" test -z "$(ls "$tmp/rd")"
# --control none: no socket, not even the default one
RUNTIME_DIRECTORY=$tmp/rd "$bin" -u "127.0.0.1:$(udpport)" -q --control none 2>"$tmp/none.err" &
spid=$!
RUNTIME_DIRECTORY=$tmp/rd "$bin" -u "127.0.0.1:$(udpport)" -q 2>/dev/null &
spid2=$!
# the second one's socket is the default one: the first took none
waitsock "$tmp/rd/control.sock" && sleep 0.5
check "--control none: no socket (the next instance takes the default one)" \
	test "$(ls "$tmp/rd")" = control.sock -a -n "$(kill -0 "$spid" && echo alive)"
kill -TERM "$spid" "$spid2"; wait "$spid"; wait "$spid2"
if [ "$(id -u)" -eq 0 ] && command -v runuser >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
	# copies nobody may run (the build may sit in a directory only root enters)
	chmod 755 "$tmp"
	mkdir -p "$tmp/bin" "$tmp/xdg" && chown nobody "$tmp/xdg"
	cp "$bin" "$ctlbin" "$tmp/bin/" && chmod 755 "$tmp/bin"
	nbin=$tmp/bin/intspect nctl=$tmp/bin/intspect-ctl
	runuser -u nobody -- env XDG_RUNTIME_DIR="$tmp/xdg" "$nbin" -u "127.0.0.1:$(udpport)" -q \
		2>/dev/null &
	spid=$!
	waitsock "$tmp/xdg/intspect.sock" &&
		runuser -u nobody -- env XDG_RUNTIME_DIR="$tmp/xdg" "$nctl" stats >/dev/null 2>&1
	check "a user's \$XDG_RUNTIME_DIR/intspect.sock, found by intspect-ctl's default" test $? -eq 0
	pkill -TERM -u nobody -x intspect; wait "$spid"
	nuid=$(id -u nobody)
	runuser -u nobody -- env -u XDG_RUNTIME_DIR "$nbin" -u "127.0.0.1:$(udpport)" -q 2>/dev/null &
	spid=$!
	waitsock "/tmp/intspect-$nuid.sock" &&
		runuser -u nobody -- env -u XDG_RUNTIME_DIR "$nctl" stats >/dev/null 2>&1
	check "without it, /tmp/intspect-UID.sock, found by intspect-ctl's default" test $? -eq 0
	pkill -TERM -u nobody -x intspect; wait "$spid"
	check "/tmp/intspect-UID.sock removed at exit" test ! -e "/tmp/intspect-$nuid.sock"
fi

# ---- --syslog ----
skip=
[ "$(id -u)" -eq 0 ] || skip="needs root"
command -v unshare >/dev/null 2>&1 || skip="unshare (util-linux) is not installed"
command -v python3 >/dev/null 2>&1 || skip="python3 is not installed"
[ -z "$skip" ] && ! unshare -m true 2>/dev/null && skip="this machine does not allow mount namespaces"
if [ -n "$skip" ]; then
	echo "skip --syslog: $skip"
else
	# rules with a Redis channel that cannot connect: an error line and
	# a warning-free info line both go through
	cat >"$tmp/r.conf" <<CONF
event-report e { event = "int.hop_switch_ids"; attributes = {"ip.src"}; output-channel = {"r"} }
redis-output r { hostname = "127.0.0.1"; port = 1; shutdown-ms = 200 }
CONF
	cat >"$tmp/listen.py" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("/dev/log")
open(sys.argv[2], "w").close()          # ready
s.settimeout(3.0)
with open(sys.argv[1], "wb") as out:
    while True:
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        out.write(d.replace(b"\n", b" ") + b"\n")
PY
	# /dev of the namespace: a tmpfs with null, zero and urandom bound in
	# from the host, and /dev/log the listener's socket
	unshare -m --propagation private sh -c '
		tmp=$1 bin=$2 pcap=$3
		mkdir "$tmp/dev" && mount -t tmpfs none "$tmp/dev" || exit 90
		for d in null zero urandom random; do
			touch "$tmp/dev/$d" && mount --bind "/dev/$d" "$tmp/dev/$d"
		done
		mount --bind "$tmp/dev" /dev || exit 91
		python3 "$tmp/listen.py" "$tmp/syslog.out" "$tmp/ready" &
		for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e "$tmp/ready" ] && break; sleep 0.2; done
		"$bin" --syslog -r "$pcap" -C "$tmp/r.conf" >/dev/null 2>"$tmp/syslog.err"
		echo $? >"$tmp/syslog.rc"
		wait
	' sh "$tmp" "$bin" "$pcap" 2>"$tmp/ns.err"
	if [ ! -s "$tmp/syslog.rc" ]; then
		bad "--syslog: the namespace could not be set up" "$tmp/ns.err"
	else
		rc=$(cat "$tmp/syslog.rc")
		# exit 3: the channel never connected, as the rules want
		[ "$rc" -eq 3 ] && ok "--syslog: the run ends as without it (exit 3: a channel never connected)" ||
			bad "--syslog: exit $rc" "$tmp/syslog.err"
		lines=$(wc -l <"$tmp/syslog.err" | tr -d ' ')
		got=$(wc -l <"$tmp/syslog.out" | tr -d ' ')
		if [ "$lines" -gt 3 ] && [ "$got" -eq "$lines" ]; then
			ok "--syslog: each of the $lines stderr lines is one syslog message"
		else
			bad "--syslog: $lines lines on stderr, $got syslog messages" "$tmp/syslog.out"
		fi
		# <PRI>: LOG_DAEMON (3) * 8 + severity; glibc's format:
		# "<PRI>Mon dd hh:mm:ss intspect[PID]: message"
		if grep -q '^<30>.* intspect\[[0-9]*\]: 1 packets ' "$tmp/syslog.out"; then
			ok "--syslog: counters as daemon.info, ident intspect[pid], the 'intspect: ' prefix not repeated"
		else
			bad "--syslog: no daemon.info counter line" "$tmp/syslog.out"
		fi
		if grep -q '^<27>.* intspect\[[0-9]*\]: channel r: never connected$' "$tmp/syslog.out" &&
		   grep -q '^<27>.* intspect\[[0-9]*\]: 1 channel(s) lost records' "$tmp/syslog.out"; then
			ok "--syslog: what lost records as daemon.err"
		else
			bad "--syslog: no daemon.err line for the lost records" "$tmp/syslog.out"
		fi
		if grep -q '^<28>.* intspect\[[0-9]*\]: channel r: .*Connection refused.*reconnecting$' "$tmp/syslog.out"; then
			ok "--syslog: a channel's retry as daemon.warning"
		else
			bad "--syslog: no daemon.warning line for the retry" "$tmp/syslog.out"
		fi
		sed 's/^intspect: //' "$tmp/syslog.err" >"$tmp/err.msgs"
		sed 's/^<[0-9]*>[A-Z][a-z][a-z] [ 0-9][0-9] [0-9:]* intspect\[[0-9]*\]: //' "$tmp/syslog.out" >"$tmp/log.msgs"
		if cmp -s "$tmp/err.msgs" "$tmp/log.msgs"; then
			ok "--syslog: the same messages as stderr, in the same order"
		else
			diff "$tmp/err.msgs" "$tmp/log.msgs" >"$tmp/d"
			bad "--syslog: syslog and stderr differ" "$tmp/d"
		fi
	fi
fi

summary service
