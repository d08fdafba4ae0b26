#!/bin/sh
# Command-line behaviour: input kinds (pcapng, stdin), -c, BPF filters,
# the malformed summary, plugins loaded as .so files, listings, errors.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

# pcapng and stdin give the same dump as the pcap
"$bin" -r "$src/test/data/report-v0.5-int-v0.5-tcp.pcap" --dump >"$tmp/pcap.out" 2>/dev/null
"$bin" -r "$src/test/data/report-v0.5.pcapng" --dump >"$tmp/ng.out" 2>/dev/null
"$bin" -r - --dump <"$src/test/data/report-v0.5-int-v0.5-tcp.pcap" >"$tmp/stdin.out" 2>/dev/null
check "pcapng equals pcap" cmp -s "$tmp/pcap.out" "$tmp/ng.out"
check "stdin equals file" cmp -s "$tmp/pcap.out" "$tmp/stdin.out"
check "dump is one line" test "$(wc -l <"$tmp/pcap.out")" -eq 1
"$bin" -r "$src/test/data/report-v0.5-bigendian.pcap" --dump >"$tmp/be.out" 2>/dev/null
check "big-endian pcap equals little-endian" cmp -s "$tmp/pcap.out" "$tmp/be.out"
head -c 300 "$src/test/data/gen-rules-8.pcap" >"$tmp/cut.pcap"
"$bin" -r "$tmp/cut.pcap" -q 2>"$tmp/cut.err"; rc=$?
check "a cut capture is an error" test "$rc" -eq 1
check "a cut capture says so" grep -q "truncated capture" "$tmp/cut.err"
check "packets before the cut are decoded" grep -q "^intspect: 1 packets" "$tmp/cut.err"
check "a cut record: where and how much" \
	grep -q "truncated capture: record at offset 270 needs 230 bytes, 14 left" "$tmp/cut.err"
# a record header cut, and a captured length past libpcap's limit: the
# second record (offset 270) of the same file
head -c 280 "$src/test/data/gen-rules-8.pcap" >"$tmp/cuthdr.pcap"
"$bin" -r "$tmp/cuthdr.pcap" -q 2>"$tmp/cuthdr.err"; rc=$?
check "a cut record header is an error" test "$rc" -eq 1
check "a cut record header says so" \
	grep -q "truncated capture: 10 bytes of a record header at offset 270" "$tmp/cuthdr.err"
python3 -c 'import sys, struct; d = bytearray(open(sys.argv[1], "rb").read()); \
d[278:282] = struct.pack("<I", 300000); open(sys.argv[2], "wb").write(d)' \
	"$src/test/data/gen-rules-8.pcap" "$tmp/big.pcap"
"$bin" -r "$tmp/big.pcap" -q 2>"$tmp/big.err"; rc=$?
check "a captured length past 256 KiB is an error" test "$rc" -eq 1
check "a captured length past 256 KiB says so" \
	grep -q "bad record at offset 270: captured length 300000" "$tmp/big.err"
check "packets before a bad record are decoded" grep -q "^intspect: 1 packets" "$tmp/big.err"

