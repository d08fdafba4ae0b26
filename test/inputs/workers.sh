#!/bin/sh
# Several workers give the same records as one: query reports identical
# (merged windows, groups in first-packet order), event reports the same
# set (their order between flows depends on the threads). Rules cover flow
# groups, groups across workers (per switch), exact avg/var, merged
# quantile sketches, per-flow and global event state, and state whose key
# is not the flow and depends on order: diff() per hop count (many flows), an
# event per switch path and queues; an event whose attribute is absent
# though its protocol is there (routed by the protocol, decided by its
# owner: no record, the same counters); rules whose items reach their
# owner as values of every kind (a MAC key, strings, meta attributes,
# 64-bit per-hop values, IPv6 addresses). Capture files are read as shares
# (mapped, and through libpcap from standard input and pcapng).
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# standard output waits for room rather than drop: records are compared
# one for one, and a run that outpaces the writer would otherwise lose some
cat >"$tmp/rules.conf" <<CONF
stdout-output { drop-policy = block }
query-report flows {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.hop_queue_occups)", "avg(int.hop_latencies)", "p99(int.latency)", "first(int.latency)",
            "last(int.latency)", "avg(diff(meta.timestamp))"}
  group-by = {"ip.src", "ip.dst"}
}
query-report per-switch {
  ms-period = 500
  select = {"count()", "avg(int.hop_latencies)", "var(int.hop_latencies)", "p50(int.hop_queue_occups)", "last(ip.src)"}
  group-by = {"int.hop_switch_ids"}
}
event-report flow-delta {
  event = "int.hop_switch_ids"
  delta-cond = {"int.num_hop"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "int.num_hop"}
}
event-report global-band {
  event = "int.latency"
  delta-cond = {"int.latency"}
  delta-band = 5000
}
query-report per-length {
  ms-period = 1000
  select = {"count()", "avg(diff(meta.timestamp))", "max(diff(int.latency))", "last(ip.dst)"}
  group-by = {"int.num_hop"}
}
event-report absent-attribute {
  event = "int.hop_tx_utilizes"
  delta-cond = {"int.hop_tx_utilizes"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "int.hop_tx_utilizes"}
}
event-report value-kinds {
  event = "int.latency"
  where = "udp.src_port > 0"
  delta-cond = {"int.latency"}
  delta-key = {"eth.src", "ip.dst"}
  attributes = {"eth.src", "eth.dst", "meta.proto_hierarchy", "meta.caplen", "meta.timestamp", "ip.tos",
                "udp.src_port", "int.hop_egress_times", "int.hop_latencies", "int.hop_tx_utilizes"}
}
event-report per-path-queue {
  event = "int.hop_queue_occups"
  delta-cond = {"int.hop_queue_occups"}
  delta-band = 2000
  delta-key = {"int.hop_switch_ids", "int.hop_queue_ids"}
  attributes = {"int.hop_switch_ids", "int.hop_queue_ids", "int.hop_queue_occups", "meta.packet_index"}
}
CONF
"$bld/intgen" -o "$tmp/inline.pcap" -n 20000 --flows 50 --hops 1-6 --seed 9 --pps 5000 --unavailable 2>/dev/null
"$bld/intgen" -o "$tmp/reports.pcap" -n 6000 --flows 40 --hops 1-4 --seed 10 --pps 3000 \
	--format report --report-version 2.0 --coalesce 3 2>/dev/null
# the same capture as pcapng, read through libpcap (bytes copied, not mapped)
tcpdump_ng() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
src, dst = sys.argv[1], sys.argv[2]
data = open(src, 'rb').read()
magic, = struct.unpack('<I', data[:4])
assert magic == 0xa1b2c3d4, 'little-endian microsecond pcap expected'
linktype, = struct.unpack('<I', data[20:24])
out = bytearray()
def block(btype, body):
    body += b'\0' * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack('<II', btype, n) + body + struct.pack('<I', n)
out += block(0x0a0d0d0a, struct.pack('<IHHq', 0x1a2b3c4d, 1, 0, -1))
out += block(1, struct.pack('<HHI', linktype, 0, 262144))
off = 24
while off < len(data):
    sec, usec, incl, orig = struct.unpack('<IIII', data[off:off + 16])
    ts = sec * 1000000 + usec
    out += block(6, struct.pack('<IIIII', 0, ts >> 32, ts & 0xffffffff, incl, orig) + data[off + 16:off + 16 + incl])
    off += 16 + incl
