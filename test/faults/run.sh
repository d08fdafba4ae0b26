#!/bin/sh
# test/faults/run.sh - faults of the host under a running intspect (the UDP
# report listener fed by a paced sender, records to a file channel):
#   disk full: the file's filesystem (a 256 KiB tmpfs in a mount namespace
#     of its own) fills mid-run, then space comes back: writing resumes;
#     what could not wait is dropped and counted; at exit queued =
#     delivered + dropped, the file holds exactly the delivered records,
#     every line whole JSON (a write cut by ENOSPC is completed, or, when
#     the disk is still full at exit, removed: its record counted dropped,
#     a case of its own); the same in the output-dir layout, the disk
#     full across a new file's time (every file whole, with its .sem);
#   file removed: the file is deleted while written (a hard link keeps its
#     lines): the channel opens a new one, and the two hold the delivered
#     records exactly, none lost;
#   files removed under rotation: rotated files deleted as they appear
#     (rotate-mb = 1, keep = 2): no error, counters reconcile, every kept
#     line whole;
#   a service's name the resolver never answers (an InfluxDB host; a
#     resolver on 127.0.0.99 that takes queries and answers none, in a
#     mount namespace whose /etc/resolv.conf names it: dns.sh): every
#     packet read, the records counted dropped at the exit deadline, the
#     channel said never connected, exit 3, in bounded time.
# The disk-full and DNS cases need root and unshare(1) (skipped otherwise;
# their scenarios are full.sh and dns.sh, run inside the namespace).
# Prints ok NAME / FAIL NAME, then "faults: N passed, M failed".
set -u
src=${top_srcdir:-.}
bld=$(cd "${top_builddir:-.}" && pwd)
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"
send=$(cd "$src/test/inputs" && pwd)/send_reports.py

