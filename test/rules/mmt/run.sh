#!/bin/sh
# A whole MMT-Probe configuration (mmt-probe.conf: every section and key of
# MMT-Probe 1.6's reference file) runs unchanged:
#   - `intspect -T` accepts it and names, one warning each, the sections
#     outside intspect's job, the ignored global settings and the MongoDB
#     channel;
#   - a run with no option but -C reads the capture its input section names,
#     writes MMT-Probe's CSV rows to the file output's directory, named and
#     marked as MMT-Probe names them (<sec>.<usec>_0_data.csv + .sem), and
#     the rows are expected.csv: derived by hand from the 8 packets of
#     gen-rules-8 (see expected.csv's comment in this script).
set -u
src=${top_srcdir:-.}
bin=${top_builddir:-.}/intspect
here=$src/test/rules/mmt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }

pcap=$tmp/trace.pcap
cp "$src/test/data/gen-rules-8.pcap" "$pcap"
mkdir "$tmp/out"
sed "s#@PCAP@#$pcap#; s#@DIR@#$tmp/out#" "$here/mmt-probe.conf" >"$tmp/mmt-probe.conf"

# ---- -T: valid, with its warnings
"$bin" -T "$tmp/mmt-probe.conf" >"$tmp/t.out" 2>"$tmp/t.err"; rc=$?
check "-T accepts the whole file" test "$rc" -eq 0
check "-T says ok" grep -q ': 1 event reports, 1 query reports, .*: ok$' "$tmp/t.out"
for s in session-report micro-flows security "reconstruct-data ftp" "reconstruct-data http" \
	radius-report mongodb-output mqtt-output dynamic-config system-report behaviour \
	dump-pcap session-timeout data-output; do
	n=$(grep -c "warning: section '$s' ignored" "$tmp/t.err")
	check "-T: one warning for $s" test "$n" -eq 1
done
check "-T: ignored global settings named" grep -q \
	"warning: MMT-Probe settings ignored .*: license, enable-report-version-info, stats-period, thread-queue, logfile, loglevel" \
	"$tmp/t.err"
check "-T: the mongodb channel named" grep -q "warning: channel 'mongodb' ignored" "$tmp/t.err"
check "-T: no error" sh -c "! grep -q 'error:' '$tmp/t.err'"
check "-T: a disabled rule's unknown protocol is a warning" grep -q \
	"warning: in a disabled rule: unknown protocol 'arp' in 'arp.ar_hln'" "$tmp/t.err"
check "-T: meta.utime, MMT-DPI's packet time, is known" sh -c "! grep -q utime '$tmp/t.err'"
check "-T: warnings are one line each" test "$(grep -c . "$tmp/t.err")" -eq 18
check "-T creates no file" test -z "$(ls "$tmp/out")"

# ---- the run
"$bin" -C "$tmp/mmt-probe.conf" >"$tmp/run.out" 2>"$tmp/run.err"; rc=$?
check "run exits 0" test "$rc" -eq 0
check "run: no sanitizer report" sh -c "! grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' '$tmp/run.err'"
check "run: the input section's capture is read" grep -q "^intspect: 8 packets" "$tmp/run.err"
check "run: nothing on standard output" test ! -s "$tmp/run.out"
files=$(ls "$tmp/out" | grep -v '\.sem$')
check "run: one data file" test "$(echo "$files" | grep -c .)" -eq 1
check "run: named <sec>.<usec>_0_data.csv" sh -c "echo '$files' | grep -q -E '^[0-9]+\.[0-9]{6}_0_data\.csv$'"
check "run: marked with .sem" test -e "$tmp/out/$files.sem"
sed "s#@PCAP@#$pcap#" "$here/expected.csv" >"$tmp/expected.csv"
if cmp -s "$tmp/expected.csv" "$tmp/out/$files"; then
	ok "run: MMT-Probe's rows"
else
	bad "run: MMT-Probe's rows"
	diff -u "$tmp/expected.csv" "$tmp/out/$files"
fi

# ---- the cells before and after a row's time are made once per report:
# the source quoted as MMT-Probe's consumers read it (a quote doubled), a
# source too long to keep written each time, two reports on one engine
long=$(printf 'p%.0s' $(seq 1 300))
for src_name in 'lab "east" probe' "$long"; do
	cat >"$tmp/head.conf" <<CONF
probe-id = 7
source-name = "$(printf '%s' "$src_name" | sed 's/"/\\"/g')"
event-report one { event = "ip.src"; attributes = {"ip.src"}; output-channel = {stdout}; output-format = csv }
event-report two { event = "ip.dst"; attributes = {"ip.dst"}; output-channel = {stdout}; output-format = csv }
CONF
	"$bin" -r "$pcap" -C "$tmp/head.conf" >"$tmp/head.out" 2>"$tmp/head.err"
	SRC=$src_name python3 - "$tmp/head.out" >"$tmp/head.check" 2>&1 <<'PY'
import csv, os, sys
rows = list(csv.reader(open(sys.argv[1])))
want = os.environ["SRC"]
assert len(rows) == 16, len(rows)
for i, r in enumerate(rows):
    assert r[0] == "1000" and r[1] == "7" and r[2] == want, r[:3]
    assert r[4] == ("one", "two")[i % 2], r
    sec, us = r[3].split(".")
    assert sec.isdigit() and len(us) == 6 and us.isdigit(), r[3]
print("ok")
PY
	check "CSV head cells: source of ${#src_name} characters" grep -q '^ok$' "$tmp/head.check"
done

# meta.utime is meta.timestamp (microseconds in expressions, as diff of
# MMT-DPI's timeval)
printf 'query-report u { select = {"avg(diff(meta.utime))", "avg(diff(meta.timestamp))", "last(meta.utime)", "last(meta.timestamp)"}; output-format = csv }\n' >"$tmp/ut.conf"
"$bin" -C "$tmp/ut.conf" -r "$pcap" 2>/dev/null | awk -F, '$7 != $8 || $9 != $10 || $7 != "250000.000" { bad = 1 } END { exit bad || NR != 2 }'
check "meta.utime: the same values as meta.timestamp (250 ms apart: 250000 us)" test $? -eq 0

echo "mmt: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
