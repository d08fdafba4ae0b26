#!/bin/sh
# test/rules/timestamp/run.sh - `timestamp` of event reports and metrics:
# what stamps a record. Five rules fire on every item (check.py says which
# time each takes) over captures whose encoded values intgen wrote down:
#   report v2.0 (8-byte report and hop times), inline INT-MD v1.0 (4-byte
#   hop times, widened into the capture time's epoch; 1 hop value in 50
#   unavailable: the capture time), INT v0.5 reports;
# in line protocol (ns) and JSON ("time": the same, to the microsecond);
# a metrics block's records stamped as its timestamp says; -T refuses an
# unknown word with its position and a did-you-mean.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"
here=$src/test/rules/timestamp

rules() {
	cat <<CONF
file-output lp { path = "$tmp/$1.lp"; format = influx }
event-report cap { event = "int.latency"; attributes = {"int.latency"}; output-channel = {lp, stdout} }
event-report rep { event = "int.latency"; timestamp = "report"; attributes = {"int.latency"}; output-channel = {lp, stdout} }
event-report ing { event = "int.latency"; timestamp = "ingress"; attributes = {"int.latency"}; output-channel = {lp, stdout} }
event-report egr { event = "int.latency"; timestamp = "egress"; attributes = {"int.latency"}; output-channel = {lp, stdout} }
event-report hop { event = "int.hop_latencies"; per-hop = true; timestamp = "egress"
  attributes = {"int.hop_latencies"}; output-channel = {lp, stdout} }
CONF
}

run_case() {        # NAME INTGEN-ARGS...
	name=$1
	shift
	"$bld/intgen" -o "$tmp/$name.pcap" -e "$tmp/$name.jsonl" -n 300 "$@" >/dev/null 2>&1 ||
		{ bad "$name: intgen"; return; }
	rules "$name" >"$tmp/$name.conf"
	"$bld/intspect" -C "$tmp/$name.conf" -r "$tmp/$name.pcap" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
		{ bad "$name: intspect" "$tmp/$name.err"; return; }
	if python3 "$here/check.py" "$tmp/$name.jsonl" "$tmp/$name.lp" >"$tmp/$name.out" 2>&1; then
		ok "$name: $(cat "$tmp/$name.out")"
	else
		bad "$name" "$tmp/$name.out"
	fi
	# JSON "time" is the same time, in seconds to the microsecond
	python3 - "$tmp/$name.json" "$tmp/$name.lp" >"$tmp/$name.time" 2>&1 <<'PY'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
lp = [int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2])]
assert len(recs) == len(lp), (len(recs), len(lp))
for r, ns in zip(recs, lp):
    want = "%d.%06d" % (ns // 10**9, ns % 10**9 // 1000)
    got = "%.6f" % r["time"]
    assert got == want, (r, want)
print(len(recs))
PY
	[ $? -eq 0 ] && ok "$name: JSON time = line-protocol time ($(cat "$tmp/$name.time") records)" ||
		bad "$name: JSON time" "$tmp/$name.time"
}

run_case report-v2 --format report --report-version 2.0 --hops 1-6
run_case md-v1 --int-version 1.0 --bitmap 0xFFFF --unavailable --hops 2-5
run_case report-v05 --format report --report-version 0.5 --hops 3

# widening is exercised: some 4-byte times fall in the capture second's
# epoch only after adding or removing a wrap
grep -q '"int.hop_ingress_times":\[[0-9]' "$tmp/md-v1.jsonl" &&
	python3 -c 'import json,sys; v=[x for l in open(sys.argv[1]) for x in (json.loads(l).get("int.hop_egress_times") or []) if x is not None]; sys.exit(0 if v and max(v) < 2**32 else 1)' "$tmp/md-v1.jsonl" &&
	ok "md-v1: its hop times are 4-byte values (widened)" || bad "md-v1: expected 4-byte hop times"

# a metrics block: its records as its timestamp says (the flow latency
# table's, stamped with the report's time)
"$bld/intgen" -o "$tmp/m.pcap" -e "$tmp/m.jsonl" -n 200 --format report --report-version 2.0 \
	--flows 1 >/dev/null 2>&1
cat >"$tmp/m.conf" <<CONF
file-output lp { path = "$tmp/m.lp"; format = influx }
metrics net { tables = {"flow-latency"}; timestamp = "report"; output-channel = {lp} }
CONF
"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/m.pcap" -q 2>"$tmp/m.err"
python3 - "$tmp/m.jsonl" "$tmp/m.lp" >"$tmp/m.out" 2>&1 <<'PY'
import json, sys
want = [json.loads(l)["int_report.ingress_time"] for l in open(sys.argv[1])]
got = [int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2])]
# in item order, each stamped with its item's report time: a subsequence
it = iter(want)
assert got and all(t in it for t in got), (got[:3], want[:3])
assert got[0] == want[0], (got[:3], want[:3])
print(len(got))
PY
[ $? -eq 0 ] && ok "metrics timestamp = report: $(cat "$tmp/m.out") records stamped with the report's time" ||
	bad "metrics timestamp" "$tmp/m.out"

printf 'event-report x {\n  event = "int.latency"\n  timestamp = "egres"\n}\n' >"$tmp/bad.conf"
"$bld/intspect" -T "$tmp/bad.conf" >"$tmp/bad.out" 2>&1; rc=$?
[ "$rc" -eq 2 ] && grep -q "bad.conf:3:15: error: timestamp: unknown 'egres' (did you mean 'egress'?); known: capture, report, ingress, egress" "$tmp/bad.out" &&
	ok "-T: unknown timestamp word, its position, did you mean" || bad "-T unknown timestamp (exit $rc)" "$tmp/bad.out"
summary timestamp
