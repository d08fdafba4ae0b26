#!/bin/sh
# test/scaleout/windows.sh - partial windows (output-format = partial)
# that travel more than their groups' states, merged by intspect --merge
# from 3 instances split by flow (the first on 2 workers for whole):
# byte for byte the records of one instance on the whole capture.
#
#   diffends  sum, avg, count and rate of diff() carried as the window's
#             ends
#   whole     ms-period = 0: the window's bounds are the first and last
#             packet times (checked against the capture's own,
#             test/tools/pcap_times.py), rate() per that span; the merge's
#             are the instances' earliest and latest
#   whole-shared  the same on 2 workers with 11,842 groups, written by
#             both workers in slices: one worker's records
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
gen=$bld/intgen

tmp=$(mktemp -d "${TMPDIR:-/tmp}/intspect-windows.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM

pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
sanitized() {   # FILE...: a sanitizer said something
	grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer|ThreadSanitizer' "$@" 2>/dev/null
}
file_out() { echo "file-output out { path = \"$1\" }"; }

# the capture of run.sh (unavailable hop values among its reports)
"$gen" -o "$tmp/a.pcap" -n 20000 --seed 1 --hops 1-6 --bitmap 0xFC00 --flows 64 --pps 20000 --unavailable \
	>/dev/null || { echo "FAIL intgen"; exit 1; }

# ---- diffends: sum, avg, count and rate of diff() travel as the window's
# ends (dsl/README.md): 3 instances, split by flow, each group's packets
# on all of them; their merge must give one instance's records
diff_rules() {  # OUTPUT-FORMAT-LINE CHANNEL-SECTION
	cat <<EOF
$2
query-report qd {
  ms-period = 100
  select = {"count()", "avg(diff(meta.timestamp))", "sum(diff(int.latency))",
            "count(diff(int.hop_latencies))", "avg(diff(int.hop_latencies))",
            "rate(diff(int.latency))"}
  group-by = {"int.num_hop"}
  output-channel = {out}
  $1
}
EOF
}
# three_merged NAME P RULES-FN W: the reference ($tmp/${P}single.json)
# and the merge ($tmp/${P}merged.json) of 3 instances split by flow, the
# first on W workers (partials $tmp/${P}p0.json ...); true when the merge
# said nothing of a sanitizer and wrote the reference's records
three_merged() {
	name=$1 p=$2 fn=$3 w0=$4
	"$fn" "" "$(file_out "$tmp/${p}single.json")" >"$tmp/${p}single.conf"
	"$fn" "" "$(file_out "$tmp/${p}merged.json")" >"$tmp/${p}merge.conf"
	"$bin" -r "$tmp/a.pcap" -C "$tmp/${p}single.conf" 2>/dev/null || bad "$name" "reference run"
	for k in 0 1 2; do
		{ "$fn" "output-format = partial" "$(file_out "$tmp/${p}p$k.json")"; echo "probe-id = $((k + 1))"; } \
			>"$tmp/${p}p$k.conf"
		w=1; [ "$k" = 0 ] && w=$w0
		"$bin" -r "$tmp/a.pcap" -C "$tmp/${p}p$k.conf" -w "$w" "ip[15] % 3 = $k" 2>/dev/null ||
			bad "$name" "instance $k"
	done
	"$bin" -C "$tmp/${p}merge.conf" --merge "$tmp/${p}p0.json" --merge "$tmp/${p}p1.json" \
		--merge "$tmp/${p}p2.json" 2>"$tmp/$name.err"
	if sanitized "$tmp/$name.err" || ! cmp -s "$tmp/${p}single.json" "$tmp/${p}merged.json"; then
		sed 's/^/# /' "$tmp/$name.err"
		diff "$tmp/${p}single.json" "$tmp/${p}merged.json" | head -4 | sed 's/^/# /'
		return 1
	fi
}
if three_merged diffends d diff_rules 1 && [ -s "$tmp/dsingle.json" ] &&
	grep -q '"avg(diff(int.hop_latencies))":\[' "$tmp/dsingle.json" && grep -q '"o1":' "$tmp/dp0.json"; then
	ok diffends
else
	bad diffends "merged records differ from one instance's"
fi

# ---- whole: ms-period = 0, one window for the whole input, which its
# records give as the times of the first and last packets it counted: the
# merge of 3 instances (one on 2 workers) takes the earliest and latest of
# theirs, so its records are one instance's, bounds and rate() included
whole_rules() { # OUTPUT-FORMAT-LINE CHANNEL-SECTION
	cat <<EOF
$2
query-report qw {
  ms-period = 0
  select = {"count()", "rate()", "avg(int.latency)", "max(int.hop_latencies)"}
  group-by = {"int.num_hop"}
  output-channel = {out}
  $1
}
EOF
}
three_merged whole w whole_rules 2
merged=$?
# the reference's bounds, against the capture's own first and last times
# shellcheck disable=SC2046
python3 - "$tmp/wsingle.json" $(python3 "$src/test/tools/pcap_times.py" "$tmp/a.pcap") \
	>"$tmp/whole.out" 2>&1 <<'PYEOF'
import json, sys
npk, lo, hi = (int(a) for a in sys.argv[2:5])
rs = [json.loads(l) for l in open(sys.argv[1])]
assert rs and sum(r["count()"] for r in rs) == npk, (len(rs), npk)
for r in rs:
    assert round(r["window_start"] * 1e6) == lo, (r["window_start"], lo)
    assert round(r["window_end"] * 1e6) == hi, (r["window_end"], hi)
    assert abs(r["rate()"] - r["count()"] / ((hi - lo) / 1e6)) < 1e-6 * r["rate()"], r
print("%d groups, window [%d, %d] us" % (len(rs), lo, hi))
PYEOF
if [ $? = 0 ] && [ "$merged" = 0 ] && grep -q '"seen_lo":' "$tmp/wp0.json"; then
	ok "whole ($(cat "$tmp/whole.out"))"
else
	bad whole "$(cat "$tmp/whole.out")"
fi

# ---- whole-shared: a whole-input window of 11,842 groups (by latency) on
# 2 workers, whose records every worker writes a slice of (more than 4,096
# groups: query_share.c): one worker's records, bounds and rates included
printf 'query-report qs {\n  ms-period = 0\n  select = {"count()", "rate()"}\n  group-by = {"int.latency"}\n  output-channel = {stdout}\n}\n' \
	>"$tmp/shared.conf"
"$bin" -r "$tmp/a.pcap" -C "$tmp/shared.conf" -w 1 >"$tmp/shared1.json" 2>"$tmp/shared1.err"
rc1=$?
"$bin" -r "$tmp/a.pcap" -C "$tmp/shared.conf" -w 2 >"$tmp/shared2.json" 2>"$tmp/shared2.err"
rc2=$?
# shellcheck disable=SC2046
set -- $(python3 "$src/test/tools/pcap_times.py" "$tmp/a.pcap")
groups=$(wc -l <"$tmp/shared1.json")
if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && ! sanitized "$tmp/shared1.err" "$tmp/shared2.err" &&
	[ "$groups" -gt 4096 ] && cmp -s "$tmp/shared1.json" "$tmp/shared2.json" &&
	[ "$(grep -c "\"window_start\":$(($2 / 1000000)).$(printf %06d $(($2 % 1000000))),\"window_end\":$(($3 / 1000000)).$(printf %06d $(($3 % 1000000)))," "$tmp/shared2.json")" = "$groups" ]; then
	ok "whole-shared ($groups groups)"
else
	bad whole-shared "exits $rc1 $rc2, $groups groups, or records of 2 workers differ, or a window is not [$2, $3] us"
	sed 's/^/# /' "$tmp/shared2.err"
fi

echo "windows: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
