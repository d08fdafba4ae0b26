#!/bin/sh
# test/outputs/influxdb/run.sh - the influxdb channel end to end, against a
# real influxd (test/services/influxdb.sh; the precise status codes are
# check_influxdb's, with a server of its own). Each run writes the same
# rules' records to an influxdb-output and to a file-output in JSON; the
# points are then read back with InfluxQL (compare.py: python's urllib and
# json) and compared with the JSON records: measurement, tags, field values
# and types, timestamps, and no point more or less.
#   http: an event rule with a delta-key (tags), one without, a query rule
#     grouped by an address and a path (tags), per-hop values;
#   create-database: the database made by the channel, bodies gzip'd;
#   udp: the same rules to the UDP listener (database "udpdb");
#   outage: influxd stopped and started again while intspect takes reports
#     on its UDP input (-u, fed at a fixed pace by send_reports.py): then
#     delivered + dropped = produced (the channel's counters at exit), and
#     the points in InfluxDB are the records delivered (a queue too small
#     for the outage: the overflow is dropped and counted, exit status 3);
#   nothing listening: exit status 3, "never connected";
#   intspect -T: conf/examples/influxdb.conf accepted without a server; a
#     key error with its line:col and did-you-mean.
# Prints ok NAME / FAIL NAME, then "influxdb: N passed, M failed"; exits 1
# on a failure, 77 when influxd is not installed.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
svc=$src/test/services/influxdb.sh
cmp_py=$src/test/outputs/influxdb/compare.py
tmp=$(mktemp -d)
pids=""
. "$src/test/tools/checks.sh"

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	sh "$svc" stop "$tmp/i1" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

