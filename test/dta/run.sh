#!/bin/sh
# DTA: reports from intgen into the stores, read by another process
# (dta_read, only <intspect/dta_store.h>) and compared with an exact model
# (model.py, from intgen's expected values); sketches against their truth;
# stores fed by rules; a reader while intspect writes; a live collector
# with loss and reordering repaired by NACKs; shedding under overload; the
# control socket's queries; config errors.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT
fail=0 total=0
ok() { total=$((total + 1)); echo "ok $1"; }
bad() {
	total=$((total + 1)); fail=$((fail + 1)); echo "FAIL $1"
	[ -f "${2:-}" ] || return 0
	head -20 "$2"
	[ "$(wc -l <"$2")" -le 20 ] || { echo "..."; tail -10 "$2"; }
}
check() { if [ "$1" = 0 ]; then ok "$2"; else bad "$2" "${3:-}"; fi; }
sanitizer() { ! grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer|ThreadSanitizer' "$1"; }
reader=$tmp/dta_read
${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 -I"$src/src/plugins/dta" -o "$reader" \
	"$src/test/dta/dta_read.c" || { echo "FAIL building dta_read"; exit 1; }
port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
stores() {      # the three stores of the mixed reports, in $tmp/$1
	cat <<EOF
dta-store kv { type = key-write; file = "$tmp/$1.kv"; slots = 65536; redundancy = 2; value-bytes = 8 }
dta-store ev { type = append; file = "$tmp/$1.ev"; lists = 4; entries = 8192; value-bytes = 8 }
dta-store cnt { type = key-increment; file = "$tmp/$1.cnt"; rows = 4; columns = 65536 }
EOF
}

# ---- the stores against the model, 1 and 2 workers ----
"$bld/intgen" --format dta --dta-op mix --dta-words 2 --dta-reporters 6 -n 6000 --seed 7 \
	--dta-reorder 0.05 --dta-loss 0.02 -o "$tmp/mix.pcap" -e "$tmp/mix.jsonl"
for w in 1 2; do
	stores "w$w" >"$tmp/w$w.conf"
	"$bld/intspect" -C "$tmp/w$w.conf" -r "$tmp/mix.pcap" -w "$w" 2>"$tmp/w$w.err"
	rc=$?
	order=""; [ "$w" = 2 ] && order=--any-order
	python3 "$src/test/dta/model.py" "$tmp/mix.jsonl" "$reader" "$tmp/w$w.kv" "$tmp/w$w.ev" \
		"$tmp/w$w.cnt" 2 $order >"$tmp/m$w.out" 2>&1 && [ "$rc" = 0 ] && sanitizer "$tmp/w$w.err"
	check $? "stores equal the model ($w worker(s))" "$tmp/m$w.out"
done
# counters: every report counted by opcode; postcards beyond 2 words rejected;
# a capture file sends no NACK (nack = auto) though it has gaps
python3 - "$tmp/mix.jsonl" "$tmp/w1.err" >"$tmp/cnt.out" 2>&1 <<'EOF'
import json, re, sys
ops = [0] * 6
rej = gaps = 0
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'dta.opcode' in d and not d['lost']:
        ops[d['dta.opcode']] += 1
        rej += d['dta.opcode'] == 4 and d['dta.hop'] >= 2
err = open(sys.argv[2]).read()
m = re.search(r'dta: (\d+) reports \((\d+) key-write, (\d+) append, (\d+) key-increment, (\d+) postcarder', err)
got = [int(x) for x in m.groups()]
assert got == [sum(ops)] + ops[1:5], (got, ops)
assert re.search(r'%d rejected' % rej, err), rej
m = re.search(r'(\d+) sequence gaps, \d+ column gaps, (\d+) NACKs sent', err)
assert int(m.group(1)) > 0 and int(m.group(2)) == 0, m.groups()
print('counters ok')
EOF
check $? "counters by opcode, rejected postcards, no NACK from a file" "$tmp/cnt.out"

# a report that does not fit its store counts in that store's header too
# (where readers and `dta info` see it): a Key-Write of 3 words to a
# 2-word store, an Append of 3 words and one to list 9 of a 4-list store
python3 - "$tmp/rej.pcap" <<'EOF'
import struct, sys
kw3 = bytes([1, 0, 0, 2]) + struct.pack('!I', 7) + struct.pack('!3I', 1, 2, 3)
ap3 = bytes([2, 1, 0]) + struct.pack('!I', 0) + struct.pack('!3I', 1, 2, 3)
ap9 = bytes([2, 2, 0]) + struct.pack('!I', 9) + struct.pack('!2I', 1, 2)
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, p in enumerate((kw3, ap3, ap9)):
        udp = struct.pack('!HHHH', 50001, 40040, 8 + len(p), 0) + p
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                         bytes([10, 0, 0, 2]), bytes([10, 0, 100, 1]))
        fr = bytes(6) + bytes(6) + b'\x08\x00' + ip + udp
        f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)) + fr)
