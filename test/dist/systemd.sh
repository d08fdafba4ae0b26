#!/bin/sh
# The systemd units (dist/systemd/*.service.in, made into
# $top_builddir/dist/systemd/ by dist/dist.mk):
#
#  1. systemd-analyze verify finds nothing wrong in either unit (an
#     instance of the template), with the manual pages they name
#     (Documentation=) found among the built pages.
#  2. systemd-analyze security --offline: the exposure score is printed,
#     and it stays at most 2.5 ("OK"; a unit without sandboxing is 9.6).
#  3. The sandbox lets intspect work: every system call intspect makes
#     (strace -f) while it reads a capture with two workers and writes a
#     file, listens on a UDP port with two workers, captures live on lo,
#     tries a Redis server that is not there, and logs to syslog with a
#     pidfile, is allowed by the units' SystemCallFilter (expanded by
#     systemd-analyze syscall-filter), and every address family it opens a
#     socket of is in RestrictAddressFamilies. A call outside the filter
#     would fail with EPERM in the service and nowhere else.
#  4. The units ask for what a collector needs and no more:
#     capabilities CAP_NET_RAW and CAP_NET_ADMIN only, no ExecReload while
#     intspect has no reload.
#
# Exit 77 (skipped) without systemd-analyze (Debian: systemd). Part 3 needs
# strace and python3 (live capture: root); without them it is skipped.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
bin=$(cd "$build" && pwd)/intspect
units="intspect.service intspect@.service"
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

command -v systemd-analyze >/dev/null 2>&1 || { echo "systemd: no systemd-analyze: skipped"; exit 77; }
for u in $units; do
	[ -f "$build/dist/systemd/$u" ] || { echo "systemd: $build/dist/systemd/$u not built" >&2; exit 99; }
done

# The units as installed, except that ExecStart names the built program
# (verify checks that it is there and executable); the template as an
# instance, since a template alone is not a unit systemd can load.
mkdir -p "$tmp/units" "$tmp/man/man8" "$tmp/man/man5"
for u in $units; do
	to=$u
	[ "$u" = intspect@.service ] && to=intspect@probe.service
	sed "s|^ExecStart=[^ ]*/intspect |ExecStart=$bin |" "$build/dist/systemd/$u" >"$tmp/units/$to"
done
cp "$build/doc/man/intspect.8" "$tmp/man/man8/" 2>/dev/null
cp "$build/doc/man/intspect.conf.5" "$tmp/man/man5/" 2>/dev/null

# ---- 1. verify ----
for u in intspect.service intspect@probe.service; do
	if (cd "$tmp/units" && MANPATH="$tmp/man" SYSTEMD_LOG_COLOR=0 \
	    systemd-analyze verify "./$u") >"$tmp/verify" 2>&1 && [ ! -s "$tmp/verify" ]; then
		ok "$u: systemd-analyze verify (and man pages of Documentation= found)"
	else
		bad "$u: systemd-analyze verify" "$tmp/verify"
	fi
done

# ---- 2. security ----
for u in intspect.service intspect@probe.service; do
	(cd "$tmp/units" && SYSTEMD_COLORS=0 systemd-analyze security --offline=yes "./$u") \
		>"$tmp/security" 2>&1
	score=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p' "$tmp/security")
	if [ -z "$score" ]; then
		bad "$u: no score from systemd-analyze security --offline" "$tmp/security"
	elif awk -v s="$score" 'BEGIN { exit !(s <= 2.5) }' &&
	     grep -q 'Overall exposure level for [^:]*: [0-9.]* OK' "$tmp/security"; then
		ok "$u: systemd-analyze security: exposure $score ($(sed -n 's/.*Overall exposure level for [^:]*: [0-9.]* \([A-Z]*\).*/\1/p' "$tmp/security")), at most 2.5, rated OK"
	else
		grep '✗' "$tmp/security" >"$tmp/open"
		bad "$u: exposure $score, above 2.5 or not rated OK" "$tmp/open"
	fi
done