ports=$(sh "$svc" start "$tmp/i1")
case $? in
0) ;;
77) echo "influxdb: skipped (influxd not installed)"; exit 77 ;;
*) echo "FAIL start influxd"; echo "influxdb: 0 passed, 1 failed"; exit 1 ;;
esac
P=${ports% *} U=${ports#* }
echo "   (influxd $(influxd version 2>/dev/null | sed 's/ (.*//'): HTTP on 127.0.0.1:$P, UDP on 127.0.0.1:$U)"

finish() {
	summary influxdb
	exit $?
}

# sanitized FILE: no sanitizer report in it
sanitized() { ! grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$1"; }

# isp NAME CONF ARGS...: run intspect; stdout and stderr in $tmp/NAME.{out,err}.
# 0 when it exited 0 without a sanitizer report.
isp() {
	n=$1 c=$2
	shift 2
	"$bin" -C "$c" "$@" >"$tmp/$n.out" 2>"$tmp/$n.err"
	st=$?
	if [ "$st" -ne 0 ]; then
		bad "$n: exit status $st" "$tmp/$n.err"
		return 1
	fi
	sanitized "$tmp/$n.err" || { bad "$n: sanitizer report" "$tmp/$n.err"; return 1; }
}

# counters NAME CHANNEL: queued delivered dropped retried reconnects from
# intspect's exit line into q d x r c.
counters() {
	set -- $(sed -n "s/^intspect: channel $2: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped, \([0-9]*\) retried, \([0-9]*\) reconnects, [0-9]* acknowledged$/\1 \2 \3 \4 \5/p" "$tmp/$1.err") x x x x x
	q=$1 d=$2 x=$3 r=$4 c=$5
}

# compare NAME DB JSON [--subset]: the points of DB against the JSON records
compare() {
	if python3 "$cmp_py" check "$P" "$2" "$3" ${4:-} path=ip.src,ip.dst \
		lat=ip.dst,int.hop_switch_ids per-node=int_report.node_id >"$tmp/$1.cmp" 2>&1; then
		ok "$1: $(tail -n 1 "$tmp/$1.cmp")"
	else
		bad "$1: points differ from the JSON records" "$tmp/$1.cmp"
	fi
}

npoints() { python3 "$cmp_py" points "$P" "$1" 2>/dev/null || echo "?"; }

# ---- the rules: every record to the channel $1 and to the JSON file $2 ----
rules() {
	cat <<EOF
event-report path {
  event = "int.hop_switch_ids"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"int.hop_switch_ids", "int.hop_latencies", "ip.src", "ip.dst", "int.latency"}
  output-channel = {$1, json}
}
event-report hops {
  event = "int.num_hop"
  attributes = {"ip.src", "int.hop_latencies", "int.hop_queue_occups"}
  output-channel = {$1, json}
}
query-report lat {
  ms-period = 20
  select = {"count()", "avg(int.hop_latencies)", "max(int.latency)", "p99(int.latency)", "sum(int.latency)"}
  group-by = {"ip.dst", "int.hop_switch_ids"}
  output-channel = {$1, json}
}
file-output json { path = "$2" }
EOF
}

# the config compiler must know the section, or every case below fails
printf 'influxdb-output tsdb { port = %s; database = "x" }\n' "$P" >"$tmp/pre.conf"
if ! "$bin" -T "$tmp/pre.conf" >"$tmp/pre.err" 2>&1; then
	bad "intspect -T does not take an influxdb-output section" "$tmp/pre.err"
	finish
fi

cap=$tmp/in.pcap
"$bld/intgen" -o "$cap" -n 600 --seed 7 --hops 1-4 --flows 12 --pps 2000 >/dev/null

# ---- intspect -T: the example, without a server; a key error ----
if "$bin" -T "$src/conf/examples/influxdb.conf" >"$tmp/t.out" 2>&1; then
	ok "intspect -T accepts conf/examples/influxdb.conf (nothing listens on its port)"
else
	bad "intspect -T conf/examples/influxdb.conf" "$tmp/t.out"
fi
{ printf 'influxdb-output tsdb {\n  port = %s\n  databse = "x"\n}\n' "$P"; rules tsdb "$tmp/x.json"; } >"$tmp/typo.conf"
"$bin" -T "$tmp/typo.conf" >"$tmp/typo.err" 2>&1
st=$?
if [ "$st" -eq 2 ] && grep -q -F "typo.conf:3:3: error: unknown key 'databse' for an influxdb output (did you mean 'database'?); known: enable," "$tmp/typo.err"; then
	ok "a key error: line:col, did you mean"
else
	bad "key error: exit status $st" "$tmp/typo.err"
fi

# ---- http ----
python3 "$cmp_py" create "$P" t_http || bad "CREATE DATABASE t_http"
{ printf 'influxdb-output tsdb { port = %s; database = "t_http" }\n' "$P"; rules tsdb "$tmp/http.json"; } >"$tmp/http.conf"
if isp http "$tmp/http.conf" -r "$cap"; then
	counters http tsdb
	n=$(wc -l <"$tmp/http.json")
	if [ "$q" = "$n" ] && [ "$d" = "$n" ] && [ "$x" = 0 ] && [ "$n" -gt 600 ] && [ "$c" = 0 ]; then
		ok "http: $n records queued and delivered, none dropped, one connection kept alive"
	else
		bad "http: $n JSON records; queued $q delivered $d dropped $x reconnects $c" "$tmp/http.err"
	fi
	compare http t_http "$tmp/http.json"
fi

# ---- coalesced reports: one point a record ----
# a packet's reports share its time, and InfluxDB keeps one point a series
# and time: records of one flow in one packet (8 reports of 4 flows a
# packet) must stay apart (the item's index in nanoseconds)
"$bld/intgen" -o "$tmp/coal.pcap" -n 2000 --seed 5 --format report --report-version 2.0 \
	--coalesce 8 --flows 4 --hops 2-3 >/dev/null 2>&1
python3 "$cmp_py" create "$P" t_coal || bad "CREATE DATABASE t_coal"
printf 'influxdb-output tsdb { port = %s; database = "t_coal"; drop-policy = block }\nmetrics net { output-channel = {tsdb} }\n' \
	"$P" >"$tmp/coal.conf"
if isp coal "$tmp/coal.conf" -r "$tmp/coal.pcap"; then
	counters coal tsdb
	pts=$(npoints t_coal)
	if [ "$x" = 0 ] && [ "$d" -gt 2000 ] && [ "$pts" = "$d" ]; then
		ok "coalesced reports: every record one point ($d records delivered, $pts points)"
	else
		bad "coalesced reports: $d records delivered, $x dropped, $pts points" "$tmp/coal.err"
	fi
fi

# ---- create-database, gzip ----
{ printf 'influxdb-output tsdb { port = %s; database = "t new"; create-database = true; max-body = "4k"; gzip = true }\n' "$P"
  rules tsdb "$tmp/create.json"; } >"$tmp/create.conf"
if isp create "$tmp/create.conf" -r "$cap"; then
	if grep -q 'intspect: channel tsdb: influxdb 127.0.0.1:[0-9]*: created database "t new"' "$tmp/create.err"; then
		ok "create-database: said"
	else
		bad "create-database: not said" "$tmp/create.err"
	fi
	if grep -q 'intspect: channel tsdb: influxdb 127.0.0.1:[0-9]*: gzip: [0-9]* bytes of line protocol sent as [0-9]*' "$tmp/create.err"; then
		ok "gzip: the bodies InfluxDB took were compressed ($(sed -n 's/.*gzip: .*(\(.*\))$/\1/p' "$tmp/create.err") of the line protocol)"
	else
		bad "gzip: not said" "$tmp/create.err"
	fi
	compare create "t new" "$tmp/create.json"
fi

# ---- udp ----
{ printf 'influxdb-output tsdb { transport = udp; port = %s }\n' "$U"; rules tsdb "$tmp/udp.json"; } >"$tmp/udp.conf"
if isp udp "$tmp/udp.conf" -r "$cap"; then
	counters udp tsdb
	n=$(wc -l <"$tmp/udp.json")
	# the listener writes its points in batches (batch-timeout 100 ms)
	i=0
	while [ "$(npoints udpdb)" != "$n" ] && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ "$q" = "$n" ] && [ "$d" = "$n" ] && [ "$x" = 0 ]; then
		ok "udp: $n records queued and sent"
	else
		bad "udp: $n JSON records; queued $q delivered $d dropped $x" "$tmp/udp.err"
	fi
	compare udp udpdb "$tmp/udp.json"