open(dst, 'wb').write(out)
PY
}
for cap in inline reports; do
	"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcap" -w 1 >"$tmp/$cap.1" 2>"$tmp/$cap.1.err" ||
		bad "$cap: one worker"
	grep '"type":"query"' "$tmp/$cap.1" >"$tmp/$cap.q1"
	grep '"type":"event"' "$tmp/$cap.1" | sort >"$tmp/$cap.e1"
	[ -s "$tmp/$cap.q1" ] && [ -s "$tmp/$cap.e1" ] || bad "$cap: no records"
	for r in per-length per-path-queue flow-delta global-band value-kinds; do
		grep -q "\"report\":\"$r\"" "$tmp/$cap.1" || bad "$cap: no records of $r"
	done
	for n in 2 4; do
		if ! "$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcap" -w "$n" >"$tmp/$cap.$n" 2>"$tmp/$cap.$n.err"; then
			bad "$cap: $n workers exit status"; cat "$tmp/$cap.$n.err"; continue
		fi
		grep '"type":"query"' "$tmp/$cap.$n" >"$tmp/$cap.qn"
		grep '"type":"event"' "$tmp/$cap.$n" | sort >"$tmp/$cap.en"
		cmp -s "$tmp/$cap.q1" "$tmp/$cap.qn" && ok "$cap: query records of $n workers = 1 worker" \
			|| { bad "$cap: query records differ with $n workers"; diff "$tmp/$cap.q1" "$tmp/$cap.qn" | head -4; }
		cmp -s "$tmp/$cap.e1" "$tmp/$cap.en" && ok "$cap: event records of $n workers = 1 worker" \
			|| { bad "$cap: event records differ with $n workers"; diff "$tmp/$cap.e1" "$tmp/$cap.en" | head -4; }
		grep -v "s, " "$tmp/$cap.1.err" | grep -v -e "packets/s" -e "^intspect: note:" >"$tmp/c1"
		grep -v "s, " "$tmp/$cap.$n.err" | grep -v -e "packets/s" -e "^intspect: note:" \
			-e "workers read .* shares" -e "workers handled .* items" \
			-e "items went to another worker" >"$tmp/cn"
		cmp -s "$tmp/c1" "$tmp/cn" && ok "$cap: counters of $n workers = 1 worker" \
			|| { bad "$cap: counters differ with $n workers"; diff "$tmp/c1" "$tmp/cn" | head -6; }
		line=$(grep "workers read .* shares:" "$tmp/$cap.$n.err")
		if echo "$line" | grep -q "^intspect: $n workers read $n shares:" &&
		   ! echo "$line" | grep -Eq "[:+] 0( |$)"; then
			ok "$cap: $n workers each read a share of the file"
		else
			bad "$cap: shares: '$line'"
		fi
	done
	# through libpcap: standard input and pcapng (bytes copied per batch)
	"$bld/intspect" -C "$tmp/rules.conf" -r - -w 2 <"$tmp/$cap.pcap" >"$tmp/$cap.stdin" 2>/dev/null ||
		bad "$cap: standard input, 2 workers"
	tcpdump_ng "$tmp/$cap.pcap" "$tmp/$cap.pcapng"
	"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcapng" -w 3 >"$tmp/$cap.ng" 2>/dev/null ||
		bad "$cap: pcapng, 3 workers"
	for f in stdin ng; do
		grep '"type":"query"' "$tmp/$cap.$f" >"$tmp/$cap.qf"
		grep '"type":"event"' "$tmp/$cap.$f" | sort >"$tmp/$cap.ef"
		cmp -s "$tmp/$cap.q1" "$tmp/$cap.qf" && cmp -s "$tmp/$cap.e1" "$tmp/$cap.ef" &&
			ok "$cap: records read through libpcap ($f) by workers = 1 worker" ||
			{ bad "$cap: records differ through libpcap ($f)"; diff "$tmp/$cap.q1" "$tmp/$cap.qf" | head -4; }
	done
	# -c counts the same packets whoever reads them
	"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcap" -c 777 >"$tmp/$cap.c1" 2>"$tmp/$cap.c1.err"
	"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcap" -c 777 -w 2 >"$tmp/$cap.c2" 2>"$tmp/$cap.c2.err"
	grep -q "^intspect: 777 packets" "$tmp/$cap.c2.err" &&
	cmp -s "$(sort "$tmp/$cap.c1" >"$tmp/s1"; echo "$tmp/s1")" "$(sort "$tmp/$cap.c2" >"$tmp/s2"; echo "$tmp/s2")" &&
		ok "$cap: -c 777 with 2 workers = 1 worker" || bad "$cap: -c 777 with 2 workers"