free_udp() {
	python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# counters ERR: "queued delivered dropped retried reconnects" of channel out
counters() {
	sed -n 's/^intspect: channel out: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped, \([0-9]*\) retried, \([0-9]*\) reconnects.*/\1 \2 \3 \4 \5/p' "$1"
}

# whole FILE...: every line a JSON object ended by a newline; prints how many
whole() {
	python3 - "$@" <<'PY'
import json, sys
n = 0
for f in sys.argv[1:]:
    for i, line in enumerate(open(f, 'rb')):
        assert line.endswith(b'\n'), '%s:%d: no newline' % (f, i + 1)
        json.loads(line)
        n += 1
print(n)
PY
}

"$bld/intgen" -o "$tmp/r.pcap" -n 1000 --seed 3 --format report --report-version 2.0 --hops 3 \
	>/dev/null 2>&1 || { bad "intgen"; summary faults; exit 1; }
rules() {       # FILE-OUTPUT-KEYS
	printf 'file-output out { %s }\n' "$1"
	printf 'event-report each {\n  event = "int_report.seq_num"\n'
	printf '  attributes = {"ip.src", "ip.dst", "int.hop_switch_ids", "int.hop_latencies", "int.hop_queue_occups"}\n'
	printf '  output-channel = {out}\n}\n'
}

# ---- disk full, then space again ----
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	port=$(free_udp)
	mkdir "$tmp/disk"
	rules "path = \"$tmp/disk/out.json\"; flush-ms = 10; queue-records = 400" >"$tmp/full.conf"
	unshare -m sh "$src/test/faults/full.sh" "$tmp" "$bld/intspect" "$send" "$port"
	rc=$(cat "$tmp/full.rc" 2>/dev/null || echo "?")
	set -- $(counters "$tmp/full.err") x x x x x
	q=$1 d=$2 x=$3 r=$4
	lines=$(whole "$tmp/full.json" 2>"$tmp/whole.err") || lines="bad"
	avail=$(awk '{ print $4 }' "$tmp/full.df" 2>/dev/null)
	if [ "$q" = 2000 ] && [ "$lines" = "$d" ] && [ "$q" -eq $((d + x)) ] 2>/dev/null &&
	   [ "$x" -gt 0 ] && [ "$r" -gt 0 ] && [ "$avail" = 0 ] && [ "$d" -gt 400 ] &&
	   { [ "$rc" = 3 ] || [ "$rc" = 0 ]; }; then
		ok "disk full mid-run: $d of 2000 records written, $x dropped and counted, $r retried; the file holds exactly the $d, every line whole (exit $rc)"
	else
		{ echo "exit $rc, counters: queued $q delivered $d dropped $x retried $r; lines: $lines; df: $(cat "$tmp/full.df" 2>/dev/null)"
		  cat "$tmp/whole.err" "$tmp/full.err"; } >"$tmp/full.why" 2>&1
		bad "disk full mid-run" "$tmp/full.why"
	fi
	# each outage said once when it starts, and its end: the second
	# burst may fill the disk again (its records and the queue's pass the
	# space the filler gave back), and that outage may last to the exit
	full=$(grep -c "^intspect: channel out: cannot write '.*/out.json': No space left on device; records wait in the queue, retrying$" "$tmp/full.err")
	again=$(grep -c "^intspect: channel out: writing '.*/out.json' again$" "$tmp/full.err")
	[ "$again" -ge 1 ] && [ "$full" -ge "$again" ] && [ "$full" -le $((again + 1)) ] &&
		[ "$(grep -c 'No space left' "$tmp/full.err")" -eq "$full" ] &&
		ok "disk full: each of $full outage(s) said once (No space left on device), and $again end(s)" ||
		bad "disk full: not said as expected" "$tmp/full.err"
	# the disk still full at the exit: the line the last write cut is
	# removed (its record counted dropped), the file holds whole lines
	port=$(free_udp)
	rm -f "$tmp/full.json" "$tmp/full.cut"
	unshare -m sh "$src/test/faults/full.sh" "$tmp" "$bld/intspect" "$send" "$port" stays
	rc=$(cat "$tmp/full.rc" 2>/dev/null || echo "?")
	set -- $(counters "$tmp/full.err") x x x x x
	q=$1 d=$2 x=$3
	lines=$(whole "$tmp/full.json" 2>"$tmp/whole.err") || lines="bad"
	cut=$(cat "$tmp/full.cut" 2>/dev/null)
	if [ "$q" = 1000 ] && [ "$lines" = "$d" ] && [ "$q" -eq $((d + x)) ] 2>/dev/null &&
	   [ "$x" -gt 0 ] && { [ "$cut" = cut ] || [ "$cut" = whole ]; } && [ "$rc" = 3 ]; then
		[ "$cut" = cut ] && how="the line the disk cut removed at exit" ||
			how="no line was cut this time"
		ok "disk still full at exit: $d of 1000 records written, $x dropped and counted, the file holds exactly the $d, every line whole ($how; exit $rc)"
	else
		{ echo "exit $rc, counters: queued $q delivered $d dropped $x; lines: $lines; before the exit: $cut"
		  cat "$tmp/whole.err" "$tmp/full.err"; } >"$tmp/full.why" 2>&1
		bad "disk still full at exit" "$tmp/full.why"
	fi
	# the output-dir layout (MMT-Probe's): a file a cache-period, the disk
	# full across a period's end. A file cut inside a line is left only
	# once the line is whole: every file ends with a newline, every line
	# is whole JSON, each file with a record has its .sem and no empty
	# one is left; the files hold exactly the records delivered
	port=$(free_udp)
	{ rules "output-dir = \"$tmp/disk/\"; output-file = \"out.json\"; sample-file = true; format = json; flush-ms = 10; queue-records = 400"
	  echo "output { cache-period = 1 }"; } >"$tmp/full.conf"
	unshare -m sh "$src/test/faults/full.sh" "$tmp" "$bld/intspect" "$send" "$port" dir
	rc=$(cat "$tmp/full.rc" 2>/dev/null || echo "?")
	set -- $(counters "$tmp/full.err") x x x x x
	q=$1 d=$2 x=$3 r=$4
	data=$(ls "$tmp/fulldir" 2>/dev/null | grep -v '\.sem$')
	nfiles=$(echo "$data" | grep -c .)
	lines=$(cd "$tmp/fulldir" && whole $data 2>"$tmp/whole.err") || lines="bad"
	sems=yes
	for f in $data; do
		[ -s "$tmp/fulldir/$f" ] && [ -f "$tmp/fulldir/$f.sem" ] || sems="no: $f"
	done
	[ "$(ls "$tmp/fulldir" | grep -c '\.sem$')" = "$nfiles" ] || sems="a .sem without its file"
	if [ "$q" = 2000 ] && [ "$lines" = "$d" ] && [ "$q" -eq $((d + x)) ] 2>/dev/null &&
	   [ "$x" -gt 0 ] && [ "$r" -gt 0 ] && [ "$nfiles" -ge 2 ] && [ "$sems" = yes ] &&
	   { [ "$rc" = 3 ] || [ "$rc" = 0 ]; }; then
		ok "disk full in the output-dir layout: $d of 2000 records in $nfiles files, each with its .sem, every line whole; $x dropped and counted (exit $rc)"
	else
		{ echo "exit $rc, counters: queued $q delivered $d dropped $x retried $r; lines: $lines; files: $nfiles; sem: $sems"
		  ls -la "$tmp/fulldir"; cat "$tmp/whole.err" "$tmp/full.err"; } >"$tmp/full.why" 2>&1
		bad "disk full in the output-dir layout" "$tmp/full.why"
	fi
else
	echo "skip disk full: needs root and unshare -m"
fi

# ---- the file removed while written ----
port=$(free_udp)
rules "path = \"$tmp/rm.json\"; flush-ms = 10" >"$tmp/rm.conf"
"$bld/intspect" -C "$tmp/rm.conf" -u "127.0.0.1:$port" -q >/dev/null 2>"$tmp/rm.err" &
pid=$!
sleep 0.5
python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.01 >/dev/null
sleep 0.3
ln "$tmp/rm.json" "$tmp/rm.kept" && rm "$tmp/rm.json"
sleep 0.3
python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.01 >/dev/null
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
set -- $(counters "$tmp/rm.err") x x x x x
q=$1 d=$2 x=$3 c=$5
kept=$(whole "$tmp/rm.kept" 2>&1) || kept=bad
new=$(whole "$tmp/rm.json" 2>&1) || new=bad
if [ "$rc" -eq 0 ] && [ "$q" = 2000 ] && [ "$d" = 2000 ] && [ "$x" = 0 ] && [ "$c" -ge 1 ] &&
   [ "$kept" -ge 1000 ] 2>/dev/null && [ $((kept + new)) -eq 2000 ] 2>/dev/null; then
	ok "file removed while written: a new one opened ($c reopen); $kept + $new lines = the 2000 records"
else
	echo "exit $rc; queued $q delivered $d dropped $x reconnects $c; lines kept $kept, new $new" >"$tmp/rm.why"
	cat "$tmp/rm.err" >>"$tmp/rm.why"
	bad "file removed while written" "$tmp/rm.why"
fi

# ---- rotated files removed as they appear ----
port=$(free_udp)
mkdir "$tmp/rot"
rules "path = \"$tmp/rot/out.json\"; flush-ms = 10; rotate-mb = 1; keep = 2" >"$tmp/rot.conf"
"$bld/intspect" -C "$tmp/rot.conf" -u "127.0.0.1:$port" -q >/dev/null 2>"$tmp/rot.err" &
pid=$!
( i=0; while [ "$i" -lt 200 ]; do rm -f "$tmp/rot/out.json.2"; sleep 0.05; i=$((i + 1)); done ) &
cleaner=$!
sleep 0.5
for k in 1 2 3 4 5 6 7 8; do
	python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 100 0.005 >/dev/null
done
sleep 0.5
kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
kill "$cleaner" 2>/dev/null
wait "$cleaner" 2>/dev/null
set -- $(counters "$tmp/rot.err") x x x x x
q=$1 d=$2 x=$3
lines=$(whole "$tmp"/rot/out.json* 2>&1) || lines=bad
nfiles=$(ls "$tmp/rot" | wc -l)
if [ "$rc" -eq 0 ] && [ "$q" = 8000 ] && [ "$d" = 8000 ] && [ "$x" = 0 ] && [ "$lines" != bad ] &&
   [ "$lines" -le 8000 ] && [ "$nfiles" -ge 2 ]; then
	ok "rotated files removed as they appear: 8000 records delivered, none dropped, $lines whole lines in the $nfiles files left"
else
	echo "exit $rc; queued $q delivered $d dropped $x; lines $lines; files: $(ls "$tmp/rot")" >"$tmp/rot.why"
	cat "$tmp/rot.err" >>"$tmp/rot.why"
	bad "rotated files removed as they appear" "$tmp/rot.why"
fi
# ---- a broker's name that the resolver never answers ----
if [ "$(id -u)" -eq 0 ] && command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	{ printf 'influxdb-output out { host = "tsdb.example.test"; database = "int"; shutdown-ms = 2000 }\n'
	  printf 'event-report each { event = "int_report.seq_num"; attributes = {"ip.src"}; output-channel = {out} }\n'; } \
		>"$tmp/dns.conf"
	unshare -m sh "$src/test/faults/dns.sh" "$tmp" "$bld/intspect"
	rc=$(cat "$tmp/dns.rc" 2>/dev/null || echo "?")
	secs=$(cat "$tmp/dns.secs" 2>/dev/null || echo 99)
	set -- $(counters "$tmp/dns.err") x x x x x
	if [ "$rc" = 3 ] && [ "$1" = 1000 ] && [ "$3" = 1000 ] &&
	   grep -q "^intspect: 1000 packets" "$tmp/dns.err" &&
	   [ "$(grep -c "^intspect: channel out: .*never connected" "$tmp/dns.err")" = 1 ] &&
	   awk -v s="$secs" 'BEGIN { exit !(s < 15) }'; then
		ok "a name the resolver never answers: every packet read, the 1000 records counted dropped, 'never connected', exit 3, in ${secs}s"
	else
		{ echo "exit $rc in ${secs}s; counters: $*"; cat "$tmp/dns.err"; } >"$tmp/dns.why"
		bad "a name the resolver never answers" "$tmp/dns.why"
	fi
else
	echo "skip slow DNS: needs root and unshare -m"
fi
summary faults