fi

# ---- outage: influxd stopped and started again during a live run ----
# intspect takes telemetry reports on its UDP input, sent 10 every 40 ms
# (6 s); 0.6 s in, influxd stops (SIGTERM: its clean shutdown takes about
# 2 s), and starts again on the same ports half a second later, while
# reports still come. The JSON file gets every record.
rcap=$tmp/reports.pcap
"$bld/intgen" -o "$rcap" -n 1500 --seed 5 --format report --report-version 2.0 --hops 1-4 \
	--flows 16 2>/dev/null
inport=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

# outage NAME DB EXTRA-KEYS: the run; counters in q d x r c, exit status in
# ist; 0 when it exited 0 or 3 (records dropped) without a sanitizer report
outage() {
	python3 "$cmp_py" create "$P" "$2"
	cat >"$tmp/$1.conf" <<EOF
influxdb-output tsdb { port = $P; database = "$2"; timeout-ms = 500; $3 }
file-output json { path = "$tmp/$1.json" }
event-report each {
  event = "int_report.seq_num"
  attributes = {"int_report.node_id", "ip.src", "int.hop_latencies"}
  output-channel = {tsdb, json}
}
query-report per-node {
  ms-period = 100
  select = {"count()", "avg(int.hop_latencies)", "max(int.latency)"}
  group-by = {"int_report.node_id"}
  output-channel = {tsdb, json}
}
EOF
	"$bin" -C "$tmp/$1.conf" -u "127.0.0.1:$inport" >/dev/null 2>"$tmp/$1.err" &
	ipid=$!
	pids="$pids $ipid"
	sleep 0.5
	python3 "$src/test/inputs/send_reports.py" "$rcap" 127.0.0.1 "$inport" 10 0.04 >"$tmp/$1.sent" &
	spid=$!
	sleep 0.6
	sh "$svc" stop "$tmp/i1"
	sleep 0.5
	sh "$svc" start "$tmp/i1" "$P" "$U" >/dev/null || bad "$1: influxd did not start again"
	wait "$spid"
	sleep 1.5               # the channel's backoff is at most 1 s
	# a few reports more, long after the outage: the newest records come
	# when the channel has its server back (the end of the capture may
	# still meet the backlog in a queue of 20)
	python3 "$src/test/soak/pace.py" "$rcap" 127.0.0.1 "$inport" 50 0.2 >"$tmp/$1.sent2"
	sleep 1
	kill -INT "$ipid"
	wait "$ipid"
	ist=$?
	counters "$1" tsdb
	{ [ "$ist" -eq 0 ] || [ "$ist" -eq 3 ]; } && sanitized "$tmp/$1.err"
}

