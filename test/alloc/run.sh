#!/bin/sh
# No heap allocation per packet: valgrind counts the allocations of a
# decode-only run, a --dump run and two rule sets (query and event reports
# to stdout, 16 flows) on 1,000 and on 100,000 generated packets; the
# counts must be equal. Needs a build without sanitizers.
# usage: test/alloc/run.sh BUILD_DIR
set -eu
bld=${1:-build/rel}
if ! command -v valgrind >/dev/null 2>&1; then
	echo "alloc: valgrind not installed, skipped"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bld/intgen" -o "$tmp/small.pcap" -n 1000 --format report --report-version 2.0 --coalesce 2 \
	--flows 16 --pps 100000
"$bld/intgen" -o "$tmp/large.pcap" -n 100000 --format report --report-version 2.0 --coalesce 2 \
	--flows 16 --pps 100000
src=$(cd "$(dirname "$0")/../.." && pwd)
allocs() {
	valgrind "$bld/intspect" -r "$1" $2 2>&1 >/dev/null |
		sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
fail=0
for mode in -q --dump "-C $src/conf/intspect.conf" "-C $src/test/rules/golden/keepalive.conf"; do
	a=$(allocs "$tmp/small.pcap" "$mode")
	b=$(allocs "$tmp/large.pcap" "$mode")
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		echo "ok alloc $mode: $a allocations for 1,000 and for 100,000 packets"
	else
		echo "FAIL alloc $mode: $a allocations for 1,000 packets, $b for 100,000"
		fail=$((fail + 1))
	fi
done
echo "alloc: $((4 - fail)) passed, $fail failed"
exit $fail