# ---- 4. what the units grant ----
for u in $units; do
	f=$build/dist/systemd/$u
	caps=$(sed -n 's/^AmbientCapabilities=//p' "$f")
	bound=$(sed -n 's/^CapabilityBoundingSet=//p' "$f")
	if [ "$caps" = "CAP_NET_RAW CAP_NET_ADMIN" ] && [ "$bound" = "$caps" ]; then
		ok "$u: capabilities CAP_NET_RAW CAP_NET_ADMIN only"
	else
		bad "$u: capabilities '$caps', bounding set '$bound'"
	fi
	missing=
	for d in NoNewPrivileges=yes ProtectSystem=strict ProtectHome=yes PrivateTmp=yes \
		 RuntimeDirectory= LogsDirectory=; do
		grep -q "^$d" "$f" || missing="$missing $d"
	done
	[ -z "$missing" ] && ok "$u: NoNewPrivileges, ProtectSystem=strict, ProtectHome, PrivateTmp, run and log directories" \
		|| bad "$u: missing$missing"
	# what the README says of each: its config, its run directory (the
	# control socket's), a dynamic user, the log directory as working
	# directory (file outputs), reload as SIGHUP
	case $u in
	intspect@.service) conf='%i.conf' run='intspect/%i' ;;
	*) conf='intspect.conf' run='intspect' ;;
	esac
	missing=
	for d in "ExecStart=.*/intspect -C .*/intspect/$conf " "RuntimeDirectory=$run\$" DynamicUser=yes \
		 'WorkingDirectory=/var/log/intspect$' 'ExecReload=/bin/kill -HUP \$MAINPID$'; do
		grep -q "^$d" "$f" || missing="$missing '$d'"
	done
	[ -z "$missing" ] && ok "$u: reads $conf, runs in /run/$run, dynamic user, in /var/log/intspect, reload is SIGHUP" \
		|| bad "$u: missing$missing"
	if grep -q '^ExecReload=' "$f"; then
		"$bin" --help 2>&1 | grep -q -i 'SIGHUP' && ok "$u: ExecReload, and intspect reloads on SIGHUP" ||
			bad "$u: ExecReload, but intspect does not say it reloads on SIGHUP"
	else
		"$bin" --help 2>&1 | grep -q -i 'SIGHUP' && bad "$u: intspect reloads on SIGHUP: the unit needs ExecReload" ||
			ok "$u: no ExecReload (intspect has no reload)"
	fi
done

# ---- 3. the sandbox lets intspect work ----
filter_of() {           # UNIT: the allowed system calls, one per line
	# SystemCallFilter= lines in order: an allow-list, then ~ deny-lists
	sed -n 's/^SystemCallFilter=//p' "$1" >"$tmp/filters"
	: >"$tmp/allow"
	while read -r line; do
		case $line in
		"~"*) set -- ${line#"~"}; expand "$@" | sort -u >"$tmp/deny"
		      comm -23 "$tmp/allow" "$tmp/deny" >"$tmp/allow.new"; mv "$tmp/allow.new" "$tmp/allow" ;;
		*) set -- $line; expand "$@" | sort -u - "$tmp/allow" >"$tmp/allow.new"
		   mv "$tmp/allow.new" "$tmp/allow" ;;
		esac
	done <"$tmp/filters"
}
expand() {              # NAMES...: groups expanded, recursively
	for n in "$@"; do
		case $n in
		@*) systemd-analyze syscall-filter "$n" 2>/dev/null |
			sed -e '1d' -e 's/^[[:space:]]*//' -e '/^#/d' -e '/^$/d' >"$tmp/g.$$.$n"
		    # shellcheck disable=SC2046
		    expand $(cat "$tmp/g.$$.$n") ;;
		*) echo "$n" ;;
		esac
	done
}

skip3=
command -v strace >/dev/null 2>&1 || skip3="strace is not installed"
command -v python3 >/dev/null 2>&1 || skip3="python3 is not installed"
if [ -n "$skip3" ]; then
	echo "skip the system call check: $skip3"
else
	# make_reports from the input tests' library, which has its own
	# counters and ok/bad: they are put back after
	pass_before=$pass fail_before=$fail
	bld=$build
	. "$src/test/inputs/lib.sh"
	make_reports 200 5 2 1-4
	pass=$pass_before fail=$fail_before
	. "$src/test/tools/checks.sh"
	cat >"$tmp/run.conf" <<CONF
