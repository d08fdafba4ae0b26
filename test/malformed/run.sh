#!/bin/sh
# test/malformed/run.sh - the generated malformed corpus (malformed.c) over
# every test capture and the fuzz seed frames. A capture whose golden test
# takes options (test/golden/NAME.args, e.g. -o dta.sequence=no) is cut
# with them, in a run of its own.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
plain=""
status=0
for f in "$src"/test/data/*.pcap "$src"/test/data/*.pcapng; do
	args="$src/test/golden/$(basename "$f" .pcap).args"
	if [ -f "$args" ]; then
		# shellcheck disable=SC2046
		"$bld/test/malformed/malformed" $(cat "$args") "$f" || status=1
	else
		plain="$plain $f"
	fi
done
# shellcheck disable=SC2086
"$bld/test/malformed/malformed" $plain "$src/test/fuzz/corpus/dissect" >"${TMPDIR:-/tmp}/malformed.$$" || status=1
cat "${TMPDIR:-/tmp}/malformed.$$"
# the field mutations skip what has no such header: the main run must
# have had each kind
for kind in "INT header fields" "telemetry report fields" "carrier length fields" "DTA fields"; do
	grep -q "^ok $kind" "${TMPDIR:-/tmp}/malformed.$$" ||
		{ echo "FAIL $kind: not run (no such header in the captures?)"; status=1; }
done
rm -f "${TMPDIR:-/tmp}/malformed.$$"
exit $status