EOF
stores rej >"$tmp/rej.conf"
"$bld/intspect" -C "$tmp/rej.conf" -r "$tmp/rej.pcap" 2>"$tmp/rej.err"
grep -q 'dta-store kv (.*): 0 writes, 1 rejected' "$tmp/rej.err" &&
	grep -q 'dta-store ev (.*): 0 writes, 2 rejected' "$tmp/rej.err"
check $? "reports that do not fit: counted in their store's header" "$tmp/rej.err"

# ki_pcap FILE SEQ...: Key-Increment reports of one reporter (key 42, +1
# each) with these sequence numbers, in this order
ki_pcap() {
	python3 - "$@" <<'EOF'
import struct, sys
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for i, seq in enumerate(int(a) for a in sys.argv[2:]):
        p = bytes([3, seq, 0x40, 1]) + struct.pack('!IQ', 42, 1)
        udp = struct.pack('!HHHH', 50001, 40040, 8 + len(p), 0) + p
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                         bytes([10, 0, 0, 2]), bytes([10, 0, 100, 1]))
        fr = bytes(6) + bytes(6) + b'\x08\x00' + ip + udp
        f.write(struct.pack('<IIII', 1700000000, i, len(fr), len(fr)) + fr)
EOF
}
# reordered past the lag: sequences 0, 100, 1 .. 99 of one reporter. 1 to
# 4 are 96 or more behind 100 when it comes: given up, then counted late
# (not duplicates: each came once); every other one counted
# shellcheck disable=SC2046
ki_pcap "$tmp/lag.pcap" 0 100 $(seq 1 99)
printf 'dta-store cnt { type = key-increment; file = "%s/lag.cnt"; rows = 2; columns = 1024 }\n' "$tmp" \
	>"$tmp/lag.conf"
"$bld/intspect" -C "$tmp/lag.conf" -r "$tmp/lag.pcap" 2>"$tmp/lag.err" &&
	grep -q '97 applied' "$tmp/lag.err" &&
	grep -q ' 0 duplicates, .* 4 given up (4 came late)' "$tmp/lag.err" &&
	echo 42 | "$reader" ki "$tmp/lag.cnt" >"$tmp/lag.out" 2>&1 && grep -q "^42 97$" "$tmp/lag.out"
check $? "reordered past the lag: given up, then late, no duplicate" "$tmp/lag.err"

# a report that arrives twice is applied once: sequences 0, 1, 1, 2
ki_pcap "$tmp/dup.pcap" 0 1 1 2
printf 'dta-store cnt { type = key-increment; file = "%s/dup.cnt"; rows = 2; columns = 1024 }\n' "$tmp" \
	>"$tmp/dup.conf"
"$bld/intspect" -C "$tmp/dup.conf" -r "$tmp/dup.pcap" 2>"$tmp/dup.err" &&
	grep -q '^dta: 4 reports .* 3 applied' "$tmp/dup.err" && grep -q ' 1 duplicates, ' "$tmp/dup.err" &&
	echo 42 | "$reader" ki "$tmp/dup.cnt" >"$tmp/dup.out" 2>&1 && grep -q "^42 3$" "$tmp/dup.out"
check $? "a report that arrives twice is applied once (1 duplicate, the key's count 3)" "$tmp/dup.err"

# ---- sharding: 3 collectors, each its share; a client finds every key ----
"$bld/intgen" --format dta --dta-op mix --dta-words 2 --dta-reporters 4 --dta-shards 3 -n 3000 \
	--seed 21 -o "$tmp/shard.pcap" -e "$tmp/shard.jsonl"
# the documented mapping (zlib's CRC-32 of the 4 key bytes, mod 3), from
# Python's zlib: intgen addressed each report by it, and isp_dta_shard()
# (what a client uses) agrees for every key
python3 - "$tmp/shard.jsonl" "$reader" "$tmp" >"$tmp/shard.out" 2>&1 <<'EOF2'
import json, subprocess, sys, zlib
exp, reader, tmp = sys.argv[1:]
reps = [json.loads(l) for l in open(exp)]
reps = [d for d in reps if 'dta.opcode' in d]
def shard(k): return zlib.crc32(k.to_bytes(4, 'big')) % 3
keys = sorted({d['dta.list'] if d['dta.opcode'] == 2 else d['dta.key'] for d in reps})
out = subprocess.run([reader, 'shard', '3'], input=''.join('%d\n' % k for k in keys),
                     capture_output=True, text=True, check=True).stdout.split()