event-report each {
  event = "int_report.seq_num"
  attributes = {"int_report.node_id", "int.hop_latencies"}
  output-channel = {"f", "r"}
}
query-report per-node {
  ms-period = 1000
  select = {"count()", "avg(int.hop_latencies)"}
  group-by = {"int_report.node_id"}
  output-channel = {"f"}
}
file-output f { path = "$tmp/out.json" }
redis-output r { hostname = "127.0.0.1"; port = 1; shutdown-ms = 300 }
CONF
	trace() {       # NAME ARGS...: strace intspect, calls in $tmp/NAME.calls
		name=$1
		shift
		# LeakSanitizer cannot run under ptrace (an ASan build)
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
			strace -f -qq -o "$tmp/$name.strace" "$bin" "$@" >/dev/null 2>"$tmp/$name.err" &
		pid=$!
	}
	finish() {      # NAME: stop, wait, collect
		# SIGINT to intspect itself: a background job of a script
		# ignores SIGINT, and so does strace there
		pkill -INT -P "$pid" 2>/dev/null
		wait "$pid"
		echo $? >"$tmp/$1.rc"
		pid=""
		sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$tmp/$1.strace" | sort -u >"$tmp/$1.calls"
	}
	trace file -C "$tmp/run.conf" -r "$tmp/r.pcap" -w 2 --allow-drops --syslog \
		--pidfile "$tmp/intspect.pid"
	wait "$pid"
	echo $? >"$tmp/file.rc"
	pid=""
	sed -n 's/^[0-9]* *\([a-z_0-9]*\)(.*/\1/p' "$tmp/file.strace" | sort -u >"$tmp/file.calls"
	runs="file"
	port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	trace udp -C "$tmp/run.conf" -u "127.0.0.1:$port" -w 2 --allow-drops
	sleep 1
	python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.01 4 >/dev/null
	sleep 0.3
	finish udp
	runs="$runs udp"
	if [ "$(id -u)" -eq 0 ]; then
		trace live -i lo -f "udp port $port" -o "int_report.udp-ports=$port" \
			-C "$tmp/run.conf" --allow-drops
		sleep 1
		python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.01 >/dev/null
		sleep 0.3
		finish live
		runs="$runs live"
	else
		echo "skip the live capture under strace: needs root"
	fi
	for r in $runs; do
		if [ "$(cat "$tmp/$r.rc")" = 0 ] && [ -s "$tmp/$r.calls" ] &&
		   grep -q '^read\|^recvmmsg\|^recvfrom\|^poll' "$tmp/$r.calls"; then
			ok "the $r run under strace: exit 0, $(wc -l <"$tmp/$r.calls" | tr -d ' ') distinct system calls"
		else
			echo "exit status $(cat "$tmp/$r.rc")" >>"$tmp/$r.err"
			bad "the $r run under strace" "$tmp/$r.err"
		fi
	done
	for u in $units; do
		filter_of "$build/dist/systemd/$u"
		if [ ! -s "$tmp/allow" ]; then
			bad "$u: no system call filter read from the unit"
			continue
		fi
		for r in $runs; do
			comm -23 "$tmp/$r.calls" "$tmp/allow" >"$tmp/denied"
			if [ -s "$tmp/denied" ]; then
				bad "$u: the $r run makes calls SystemCallFilter denies" "$tmp/denied"
			else
				ok "$u: every call of the $r run is in SystemCallFilter ($(wc -l <"$tmp/allow" | tr -d ' ') allowed)"
			fi
		done
		fams=$(sed -n 's/^RestrictAddressFamilies=//p' "$build/dist/systemd/$u")
		cat "$tmp"/*.strace | grep -o 'socket(AF_[A-Z0-9]*' | sed 's/socket(//' | sort -u >"$tmp/fams"
		: >"$tmp/badfam"
		while read -r fam; do
			case " $fams " in *" $fam "*) ;; *) echo "$fam" >>"$tmp/badfam" ;; esac
		done <"$tmp/fams"
		if [ -s "$tmp/badfam" ]; then
			bad "$u: sockets of families RestrictAddressFamilies refuses" "$tmp/badfam"
		else
			ok "$u: every socket family used ($(tr '\n' ' ' <"$tmp/fams")) is in RestrictAddressFamilies"
		fi
	done
fi

summary systemd
