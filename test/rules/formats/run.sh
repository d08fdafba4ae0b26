#!/bin/sh
# One rule, channels of different formats: each channel gets the rule's
# records in its own format (a file with format = influx: InfluxDB line
# protocol; one without: the rule's JSON; format = csv: MMT-Probe's rows),
# the same records in each, counted once by the rule. The line protocol is
# checked against the JSON records by tools/lp_check.py, which parses both
# (line protocol by its reference's grammar) and rebuilds each point from
# its JSON record: measurement = report, tags = the delta-key or group-by
# values, fields = the rest (per-hop arrays one field per hop), timestamp
# = the record's time in ns. Also: the rule's format without output-format
# (its first channel's, else an output { format } section's); a query's
# counter from 1 in MMT-Probe's CSV and from 0 in intspect's, var
# truncated there but per hop; ms-period = 0 as one window between the
# first and last packet times.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

cat >"$tmp/r.conf" <<CONF
event-report path {
  event = "int.hop_switch_ids"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"int.hop_switch_ids", "int.hop_latencies", "ip.src", "ip.dst", "int.latency"}
  output-channel = {"json", "lp", "csv"}
}
query-report lat {
  ms-period = 1000
  select = {"count()", "avg(int.hop_latencies)", "max(int.latency)", "p99(int.latency)", "sum(int.latency)"}
  group-by = {"ip.dst", "int.hop_switch_ids"}
  output-channel = {"lp", "json"}
}
file-output json { path = "$tmp/r.json" }
file-output lp { path = "$tmp/r.lp"; format = influx }
file-output csv { path = "$tmp/r.csv"; format = csv }
CONF
"$bld/intgen" -o "$tmp/in.pcap" -n 400 --seed 11 --format report --report-version 2.0 \
	--coalesce 3 --hops 1-5 2>/dev/null
"$bld/intspect" -C "$tmp/r.conf" -r "$tmp/in.pcap" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] && ok "run" || bad "run: exit $rc" "$tmp/err"

ev=$(sed -n 's/.*event-report path: [0-9]* matched, \([0-9]*\) records.*/\1/p' "$tmp/err")
q=$(sed -n 's/.*query-report lat: .* windows, \([0-9]*\) records.*/\1/p' "$tmp/err")
nj=$(wc -l <"$tmp/r.json" | tr -d ' ')
nl=$(wc -l <"$tmp/r.lp" | tr -d ' ')
nc=$(wc -l <"$tmp/r.csv" | tr -d ' ')
if [ -n "$ev" ] && [ "$ev" -gt 0 ] && [ "$nj" -eq $((ev + q)) ] && [ "$nl" -eq $((ev + q)) ] && [ "$nc" -eq "$ev" ]; then
	ok "each channel has every record once: $ev events and $q query records counted once by the rules"
else
	bad "records: rules say $ev + $q, json $nj, line protocol $nl, csv $nc" "$tmp/err"
fi
grep -q '^1000,' "$tmp/r.csv" && ! grep -q '^{' "$tmp/r.csv" && ok "the csv channel has MMT-Probe rows" ||
	bad "csv channel" "$tmp/r.csv"
if python3 "$src/test/tools/lp_check.py" "$tmp/r.json" "$tmp/r.lp" \
	path=ip.src,ip.dst lat=ip.dst,int.hop_switch_ids >"$tmp/check" 2>&1; then
	ok "line protocol = the JSON records ($(tail -n 1 "$tmp/check"))"
else
	bad "line protocol against the JSON records" "$tmp/check"
fi
# without output-format, a rule takes its first channel's format for the
# channels that have none (as before there were several formats)
sed -e 's/output-channel = {"json", "lp", "csv"}/output-channel = {"csv", "json"}/' \
    -e 's/output-channel = {"lp", "json"}/output-channel = {"csv"}/' "$tmp/r.conf" >"$tmp/first.conf"
"$bld/intspect" -C "$tmp/first.conf" -r "$tmp/in.pcap" 2>/dev/null
grep -q '^1000,' "$tmp/r.json" && ok "first channel's format for the rule: json channel without format gets csv rows" ||
	bad "first channel's format" "$tmp/r.json"

# an output { format } section: the rule's format where its first channel
# has none of its own (here influx, a type's own)
{ sed -e 's/output-channel = {"json", "lp", "csv"}/output-channel = {"lp", "json"}/' "$tmp/r.conf"
  echo 'output { format = csv }'; } >"$tmp/osec.conf"