got = dict(zip(map(int, out[0::2]), map(int, out[1::2])))
assert all(got[k] == shard(k) for k in keys), [k for k in keys if got[k] != shard(k)][:5]
files = [open('%s/shard%d.jsonl' % (tmp, i), 'w') for i in range(3)]
for d in reps:
    s = shard(d['dta.list'] if d['dta.opcode'] == 2 else d['dta.key'])
    assert d['ip.dst'] == '10.0.100.%d' % (1 + s), d
    files[s].write(json.dumps(d) + '\n')
print('%d reports, %d keys: isp_dta_shard = CRC-32 mod 3 = their destination' % (len(reps), len(keys)))
EOF2
rc=$?
check $rc "sharding: intgen and isp_dta_shard() follow CRC-32(key) mod collectors" "$tmp/shard.out"
for i in 0 1 2; do
	stores "shard$i" >"$tmp/shard$i.conf"
	"$bld/intspect" -C "$tmp/shard$i.conf" -r "$tmp/shard.pcap" -f "dst host 10.0.100.$((i + 1))" \
		2>"$tmp/shard$i.err" || rc=1
	sanitizer "$tmp/shard$i.err" || rc=1
	python3 "$src/test/dta/model.py" "$tmp/shard$i.jsonl" "$reader" "$tmp/shard$i.kv" \
		"$tmp/shard$i.ev" "$tmp/shard$i.cnt" 2 >>"$tmp/shard.model" 2>&1 || rc=1
done
[ "$rc" = 0 ]
check $? "sharding: each of 3 collectors holds exactly its shard's keys, lists and counts" "$tmp/shard.model"

# ---- Sketch-Merge: the merged sketch against the truth ----
for kind in count-min count-sketch hll; do
	rows=4; [ "$kind" = hll ] && rows=1
	"$bld/intgen" --format dta --dta-op sketch --dta-sketch "$kind" --dta-rows "$rows" \
		--dta-width 1024 --dta-reporters 4 --dta-items 4000 --dta-keys 2000 --dta-chunk 16 \
		--dta-seed 11 -o "$tmp/sk.pcap" -e "$tmp/sk.jsonl"
	echo "dta-store sk { type = sketch-merge; sketch = $kind; sketch-id = 1; rows = $rows; columns = 1024; reporters = 4; seed = 11; file = \"$tmp/sk.$kind\" }" >"$tmp/sk.conf"
	"$bld/intspect" -C "$tmp/sk.conf" -r "$tmp/sk.pcap" 2>"$tmp/sk.err"
	python3 - "$kind" "$tmp/sk.jsonl" "$reader" "$tmp/sk.$kind" >"$tmp/sk.out" 2>&1 <<'EOF'
import json, math, subprocess, sys
kind, exp, reader, store = sys.argv[1:]
truth = [json.loads(l) for l in open(exp) if 'sketch_truth' in l][0]
counts = {int(k): v for k, v in truth['counts'].items()}
card, complete = subprocess.run([reader, 'card', store], capture_output=True, text=True).stdout.split()
assert int(complete) == 4, 'complete %s of 4 reporters' % complete
if kind == 'hll':
    err = abs(float(card) - truth['distinct']) / truth['distinct']
    bound = 3 * 1.04 / math.sqrt(1024)
    assert err <= bound, (card, truth['distinct'], bound)
    print('hll %s for %d distinct (%.3f <= %.3f)' % (card, truth['distinct'], err, bound))
    sys.exit(0)
keys = sorted(counts)
out = subprocess.run([reader, 'sm', store], input=''.join('%d\n' % k for k in keys),
                     capture_output=True, text=True).stdout.split('\n')
est = {int(l.split()[0]): int(l.split()[1]) for l in out if l}
total = truth['total']
eps = math.e / 1024
if kind == 'count-min':
    below = [k for k in keys if est[k] < counts[k]]
    over = sum(est[k] - counts[k] > eps * total for k in keys)
    assert not below, below[:5]
    assert over <= (math.exp(-4) + 0.01) * len(keys), (over, len(keys))