done
# the items each worker handled: with one rule keyed by flow, each item
# is handled once, so the workers' counts add up to the items, none idle.
# A plain delta event runs where its item was read (its batch settled in
# turn), so no item moves; one with a threshold (which compares with the
# last report) goes to the owner of its key, as its rules' values
printf 'event-report f { event = "int.latency"; delta-cond = {"int.latency"}; delta-key = {"ip.src", "ip.dst"} }\n' \
	>"$tmp/flow.conf"
sed 's/delta-key/delta-threshold = 0; delta-key/' "$tmp/flow.conf" >"$tmp/flowthr.conf"
for cap in inline reports; do
	for n in 2 4; do
		"$bld/intspect" -C "$tmp/flow.conf" -r "$tmp/$cap.pcap" -w "$n" >/dev/null 2>"$tmp/items.err"
		if grep -q "items went to another worker" "$tmp/items.err"; then
			bad "$cap: $n workers, plain delta event: items moved ($(grep "went to another" "$tmp/items.err"))"
		else
			ok "$cap: $n workers, plain delta event: no item moved"
		fi
		"$bld/intspect" -C "$tmp/flowthr.conf" -r "$tmp/$cap.pcap" -w "$n" >/dev/null 2>"$tmp/items.err"
		items=$(sed -n 's/.* packets ([0-9]* bytes), \([0-9]*\) telemetry items.*/\1/p' "$tmp/items.err")
		line=$(grep "^intspect: $n workers handled .* items$" "$tmp/items.err")
		if [ -n "$items" ] && [ "$items" -gt 0 ] && echo "$line" | python3 -c '
