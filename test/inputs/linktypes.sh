#!/bin/sh
# Link types other than Ethernet. Each test/data/gen-linktype-NAME.pcap
# (written by test/tools/gen_linktypes.py) holds the packets of Ethernet
# captures under another link header; its dump, with the link layer set
# aside (test/tools/linkstrip.py), must equal the originals', read mapped
# and through libpcap (standard input: DLT_ values). Also: the link
# layers' own attributes, BPF filters (mapped = libpcap), the DLT_RAW
# values in a file header, and an unsupported link type.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
data=$src/test/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
strip() { python3 "$src/test/tools/linkstrip.py" "$1"; }
clean() { ! grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$1"; }

V4=int-v2.1-md-udp V6=gen-int-v2.1-ipv6 REP=report-v0.5-int-v0.5-tcp
for s in $V4 $V6 $REP; do
	"$bin" -r "$data/$s.pcap" --dump 2>/dev/null | strip 14 >"$tmp/$s"
done

# NAME, link header length ("-": no link layer), the captures it was made
# of (as gen_linktypes.py makes them)
while read -r name hlen sources; do
	f=$data/gen-linktype-$name.pcap
	: >"$tmp/want"
	for s in $sources; do cat "$tmp/$s" >>"$tmp/want"; done
	"$bin" -r "$f" --dump 2>"$tmp/err" >"$tmp/dump"
	check "$name: clean run" clean "$tmp/err"
	check "$name: nothing malformed" grep -q ' 0 malformed' "$tmp/err"
	strip "$hlen" <"$tmp/dump" >"$tmp/got"
	if [ -s "$tmp/got" ] && cmp -s "$tmp/want" "$tmp/got"; then
		ok "$name: attributes equal the Ethernet originals'"
	else
		bad "$name: attributes differ from the Ethernet originals'"
		diff "$tmp/want" "$tmp/got" | head -4
	fi
	"$bin" -r - --dump <"$f" 2>/dev/null >"$tmp/stdin"
	check "$name: through libpcap as mapped" cmp -s "$tmp/dump" "$tmp/stdin"
	for flt in ip ip6; do
		"$bin" -r "$f" -q "$flt" 2>&1 >/dev/null | head -1 >"$tmp/fm"
		"$bin" -r - -q "$flt" <"$f" 2>&1 >/dev/null | head -1 >"$tmp/fs"
		check "$name: filter '$flt' mapped as through libpcap" cmp -s "$tmp/fm" "$tmp/fs"
	done
done <<LIST
sll 16 $V4 $V6 $REP
sll2 20 $V4 $V6 $REP
raw 0 $V4 $V6 $REP
ipv4 - $V4 $REP
ipv6 - $V6
null-le 4 $V4 $V6 $REP
null-be 4 $V4 $V6 $REP
loop 4 $V4 $V6 $REP
LIST

# the link layers' own attributes (values gen_linktypes.py wrote)
has() { "$bin" -r "$data/gen-linktype-$1.pcap" --dump 2>/dev/null | grep -q "$2"; }
check "sll: hierarchy" has sll '"meta.proto_hierarchy":"sll.ip.udp.int"'
check "sll: fields" has sll '"sll.pkttype":4,"sll.hatype":1,"sll.halen":6,"sll.addr":"02:00:00:00:00:07","sll.protocol":34525'
check "sll2: fields" has sll2 '"sll2.protocol":2048,"sll2.ifindex":7,"sll2.hatype":1,"sll2.pkttype":0,"sll2.halen":6,"sll2.addr":"00:00:00:00:00:00"'
check "raw: IPv6 by its version" has raw '"meta.proto_hierarchy":"raw.ipv6.udp.int","raw.version":6'
check "ipv4: hierarchy" has ipv4 '"meta.proto_hierarchy":"ip.udp.int_report.eth.ip.tcp.int"'
check "null: little-endian AF_INET6 of macOS" has null-le '"null.family":30'
check "null: little-endian AF_INET6 of Linux" has null-le '"null.family":10'
check "null: big-endian AF_INET6 of FreeBSD" has null-be '"null.family":28'
check "null: big-endian AF_INET" has null-be '"null.family":2,'
check "loop: AF_INET6 of OpenBSD" has loop '"loop.family":24'

# a filter reaches the packets of its protocol whatever the link
count() { "$bin" -r "$data/gen-linktype-$1.pcap" -q "$2" 2>&1 >/dev/null | sed -n 's/^intspect: \([0-9]*\) packets.*/\1/p'; }
check "raw: filter ip6 keeps 4" test "$(count raw ip6)" = 4
check "sll2: filter 'udp port 1234' keeps the report" test "$(count sll2 'udp port 1234')" = 1
check "null-be: filter ip keeps 2 (file in the other byte order)" test "$(count null-be ip)" = 2
check "loop: filter ip6 keeps 4" test "$(count loop ip6)" = 4

# a header that says DLT_RAW (12; 14 on OpenBSD) is raw IP too
"$bin" -r "$data/gen-linktype-raw.pcap" --dump >"$tmp/raw" 2>/dev/null
for lt in 12 14; do
	python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[20] = $lt; open(sys.argv[2], 'wb').write(b)" \
		"$data/gen-linktype-raw.pcap" "$tmp/raw$lt.pcap"
	"$bin" -r "$tmp/raw$lt.pcap" --dump >"$tmp/raw$lt" 2>/dev/null
	check "link type $lt in the file is LINKTYPE_RAW" cmp -s "$tmp/raw" "$tmp/raw$lt"
done

# a link type no plugin decodes is an error that names it
python3 -c "import sys; b = bytearray(open(sys.argv[1], 'rb').read()); b[20] = 147; open(sys.argv[2], 'wb').write(b)" \
	"$data/gen-linktype-raw.pcap" "$tmp/user0.pcap"
"$bin" -r "$tmp/user0.pcap" -q 2>"$tmp/e" >/dev/null; rc=$?
check "unsupported link type: exit status" test "$rc" -ne 0
check "unsupported link type: message" grep -q 'link type .*(147) is not supported' "$tmp/e"

echo "linktypes: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