else:   # count sketch: |error| <= 3 sqrt(F2 / width) for most keys
    f2 = sum(v * v for v in counts.values())
    far = sum(abs(est[k] - counts[k]) > 3 * math.sqrt(f2 / 1024) for k in keys)
    assert far <= 0.05 * len(keys), (far, len(keys))
print('%s: %d keys, estimates within their bounds' % (kind, len(keys)))
EOF
	[ $? = 0 ] && sanitizer "$tmp/sk.err"
	check $? "sketch-merge $kind: merged from 4 reporters, within the sketch's bound" "$tmp/sk.out"
done

# ---- stores fed by rules: path tracing from INT ----
"$bld/intgen" --int-version 2.1 --hops 1-6 --flows 40 -n 800 --seed 3 -o "$tmp/int.pcap" -e /dev/null
cat >"$tmp/paths.conf" <<EOF
dta-store paths {
  type = key-write; file = "$tmp/paths"; slots = 4096; value-bytes = 32
  key = {"ip.src", "ip.dst", "udp.src_port", "udp.dst_port"}
  value = {"int.hop_switch_ids"}
}
EOF
"$bld/intspect" -C "$tmp/paths.conf" -r "$tmp/int.pcap" 2>"$tmp/paths.err" &&
	"$bld/intspect" -r "$tmp/int.pcap" --dump >"$tmp/int.dump" 2>/dev/null
python3 - "$tmp/int.dump" "$reader" "$tmp/paths" >"$tmp/paths.out" 2>&1 <<'EOF'
import ipaddress, json, subprocess, sys
# the key encoding of src/plugins/dta/README.md: each value 8 bytes big-endian
last = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'int.hop_switch_ids' not in d:
        continue
    k = b''.join(int(x).to_bytes(8, 'big') for x in (
        int(ipaddress.ip_address(d['ip.src'])), int(ipaddress.ip_address(d['ip.dst'])),
        d['udp.src_port'], d['udp.dst_port']))
    ids = d['int.hop_switch_ids'][:8]
    last[k.hex()] = ids + [0] * (8 - len(ids))
out = subprocess.run([sys.argv[2], 'kwx', sys.argv[3]], input='\n'.join(last) + '\n',
                     capture_output=True, text=True).stdout.splitlines()
bad = [l for l in out if [int(x) for x in l.split()[2:]] != last[l.split()[0]]]
assert len(out) == len(last) and not bad, bad[:3]
print('%d flows: their last path' % len(last))
EOF
check $? "a rule-fed key-write store holds each flow's last path (int.hop_switch_ids)" "$tmp/paths.out"

# ---- a rule-fed key-increment store beside the one of the DTA reports ----
# `increment` adds a numeric attribute a packet (a per-hop one: its sum)
# to the packet's key: against a model from --dump, the estimate of each
# of the 40 flows is its sum of hop latencies (count-min never estimates
# below the truth; 4 rows of 65536 columns leave 40 keys no cell to share
# in every row). The store of the DTA reports gets none of these packets.
# A second store of the kind that says dta-reports = false is accepted.
cat >"$tmp/inc.conf" <<EOF
dta-store cnt { type = key-increment; file = "$tmp/inc.cnt"; rows = 4; columns = 65536 }
dta-store lat {
  type = key-increment; file = "$tmp/inc.lat"; rows = 4; columns = 65536
  key = {"ip.src", "ip.dst"}
  increment = "int.hop_latencies"
}
dta-store spare { type = key-increment; file = "$tmp/inc.spare"; dta-reports = false }
EOF
"$bld/intspect" -C "$tmp/inc.conf" -r "$tmp/int.pcap" 2>"$tmp/inc.err" && sanitizer "$tmp/inc.err"
rc=$?
python3 - "$tmp/int.dump" "$reader" "$tmp/inc.lat" "$tmp/inc.cnt" >"$tmp/inc.out" 2>&1 <<'EOF'
import ipaddress, json, subprocess, sys
sums = {}
for l in open(sys.argv[1]):
    d = json.loads(l)
    if 'int.hop_latencies' not in d:
        continue
    k = b''.join(int(ipaddress.ip_address(d[a])).to_bytes(8, 'big') for a in ('ip.src', 'ip.dst'))
    sums[k.hex()] = sums.get(k.hex(), 0) + sum(d['int.hop_latencies'])
def est(store):
    out = subprocess.run([sys.argv[2], 'kix', store], input='\n'.join(sums) + '\n',
                         capture_output=True, text=True).stdout.split()
    return dict(zip(out[0::2], map(int, out[1::2])))