# what libpcap makes of a classic file, the mapped reader makes too: a
# link type with FCS information in its high bits, records longer than
# the file's snap length (cut to it), a version 2.2 file (lengths the
# other way round)
python3 - "$src/test/data/plain-udp.pcap" "$tmp" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
e = "<" if d[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
magic, major, minor, tz, sig, snap, lt = struct.unpack(e + "IHHiIII", d[:24])
recs, o = [], 24
while o + 16 <= len(d):
    ts, us, cl, wl = struct.unpack(e + "IIII", d[o:o + 16])
    recs.append((ts, us, d[o + 16:o + 16 + cl], wl))
    o += 16 + cl
def write(name, ver=(2, 4), snaplen=262144, linktype=1, swapped=False):
    with open(sys.argv[2] + "/" + name, "wb") as w:
        w.write(struct.pack("<IHHiIII", 0xa1b2c3d4, ver[0], ver[1], 0, 0, snaplen, linktype))
        for ts, us, b, wl in recs:
            wl = len(b) + 100 if swapped else wl     # the order shows
            lens = (wl, len(b)) if swapped else (len(b), wl)
            w.write(struct.pack("<IIII", ts, us, *lens) + b)
write("fcs.pcap", linktype=0x04000001)
write("snap.pcap", snaplen=40)
write("v22.pcap", ver=(2, 2), swapped=True)
PY
for f in fcs snap v22; do
	"$bin" -r "$tmp/$f.pcap" --dump >"$tmp/$f.mapped" 2>"$tmp/$f.err"
	"$bin" -r - --dump <"$tmp/$f.pcap" >"$tmp/$f.libpcap" 2>/dev/null
	check "$f.pcap: the mapped file reads as libpcap reads it" \
		cmp -s "$tmp/$f.mapped" "$tmp/$f.libpcap"
	check "$f.pcap: every packet" test "$(wc -l <"$tmp/$f.mapped")" -eq \
		"$("$bin" -r "$src/test/data/plain-udp.pcap" --dump 2>/dev/null | wc -l)"
done
check "snap.pcap: records cut to the snap length" grep -q '"meta.caplen":40,' "$tmp/snap.mapped"

# .so plugins alone decode exactly like the built-ins
plugdir=$bld/.libs
if ls "$plugdir"/int.so >/dev/null 2>&1; then
	for f in "$src"/test/data/*.pcap; do
		"$bin" -r "$f" --dump >"$tmp/a" 2>/dev/null
		"$bin" --no-builtin --plugin-dir "$plugdir" -r "$f" --dump >"$tmp/b" 2>"$tmp/err"
		check "plugins as .so: $(basename "$f")" cmp -s "$tmp/a" "$tmp/b"
	done
	"$bin" --no-builtin --plugin-dir "$plugdir" --list-protocols >"$tmp/protos"
	check "plugins report their origin" grep -q '^int  *plugin' "$tmp/protos"
	# beside the built-ins, their .so copies are skipped: the same
	# protocols, every one built in, none twice
	"$bin" --list-protocols | grep -v '^ ' >"$tmp/p1"
	"$bin" --plugin-dir "$plugdir" --list-protocols | grep -v '^ ' >"$tmp/p2"
	check "--plugin-dir with copies of the built-ins: each skipped" sh -c \
		"cmp -s '$tmp/p1' '$tmp/p2' && ! grep -q '^[a-z0-9_]*  *plugin' '$tmp/p2' &&
		 [ \$(wc -l <'$tmp/p2') -ge 19 ]"
	# and count alike what they refuse: v2.0 reports whose MD Length is
	# shorter than their RepMdBits' fields (a check int_report.so makes
	# with its own copy of the INT layout tables)
	"$bld/intgen" -o "$tmp/md.pcap" -n 5 --seed 2 --format report --report-version 2.0 \
		--rep-md-bits 0x2800 --hops 2 2>/dev/null
	python3 -c 'import sys, struct; d = bytearray(open(sys.argv[1], "rb").read()); o = 24
while o + 16 <= len(d):
    n = struct.unpack("<I", d[o + 8:o + 12])[0]; d[o + 16 + 52] = 1; o += 16 + n
open(sys.argv[2], "wb").write(d)' "$tmp/md.pcap" "$tmp/mdshort.pcap"
	for f in "$tmp/mdshort.pcap" "$src"/test/data/*.pcap; do
		"$bin" -r "$f" -q 2>&1 >/dev/null | grep -v packets/s >"$tmp/a"
		"$bin" --no-builtin --plugin-dir "$plugdir" -r "$f" -q 2>&1 >/dev/null |
			grep -v packets/s >"$tmp/b"
		check "plugins as .so count alike: $(basename "$f")" cmp -s "$tmp/a" "$tmp/b"
		[ "$f" = "$tmp/mdshort.pcap" ] &&
			check "a v2.0 MD Length short of its fields is bad_length (.so)" \
				grep -q "malformed int_report: bad_length 5" "$tmp/b"
	done
else
	bad "no plugin .so in $plugdir"
fi

# -c, BPF filter (trailing expression and -f), counts in the summary
"$bld/intgen" -o "$tmp/g.pcap" -n 50 --seed 3 --flows 4 2>/dev/null
"$bin" -r "$tmp/g.pcap" -c 7 --dump >"$tmp/c.out" 2>/dev/null
check "-c 7 stops after 7 packets" test "$(wc -l <"$tmp/c.out")" -eq 7
"$bin" -r "$tmp/g.pcap" --dump udp and not udp >"$tmp/f.out" 2>/dev/null
check "trailing BPF filter" test ! -s "$tmp/f.out"
"$bin" -r "$tmp/g.pcap" -f udp -q 2>"$tmp/f.err" >/dev/null
check "-f filter keeps matching packets" grep -q '^intspect: 50 packets' "$tmp/f.err"
check "-q prints packets/s" grep -q 'packets/s' "$tmp/f.err"

# malformed packets are counted per reason, the rest decoded
"$bld/intgen" -o "$tmp/m.pcap" -e "$tmp/m.jsonl" -n 200 --seed 9 --hops 1-4 --malformed=0.3 2>/dev/null
want=$(grep -c '"malformed"' "$tmp/m.jsonl")
"$bin" -r "$tmp/m.pcap" -q 2>"$tmp/m.err" >/dev/null
got=$(sed -n 's/.* \([0-9]*\) malformed.*/\1/p' "$tmp/m.err" | head -1)
check "malformed count ($want) in the summary" test "$got" = "$want"
check "malformed reasons listed" grep -q 'malformed int: truncated' "$tmp/m.err"

# a record whose original length is below its captured length, or above
# 262144, is refused: counted, neither decoded nor summed, whichever way
# the file is read (test/tools/gen_bad_wirelen.py: records 2, 3, 5)
bw=$src/test/data/gen-bad-wirelen.pcap
printf 'query-report lens {\n  ms-period = 3600000\n  select = {"count()", "sum(meta.packet_len)"}\n}\n' >"$tmp/lens.conf"
for how in file stdin; do
	if [ $how = file ]; then in=$bw; else in=-; fi
	"$bin" -r "$in" --dump <"$bw" >"$tmp/bw.out" 2>"$tmp/bw.err"
	check "bad wire length ($how): summary" \
		grep -q '^intspect: 6 packets (262436 bytes), 3 telemetry items, 3 malformed' "$tmp/bw.err"
	check "bad wire length ($how): reason" grep -q '^intspect: malformed meta: bad_wire_len 3$' "$tmp/bw.err"
	check "bad wire length ($how): the others dumped" \
		test "$(sed 's/.*"meta.packet_index":\([0-9]*\),.*/\1/' "$tmp/bw.out" | tr '\n' ' ')" = "1 4 6 "
done
for w in 1 2; do
	"$bin" -w $w -C "$tmp/lens.conf" -r "$bw" >"$tmp/lens.out" 2>/dev/null
	check "bad wire length (-w $w): neither counted nor summed by rules" \
		grep -q '"count()":3,"sum(meta.packet_len)":262436}' "$tmp/lens.out"
done

# listings and errors
"$bin" --list-attributes >"$tmp/attrs"
check "--list-attributes lists per-hop arrays" grep -q '^int.hop_latencies  *u32\[\]' "$tmp/attrs"
check "--list-attributes lists report fields" grep -q '^int_report.seq_num ' "$tmp/attrs"
for a in sll.pkttype sll.addr sll.protocol sll2.ifindex sll2.protocol raw.version null.family loop.family; do
	check "--list-attributes lists $a" grep -q "^$a " "$tmp/attrs"
done
"$bin" -r /nonexistent.pcap 2>"$tmp/e1"; rc=$?
check "missing file is an input error (exit 1)" test "$rc" -eq 1
check "missing file message" grep -q 'nonexistent.pcap' "$tmp/e1"
"$bin" -o int.dscp=banana -r "$tmp/g.pcap" 2>"$tmp/e2"; rc=$?
check "bad option exits 2" test "$rc" -eq 2
check "bad option message" grep -q 'int.dscp=banana' "$tmp/e2"
"$bin" 2>/dev/null; rc=$?
check "no input exits 2" test "$rc" -eq 2
"$bin" --plugin-dir /nonexistent -r "$tmp/g.pcap" 2>"$tmp/e3"; rc=$?
check "bad plugin dir is an error" test "$rc" -ne 0

# every shipped configuration is valid
for f in "$src"/conf/*.conf "$src"/conf/examples/*.conf; do
	check "config $(basename "$f") is valid" "$bin" -T "$f"
done
# rules on a capture: records on stdout, counters on stderr
"$bin" -C "$src/conf/intspect.conf" -r "$src/test/data/gen-report-v2.0-coalesced.pcap" >"$tmp/rec" 2>"$tmp/rec.err"
check "default rules write records" grep -q '"report":"flow-telemetry"' "$tmp/rec"
check "rule counters at exit" grep -q 'query-report flow-telemetry: 12 matched' "$tmp/rec.err"
# the records the README shows are the ones the README's rule file writes
"$bin" -C "$src/conf/examples/readme.conf" -r "$src/test/data/gen-rules-8.pcap" >"$tmp/readme.out" 2>/dev/null
grep '^{"report":' "$src/README.md" >"$tmp/readme.want"
check "README records are real" sh -c "grep -v -x -F -f '$tmp/readme.out' '$tmp/readme.want' | grep -q . && exit 1 || exit 0"
# and in the order written (the README's lines a subsequence of the run's)
check "README records in their order" python3 -c "
import sys
out = open(sys.argv[1]).read().splitlines(); want = open(sys.argv[2]).read().splitlines()
i = 0
for w in want:
    while i < len(out) and out[i] != w:
        i += 1
    assert i < len(out), w[:80]
    i += 1" "$tmp/readme.out" "$tmp/readme.want"
# every rule block of the README (a ``` block with a -report or -output
# section) is a configuration intspect -T accepts
awk -v dir="$tmp" '
/^```/ { if (on) { close(out); on = 0; next } n++; out = dir "/readme-block" n ".conf"; on = 1; printf "" >out; next }
on { print >out }
' "$src/README.md"
nb=0
for f in "$tmp"/readme-block*.conf; do
	grep -q -E '^[a-z]+-(report|output)( [A-Za-z0-9_-]+)? \{' "$f" || continue
	grep -q -E '^(\$|\./|intspect |sh |cd |redis-cli|kcat|influx |systemctl|editor|journalctl)' "$f" && continue
	nb=$((nb + 1))
	check "README configuration block $(basename "$f" .conf) passes -T" "$bin" -T "$f"
done
check "README configuration blocks found ($nb)" test "$nb" -ge 4

# -c takes a packet count, nothing else
for c in -5 0 abc 3x ""; do
	"$bin" -r "$tmp/g.pcap" -c "$c" -q 2>"$tmp/c.err" >/dev/null; rc=$?
	check "-c '$c' is refused (exit 2)" test "$rc" -eq 2
	check "-c '$c' says why" grep -q "is not a packet count" "$tmp/c.err"
done

# the input's options: what is wrong with them is a usage error (2, which
# a service manager does not restart), said before anything opens
printf 'event-report e { event = "int.latency" }\n' >"$tmp/one-rule.conf"
while IFS='|' read -r args msg; do
	# shellcheck disable=SC2086
	"$bin" $args -q >/dev/null 2>"$tmp/in.err"; rc=$?
	check "input options '$args': exit 2" test "$rc" -eq 2
	check "input options '$args': says why" grep -q -F "$msg" "$tmp/in.err"
done <<EOF
-u 70000|'70000': expected PORT or IPv4:PORT
-u localhost:5000|'localhost:5000': expected PORT or IPv4:PORT
-u 5000 -f udp|a BPF filter does not apply to a UDP input
-r $tmp/g.pcap -k 127.0.0.1:1/t|give one input: -r, -i, -u, -k or --dpdk
-u 5000 -k 127.0.0.1:1/t|give one input
EOF
if "$bin" -V | grep -q kafka; then
	while IFS='|' read -r args msg; do
		# shellcheck disable=SC2086
		"$bin" $args -q >/dev/null 2>"$tmp/in.err"; rc=$?
		check "input options '$args': exit 2" test "$rc" -eq 2
		check "input options '$args': says why" grep -q -F "$msg" "$tmp/in.err"
	done <<EOF
-k foo|'foo': expected BROKERS/TOPIC[@GROUP]
-k b/t@|'b/t@': expected BROKERS/TOPIC[@GROUP]
-k 127.0.0.1:1/t --kafka-property foo=bar|No such configuration property: "foo"
-k $(printf 'kafka-broker-%02d.prod.datacenter-east.example.com:9092,' 1 2 3 4 5 6)k:9092/t --kafka-property foo=bar|No such configuration property: "foo"
-k 127.0.0.1:1/t -w 2 -C $tmp/one-rule.conf|a Kafka input is read by one worker
EOF
fi
# and in a config's input section: -T refuses what a run would
printf 'input { mode = udp; source = "localhost:32766" }\n' >"$tmp/in1.conf"
"$bin" -T "$tmp/in1.conf" 2>"$tmp/in.err"; rc=$?
check "input source -T: exit 2 at its place" sh -c "[ $rc = 2 ] && grep -q 'in1.conf:1:30: error: .localhost:32766.: expected PORT or IPv4:PORT' '$tmp/in.err'"
printf 'input {\n  mode = udp\n  source = "32766"\n  filter = "udp"\n}\n' >"$tmp/in2.conf"
"$bin" -T "$tmp/in2.conf" 2>"$tmp/in.err"; rc=$?
check "input filter on UDP -T: exit 2 at its place" sh -c "[ $rc = 2 ] && grep -q 'in2.conf:4:12: error: a BPF filter does not apply to a UDP input' '$tmp/in.err'"

# a closed reader of standard output: its records dropped, counted, exit 3
"$bin" -C "$src/conf/examples/readme.conf" -r "$src/test/data/gen-rules-8.pcap" 2>"$tmp/pipe.err" | true
rc=$(sed -n 's/^intspect: [0-9]* channel(s) lost records.*exit status \([0-9]*\).*/\1/p' "$tmp/pipe.err")
check "a closed stdout reader: records counted dropped, exit status 3" sh -c \
	"grep -q 'channel stdout: [0-9]* records queued, 0 delivered, [1-9][0-9]* dropped' '$tmp/pipe.err' && [ '$rc' = 3 ]"
# -w past 64, -f with trailing filter words
"$bin" -w 65 -r "$tmp/g.pcap" -q 2>"$tmp/w.err"; rc=$?
check "-w 65 is refused (exit 2)" sh -c "[ $rc = 2 ] && grep -q '(1-64)' '$tmp/w.err'"
"$bin" -r "$tmp/g.pcap" -q -f udp udp 2>"$tmp/f.err"; rc=$?
check "-f and trailing filter words: refused (exit 2)" sh -c "[ $rc = 2 ] && grep -q 'not both' '$tmp/f.err'"
# a key given twice in a section: the last one wins (500 ms windows)
printf 'query-report q {\n  ms-period = 1000\n  select = {"count()"}\n  ms-period = 500\n}\n' >"$tmp/twice.conf"
"$bin" -C "$tmp/twice.conf" -r "$src/test/data/gen-rules-8.pcap" 2>/dev/null >"$tmp/twice.out"
check "a key given twice: the last one wins" python3 -c "
import json, sys
w = [json.loads(l) for l in open(sys.argv[1])]
assert w and all(round(r['window_end'] - r['window_start'], 6) == 0.5 for r in w), w" "$tmp/twice.out"

# -o int.in-reports: INT in a report's packet by its shim (structural, the
# default) or only as outside reports (detect: this sink's DSCP is not
# INT's)
"$bin" -r "$src/test/data/report-v0.5-int-v0.5-tcp.pcap" --dump 2>/dev/null | head -1 >"$tmp/ir1"
"$bin" -r "$src/test/data/report-v0.5-int-v0.5-tcp.pcap" --dump -o int.in-reports=detect 2>/dev/null |
	head -1 >"$tmp/ir2"
check "int.in-reports: structural finds the report's INT, detect does not" sh -c \
	"grep -q '\"meta.proto_hierarchy\":\"eth.ip.udp.int_report.eth.ip.tcp.int\"' '$tmp/ir1' &&
	 grep -q '\"meta.proto_hierarchy\":\"eth.ip.udp.int_report.eth.ip.tcp\"' '$tmp/ir2'"

# the carriers' options (README, "Protocol options"): each changes what
# its capture decodes as; -o is repeatable, the last value given wins; a
# port given to one protocol is taken from the one that had it
hier() {        # CAPTURE OPTIONS...: each distinct hierarchy with its count
	cap=$1; shift
	"$bin" -r "$src/test/data/$cap" --dump "$@" 2>/dev/null |
		sed -n 's/.*"meta.proto_hierarchy":"\([^"]*\)".*/\1/p' | sort | uniq -c |
		awk '{ printf "%s %s;", $1, $2 }'
}
while IFS='|' read -r cap opts want; do
	# shellcheck disable=SC2086
	got=$(hier "$cap" $opts)
	check "${opts:-the defaults} on $cap: $want" test "$got" = "$want"
done <<EOF
gen-int-v2.1-geneve.pcap||6 eth.ip.udp.geneve.int.eth.ip.udp;
gen-int-v2.1-geneve.pcap|-o geneve.int-class=0x0104|6 eth.ip.udp.geneve.eth.ip.udp;
gen-int-v2.1-geneve.pcap|-o geneve.int-class=0x0104 -o geneve.int-class=0x0103|6 eth.ip.udp.geneve.int.eth.ip.udp;
gen-int-v2.1-geneve.pcap|-o geneve.udp-ports=1|6 eth.ip.udp;
gen-int-v2.1-gre.pcap||6 eth.ip.gre.int.ip.udp;
gen-int-v2.1-gre.pcap|-o gre.int-proto=0x1234|6 eth.ip.gre;
gen-int-v2.1-gpe.pcap||6 eth.ip.udp.vxlan_gpe.int.eth.ip.udp;
gen-int-v2.1-gpe.pcap|-o vxlan_gpe.udp-ports=1|6 eth.ip.udp;
gen-int-v2.1-gpe.pcap|-o vxlan.udp-ports=4790|6 eth.ip.udp.vxlan.eth;
gen-int-v2.1-gpe.pcap|-o vxlan.udp-ports=4790 -o vxlan_gpe.udp-ports=4790|6 eth.ip.udp.vxlan_gpe.int.eth.ip.udp;
gen-int-v1.0-tcp.pcap|-o int.dscp=none|6 eth.ip.tcp;
gen-int-v1.0-tcp.pcap|-o int.dscp=none -o int.tcp-ports=5007|4 eth.ip.tcp;2 eth.ip.tcp.int;
EOF

# intgen(1): the same seed, the same bytes; its exit statuses; combinations
# the specs do not have refused with the reason
gen="$bld/intgen"
"$gen" -o "$tmp/s1.pcap" -n 50 --seed 9 2>/dev/null && "$gen" -o "$tmp/s2.pcap" -n 50 --seed 9 2>/dev/null
check "intgen: one seed, one capture" cmp -s "$tmp/s1.pcap" "$tmp/s2.pcap"
"$gen" -o "$tmp/s3.pcap" -n 50 --seed 10 2>/dev/null
check "intgen: another seed, another capture" sh -c "! cmp -s '$tmp/s1.pcap' '$tmp/s3.pcap'"
"$gen" -o /nonexistent/dir/x.pcap -n 1 2>/dev/null; rc=$?
check "intgen: an output it cannot write, exit 1" test "$rc" -eq 1
"$gen" -o "$tmp/x.pcap" --no-such-option 2>/dev/null; rc=$?
check "intgen: a bad option, exit 2" test "$rc" -eq 2
while IFS='|' read -r args msg; do
	# shellcheck disable=SC2086
	"$gen" -o "$tmp/x.pcap" -n 1 $args 2>"$tmp/g.err"; rc=$?
	check "intgen $args: refused (exit 2)" sh -c "[ $rc = 2 ] && grep -q -F -e '$msg' '$tmp/g.err'"
done <<EOF
--int-version 1.0 --transport gre|INT over GRE and Geneve exists from --int-version 2.0 on
--coalesce 2 --format report --report-version 1.0|--coalesce needs --report-version 2.0
--format report --report-version 2.0 --rep-md-bits 0x8000|bit 0 (0x8000) is reserved
EOF

# numbers that strtoul would bend: refused
"$bin" -w +3 -r "$tmp/g.pcap" -q 2>"$tmp/w.err"; rc=$?
check "-w '+3' is refused (exit 2)" sh -c "[ $rc = 2 ] && grep -q 'is not a number of workers' '$tmp/w.err'"
for t in 70000 abc 127.0.0.1:; do
	"$bld/intspect-ctl" -t "$t" stats 2>"$tmp/t.err"; rc=$?
	check "intspect-ctl -t '$t' is refused (exit 2)" sh -c "[ $rc = 2 ] && grep -q 'expected \[IPv4-ADDRESS:\]PORT' '$tmp/t.err'"
done

# a stop while a pipe's writer is silent (tcpdump -w - | intspect -r -):
# intspect stops at once, not at the writer's next packet
mkfifo "$tmp/quiet.fifo"
"$bin" -r "$tmp/quiet.fifo" -q >/dev/null 2>"$tmp/quiet.err" &
qpid=$!
exec 4>"$tmp/quiet.fifo"
head -c 24 "$tmp/g.pcap" >&4    # the file header, then nothing
sleep 1
kill -TERM "$qpid"
i=0
while kill -0 "$qpid" 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
stopped=$(kill -0 "$qpid" 2>/dev/null && echo no || echo yes)
exec 4>&-
wait "$qpid"; rc=$?
check "a silent pipe: SIGTERM stops intspect within 3 s, exit 0" test "$stopped $rc" = "yes 0"

# -V names every optional part compiled in, with its library's version
"$bin" -V >"$tmp/v"
for part in 'libpcap version [0-9]' 'redis output: hiredis [0-9][0-9.]*, TLS with OpenSSL [0-9]' \
	'kafka output: librdkafka [0-9]' 'kafka input: librdkafka [0-9]' \
	'dpdk input: (DPDK [0-9]|not built \(--disable-dpdk)'; do
	check "-V: $part" grep -q -E "^  $part" "$tmp/v"
done

# exit status: 3 when a channel dropped records or never connected
# (a TCP reader that never listens), 0 with --allow-drops; a channel
# disabled on purpose is not a loss
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat >"$tmp/lost.conf" <<EOF
socket-output dead { type = tcp; hostname = "127.0.0.1"; port = $port; shutdown-ms = 200; connect-timeout-ms = 50 }
event-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {dead} }
EOF
"$bin" -C "$tmp/lost.conf" -r "$src/test/data/gen-rules-8.pcap" >/dev/null 2>"$tmp/lost.err"; rc=$?
check "records lost: exit 3" test "$rc" -eq 3
check "records lost: said" grep -q "lost records or never connected: exit status 3" "$tmp/lost.err"
check "never connected: said" grep -q "channel dead: never connected" "$tmp/lost.err"
"$bin" --allow-drops -C "$tmp/lost.conf" -r "$src/test/data/gen-rules-8.pcap" >/dev/null 2>&1; rc=$?
check "--allow-drops: exit 0" test "$rc" -eq 0
# channels drain side by side: two readers that never listen, shutdown-ms
# 1500 each, end together (1.5 s, not 3)
printf 'socket-output d1 { type = tcp; hostname = "127.0.0.1"; port = %s; shutdown-ms = 1500; connect-timeout-ms = 50 }\nsocket-output d2 { type = tcp; hostname = "127.0.0.1"; port = %s; shutdown-ms = 1500; connect-timeout-ms = 50 }\nevent-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {d1, d2} }\n' \
	"$port" "$port" >"$tmp/two.conf"
