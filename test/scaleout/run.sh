#!/bin/sh
# test/scaleout/run.sh - scaling out (README.md, "Scaling out"): partial
# windows (output-format = partial) of several instances merged by
# intspect --merge into the records one instance writes on the whole
# input; intspect --forward and -k (a Kafka consumer group) between them.
# The reference is always intspect itself run once on the whole capture,
# with the same rules written as JSON: the merge must give it byte for
# byte (every function: exact sums, moments, sketches, first/last, per-hop
# arrays, the order of groups and windows).
#
# Without a broker:
#   1 files-2       a capture (unavailable hop values among them) split in 2
#                   by flow (BPF), one instance on 2
#                   workers; --merge of their two files
#   2 files-3       split in 3; the three files merged
#   3 stdin         the three instances' partials in one stream ('-',
#                   merge { instances = 3 })
#     (diffends and ms-period = 0 windows merged: windows.sh)
#     keys          groups keyed by two 32-hop arrays (268-byte keys),
#                   split in 2 and merged
#   4 correct       the same stream with instances = 1 and late = correct:
#                   windows written with the first instance, the others'
#                   partials written as corrections; each group's last
#                   record is one instance's
#     late          the same with the default late policy: the others'
#                   partials counted and dropped, no correction
#   5 mismatch      a merge whose query-report differs (select): said once,
#                   every partial counted "of a different rule", no record
#   6 malformed     lines that are not partials (not JSON, fields missing,
#                   a bad state) among them: counted, the reason said, the
#                   records still right
#     oldversion    a partial of version 1: counted malformed, the reason
#                   naming its version and the one read
#     csv-merge     the merge written as MMT-Probe's CSV rows: one instance's
#                   rows, report counter included
#   7 errors        partial on an event report and with diff(): file:line:col;
#                   --merge without -C; -k with -w 2; --forward with -C
#     forward-drops a live forwarder (-u) whose broker is away, 200,000
#                   reports: every datagram read acknowledged or counted
#                   dropped, the queue's bound applied while running, exit 3
# Against a real Kafka broker (test/services/kafka.sh; skipped without java):
#   8 kafka-2       --forward of a reports capture into a 4-partition topic,
#                   then 2 consumers (-k) of one group (started together: the
#                   broker's groups wait 3 s for their members) write
#                   partials to a topic, a merge reads it: the records of one
#                   instance; each consumer had a share, every report once
#   9 kafka-3       the same with 3 consumers and 6 partitions
#  10 committed     a consumer of the same group started again reads nothing
#                   (the offsets were committed behind the written records)
#  12 lateness      (run before 11) one instance read from an input section
#                   (mode = kafka), the merge from another (kafka-partials)
#                   waiting for 2: a window is written lateness-ms after the
#                   instance closed it, its default 5 s (the last ones
#                   between 2 and 12 s after the last report); one
#                   instance's records
#  13 frames        (run before 11) the forwarder's 24-byte frames of 10
#                   reports byte for byte (sender port and address, capture
#                   time, payload), each flow key of case 8 in one
#                   partition; 10 bare UDP payloads (kcat, a file a message)
#                   read by -k --dump as reports timed by their messages
#  11 rebalance     reports paced at 2,000/s through intspect -u --forward;
#                   one of 2 consumers stopped and restarted mid-stream: the
#                   merged records equal those of a consumer reading the whole
#                   topic alone, and every report sent is counted once. The
#                   merge corrects late partials (late = correct): while
#                   partitions move, a consumer may read reports of a window
#                   it or the merge already wrote (dsl/README.md, "A Kafka
#                   input out of order"), more often on a loaded machine; a
#                   group's last record is what is compared. The reference
#                   writes partials too, merged alone: a report its
#                   partitions deliver after its window closed (a fetch
#                   late on a loaded machine: 12 of 102 groups differed
#                   once) then counts in its window as on the group's side
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
gen=$bld/intgen
svc=$src/test/services/kafka.sh