rm -f "$tmp/r.json"
"$bld/intspect" -C "$tmp/osec.conf" -r "$tmp/in.pcap" 2>/dev/null
grep -q '^1000,' "$tmp/r.json" && ! grep -q '^{' "$tmp/r.json" &&
	ok "output { format = csv }: a channel without format gets csv rows" ||
	bad "output { format } section" "$tmp/r.json"
# a query's counter: from 1 in MMT-Probe's CSV, from 0 in intspect's; var
# of a whole-number attribute truncated in MMT-Probe's CSV, a per-hop var
# with three decimals
cat >"$tmp/q.conf" <<CONF
query-report v {
  ms-period = 1000
  select = {"count()", "var(int.latency)", "var(int.hop_latencies)"}
  group-by = {"ip.dst"}
  output-channel = {"m", "i"}
}
file-output m { path = "$tmp/q.m"; format = csv }
file-output i { path = "$tmp/q.i"; format = intspect-csv }
CONF
"$bld/intspect" -C "$tmp/q.conf" -r "$tmp/in.pcap" 2>/dev/null
python3 - "$tmp/q.m" "$tmp/q.i" >"$tmp/q.out" 2>&1 <<'EOF'
import csv, sys
m = list(csv.reader(open(sys.argv[1])))
i = list(csv.reader(open(sys.argv[2])))
assert m and len(m) == len(i), (len(m), len(i))
assert {r[5] for r in m} == {str(int(r[5]) + 1) for r in i}, "counters"
assert min(int(r[5]) for r in m) == 1 and min(int(r[5]) for r in i) == 0
for r in m:
    assert "." not in r[7], r                   # var(int.latency), truncated
    hops = [c for c in r[8:] if c]
    assert hops and all("." in c for c in hops), r      # per hop: 3 decimals
print("%d rows: counters from 1 and 0, var truncated, per-hop var with decimals" % len(m))
EOF
[ $? = 0 ] && ok "query rows: $(cat "$tmp/q.out")" || bad "query rows in both CSVs" "$tmp/q.out"

# ms-period = 0: one window, written when the input ends, its bounds the
# first and last packet times (read from the capture here); rate() per
# that span, and none for a window of one packet time
printf 'query-report all {\n  ms-period = 0\n  select = {"count()", "rate()"}\n  output-channel = {"j"}\n}\nfile-output j { path = "%s/all.json" }\n' \
	"$tmp" >"$tmp/all.conf"
"$bld/intspect" -C "$tmp/all.conf" -r "$tmp/in.pcap" 2>"$tmp/all.err"
n=$(sed -n 's/^intspect: [0-9]* packets ([0-9]* bytes), \([0-9]*\) telemetry items.*/\1/p' "$tmp/all.err")
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(d[:24 + 16 + int.from_bytes(d[32:36], "little")])' \
	"$tmp/in.pcap" "$tmp/one.pcap"
sed "s|all.json|one.json|" "$tmp/all.conf" >"$tmp/one.conf"
"$bld/intspect" -C "$tmp/one.conf" -r "$tmp/one.pcap" 2>"$tmp/one.err" ||
	bad "ms-period = 0, one packet" "exit $?: $(cat "$tmp/one.err")"
# shellcheck disable=SC2046
python3 -c '
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
npk, lo, hi = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
assert len(r) == 1 and r[0]["count()"] == int(sys.argv[2]), (r, sys.argv[2])
assert round(r[0]["window_start"] * 1e6) == lo and round(r[0]["window_end"] * 1e6) == hi, (r, lo, hi)
assert abs(r[0]["rate()"] - int(sys.argv[2]) / ((hi - lo) / 1e6)) < 1e-3, r
one = [json.loads(l) for l in open(sys.argv[6])]
assert len(one) == 1 and one[0]["window_start"] == one[0]["window_end"] == lo / 1e6 and one[0]["rate()"] is None, one
print(npk)' "$tmp/all.json" "$n" $(python3 "$src/test/tools/pcap_times.py" "$tmp/in.pcap") "$tmp/one.json" \
	>"$tmp/all.out" 2>&1 &&
	ok "ms-period = 0: one window of the $n items, between the first and last of $(cat "$tmp/all.out") packet times" ||
	bad "ms-period = 0" "$(cat "$tmp/all.out")"