t0=$(date +%s%N)
"$bin" -C "$tmp/two.conf" -r "$src/test/data/gen-rules-8.pcap" >/dev/null 2>&1
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "two channels drain side by side: 1.5 s each, $ms ms in all" test "$ms" -ge 1400 -a "$ms" -lt 2800
sed 's/shutdown-ms = 200;/shutdown-ms = 200; enable = false;/' "$tmp/lost.conf" >"$tmp/off.conf"
"$bin" -C "$tmp/off.conf" -r "$src/test/data/gen-rules-8.pcap" >/dev/null 2>&1; rc=$?
check "a disabled channel: exit 0" test "$rc" -eq 0
printf 'socket-output dead { type = tcp; hostname = "127.0.0.1"; port = %s; connect-timeout-ms = 50 }\nevent-report e { event = "int.num_hop"; where = "int.num_hop > 1000"; output-channel = {dead} }\n' "$port" >"$tmp/idle.conf"
"$bin" -C "$tmp/idle.conf" -r "$src/test/data/gen-rules-8.pcap" >/dev/null 2>"$tmp/idle.err"; rc=$?
check "no record, reader never listening: exit 3" test "$rc" -eq 3

# --forward from a file with no broker: it waits the channel's 5 s, then
# counts every datagram dropped, exit 3
if "$bin" -V | grep -q 'kafka output: librdkafka'; then
	t0=$(date +%s)
	"$bin" -r "$src/test/data/gen-report-v2.0-coalesced.pcap" --forward kafka:127.0.0.1:1/t \
		--control none >/dev/null 2>"$tmp/fwd.err"; rc=$?
	secs=$(($(date +%s) - t0))
	check "--forward with no broker: 4 datagrams dropped, exit 3, within 15 s ($secs s)" sh -c \
		"[ $rc = 3 ] && [ $secs -lt 15 ] && grep -q '^intspect: forward: 4 datagrams queued, 0 acknowledged by the broker, 4 dropped' '$tmp/fwd.err'"