tmp=$(mktemp -d "${TMPDIR:-/tmp}/intspect-scaleout.XXXXXX")
kdir=$tmp/broker
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	[ -d "$kdir" ] && sh "$svc" stop "$kdir" >/dev/null 2>&1
	if [ -n "${SCALEOUT_TEST_KEEP:-}" ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

pass=0 fail=0 skipped=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

sanitized() {   # FILE...: a sanitizer said something
	grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer|ThreadSanitizer' "$@" 2>/dev/null
}

# the rules: every report function that merges, per-hop ones, two periods
rules() {       # OUTPUT-FORMAT-LINE CHANNEL-SECTION
	cat <<EOF
$2
query-report qa {
  ms-period = 100
  select = {"count()", "sum(int.latency)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.latency)", "first(int.hop_switch_ids)", "last(int.num_hop)", "rate(int.latency)",
            "p50(int.latency)", "p99(int.latency)", "avg(int.hop_latencies)",
            "max(int.hop_queue_occups)", "p90(int.hop_latencies)"}
  group-by = {"int.num_hop"}
  output-channel = {out}
  $1
}
query-report qb {
  ms-period = 250
  select = {"count()", "avg(int.latency)", "var(int.hop_latencies)", "last(int.hop_switch_ids)",
            "p50(int.latency - 5000)", "p90(0 - int.hop_latencies)"}
  group-by = {"int.hop_switch_ids"}
  output-channel = {out}
  $1
}
EOF
}
file_out() { echo "file-output out { path = \"$1\" }"; }

"$gen" -o "$tmp/a.pcap" -n 20000 --seed 1 --hops 1-6 --bitmap 0xFC00 --flows 64 --pps 20000 --unavailable \
	>/dev/null || { echo "FAIL intgen"; exit 1; }
rules "" "$(file_out "$tmp/single.json")" >"$tmp/single.conf"
"$bin" -r "$tmp/a.pcap" -C "$tmp/single.conf" 2>"$tmp/single.err" ||
	{ echo "FAIL reference run"; cat "$tmp/single.err"; exit 1; }
rules "" "$(file_out "$tmp/merged.json")" >"$tmp/merge.conf"

# instance K of N on its share of the flows: partials into FILE
instance() {    # K N FILE [intspect options]
	k=$1 n=$2 f=$3
	shift 3
	{ rules "output-format = partial" "$(file_out "$f")"; echo "probe-id = $((k + 1))"; } \
		>"$tmp/i$k-$n.conf"
	"$bin" -r "$tmp/a.pcap" -C "$tmp/i$k-$n.conf" "$@" "ip[15] % $n = $k" 2>"$tmp/i$k-$n.err"
}

merge_same() {  # NAME SOURCES...: merge, compare with the reference
	name=$1
	shift
	rm -f "$tmp/merged.json"
	"$bin" -C "$tmp/merge.conf" "$@" 2>"$tmp/$name.err"
	rc=$?
	if [ $rc -ne 0 ] || sanitized "$tmp/$name.err"; then
		bad "$name" "merge exited $rc"; sed 's/^/# /' "$tmp/$name.err"; return 1
	fi
	if ! cmp -s "$tmp/single.json" "$tmp/merged.json"; then
		bad "$name" "merged records differ from one instance's ($(wc -l <"$tmp/merged.json") lines against $(wc -l <"$tmp/single.json"))"
		sed 's/^/# /' "$tmp/$name.err"
		return 1
	fi
	return 0
}

# ---- 1 files-2 (instance 0 on two workers)
instance 0 2 "$tmp/p0-2.json" -w 2 && instance 1 2 "$tmp/p1-2.json" ||
	bad files-2 "an instance failed"
merge_same files-2 --merge "$tmp/p0-2.json" --merge "$tmp/p1-2.json" &&
	grep -q "2 instances, 14 windows written (0 before every instance closed them), 0 late" \
		"$tmp/files-2.err" && ok files-2
# MMT-Probe's CSV rows from the merge: the report counter goes on from
# window to window as one instance's (the source's name aside)
rules "output-format = csv" "$(file_out "$tmp/single.csv")" >"$tmp/csv1.conf"
rules "output-format = csv" "$(file_out "$tmp/merged.csv")" >"$tmp/csvm.conf"
"$bin" -r "$tmp/a.pcap" -C "$tmp/csv1.conf" 2>/dev/null
"$bin" -C "$tmp/csvm.conf" --merge "$tmp/p0-2.json" --merge "$tmp/p1-2.json" 2>/dev/null
cut -d, -f1,2,4- "$tmp/single.csv" >"$tmp/single.cut"
cut -d, -f1,2,4- "$tmp/merged.csv" >"$tmp/merged.cut"
[ -s "$tmp/single.cut" ] && cmp -s "$tmp/single.cut" "$tmp/merged.cut" && ok csv-merge ||
	bad csv-merge "CSV rows of the merge differ from one instance's"
# the end of input is stamped with the input's time on 2 workers too
# (not the merging engine's, which sees no packet)
t0=$(grep '"end":true' "$tmp/p0-2.json" | sed 's/.*"time":\([0-9]*\).*/\1/' | sort -u)
[ -n "$t0" ] && [ "$t0" -gt 1000000000 ] && ok "end-time" ||
	bad end-time "the end records' time on 2 workers: '$t0'"

# ---- 2 files-3
for k in 0 1 2; do instance $k 3 "$tmp/p$k-3.json" || bad files-3 "instance $k failed"; done
merge_same files-3 --merge "$tmp/p0-3.json" --merge "$tmp/p1-3.json" --merge "$tmp/p2-3.json" &&
	ok files-3

# ---- 3 stdin: the three instances in one stream (one after the other:
# the merge is told how many to wait for)
cat "$tmp/p0-3.json" "$tmp/p1-3.json" "$tmp/p2-3.json" >"$tmp/all-3.json"
cp "$tmp/merge.conf" "$tmp/merge-1.conf"
echo "merge { instances = 3 }" >>"$tmp/merge.conf"
merge_same stdin --merge - <"$tmp/all-3.json" && ok stdin

# ---- keys: groups keyed by two 32-hop arrays (keys of 268 bytes: two
# arrays of 32 4-byte elements, each with its flag, count and mask)
"$gen" -o "$tmp/h32.pcap" -n 600 --seed 4 --hops 32 --bitmap 0xCC00 --flows 8 --pps 2000 \
	>/dev/null || bad keys "intgen"
keys_rules() {  # OUTPUT-FORMAT-LINE CHANNEL-SECTION
	cat <<EOF
$2
query-report qk {
  ms-period = 100
  select = {"count()", "avg(int.latency)", "max(int.hop_latencies)"}
  group-by = {"int.hop_switch_ids", "int.hop_egress_port_ids"}
  output-channel = {out}
  $1
}
EOF
}
keys_rules "" "$(file_out "$tmp/ksingle.json")" >"$tmp/ksingle.conf"
keys_rules "" "$(file_out "$tmp/kmerged.json")" >"$tmp/kmerge.conf"
for k in 0 1; do
	{ keys_rules "output-format = partial" "$(file_out "$tmp/kp$k.json")"; echo "probe-id = $((k + 1))"; } \
		>"$tmp/ki$k.conf"
	"$bin" -r "$tmp/h32.pcap" -C "$tmp/ki$k.conf" "ip[15] % 2 = $k" 2>/dev/null
done
"$bin" -r "$tmp/h32.pcap" -C "$tmp/ksingle.conf" 2>/dev/null
"$bin" -C "$tmp/kmerge.conf" --merge "$tmp/kp0.json" --merge "$tmp/kp1.json" 2>"$tmp/keys.err"
klen=$(grep -m 1 -o '"key":"[0-9a-f]*"' "$tmp/kp0.json" | wc -c)
if [ -s "$tmp/ksingle.json" ] && cmp -s "$tmp/ksingle.json" "$tmp/kmerged.json" && [ "$klen" -gt 520 ]; then
	echo "# keys: $(((klen - 9) / 2))-byte group keys"
	ok keys
else
	bad keys "merged records differ, or keys not long ($klen)"; sed 's/^/# /' "$tmp/keys.err"
fi

# ---- 4 correct: the same stream told of one instance: the windows go out
# with the first instance's partials, the others' come late and correct
# them (late = correct); the last record of each group is one instance's
sed 's/^merge { instances = 3 }$/merge { instances = 1; late = correct }/' "$tmp/merge.conf" \
	>"$tmp/correct.conf"
rm -f "$tmp/merged.json"
"$bin" -C "$tmp/correct.conf" --merge - <"$tmp/all-3.json" 2>"$tmp/correct.err"
if r=$(python3 - "$tmp/single.json" "$tmp/merged.json" <<'EOF'
import json, sys
HEAD = {"report", "type", "ts", "time", "window_start", "window_end"}
def last(path):
    out, types = {}, {}
    for o in map(json.loads, open(path)):
        group = {k: v for k, v in o.items() if k not in HEAD and "(" not in k}
        key = (o["report"], o["window_end"], json.dumps(group, sort_keys=True))
        types[o["type"]] = types.get(o["type"], 0) + 1
        o.pop("type")
        out[key] = o
    return out, types
single, _ = last(sys.argv[1])
merged, types = last(sys.argv[2])
print(f"records by type {types}; {len(single)} groups, "
      f"{sum(merged.get(k) != v for k, v in single.items())} differ")
sys.exit(0 if merged == single and types.get("correction", 0) > 0 else 1)
EOF
	) && grep -q " 0 late partials dropped, [1-9][0-9]* corrections" "$tmp/correct.err"; then
	echo "# $r"
	ok correct
else
	bad correct "${r:-}"; sed 's/^/# /' "$tmp/correct.err"
fi

# ---- 4 late: the same with the default late policy: the others' partials
# come late, counted and dropped, no correction written
sed 's/^merge { instances = 3 }$/merge { instances = 1 }/' "$tmp/merge.conf" >"$tmp/late.conf"
rm -f "$tmp/merged.json"
"$bin" -C "$tmp/late.conf" --merge - <"$tmp/all-3.json" 2>"$tmp/late.err"
if grep -q " [1-9][0-9]* late partials dropped, 0 corrections" "$tmp/late.err" &&
   [ -s "$tmp/merged.json" ] && ! grep -q '"type":"correction"' "$tmp/merged.json"; then
	echo "# $(grep -o '[0-9]* late partials dropped' "$tmp/late.err")"
	ok late
else
	bad late "late partials not dropped and counted"; sed 's/^/# /' "$tmp/late.err"
fi

# ---- 5 mismatch: a select that differs
sed 's/"count()", "avg(int.latency)", "var/"count()", "max(int.latency)", "var/' \
	"$tmp/merge.conf" >"$tmp/mismatch.conf"
rm -f "$tmp/merged.json"
"$bin" -C "$tmp/mismatch.conf" --merge "$tmp/all-3.json" 2>"$tmp/mismatch.err"
nb=$(grep -c '"report":"qb"' "$tmp/all-3.json")
if grep -q "partials of 'qb' come from a query-report whose period, group-by or select differ" \
	"$tmp/mismatch.err" &&
	grep -q "$nb of a different rule" "$tmp/mismatch.err" &&
	[ "$(grep -c '"report":"qb"' "$tmp/merged.json" 2>/dev/null)" = 0 ] &&
	[ "$(grep -c "differ from this one" "$tmp/mismatch.err")" = 1 ]; then
	ok mismatch
else
	bad mismatch "expected the mismatch said once and $nb partials counted"; sed 's/^/# /' "$tmp/mismatch.err"
fi

# ---- 6 malformed lines among the partials
{
	echo 'not json at all'
	echo '{"partial":1,"report":"qa","instance":9}'
	grep -m 1 '"states"' "$tmp/p0-3.json" | sed 's/"states":\[{"n":[0-9]*}/"states":[{"n":"x"}/'
	echo '{"partial":3,"report":"qa","instance":1,"rule":"0"}'
	cat "$tmp/all-3.json"
} >"$tmp/bad.json"
if merge_same malformed --merge "$tmp/bad.json"; then
	if grep -q " 4 malformed" "$tmp/malformed.err" &&
		grep -q "the first malformed record: '\\[' or '{' expected near 'not'" "$tmp/malformed.err"; then
		ok malformed
	else
		bad malformed "4 malformed lines not counted, or the reason not said"; sed 's/^/# /' "$tmp/malformed.err"
	fi
fi

# a partial of another version: counted, and its reason names both
{ echo '{"partial":1,"report":"qa","instance":9,"rule":"0"}'; cat "$tmp/all-3.json"; } >"$tmp/v1.json"
if merge_same oldversion --merge "$tmp/v1.json"; then
	if grep -q " 1 malformed" "$tmp/oldversion.err" &&
		grep -q "the first malformed record: partial windows of version 1, this intspect reads version 2" \
			"$tmp/oldversion.err"; then
		ok oldversion
	else
		bad oldversion "a version-1 partial not counted, or the versions not said"
		sed 's/^/# /' "$tmp/oldversion.err"
	fi
fi

# ---- 7 errors
printf 'event-report e {\n  event = "int.latency"\n  attributes = {"int.latency"}\n  output-format = partial\n}\n' \
	>"$tmp/e1.conf"
"$bin" -T "$tmp/e1.conf" >/dev/null 2>"$tmp/e1.err"
r1=$?
printf 'query-report q {\n  select = {"var(diff(int.latency))"}\n  group-by = {"ip.src"}\n  output-format = partial\n}\n' \
	>"$tmp/e2.conf"
"$bin" -T "$tmp/e2.conf" >/dev/null 2>"$tmp/e2.err"
r2=$?
"$bin" --merge "$tmp/all-3.json" 2>"$tmp/e3.err"
r3=$?
"$bin" -k 127.0.0.1:1/t -w 2 -C "$tmp/merge.conf" 2>"$tmp/e4.err"
r4=$?
"$bin" -r "$tmp/a.pcap" --forward kafka:127.0.0.1:1/t -C "$tmp/merge.conf" 2>"$tmp/e5.err"
r5=$?
if [ $r1 = 2 ] && grep -q "e1.conf:4:19: error: 'output-format' expects json, csv or intspect-csv" "$tmp/e1.err" &&
	[ $r2 = 2 ] && grep -q "e2.conf:4:19: error: output-format = partial cannot carry 'var(diff(int.latency))'" "$tmp/e2.err" &&
	[ $r3 = 2 ] && grep -q "needs the query reports to merge: -C FILE" "$tmp/e3.err" &&
	[ $r4 != 0 ] && grep -q "a Kafka input is read by one worker" "$tmp/e4.err" &&
	[ $r5 = 2 ] && grep -q "forward runs no rules" "$tmp/e5.err"; then
	ok errors
else
	bad errors "exits $r1 $r2 $r3 $r4 $r5"; cat "$tmp"/e[1-5].err | sed 's/^/# /'
fi

# a live forwarder whose broker is away (README, "Scaling out": from a
# live input it drops what its queue cannot hold, counted): 200,000
# reports in bursts; every datagram read is acknowledged or counted
# dropped (those still queued at exit included), fewer were queued than
# read (the queue's bound refused some while running), exit 3
"$gen" -o "$tmp/fw.pcap" -n 1000 --seed 4 --format report --report-version 2.0 --hops 3 \
	--bitmap 0xFF80 >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" -u "127.0.0.1:$port" --forward kafka:127.0.0.1:1/t --control none 2>"$tmp/fw.err" &
fwp=$!
pids="$pids $fwp"
sleep 1
python3 - "$tmp/fw.pcap" "$port" <<'EOF' >"$tmp/fw.sent"
import socket, struct, sys, time
data = open(sys.argv[1], "rb").read()
off, reports = 24, []
while off + 16 <= len(data):
    incl = struct.unpack("<I", data[off + 8:off + 12])[0]
    reports.append(data[off + 16 + 42:off + 16 + incl])   # behind Ethernet, IPv4, UDP
    off += 16 + incl
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for burst in range(200):
    for r in reports:
        s.sendto(r, ("127.0.0.1", int(sys.argv[2])))
    time.sleep(0.002)    # the listener keeps up: the kernel drops none
print(200 * len(reports))
EOF
sleep 1
kill -INT $fwp
wait $fwp
rfw=$?
if fw=$(python3 - "$tmp/fw.err" "$(cat "$tmp/fw.sent")" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
recv, kdrop = map(int, re.search(r"(\d+) packets received by the kernel, (\d+) dropped", t).groups())
queued, acked, dropped = map(int, re.search(
    r"forward: (\d+) datagrams queued, (\d+) acknowledged by the broker, (\d+) dropped", t).groups())
print(f"sent {sys.argv[2]}, read {recv} (kernel drops {kdrop}), queued {queued}, acked {acked}, dropped {dropped}")
assert recv + kdrop == int(sys.argv[2]) and acked + dropped == recv and 0 < queued < recv
EOF
) && [ $rfw = 3 ] && ! sanitized "$tmp/fw.err"; then
	ok "forward-drops ($fw)"
else
	bad forward-drops "exit $rfw: $fw"; sed 's/^/# /' "$tmp/fw.err"
fi

# ---- Kafka
kafka_cases() {
	command -v java >/dev/null 2>&1 || { echo "# java not found: the Kafka cases are skipped"; return 77; }
	# a new group waits 3 s for its members: N consumers started together
	# get their shares at once
	addr=$(KAFKA_REBALANCE_DELAY_MS=3000 sh "$svc" start "$kdir") || return $?
	echo "# broker at $addr"
	sh "$svc" topic "$kdir" 4 r2 p2 r10 p10 pl && sh "$svc" topic "$kdir" 6 r3 p3 &&
		sh "$svc" topic "$kdir" 1 rf rb || return 1
	"$gen" -o "$tmp/b.pcap" -n 20000 --seed 2 --format report --report-version 2.0 --hops 1-6 \
		--bitmap 0xFF80 --flows 64 --pps 20000 >/dev/null || return 1
	rules "" "$(file_out "$tmp/bsingle.json")" >"$tmp/bsingle.conf"
	"$bin" -r "$tmp/b.pcap" -C "$tmp/bsingle.conf" 2>/dev/null || return 1
	kafka_group 2 r2 p2 kafka-2
	kafka_group 3 r3 p3 kafka-3
	# ---- 10 committed: the group of case 8 again
	"$bin" -k "$addr/r2@g" -C "$tmp/k0-2.conf" 2>"$tmp/again.err" &
	p=$!
	sleep 6
	kill $p
	wait $p
	if grep -q "kafka input r2: 0 messages consumed (0 read again)" "$tmp/again.err"; then
		ok committed
	else
		bad committed "the group read again: $(grep 'kafka input' "$tmp/again.err")"
	fi
	kafka_lateness
	kafka_frames
	rebalance
}

# the consumers' counters now (SIGUSR1 prints them): the packets they read
consumed() {    # PID:ERRFILE...
	t=0
	for pe in "$@"; do
		[ "${pe%%:*}" = 0 ] || kill -USR1 "${pe%%:*}" 2>/dev/null
	done
	sleep 0.3
	for pe in "$@"; do
		c=$(sed -n 's/^intspect: \([0-9]*\) packets (.*/\1/p' "${pe#*:}" | tail -n 1)
		t=$((t + ${c:-0}))
	done
	echo $t
}

wait_consumed() {       # TOTAL SECONDS PID:ERRFILE...
	want=$1 secs=$2
	shift 2
	i=0
	while [ "$(consumed "$@")" -lt "$want" ] && [ $i -lt $((secs * 2)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
}

wait_lines() {  # FILE LINES SECONDS
	i=0
	while [ "$(wc -l <"$1" 2>/dev/null || echo 0)" -lt "$2" ] && [ $i -lt $(($3 * 10)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
}

wait_merged() { # FILE TOTAL SECONDS: the last record of each group counts TOTAL
	i=0
	while [ $i -lt $(($3 * 2)) ]; do
		n=$(python3 - "$1" <<'EOF' 2>/dev/null || echo 0
import json, sys
last = {}
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue        # a line being written
    last[(o["window_end"], o["int.num_hop"])] = o["count()"]
print(sum(last.values()))
EOF
)
		[ "$n" -ge "$2" ] && return
		sleep 0.5
		i=$((i + 1))
	done
}

# ---- 8, 9: N consumers of a group, their partials merged
kafka_group() { # N REPORTS-TOPIC PARTIALS-TOPIC NAME
	n=$1 rt=$2 pt=$3 name=$4
	rules "" "$(file_out "$tmp/$name.json")" >"$tmp/$name-m.conf"
	echo "merge { instances = $n }" >>"$tmp/$name-m.conf"
	"$bin" -C "$tmp/$name-m.conf" --merge "kafka:$addr/$pt@merge" 2>"$tmp/$name-m.err" &
	mp=$!
	pids="$pids $mp"
	# the reports in the topic first: its partitions read in time order,
	# each to its end
	"$bin" -r "$tmp/b.pcap" --forward "kafka:$addr/$rt" 2>"$tmp/$name-f.err" ||
		{ bad "$name" "the forwarder failed"; sed 's/^/# /' "$tmp/$name-f.err"; }
	cs=""
	k=0
	while [ $k -lt "$n" ]; do
		{ rules "output-format = partial" "kafka-output out { brokers = \"$addr\"; topic = \"$pt\" }"
		  echo "probe-id = $((k + 1))"; } >"$tmp/k$k-$n.conf"
		"$bin" -k "$addr/$rt@g" -C "$tmp/k$k-$n.conf" 2>"$tmp/$name-c$k.err" &
		cs="$cs $!:$tmp/$name-c$k.err"
		pids="$pids $!"
		k=$((k + 1))
	done
	sleep 2         # (their SIGUSR1 handlers set)
	# shellcheck disable=SC2086
	wait_consumed 20000 60 $cs
	for pe in $cs; do kill "${pe%%:*}"; wait "${pe%%:*}"; done
	wait_lines "$tmp/$name.json" "$(wc -l <"$tmp/bsingle.json")" 30
	kill $mp
	wait $mp
	total=0 shares=0
	for pe in $cs; do
		c=$(sed -n 's/^intspect: kafka input .*: \([0-9]*\) messages consumed.*/\1/p' "${pe#*:}")
		total=$((total + ${c:-0}))
		[ "${c:-0}" -gt 0 ] && shares=$((shares + 1))
	done
	if sanitized "$tmp/$name"-*.err; then
		bad "$name" "sanitizer report"; cat "$tmp/$name"-*.err
	elif ! cmp -s "$tmp/bsingle.json" "$tmp/$name.json"; then
		bad "$name" "merged records differ from one instance's"
		sed 's/^/# /' "$tmp/$name"-*.err
	elif [ "$total" != 20000 ] || [ "$shares" != "$n" ]; then
		bad "$name" "consumed $total in $shares shares (20000 in $n)"
	else
		echo "# $name: shares $(for pe in $cs; do sed -n 's/^intspect: kafka input .*: \([0-9]*\) messages consumed.*/\1/p' "${pe#*:}"; done | tr '\n' ' ')"
		ok "$name"
	fi
}

# ---- 12 lateness: one instance where the merge waits for 2, each side
# started from an input section (mode = kafka, mode = kafka-partials): a
# window the instance closed goes out lateness-ms (default 5 s) after,
# so the last ones closed as it read its last reports come between 2 and
# 12 s after that (none would with 0, none by 12 s with 12 s or more);
# the windows still open when it stops are pieces, written when the merge
# ends; all of it one instance's records
kafka_lateness() {
	{ rules "" "$(file_out "$tmp/late-m.json")"
	  printf 'merge { instances = 2 }\ninput { mode = kafka-partials; source = "%s"; topic = "pl"; group = "lm" }\n' "$addr"
	} >"$tmp/late-m.conf"
	{ rules "output-format = partial" "kafka-output out { brokers = \"$addr\"; topic = \"pl\" }"
	  printf 'probe-id = 1\ninput { mode = kafka; source = "%s"; topic = "r2"; group = "gl" }\n' "$addr"
	} >"$tmp/late-i.conf"
	"$bin" -C "$tmp/late-m.conf" 2>"$tmp/late-m.err" &
	mp=$!
	pids="$pids $mp"
	"$bin" -C "$tmp/late-i.conf" 2>"$tmp/late-i.err" &
	ip=$!
	pids="$pids $ip"
	sleep 2
	wait_consumed 20000 60 "$ip:$tmp/late-i.err"
	sleep 2
	at2=$(wc -l <"$tmp/late-m.json" 2>/dev/null || echo 0)
	sleep 10
	at12=$(wc -l <"$tmp/late-m.json" 2>/dev/null || echo 0)
	kill "$ip"; wait "$ip"
	sleep 2
	kill "$mp"; wait "$mp"
	forced=$(sed -n 's/.* 1 instances, \([0-9]*\) windows written (\([0-9]*\) before every instance closed them).*/\2/p' \
		"$tmp/late-m.err")
	if sanitized "$tmp"/late-*.err; then
		bad lateness "sanitizer report"; cat "$tmp"/late-*.err
	elif [ "$at12" -le "$at2" ] || [ "${forced:-0}" -lt 1 ] || ! cmp -s "$tmp/bsingle.json" "$tmp/late-m.json"; then
		bad lateness "records 2 s after the last report $at2, 12 s after $at12, windows written by lateness '$forced'"
		sed 's/^/# /' "$tmp"/late-*.err
	else
		echo "# lateness: $at2 records 2 s after the last report, $at12 at 12 s; $forced windows by lateness"
		ok lateness
	fi
}

# ---- 13 frames: the forwarder's 24-byte frame (magic, version, the
# sender's port and IPv4 address, the capture time in ns, then the UDP
# payload), every message of a flow in one partition; bare UDP payloads
# (one a message) read by -k too, timed by their message
kafka_frames() {
	"$gen" -o "$tmp/f.pcap" -n 10 --seed 4 --format report --report-version 2.0 --hops 2 >/dev/null
	"$bin" -r "$tmp/f.pcap" --forward "kafka:$addr/rf" 2>"$tmp/f-f.err"
	i=0
	while [ $i -lt 10 ]; do
		kcat -b "$addr" -t rf -p 0 -o $i -c 1 -C -e -q -f '%s' >"$tmp/fr$i" 2>/dev/null
		i=$((i + 1))
	done
	kcat -b "$addr" -t r2 -C -e -q -f '%p %k\n' >"$tmp/r2.keys" 2>/dev/null
	r=$(python3 - "$tmp/f.pcap" "$tmp" "$tmp/r2.keys" <<'EOF' 2>&1
import struct, sys
data = open(sys.argv[1], "rb").read()
off, pkts = 24, []
while off + 16 <= len(data):
    sec, usec, incl, _ = struct.unpack("<IIII", data[off:off + 16])
    pkts.append((sec * 10**9 + usec * 1000, data[off + 16:off + 16 + incl]))
    off += 16 + incl
for i, (ns, p) in enumerate(pkts):
    ihl = (p[14] & 15) * 4
    ip, udp = p[14:14 + ihl], p[14 + ihl:]
    fr = open("%s/fr%d" % (sys.argv[2], i), "rb").read()
    want = b"ISPF" + bytes([1, 0]) + udp[0:2] + bytes(4) + ip[12:16] + struct.pack(">Q", ns) + udp[8:]
    assert fr == want, (i, fr[:24].hex(), want[:24].hex(), len(fr), len(want))
parts = {}
for line in open(sys.argv[3]):
    p, k = line.split()
    parts.setdefault(k, set()).add(p)
assert all(len(v) == 1 for v in parts.values()), parts
used = {p for v in parts.values() for p in v}
assert len(used) >= 2, used
print("10 frames as the capture holds them; %d flow keys, each in one of %d partitions"
      % (len(parts), len(used)))
EOF
	)
	if [ $? = 0 ]; then echo "# $r"; ok frames; else bad frames "$r"; fi
	# bare payloads: the same reports without the frame
	python3 - "$tmp/f.pcap" "$tmp" <<'EOF'
import struct, sys
data = open(sys.argv[1], "rb").read()
off, i = 24, 0
while off + 16 <= len(data):
    incl = struct.unpack("<IIII", data[off:off + 16])[2]
    p = data[off + 16:off + 16 + incl]
    ihl = (p[14] & 15) * 4
    open("%s/bare%d" % (sys.argv[2], i), "wb").write(p[14 + ihl + 8:])
    off += 16 + incl
    i += 1
EOF
	# shellcheck disable=SC2046
	kcat -b "$addr" -t rb -p 0 -P $(i=0; while [ $i -lt 10 ]; do echo "$tmp/bare$i"; i=$((i + 1)); done) \
		2>"$tmp/bare.err"
	t0=$(date +%s)
	"$bin" -k "$addr/rb@bare" --dump >"$tmp/bare.dump" 2>"$tmp/bare-k.err" &
	bp=$!
	pids="$pids $bp"
	wait_lines "$tmp/bare.dump" 10 20
	kill -INT $bp; wait $bp
	r=$(python3 - "$tmp/bare.dump" "$t0" <<'EOF' 2>&1
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
assert len(recs) == 10, len(recs)
t0 = int(sys.argv[2])
for r in recs:
    assert r["meta.proto_hierarchy"].startswith("ip.udp.int_report"), r["meta.proto_hierarchy"]
    assert t0 - 120 <= r["meta.timestamp"] <= t0 + 120, (r["meta.timestamp"], t0)
    assert r["ip.1.src"] == "0.0.0.0", r["ip.1.src"]       # the header made for it
print("10 bare payloads decoded as reports, timed by their messages")
EOF
	)
	if [ $? = 0 ]; then echo "# $r"; ok bare; else bad bare "$r"; sed 's/^/# /' "$tmp/bare-k.err"; fi
}

# ---- 11 rebalance: paced, one consumer stopped and restarted
rebalance() {
	cat >"$tmp/rt.body" <<'EOF'
query-report rt {
  ms-period = 500
  select = {"count()", "sum(int.latency)", "max(int.hop_queue_occups)", "p50(int.latency)"}
  group-by = {"int.num_hop"}
  output-channel = {out}
  OUTFMT
}
EOF
	sed 's/OUTFMT//' "$tmp/rt.body" >"$tmp/rt-m.conf"
	printf 'file-output out { path = "%s" }\nmerge { instances = 2; late = correct; lateness-ms = 10000 }\n' \
		"$tmp/rt-merged.json" >>"$tmp/rt-m.conf"
	# the reference reads the whole topic alone; it too writes partials,
	# merged alone from its file: a report that comes after its window
	# closed (partitions are read in time order only as far as their
	# fetches allow, which a loaded machine delays) then counts in its own
	# window, on the reference's side as on the group's
	sed 's/OUTFMT/output-format = partial/' "$tmp/rt.body" >"$tmp/rt-ref.conf"
	printf 'file-output out { path = "%s" }\nprobe-id = 9\n' "$tmp/rt-refp.json" >>"$tmp/rt-ref.conf"
	sed 's/OUTFMT//' "$tmp/rt.body" >"$tmp/rt-refm.conf"
	printf 'file-output out { path = "%s" }\nmerge { late = correct }\n' "$tmp/rt-ref.json" \
		>>"$tmp/rt-refm.conf"
	for k in 1 2; do
		sed 's/OUTFMT/output-format = partial/' "$tmp/rt.body" >"$tmp/rt-$k.conf"
		printf 'kafka-output out { brokers = "%s"; topic = "p10" }\nprobe-id = %d\n' "$addr" "$k" \
			>>"$tmp/rt-$k.conf"
	done
	"$gen" -o "$tmp/rt.pcap" -n 2000 --seed 3 --format report --report-version 2.0 --hops 1-6 \
		--bitmap 0xFF80 >/dev/null
	port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$bin" -C "$tmp/rt-m.conf" --merge "kafka:$addr/p10@merge" 2>"$tmp/rt-m.err" &
	mp=$!
	"$bin" -k "$addr/r10@ref" -C "$tmp/rt-ref.conf" 2>"$tmp/rt-ref.err" &
	rp=$!
	"$bin" -k "$addr/r10@g" -C "$tmp/rt-1.conf" 2>"$tmp/rt-1a.err" &
	c1=$!
	"$bin" -k "$addr/r10@g" -C "$tmp/rt-2.conf" 2>"$tmp/rt-2.err" &
	c2=$!
	"$bin" -u "127.0.0.1:$port" --forward "kafka:$addr/r10" 2>"$tmp/rt-f.err" &
	fp=$!
	pids="$pids $mp $rp $c1 $c2 $fp"
	sleep 6
	python3 "$src/test/soak/pace.py" "$tmp/rt.pcap" 127.0.0.1 "$port" 2000 8 >"$tmp/sent" &
	pp=$!
	sleep 2.5
	kill $c1
	wait $c1
	sleep 2
	"$bin" -k "$addr/r10@g" -C "$tmp/rt-1.conf" 2>"$tmp/rt-1b.err" &
	c1=$!
	pids="$pids $c1"
	wait $pp
	sent=$(cat "$tmp/sent")
	wait_consumed "$sent" 30 "$rp:$tmp/rt-ref.err"
	wait_consumed "$sent" 30 "$c1:$tmp/rt-1b.err" "$c2:$tmp/rt-2.err" "0:$tmp/rt-1a.err"
	kill $fp $c1 $c2 $rp
	wait $fp $c1 $c2 $rp
	wait_merged "$tmp/rt-merged.json" "$sent" 40
	kill $mp
	wait $mp
	"$bin" -C "$tmp/rt-refm.conf" --merge "$tmp/rt-refp.json" 2>"$tmp/rt-refm.err"
	if sanitized "$tmp"/rt-*.err; then
		bad rebalance "sanitizer report"; cat "$tmp"/rt-*.err
	elif r=$(python3 - "$tmp/rt-ref.json" "$tmp/rt-merged.json" "$sent" "$tmp"/rt-1a.err \
		"$tmp"/rt-1b.err "$tmp"/rt-2.err <<'EOF'
import json, re, sys
def load(p):
    return {(o["window_end"], o["int.num_hop"]): o for o in map(json.loads, open(p))}
ref, merged, sent = load(sys.argv[1]), load(sys.argv[2]), int(sys.argv[3])
consumed = sum(int(re.search(r"kafka input .*: (\d+) messages consumed \(0 read again\)",
                             open(f).read()).group(1))
               for f in sys.argv[4:])
n_ref = sum(o["count()"] for o in ref.values())
n_merged = sum(o["count()"] for o in merged.values())
differ = [k for k in ref if merged.get(k) != ref[k]] + [k for k in merged if k not in ref]
print(f"sent {sent}, forwarded and consumed by the group {consumed}, counted by the reference "
      f"{n_ref} and by the merge {n_merged}, {len(ref)} groups, {len(differ)} differ")
for k in differ[:3]:
    print(f"  {k}: reference {json.dumps(ref.get(k))}")
    print(f"  {k}: merged    {json.dumps(merged.get(k))}")
sys.exit(0 if n_ref == sent == consumed == n_merged and not differ else 1)
EOF
	); then
		echo "# $r"
		ok rebalance
	else
		bad rebalance "$r"; sed 's/^/# /' "$tmp"/rt-*.err
	fi
}

kafka_cases
rc=$?
if [ $rc = 77 ]; then
	skipped=1
elif [ $rc != 0 ]; then
	bad kafka "the broker or its topics could not be set up ($rc)"
fi

echo "scaleout: $pass passed, $fail failed"
[ $fail -eq 0 ] || exit 1
[ $pass -eq 0 ] && [ $skipped = 1 ] && exit 77
exit 0