# line protocol: a record with no field left (its event attribute a tag,
# its attribute absent) is not written, and counted dropped by its rule
printf 'event-report e {\n  event = "ip.src"\n  delta-key = {"ip.src"}\n  attributes = {"ipv6.src"}\n  output-channel = {lp}\n}\nfile-output lp { path = "%s/nf.lp"; format = influx }\n' \
	"$tmp" >"$tmp/nf.conf"
"$bld/intspect" -C "$tmp/nf.conf" -r "$src/test/data/gen-rules-8.pcap" 2>"$tmp/nf.err"
grep -q '^intspect: event-report e: 8 matched, 8 records, 8 dropped' "$tmp/nf.err" && [ ! -s "$tmp/nf.lp" ] &&
	ok "line protocol: 8 records with no field, none written, 8 dropped" || bad "no-field records" "$tmp/nf.err"

# an output-format template: each quoted attribute name replaced by its
# JSON value, an absent one by null (as the dump has them)
printf "event-report t {\n  event = \"int.num_hop\"\n  output-format = '{\"src\": \"ip.src\", \"v6\": \"ipv6.src\", \"lat\": \"int.hop_latencies\"}'\n}\n" \
	>"$tmp/tmpl.conf"
"$bld/intspect" -C "$tmp/tmpl.conf" -r "$src/test/data/gen-rules-8.pcap" >"$tmp/tmpl.out" 2>/dev/null
"$bld/intspect" -r "$src/test/data/gen-rules-8.pcap" --dump >"$tmp/tmpl.dump" 2>/dev/null
python3 -c '
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want) == 8, (len(got), len(want))
for g, d in zip(got, want):
    assert g == {"src": d["ip.src"], "v6": None, "lat": d["int.hop_latencies"]}, (g, d)' \
	"$tmp/tmpl.out" "$tmp/tmpl.dump" 2>"$tmp/tmpl.err" &&
	ok "output-format template: the values as the dump has them, an absent one null" ||
	bad "output-format template" "$tmp/tmpl.err"

# MMT-Probe's CSV rows of the other record types, against the JSON records
# of the same rules: type ids 1001 (expired), 1002 (flow: the values in
# order, a cell per buffer slot), 1003 (overflow)
printf '%s\n' 'event-report p { event = "int.latency"; delta-cond = {"int.num_hop"}; delta-key = {"ip.src"}; idle-timeout-ms = 400; attributes = {"ip.src"}; output-format = FMT }' \
	'flow-monitor m { match = {"ip.src"}; counters = {"sum(int.latency)"}; buffer = 2; overflow-threshold = 1; output-format = FMT }' \
	>"$tmp/types.in"
for f in csv json; do
	sed "s/FMT/$f/" "$tmp/types.in" >"$tmp/types.$f.conf"
	"$bld/intspect" -C "$tmp/types.$f.conf" -r "$src/test/data/gen-rules-8.pcap" >"$tmp/types.$f" 2>/dev/null
done
python3 - "$tmp/types.json" "$tmp/types.csv" >"$tmp/types.out" 2>&1 <<'EOF'
import csv, json, sys
js = [json.loads(l) for l in open(sys.argv[1])]
cs = list(csv.reader(open(sys.argv[2])))
assert len(js) == len(cs), (len(js), len(cs))
ids = {"event": "1000", "expired": "1001", "flow": "1002", "overflow": "1003"}
seen = set()
def cell(v):
    return "%.6f" % v if isinstance(v, float) else str(v)
for j, c in zip(js, cs):
    t = j["type"]
    seen.add(t)
    assert c[0] == ids[t] and c[3] == "%.6f" % j["time"] and c[4] == j["report"], (j, c)
    if t == "expired":
        want = [j["ip.src"], cell(j["last_seen"])]
    elif t == "flow":
        want = [cell(j["interval_start"]), j["ip.src"]] + [cell(j[k]) for k in
                ("packets", "bytes", "first_seen", "last_seen", "sum(int.latency)")]
        for k in ("buffer.packets", "buffer.bytes", "buffer.sum(int.latency)"):
            want += [str(x) for x in j[k]]
    elif t == "overflow":
        want = [str(j["entries"]), str(j["overflow_threshold"])]
    else:
        continue
    assert c[5:] == want, (c[5:], want)
assert seen == set(ids), seen
print("%d rows, types 1000-1003 each as its JSON record" % len(cs))
EOF
[ $? = 0 ] && ok "MMT CSV: $(cat "$tmp/types.out")" || bad "MMT CSV record types" "$tmp/types.out"

summary formats