fi

# reports are recognised by destination port: a datagram from port 6000 is
# plain UDP, one to port 6000 that is not a report is counted apart
python3 - "$tmp/ports.pcap" <<'EOF'
import struct, sys
def pkt(sport, dport, payload):
    udp = struct.pack('>HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])) + udp
    return b'\x02' * 6 + b'\x04' * 6 + b'\x08\x00' + ip
out = struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
payload = bytes([0x50]) + bytes(40)     # version 5: no report version
for i, (sp, dp) in enumerate([(6000, 40000), (40000, 6000), (6000, 40001)]):
    d = pkt(sp, dp, payload)
    out += struct.pack('<IIII', 1700000000 + i, 0, len(d), len(d)) + d
open(sys.argv[1], 'wb').write(out)
EOF
"$bin" -r "$tmp/ports.pcap" -q 2>"$tmp/ports.err" >/dev/null; rc=$?
check "datagrams on report ports: exit 0" test "$rc" -eq 0
check "datagrams on report ports: none malformed" grep -q '^intspect: 3 packets .* 0 malformed, int 0, int_report 0$' "$tmp/ports.err"
check "a datagram to port 6000 that is no report is counted apart" \
	grep -q '^intspect: int_report: 1 packets to its ports were something else' "$tmp/ports.err"
"$bin" -r "$tmp/ports.pcap" --dump 2>/dev/null | grep -c '"meta.proto_hierarchy":"eth.ip.udp"' >"$tmp/ports.n"
check "all three dump as plain UDP" test "$(cat "$tmp/ports.n")" -eq 3

# setup.sh: the demo installs what building needs, the tests add theirs
demo_pk=$(sh "$src/setup.sh" packages demo)
test_pk=$(sh "$src/setup.sh" packages test)
for p in check clang valgrind redis-server openjdk-17-jre-headless maven kcat socat tcpreplay libdpdk-dev; do
	check "setup.sh demo does not install $p" sh -c "! echo ' $demo_pk ' | grep -q ' $p '"
	check "setup.sh test installs $p" sh -c "echo ' $test_pk ' | grep -q ' $p '"
done
for p in $demo_pk; do
	check "setup.sh test installs $p too" sh -c "echo ' $test_pk ' | grep -q ' $p '"
done

# a table that would pass the 32 GiB its 4-byte references reach: a bad
# config (exit 2), refused at start and by -T, naming the rule and the
# setting to lower
printf '%s\n' 'query-report huge {' ' select = {"count()"}' \
	' group-by = {"int.hop_switch_ids", "int.hop_latencies", "int.hop_queue_occups",' \
	'  "int.hop_ingress_times", "int.hop_egress_times"}' ' max-groups = 67108864' '}' >"$tmp/huge.conf"
"$bin" -C "$tmp/huge.conf" -r "$src/test/data/report-v0.5-int-v0.5-tcp.pcap" >/dev/null 2>"$tmp/huge.err"
check "a table past 32 GiB is refused (exit 2)" test $? -eq 2
check "a table past 32 GiB: the rule and the setting" \
	grep -q '^intspect: query-report huge: max-groups times .* 32 GiB .*: lower max-groups$' "$tmp/huge.err"
"$bin" -T "$tmp/huge.conf" >/dev/null 2>"$tmp/huge.err"
check "a table past 32 GiB is refused by -T (exit 2)" test $? -eq 2
check "-T: the rule and the setting" \
	grep -q "^$tmp/huge.conf: query-report huge: max-groups times .* 32 GiB .*: lower max-groups$" "$tmp/huge.err"
# a DTA store's directory that is not there: -T says it, as a run does
printf 'dta-store kv { type = key-write; file = "/nonexistent/dir/x.dta" }\n' >"$tmp/dtadir.conf"
"$bin" -T "$tmp/dtadir.conf" >/dev/null 2>"$tmp/dtadir.err"
check "-T: a DTA store's missing directory (exit 2)" sh -c "[ $? = 2 ] && grep -q 'dta-store kv: /nonexistent/dir: No such file or directory' '$tmp/dtadir.err'"

# --list-protocols: every option with its default
"$bin" --list-protocols >"$tmp/lp"
check "--list-protocols lists the report ports" grep -q -- '-o int_report.udp-ports=P,.* (default 1234,5900,6000,8090,9555,32766,54321)$' "$tmp/lp"
check "--list-protocols: every option says its default" \
	sh -c "! grep -- '-o ' '$tmp/lp' | grep -v -q 'default'"
echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
