#!/bin/sh
# Event reports settled in order (src/filters/event_batch.c): with several
# workers on a capture file, rules whose every event is a plain or banded
# delta (or has no delta-cond) and whose queries merge from any split run
# where their items were read, and each batch's records are handed on in
# the file's order, its keys' first items settled against the memory the
# batches before left. So the whole output of 2, 3 and 4 workers is one
# worker's byte for byte, records of every rule interleaved as one worker
# writes them (events, per-hop events, one memory for all, events without
# delta-cond, query windows between them), in JSON and MMT's CSV, from a
# mapped file, standard input and with -c; no item crosses cores, and the
# counters are one worker's. A rule that compares with its last report
# (delta-threshold) still goes to the owner of its key.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# standard output waits for room rather than drop: compared byte for byte
cat >"$tmp/rules.conf" <<CONF
stdout-output { drop-policy = block }
file-output { path = "$tmp/out.csv"; format = csv; drop-policy = block }
query-report flows {
  ms-period = 1000
  select = {"count()", "avg(int.latency)", "max(int.hop_queue_occups)", "avg(diff(meta.timestamp))"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {stdout}
}
event-report flow-delta {
  event = "int.hop_switch_ids"
  delta-cond = {"int.num_hop"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "int.num_hop"}
  output-channel = {stdout, file}
}
event-report global-band {
  event = "int.latency"
  delta-cond = {"int.latency"}
  delta-band = 5000
  output-channel = {stdout}
}
event-report per-path-queue {
  event = "int.hop_queue_occups"
  delta-cond = {"int.hop_queue_occups"}
  delta-band = 2000
  delta-key = {"int.hop_switch_ids", "int.hop_queue_ids"}
  attributes = {"int.hop_switch_ids", "int.hop_queue_ids", "int.hop_queue_occups", "meta.packet_index"}
  output-channel = {stdout}
}
event-report queues {
  per-hop = true
  event = "int.hop_queue_occups"
  delta-key = {"int.hop_switch_ids", "int.hop_queue_ids"}
  delta-cond = {"int.hop_queue_occups"}
  delta-band = 1500
  attributes = {"int.hop_queue_occups", "int.hop_switch_ids", "ip.src"}
  output-channel = {stdout, file}
}
event-report every-slow {
  event = "int.latency"
  where = "int.latency > 150000"
  attributes = {"ip.src", "int.latency", "meta.packet_index"}
  output-channel = {stdout}
}
CONF
"$bld/intgen" -o "$tmp/inline.pcap" -n 20000 --flows 50 --hops 1-6 --seed 9 --pps 5000 --unavailable 2>/dev/null
"$bld/intgen" -o "$tmp/reports.pcap" -n 6000 --flows 40 --hops 1-4 --seed 10 --pps 3000 \
	--format report --report-version 2.0 --coalesce 3 2>/dev/null

# run NAME ARGS...: stdout in NAME.out, the CSV file in NAME.csv, stderr in NAME.err
run() {
	name=$1
	shift
	rm -f "$tmp/out.csv"
	"$bld/intspect" -C "$tmp/rules.conf" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
	mv "$tmp/out.csv" "$tmp/$name.csv" 2>/dev/null
}
counters() { grep -E '^intspect: (event|query)-report' "$1"; }

for cap in inline reports; do
	run "$cap.1" -r "$tmp/$cap.pcap" -w 1
	for r in flow-delta global-band per-path-queue queues every-slow flows; do
		grep -q "\"report\":\"$r\"" "$tmp/$cap.1.out" || bad "$cap: no record of $r"
	done
	for n in 2 3 4; do
		run "$cap.$n" -r "$tmp/$cap.pcap" -w "$n"
		cmp -s "$tmp/$cap.1.out" "$tmp/$cap.$n.out" &&
			ok "$cap: $n workers: $(wc -l <"$tmp/$cap.1.out") records, byte for byte one worker's" ||
			bad "$cap: $n workers: records differ from one worker's ($(wc -l <"$tmp/$cap.$n.out") against $(wc -l <"$tmp/$cap.1.out"))"
		cmp -s "$tmp/$cap.1.csv" "$tmp/$cap.$n.csv" &&
			ok "$cap: $n workers: MMT CSV byte for byte one worker's" ||
			bad "$cap: $n workers: CSV differs"
		[ "$(counters "$tmp/$cap.1.err")" = "$(counters "$tmp/$cap.$n.err")" ] &&
			ok "$cap: $n workers: counters one worker's" ||
			bad "$cap: $n workers: counters: $(counters "$tmp/$cap.$n.err" | tr '\n' ' ')"
		grep -q "items went to another worker" "$tmp/$cap.$n.err" &&
			bad "$cap: $n workers: items crossed ($(grep 'went to another' "$tmp/$cap.$n.err"))" ||
			ok "$cap: $n workers: no item crossed cores"
	done
done

# standard input: batches copied out of libpcap's buffer, reused
"$bld/intspect" -C "$tmp/rules.conf" -r - -w 2 <"$tmp/inline.pcap" >"$tmp/stdin.out" 2>"$tmp/stdin.err"
cmp -s "$tmp/inline.1.out" "$tmp/stdin.out" && ok "standard input, 2 workers: one worker's records" ||
	bad "standard input, 2 workers: records differ"

# -c stops at the same packet
run c1 -r "$tmp/inline.pcap" -c 4321 -w 1
run c2 -r "$tmp/inline.pcap" -c 4321 -w 2
cmp -s "$tmp/c1.out" "$tmp/c2.out" && grep -q "^intspect: 4321 packets" "$tmp/c2.err" &&
	ok "-c 4321, 2 workers: one worker's records" || bad "-c 4321, 2 workers"

# the first item of a key in each batch is what is settled: a capture of
# 3 flows whose path changes every few packets has many in every batch
"$bld/intgen" -o "$tmp/few.pcap" -n 30000 --flows 3 --hops 1-6 --seed 4 2>/dev/null
run few1 -r "$tmp/few.pcap" -w 1
run few2 -r "$tmp/few.pcap" -w 2
n1=$(grep -c '"report":"flow-delta"' "$tmp/few1.out")
[ "$n1" -gt 100 ] && cmp -s "$tmp/few1.out" "$tmp/few2.out" &&
	ok "3 flows, 2 workers: $n1 flow-delta records, one worker's" ||
	bad "3 flows, 2 workers: records differ ($n1 flow-delta records)"

# a memory of more keys than the caches hold: at a commit, the merger's
# slots and entries are asked for ahead of the batch's keys (from 16,384
# keys); every key new once, its path changing between its packets
"$bld/intgen" -o "$tmp/many.pcap" -n 120000 --flows 40000 --flow-order shuffle --hops 1-6 \
	--seed 11 2>/dev/null
printf 'stdout-output { drop-policy = block }\nevent-report many { event = "int.latency"; delta-cond = {"int.num_hop"}; delta-key = {"ip.src", "ip.dst", "udp.src_port"}; attributes = {"ip.src", "udp.src_port", "int.num_hop"} }\n' \
	>"$tmp/many.conf"
for n in 1 2 3; do
	"$bld/intspect" -C "$tmp/many.conf" -r "$tmp/many.pcap" -w "$n" >"$tmp/many$n.out" 2>"$tmp/many$n.err"
done
m=$(wc -l <"$tmp/many1.out")
[ "$m" -gt 40000 ] && cmp -s "$tmp/many1.out" "$tmp/many2.out" && cmp -s "$tmp/many1.out" "$tmp/many3.out" &&
	! grep -q "items went to another worker" "$tmp/many2.err" &&
	ok "40,000 keys, 2 and 3 workers: $m records, byte for byte one worker's" ||
	bad "40,000 keys: records differ ($(wc -l <"$tmp/many2.out") / $(wc -l <"$tmp/many3.out") against $m)"

# committed records go into their channel's queue a run at a time (one
# lease check for up to 64); a queue too small for a run (2 KiB, 5
# records) takes them one by one as its policy says: with block, every
# record, in order; with drop-newest, what it refuses is counted
sed 's/drop-policy = block/drop-policy = block; queue-bytes = 2048; queue-records = 5/' "$tmp/many.conf" >"$tmp/tiny.conf"
sed 's/drop-policy = block/queue-bytes = 2048; queue-records = 5/' "$tmp/many.conf" >"$tmp/tinyd.conf"
for n in 2 3; do
	"$bld/intspect" -C "$tmp/tiny.conf" -r "$tmp/many.pcap" -w "$n" >"$tmp/tiny$n.out" 2>"$tmp/tiny$n.err"
	cmp -s "$tmp/many1.out" "$tmp/tiny$n.out" && grep -q "channel stdout: $m records queued, $m delivered, 0 dropped" "$tmp/tiny$n.err" &&
		ok "a 5-record queue that blocks, $n workers: $m records, one worker's" ||
		bad "a 5-record queue that blocks, $n workers: $(wc -l <"$tmp/tiny$n.out") records, $(grep 'channel stdout' "$tmp/tiny$n.err")"
done
"$bld/intspect" -C "$tmp/tinyd.conf" -r "$tmp/many.pcap" -w 2 >"$tmp/tinyd.out" 2>"$tmp/tinyd.err"
w=$(wc -l <"$tmp/tinyd.out")
rd=$(sed -n 's/.*event-report many: [0-9]* matched, \([0-9]*\) records, \([0-9]*\) dropped.*/\1 \2/p' "$tmp/tinyd.err")
cd=$(sed -n 's/.*channel stdout: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped.*/\1 \2 \3/p' "$tmp/tinyd.err")
# the rule counts one worker's records, those refused among them as the
# channel does; the channel delivered what was written, in one worker's
# order
set -- $rd $cd
[ $# = 5 ] && [ "$1" = "$m" ] && [ "$3" = "$m" ] && [ "$2" = "$5" ] && [ "$5" -gt 0 ] &&
	[ "$w" = "$4" ] && [ $(($4 + $5)) = "$m" ] &&
	awk 'NR == FNR { seen[$0]++; next } !seen[$0]-- { exit 1 }' "$tmp/many1.out" "$tmp/tinyd.out" &&
	ok "a 5-record queue that drops, 2 workers: $m records, $2 dropped, $w written" ||
	bad "a 5-record queue that drops, 2 workers: rule '$rd', channel '$cd', $w written of $m"

# a memory that evicts (max-keys) does so as batches commit: counted,
# and every first item of an evicted key reports again
printf 'event-report small { event = "int.latency"; delta-cond = {"int.num_hop"}; delta-key = {"ip.src", "ip.dst"}; max-keys = 8 }\n' \
	>"$tmp/small.conf"
"$bld/intspect" -C "$tmp/small.conf" -r "$tmp/inline.pcap" -w 2 >"$tmp/small.out" 2>"$tmp/small.err"
rc=$?
ev=$(sed -n 's/.*event-report small: .*, \([0-9]*\) keys evicted.*/\1/p' "$tmp/small.err")
recs=$(sed -n 's/.*event-report small: [0-9]* matched, \([0-9]*\) records.*/\1/p' "$tmp/small.err")
[ "$rc" = 0 ] && [ "${ev:-0}" -gt 0 ] && [ "$recs" = "$(wc -l <"$tmp/small.out")" ] &&
	ok "max-keys 8 on 50 flows, 2 workers: $ev keys evicted, $recs records counted and written" ||
	bad "max-keys 8, 2 workers: rc $rc, evicted '$ev', records '$recs'"

# a threshold compares with the last report: its items go to their owner
sed 's/delta-band = 5000/delta-threshold = 5000/' "$tmp/rules.conf" >"$tmp/thr.conf"
"$bld/intspect" -C "$tmp/thr.conf" -r "$tmp/inline.pcap" -w 1 >"$tmp/thr1.out" 2>/dev/null
"$bld/intspect" -C "$tmp/thr.conf" -r "$tmp/inline.pcap" -w 2 >"$tmp/thr2.out" 2>"$tmp/thr2.err"
grep -q "items went to another worker" "$tmp/thr2.err" &&
	[ "$(sort "$tmp/thr1.out" | md5sum)" = "$(sort "$tmp/thr2.out" | md5sum)" ] &&
	ok "delta-threshold, 2 workers: routed to the key's owner, the same records" ||
	bad "delta-threshold, 2 workers: $(grep 'went to another' "$tmp/thr2.err")"

echo "settle: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