if outage outage-all t_out ""; then
	n=$(wc -l <"$tmp/outage-all.json")
	pts=$(npoints t_out)
	if [ "$ist" -eq 0 ] && [ "$q" = "$n" ] && [ "$d" = "$n" ] && [ "$x" = 0 ] &&
	   [ "$r" -ge 1 ] && [ "$c" -ge 1 ] && [ "$pts" = "$d" ]; then
		ok "outage: every record delivered after the restart (queued $q, delivered $d, dropped $x, retried $r, reconnects $c; $pts points)"
	else
		bad "outage: exit $ist; $n records; queued $q delivered $d dropped $x retried $r reconnects $c; $pts points" "$tmp/outage-all.err"
	fi
	if grep -q "records wait in the queue, retrying" "$tmp/outage-all.err" &&
	   grep -q "tsdb: influxdb 127.0.0.1:$P: writing again" "$tmp/outage-all.err"; then
		ok "outage: its start and its end said"
	else
		bad "outage: messages" "$tmp/outage-all.err"
	fi
	compare outage-all t_out "$tmp/outage-all.json"
else
	bad "outage: exit status $ist, or a sanitizer report" "$tmp/outage-all.err"
fi

if outage outage-small-queue t_small "queue-records = 20"; then
	n=$(wc -l <"$tmp/outage-small-queue.json")
	pts=$(npoints t_small)
	if [ "$ist" -eq 3 ] && [ "$q" = "$n" ] && [ "$x" -gt 0 ] && [ $((d + x)) -eq "$q" ] &&
	   [ "$pts" = "$d" ]; then
		ok "outage, small queue: delivered + dropped = produced, points = delivered, exit 3 (queued $q, delivered $d, dropped $x; $pts points)"
	else
		bad "outage, small queue: exit $ist; $n records; queued $q delivered $d dropped $x; $pts points" "$tmp/outage-small-queue.err"
	fi
	compare outage-small-queue t_small "$tmp/outage-small-queue.json" --subset
else
	bad "outage, small queue: exit status $ist, or a sanitizer report" "$tmp/outage-small-queue.err"
fi

# ---- nothing listens ----
dead=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
{ printf 'influxdb-output tsdb { port = %s; database = "x"; shutdown-ms = 300 }\n' "$dead"
  rules tsdb "$tmp/dead.json"; } >"$tmp/dead.conf"
"$bin" -C "$tmp/dead.conf" -r "$cap" >/dev/null 2>"$tmp/dead.err"
st=$?
counters dead tsdb
if [ "$st" -eq 3 ] && [ "$(grep -c "channel tsdb: .*never connected" "$tmp/dead.err")" = 1 ] &&
   grep -q "influxdb 127.0.0.1:$dead: never connected: connect: Connection refused" "$tmp/dead.err" &&
   [ "$d" = 0 ] && [ "$x" = "$q" ] && sanitized "$tmp/dead.err"; then
	ok "nothing listening: exit status 3, never connected, all $x records dropped"
else
	bad "nothing listening: exit status $st" "$tmp/dead.err"
fi

finish