got, other = est(sys.argv[3]), est(sys.argv[4])
bad = [(k, got.get(k), v) for k, v in sums.items() if got.get(k) != v]
assert len(sums) == 40 and not bad, bad[:3]
assert not any(other.values()), 'the DTA reports store was written'
print('%d flows: each the sum of its hop latencies' % len(sums))
EOF
[ "$rc" = 0 ] && grep -q . "$tmp/inc.out" && ! grep -q -i "error\|assert" "$tmp/inc.out"
check $? "a rule-fed key-increment store adds each packet's hop latencies to its flow, beside the DTA reports' store and a spare one (dta-reports = false)" "$tmp/inc.out"

# ---- a reader polling while intspect appends ----
"$bld/intgen" --int-version 1.0 --hops 2 -n 150000 --seed 5 -o "$tmp/big.pcap" -e /dev/null
cat >"$tmp/watch.conf" <<EOF
dta-store log {
  type = append; file = "$tmp/log"; lists = 1; entries = 4096; value-bytes = 16
  value = {"meta.packet_index", "meta.packet_index"}
}
EOF
rm -f "$tmp/log"
"$bld/intspect" -C "$tmp/watch.conf" -r "$tmp/big.pcap" 2>"$tmp/watch.err" &
ip=$!; pids="$pids $ip"
i=0; while [ ! -f "$tmp/log" ] && [ $i -lt 200 ]; do sleep 0.01; i=$((i + 1)); done
"$reader" watch "$tmp/log" 1500 >"$tmp/watch.out" 2>&1
rc=$?
wait "$ip"
read -r _ nread _ nlost _ ntorn <"$tmp/watch.out"
[ "$rc" = 0 ] && [ "${nread:-0}" -gt 0 ] && [ "${ntorn:-1}" = 0 ]
check $? "a reader process polls while intspect appends: $nread read, $nlost lapped, none torn" "$tmp/watch.out"

# ---- live: loss and reordering repaired by NACKs; the control socket ----
# (DTA_LIVE_PPS: slower for a build that is, such as ThreadSanitizer's: a
# collector more than 96 reports of a reporter behind gives gaps up)
live_pps=${DTA_LIVE_PPS:-2500}
p=$(port); np=$(port)
stores live >"$tmp/live.conf"
cat >>"$tmp/live.conf" <<EOF
dta { nack-port = $np }
dta-store sk { type = sketch-merge; sketch-id = 1; rows = 4; columns = 1024; reporters = 4; file = "$tmp/live.sk" }
dta-store hs { type = sketch-merge; sketch = hll; sketch-id = 2; rows = 1; columns = 1024; reporters = 4; seed = 11; file = "$tmp/live.hs" }
EOF
"$bld/intspect" -C "$tmp/live.conf" -u "127.0.0.1:$p" -o "dta.udp-ports=$p" -w 2 --control "$tmp/ctl.sock" \
	2>"$tmp/live.err" &
ip=$!; pids="$pids $ip"
i=0; while [ ! -S "$tmp/ctl.sock" ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i + 1)); done
"$bld/intgen" --format dta --dta-op mix --dta-words 2 --dta-reporters 4 -n 3000 --seed 9 \
	--dta-loss 0.05 --dta-reorder 0.05 --send "127.0.0.1:$p" --nack-port "$np" --pps "$live_pps" \
	--linger 2000 -e "$tmp/live.jsonl" 2>"$tmp/gen.err"
"$bld/intgen" --format dta --dta-op sketch --dta-reporters 4 --dta-items 3000 --seed 12 \
	--dta-loss 0.05 --send "127.0.0.1:$p" --nack-port "$np" --pps "$live_pps" \
	--linger 2000 -e "$tmp/livesk.jsonl" 2>>"$tmp/gen.err"
"$bld/intgen" --format dta --dta-op sketch --dta-sketch hll --dta-sketch-id 2 --dta-rows 1 \
	--dta-width 1024 --dta-reporters 4 --dta-items 2000 --dta-keys 1500 --dta-seed 11 \
	--send "127.0.0.1:$p" --nack-port "$np" --pps "$live_pps" --linger 1000 -e "$tmp/livehs.jsonl" \
	2>>"$tmp/gen.err"
ctl() { "$bld/intspect-ctl" -s "$tmp/ctl.sock" --json "$@"; }
python3 "$src/test/dta/model.py" "$tmp/live.jsonl" "$reader" "$tmp/live.kv" "$tmp/live.ev" \
	"$tmp/live.cnt" 2 --any-order --all >"$tmp/live.out" 2>&1