import re, sys
counts = [int(x) for x in re.findall(r"\d+", sys.stdin.read().split("handled")[1])]
sys.exit(0 if len(counts) == int(sys.argv[1]) and sum(counts) == int(sys.argv[2]) and min(counts) > 0 else 1)' "$n" "$items"; then
			ok "$cap: $n workers handled $items items between them ($(echo "$line" | sed 's/.*handled //'))"
		else
			bad "$cap: items per worker: '$line', $items items"
		fi
		# an event's items reach their owner as values, never dissected
		moved=$(sed -n 's/^intspect: \([0-9]*\) items went to another worker or waited: \([0-9]*\) as their rules. values, \([0-9]*\) dissected$/\1 \2 \3/p' "$tmp/items.err")
		set -- $moved
		if [ $# -eq 3 ] && [ "$1" -gt 0 ] && [ "$2" = "$1" ] && [ "$3" = 0 ]; then
			ok "$cap: $n workers: the $1 items that moved went as values"
		else
			bad "$cap: $n workers: items moved: '$moved'"
		fi
	done
done
# a flow monitor reads its packet itself: its items go dissected
printf 'flow-monitor fm { match = {"ip.src", "udp.dst_port"}; query-interval = 200 }\n' >"$tmp/fm.conf"
"$bld/intspect" -C "$tmp/fm.conf" -r "$tmp/inline.pcap" -w 2 >/dev/null 2>"$tmp/fm.err"
moved=$(sed -n 's/^intspect: \([0-9]*\) items went to another worker or waited: \([0-9]*\) as their rules. values, \([0-9]*\) dissected$/\1 \2 \3/p' "$tmp/fm.err")
set -- $moved
[ $# -eq 3 ] && [ "$1" -gt 0 ] && [ "$2" = 0 ] && [ "$3" = "$1" ] &&
	ok "flow monitor, 2 workers: the $1 items that moved went dissected" ||
	bad "flow monitor, 2 workers: items moved: '$moved'"
# a query without diff() merges its windows whatever worker saw what, and
# so does one whose diff() feeds sum, avg, count or rate (they keep the
# window's ends): each item stays with the worker that read it (one item a
# packet inline: the items each handled are the packets of its share), and
# the records are one worker's
printf 'query-report g { ms-period = 100; select = {"count()", "avg(int.latency)", "last(int.hop_latencies)"}; group-by = {"ip.src", "ip.dst"} }\n' \
	>"$tmp/local.conf"
printf 'query-report h { ms-period = 100; select = {"count()", "avg(diff(meta.timestamp))", "sum(diff(int.hop_latencies))", "count(diff(int.latency))", "rate(diff(int.latency))"}; group-by = {"int.num_hop"} }\n' \
	>>"$tmp/local.conf"
"$bld/intspect" -C "$tmp/local.conf" -r "$tmp/inline.pcap" -w 1 >"$tmp/local.1" 2>/dev/null
for n in 2 4; do
	"$bld/intspect" -C "$tmp/local.conf" -r "$tmp/inline.pcap" -w "$n" >"$tmp/local.n" 2>"$tmp/local.err"
	read_line=$(grep "^intspect: $n workers read $n shares:" "$tmp/local.err" | sed 's/.*shares: //; s/ packets$//')
	handled=$(grep "^intspect: $n workers handled .* items$" "$tmp/local.err" | sed 's/.*handled //; s/ items$//')
	if [ -n "$read_line" ] && [ "$read_line" = "$handled" ]; then
		ok "queries without diff() or with sum/avg of diff(), $n workers: each handled the items it read ($handled)"
	else
		bad "queries without diff() or with sum/avg of diff(), $n workers: read '$read_line', handled '$handled'"
	fi
	[ -s "$tmp/local.1" ] && grep -q '"avg(diff(meta.timestamp))":[0-9]' "$tmp/local.1" &&
		cmp -s "$tmp/local.1" "$tmp/local.n" &&
		ok "queries without diff() or with sum/avg of diff(), $n workers: records of 1 worker" ||
		{ bad "queries without diff() or with sum/avg of diff(), $n workers: records differ"; diff "$tmp/local.1" "$tmp/local.n" | head -4; }
done
# such rules need no order between workers: they take the file's batches
# in any order and meet at the windows' ends only (a batch ends before a
# window's end: 100 ms windows, 40 of them here); the same records
# through libpcap (bytes copied, a packet held over a window's end), with
# -c, and decode only (the counters of one worker)
"$bld/intspect" -C "$tmp/local.conf" -r - -w 2 <"$tmp/inline.pcap" >"$tmp/local.stdin" 2>/dev/null &&
	cmp -s "$tmp/local.1" "$tmp/local.stdin" &&
	"$bld/intspect" -C "$tmp/local.conf" -r "$tmp/inline.pcapng" -w 3 >"$tmp/local.ng" 2>/dev/null &&
	cmp -s "$tmp/local.1" "$tmp/local.ng" &&
	ok "queries that merge, read through libpcap by 2 and 3 workers: records of 1 worker" ||
	bad "queries that merge, read through libpcap: records differ"
"$bld/intspect" -C "$tmp/local.conf" -r "$tmp/inline.pcap" -c 1234 >"$tmp/local.c1" 2>/dev/null
"$bld/intspect" -C "$tmp/local.conf" -r "$tmp/inline.pcap" -c 1234 -w 2 >"$tmp/local.c2" 2>"$tmp/local.c2.err"
grep -q "^intspect: 1234 packets" "$tmp/local.c2.err" && [ -s "$tmp/local.c1" ] &&
	cmp -s "$tmp/local.c1" "$tmp/local.c2" && ok "queries that merge: -c 1234 with 2 workers = 1 worker" ||
	bad "queries that merge: -c 1234 with 2 workers"
for f in inline.pcap inline.pcapng; do
	"$bld/intspect" -r "$tmp/$f" 2>&1 >/dev/null | grep -v "packets/s" >"$tmp/d1"
	"$bld/intspect" -r "$tmp/$f" -w 2 2>&1 >/dev/null | grep -v "packets/s" >"$tmp/d2"
	grep -q "^intspect: 20000 packets" "$tmp/d1" && cmp -s "$tmp/d1" "$tmp/d2" &&
		ok "decode only, $f, 2 workers: the counters of 1" ||
		{ bad "decode only, $f, 2 workers: counters differ"; diff "$tmp/d1" "$tmp/d2" | head -4; }
done
# IPv6 keys and values (16 bytes each, carried to the key's owner)
"$bld/intgen" -o "$tmp/v6.pcap" -n 6000 --flows 30 --hops 1-4 --seed 11 --ipv6 2>/dev/null
cat >"$tmp/v6.conf" <<CONF
event-report v6-flow {
  event = "int.hop_latencies"
  delta-cond = {"int.hop_latencies"}
  delta-band = 100
  delta-key = {"ipv6.src", "ipv6.dst"}
  attributes = {"ipv6.src", "ipv6.dst", "int.hop_latencies", "meta.packet_index"}
}
CONF
"$bld/intspect" -C "$tmp/v6.conf" -r "$tmp/v6.pcap" -w 1 2>/dev/null | sort >"$tmp/v6.1"
"$bld/intspect" -C "$tmp/v6.conf" -r "$tmp/v6.pcap" -w 2 2>/dev/null | sort >"$tmp/v6.2"
grep -q '"ipv6.src":"[0-9a-f:]*"' "$tmp/v6.1" && cmp -s "$tmp/v6.1" "$tmp/v6.2" &&
	ok "IPv6 keys, 2 workers: the records of 1 ($(wc -l <"$tmp/v6.1") records)" ||
	{ bad "IPv6 keys, 2 workers: records differ"; diff "$tmp/v6.1" "$tmp/v6.2" | head -4; }
# more rules with per-key state than an item's route can name: refused on
# several workers, with the reason; one worker runs them all
i=0
: >"$tmp/many.conf"
while [ "$i" -lt 64 ]; do
	printf 'event-report e%d { event = "int.latency"; delta-cond = {"int.latency"}; delta-key = {"ip.src"} }\n' "$i" >>"$tmp/many.conf"
	i=$((i + 1))
done
"$bld/intspect" -C "$tmp/many.conf" -r "$tmp/inline.pcap" -w 2 >/dev/null 2>"$tmp/many.err"; rc=$?
[ "$rc" -ne 0 ] && grep -q "more than 61 rules keep per-key state" "$tmp/many.err" &&
	ok "64 keyed rules on 2 workers: refused with the reason" || { bad "64 keyed rules on 2 workers (exit $rc)"; cat "$tmp/many.err"; }
# (its records to /dev/null: to the test's log, a slow disk under load made
# the stdout channel drop some, and the run exit 3)
"$bld/intspect" -C "$tmp/many.conf" -r "$tmp/inline.pcap" -w 1 -q >/dev/null 2>"$tmp/many1.err" &&
	grep -q "event-report e63: 20000 matched" "$tmp/many1.err" &&
	ok "64 keyed rules on 1 worker run" || bad "64 keyed rules on 1 worker"
# signals while workers read a file: the capture arrives through a FIFO
# in two parts; SIGUSR1 between them prints progress, SIGINT stops the
# run cleanly (summary, windows closed, exit 0), never the default death
mkfifo "$tmp/fifo"
"$bld/intspect" -C "$tmp/rules.conf" -w 2 -r - <"$tmp/fifo" >"$tmp/sig.out" 2>"$tmp/sig.err" &
pid=$!
exec 3>"$tmp/fifo"
head -c 200000 "$tmp/inline.pcap" >&3
sleep 1
kill -USR1 "$pid"
i=0
while ! grep -q "packets/s" "$tmp/sig.err" && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
sleep 0.2
cp "$tmp/sig.err" "$tmp/usr1.err"
kill -INT "$pid"
tail -c +200001 "$tmp/inline.pcap" >&3 2>/dev/null
exec 3>&-
wait "$pid"; rc=$?
# the counters as the workers published them, and the rules' (the final
# summary has no packets/s line without -q)
grep -q "^intspect: [0-9]* packets (" "$tmp/usr1.err" && grep -q "packets/s" "$tmp/usr1.err" &&
	grep -q "^intspect: query-report flows: [0-9]* matched" "$tmp/usr1.err" &&
	ok "SIGUSR1 with 2 workers prints the counters and the rules' while running" ||
	{ bad "SIGUSR1: no counters"; cat "$tmp/usr1.err"; }
[ "$rc" -eq 0 ] && grep -q "^intspect: [0-9]* packets (" "$tmp/sig.err" && grep -q '"type":"query"' "$tmp/sig.out" &&
	ok "SIGINT with 2 workers: clean stop, summary, windows written" ||
	{ bad "SIGINT with 2 workers (exit $rc)"; tail -3 "$tmp/sig.err"; }
# packets from before the last window's end, which no worker holds open
# (its tick closed it): they count in the open window, as for one worker
# (200 packets in [0,1 s), a batch in [1,2 s), then 8 batches that each
# begin with one from 0.5 s: the worker that takes one holds no window)
bsz=$(sed -n 's/^#define ISP_BATCH_PACKETS \([0-9]*\).*/\1/p' "$src/src/core/batches.h")
python3 - "$src/test/data/gen-rules-8.pcap" "$tmp/late.pcap" "$bsz" <<'PY'
import struct, sys
bsz = int(sys.argv[3])
d = open(sys.argv[1], "rb").read()
cl = struct.unpack("<I", d[32:36])[0]
pkt = bytearray(d[40:40 + cl])
with open(sys.argv[2], "wb") as w:
    w.write(d[:24])
    def put(t_us, src):
        pkt[29] = src                       # ip.src 10.x.x.src
        w.write(struct.pack("<IIII", 1700000000 + t_us // 1000000, t_us % 1000000, cl, cl))
        w.write(pkt)
    for k in range(200): put(100000 + k * 1000, 1)
    t = 1100000
    for k in range(bsz): put(t, 2); t += 100
    for b in range(8):
        put(500000 + b, 3)
        for k in range(bsz - 1): put(t, 2); t += 100
PY
printf 'query-report late {\n  ms-period = 1000\n  select = {"count()"}\n  group-by = {"ip.src"}\n}\n' >"$tmp/late.conf"
"$bld/intspect" -r "$tmp/late.pcap" -C "$tmp/late.conf" -w 1 2>/dev/null | sort >"$tmp/late.1"
for w in 2 3; do
	"$bld/intspect" -r "$tmp/late.pcap" -C "$tmp/late.conf" -w $w 2>/dev/null | sort >"$tmp/late.$w"
	[ "$(grep -c '"window_start":1700000001.000000' "$tmp/late.1")" -eq 2 ] && cmp -s "$tmp/late.1" "$tmp/late.$w" &&
		ok "$w workers: a packet older than the last window's end counts in the open window" ||
		{ bad "$w workers: a late packet's window"; diff "$tmp/late.1" "$tmp/late.$w" | head -5; }
done
# a capture past 16 MiB: with 2 workers the pages read are given back
# (and the next ones mapped) by calls made after a turn at the file, while
# the other worker reads on; its records are one worker's
"$bld/intgen" -o "$tmp/big.pcap" -n 90000 --flows 50 --hops 1-6 --seed 12 --pps 20000 --size 230 2>/dev/null
"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/big.pcap" -w 1 2>/dev/null | sort >"$tmp/big.1"
"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/big.pcap" -w 2 2>/dev/null | sort >"$tmp/big.2"
[ "$(wc -c <"$tmp/big.pcap")" -gt $((16 << 20)) ] && [ -s "$tmp/big.1" ] && cmp -s "$tmp/big.1" "$tmp/big.2" &&
	ok "2 workers on a capture past 16 MiB (pages given back after the turn): one worker's records" ||
	{ bad "2 workers on a 16 MiB capture"; diff "$tmp/big.1" "$tmp/big.2" | head -5; }
"$bld/intspect" -w 0 -r "$tmp/inline.pcap" 2>"$tmp/e"; rc=$?
[ "$rc" -eq 2 ] && grep -q "number of workers" "$tmp/e" && ok "bad worker count is an error" || bad "bad worker count"
# at most 61 rules routed by their key: 61 run on 2 workers, 62 are refused
# with the way out (one worker)
python3 -c '
for i in range(62):
    print("event-report e%d {\n  event = \"int.num_hop\"\n  delta-cond = {\"int.num_hop\"}\n"
          "  delta-key = {\"int.hop_switch_ids\", \"udp.src_port\"}\n  delta-threshold = %d\n"
          "  output-channel = {stdout}\n}" % (i, i + 1))' >"$tmp/r62.conf"
head -n 427 "$tmp/r62.conf" >"$tmp/r61.conf"   # 61 rules of 7 lines
"$bld/intspect" -C "$tmp/r61.conf" -r "$src/test/data/gen-rules-8.pcap" -w 2 >/dev/null 2>"$tmp/r61.err"; rc61=$?
"$bld/intspect" -C "$tmp/r62.conf" -r "$src/test/data/gen-rules-8.pcap" -w 2 >/dev/null 2>"$tmp/r62.err"; rc62=$?
[ "$rc61" = 0 ] && [ "$rc62" = 1 ] &&
	grep -q '^intspect: more than 61 rules keep per-key state (delta-cond, diff(), flow monitors): run them on one worker$' "$tmp/r62.err" &&
	ok "61 rules routed by key run on 2 workers; 62 refused, said" || bad "the limit of 61 routed rules ($rc61, $rc62)" "$tmp/r62.err"
echo "workers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