rc=$?
# (on a failure, what the reporters and the collector counted)
[ "$rc" = 0 ] || { cat "$tmp/gen.err"; kill -USR1 "$ip"; sleep 0.5; grep 'dta:' "$tmp/live.err"; } \
	>>"$tmp/live.out" 2>&1
check $rc "live with 5% loss and 5% reordering: every report in the stores once (NACKs)" "$tmp/live.out"
key=$(python3 -c "
import json
for l in open('$tmp/live.jsonl'):
    d = json.loads(l)
    if d.get('dta.opcode') == 3: print(d['dta.key']); break")
sum=$(python3 -c "
import json
print(sum(d['dta.counter'] for d in map(json.loads, open('$tmp/live.jsonl')) if d.get('dta.opcode') == 3 and d['dta.key'] == $key))")
ctl dta estimate cnt "$key" >"$tmp/q1" && grep -q "\"estimate\": *$sum[,}]" "$tmp/q1"
check $? "intspect-ctl dta estimate: the key's sum ($sum)" "$tmp/q1"
ctl dta poll ev 0 0 5 >"$tmp/q2" && python3 -c "
import json, sys
r = json.load(open('$tmp/q2'))
assert r['ok'] and len(r['entries']) == 5 and r['cursor'] == 5 and r['lost'] == 0, r"
check $? "intspect-ctl dta poll: 5 entries from cursor 0, the next cursor" "$tmp/q2"
ctl dta get kv 1 >"$tmp/q3" && grep -q '"found": *false' "$tmp/q3"
check $? "intspect-ctl dta get of an unwritten key: not found" "$tmp/q3"
# a key only Key-Write reports wrote: one of the values written (the
# reports came in any order), with the copies that agree
kw=$(python3 -c "
import json
d = [json.loads(l) for l in open('$tmp/live.jsonl')]
other = {r['dta.key'] for r in d if 'dta.key' in r and r.get('dta.opcode') != 1}
vals = {}
for r in d:
    if r.get('dta.opcode') == 1 and r['dta.key'] not in other:
        vals.setdefault(r['dta.key'], []).append(r['dta.data'])
k = min(vals)
print(k, json.dumps(vals[k], separators=(',', ':')))")
ctl dta get kv "${kw%% *}" >"$tmp/q9" && python3 -c "
import json, sys
r = json.load(open('$tmp/q9'))
assert r['found'] and r['copies'] in (1, 2) and r['redundancy'] == 2, r
assert r['value'] in json.loads(sys.argv[1]), (r, sys.argv[1])" "${kw#* }"
check $? "intspect-ctl dta get of a written key: a value it was written, the copies that agree" "$tmp/q9"
# a merged HyperLogLog's distinct keys: what the store's file says, near the truth
ctl dta cardinality hs >"$tmp/q10" && python3 -c "
import json, math, subprocess, sys
r = json.load(open('$tmp/q10'))
card, complete = subprocess.run(['$reader', 'card', '$tmp/live.hs'], capture_output=True,
                                text=True).stdout.split()
truth = [json.loads(l) for l in open('$tmp/livehs.jsonl') if 'sketch_truth' in l][0]['distinct']
assert r['found'] and r['complete'] == 4 and r['cardinality'] == int(card), (r, card)
assert abs(r['cardinality'] - truth) / truth <= 3 * 1.04 / math.sqrt(1024), (r, truth)"
check $? "intspect-ctl dta cardinality: the merged HyperLogLog's count (its file's, near the truth)" "$tmp/q10"
ctl dta get nosuch 1 >"$tmp/q4"; grep -q "no dta-store named 'nosuch'" "$tmp/q4"
check $? "intspect-ctl dta on an unknown store: its error" "$tmp/q4"
ctl dta estimate sk "$key" >"$tmp/q5" && grep -q '"complete": *4' "$tmp/q5"
check $? "live sketch with 5% loss: every reporter's columns arrive (complete 4)" "$tmp/q5"
# no key, after a request that had one: an error, and the collector goes on
ctl dta estimate sk >"$tmp/q6"; grep -q 'its key is one 32-bit number' "$tmp/q6" &&
	ctl dta estimate sk "$key" 0 >"$tmp/q7" && grep -q '"found"' "$tmp/q7"
check $? "intspect-ctl dta estimate of a sketch without a key: its error, the collector answers on" "$tmp/q6"
ctl dta info sk >"$tmp/q8" && ctl dta info kv >>"$tmp/q8" && python3 -c "
import json
dec = json.JSONDecoder(); t = open('$tmp/q8').read().strip(); sk, i = dec.raw_decode(t)
kv, _ = dec.raw_decode(t[i:].lstrip())
assert (sk['sketch'], sk['sketch_id'], sk['rows'], sk['columns'], sk['reporters']) == \
       ('count-min', 1, 4, 1024, 4), sk
assert (kv['slots'], kv['redundancy'], kv['value_bytes'], kv['answer']) == (65536, 2, 8, 'any'), kv"
check $? "intspect-ctl dta info: each store's shape" "$tmp/q8"
kill -INT "$ip"; wait "$ip"
grep -E '^dta: [0-9]+ reporters' "$tmp/live.err" | python3 -c "
import re, sys
l = sys.stdin.read()
g = int(re.search(r'(\d+) sequence gaps', l).group(1)); n = int(re.search(r'(\d+) NACKs sent', l).group(1))
assert g > 0 and n >= g, l" && sanitizer "$tmp/live.err"
check $? "live: gaps found and NACKed ($(grep -o '[0-9]* NACKs sent' "$tmp/live.err"))" "$tmp/live.err"

# ---- the defaults: -u 40040 alone takes DTA reports; NACKs go to the
# reporters' port 40044 (both fixed: a test that binds them) ----
stores def >"$tmp/def.conf"
"$bld/intspect" -C "$tmp/def.conf" -u 127.0.0.1:40040 --control none 2>"$tmp/def.err" &
ip=$!; pids="$pids $ip"
i=0; while ! grep -q ':9C68 .* 07 ' /proc/net/udp && [ $i -lt 300 ]; do sleep 0.01; i=$((i + 1)); done
"$bld/intgen" --format dta --dta-op mix --dta-words 2 --dta-reporters 2 -n 600 --seed 5 --dta-loss 0.05 \
	--send 127.0.0.1:40040 --nack-port 40044 --pps "$live_pps" --linger 1500 -e "$tmp/def.jsonl" \
	2>"$tmp/defgen.err"
python3 "$src/test/dta/model.py" "$tmp/def.jsonl" "$reader" "$tmp/def.kv" "$tmp/def.ev" "$tmp/def.cnt" 2 \
	--any-order --all >"$tmp/def.out" 2>&1
rc=$?
kill -INT "$ip"; wait "$ip"
n=$(sed -n 's/.* \([0-9]*\) NACKs sent (0 failed).*/\1/p' "$tmp/def.err")
[ "$rc" = 0 ] && [ "${n:-0}" -gt 0 ]
check $? "the defaults: -u 40040 takes DTA reports, NACKs ($n) reach port 40044, every report in the stores once" \
	"$tmp/def.out"

# ---- shedding: a backlog past half the buffer sheds priority 0 first ----
p=$(port)
cat >"$tmp/shed.conf" <<EOF
input { buffer-size = 1 }
dta-store cnt { type = key-increment; file = "$tmp/shed.cnt"; rows = 2; columns = 1024 }
EOF
"$bld/intspect" -C "$tmp/shed.conf" -u "127.0.0.1:$p" -o "dta.udp-ports=$p" 2>"$tmp/shed.err" &
ip=$!; pids="$pids $ip"
sleep 0.5
kill -STOP "$ip"
"$bld/intgen" --format dta --dta-op increment --dta-no-retransmit --dta-reporters 1 -n 8000 \
	--send "127.0.0.1:$p" --pps 1000000 --linger 0 -e /dev/null 2>/dev/null
kill -CONT "$ip"; sleep 1; kill -INT "$ip"; wait "$ip"
python3 - "$tmp/shed.err" >"$tmp/shed.out" 2>&1 <<'EOF'
import re, sys
l = open(sys.argv[1]).read()
s = [int(x) for x in re.search(r'priority 0-3: (\d+) (\d+) (\d+) (\d+)', l).groups()]
# priorities drawn evenly: 0 goes at half the buffer, 2 only past 9/10
assert s[0] > 0 and s[3] == 0 and s[0] > s[2], s
print('shed by priority', s)
EOF
check $? "overload: priority 0 shed first, priority 3 never ($(cat "$tmp/shed.out"))" "$tmp/shed.err"

# -T: how many keys a Key-Write store answers for at 99%, against the DTA
# paper's model computed here (each copy of a key of age W survives with
# e^(-WN/M); answer any needs one copy, majority more than half)
for shape in "65536 3 any" "65536 3 majority" "4096 2 majority" "1024 1 any" "16384 4 majority"; do
	set -- $shape
	printf 'dta-store k { type = key-write; slots = %s; redundancy = %s; answer = %s; file = "%s/k.kw" }\n' \
		"$1" "$2" "$3" "$tmp" >"$tmp/cap.conf"
	"$bld/intspect" -T "$tmp/cap.conf" >"$tmp/cap.out" 2>&1 && python3 - "$tmp/cap.out" $shape <<'EOF'
import math, re, sys
m, n, any_ = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == 'any'
def p(w):
    q = math.exp(-w * n / m)
    ks = range(1, n + 1) if any_ else range(n // 2 + 1, n + 1)
    return sum(math.comb(n, k) * q**k * (1 - q)**(n - k) for k in ks)
lo, hi = 0.0, 4.0 * m
for _ in range(100):
    mid = (lo + hi) / 2
    lo, hi = (mid, hi) if p(mid) >= 0.99 else (lo, mid)
got = int(re.search(r'99% of queries answered up to (\d+) keys', open(sys.argv[1]).read()).group(1))
assert abs(got - lo) <= 1, (got, lo)
EOF
	check $? "-T: a $1-slot, $2-copy store answers 99% (answer $3) as the model says" "$tmp/cap.out"
done

# ---- config errors: file:line:col ----
terr() {        # expected message, then the config
	printf '%s\n' "$2" >"$tmp/bad.conf"
	"$bld/intspect" -T "$tmp/bad.conf" >/dev/null 2>"$tmp/bad.err"
	[ $? = 2 ] && grep -q "bad.conf:[0-9]*:[0-9]*: error: .*$1" "$tmp/bad.err"
	check $? "-T refuses: $1" "$tmp/bad.err"
}
terr "needs type = key-write" 'dta-store a { slots = 8 }'
terr "must be a power of 2 (1024 or 2048)" 'dta-store a { type = key-write; slots = 1500 }'
terr "'rows' does not apply to a key-write store" 'dta-store a { type = key-write; rows = 2 }'
terr "already takes the DTA key-write reports" 'dta-store a { type = key-write; file = "/tmp/x1" }
dta-store b { type = key-write; file = "/tmp/x2" }'
terr "already takes the DTA key-increment reports" 'dta-store a { type = key-increment; file = "/tmp/x1" }
dta-store b { type = key-increment; file = "/tmp/x2" }'
terr "needs sketch-id" 'dta-store s { type = sketch-merge }'
terr "one row of registers" 'dta-store s { type = sketch-merge; sketch-id = 1; sketch = hll; rows = 4 }'
terr "takes DTA reports only" 'dta-store s { type = sketch-merge; sketch-id = 1; key = {"ip.src"} }'
terr "is one of key-write, append, key-increment, sketch-merge" 'dta-store a { type = kv }'
terr "is a string" 'dta-store a { type = append; value = {"int.mode"} }'
terr "is dta-store a's" 'dta-store a { type = append; file = "/tmp/y" }
dta-store b { type = key-increment; file = "/tmp/y" }'
terr "'seed' expects a whole number" 'dta-store s { type = sketch-merge; sketch-id = 1; seed = 1.5 }'
terr "'list' expects a whole number" 'dta-store a { type = append; list = 1.5; value = {"int.latency"} }'
terr "list 10 is not one of the store's 9 lists" 'dta-store a { type = append; lists = 9; list = 010; value = {"int.latency"} }'
# a 64-bit seed is kept to its last bit (not through a double), in the header
printf 'dta-store s { type = sketch-merge; sketch-id = 1; seed = 12345678901234567891; file = "%s/seed.sk" }\n' \
	"$tmp" >"$tmp/seed.conf"
"$bld/intspect" -C "$tmp/seed.conf" -r "$tmp/mix.pcap" >/dev/null 2>"$tmp/seed.err" &&
	python3 -c "import struct, sys; s = struct.unpack_from('<Q', open(sys.argv[1], 'rb').read(), 40)[0]
assert s == 12345678901234567891, s" "$tmp/seed.sk" 2>>"$tmp/seed.err"
check $? "a 64-bit seed kept exactly in the store's header" "$tmp/seed.err"
"$bld/intspect" -C /dev/null -r "$tmp/mix.pcap" >/dev/null 2>&1
printf 'dta-store a { type = key-write; file = "%s/nodir/a" }\n' "$tmp" >"$tmp/nodir.conf"
"$bld/intspect" -C "$tmp/nodir.conf" -r "$tmp/mix.pcap" 2>"$tmp/nodir.err"
[ $? = 2 ] && grep -q "dta-store a: .*nodir.*No such file or directory" "$tmp/nodir.err"
check $? "a store file that cannot be created: said, exit 2" "$tmp/nodir.err"

echo "dta: $((total - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
