#!/bin/sh
# One rule, channels of different formats: each channel gets the rule's
# records in its own format (a file with format = influx: InfluxDB line
# protocol; one without: the rule's JSON; format = csv: MMT-Probe's rows),
# the same records in each, counted once by the rule. The line protocol is
# checked against the JSON records by tools/lp_check.py, which parses both
# (line protocol by its reference's grammar) and rebuilds each point from
# its JSON record: measurement = report, tags = the delta-key or group-by
# values, fields = the rest (per-hop arrays one field per hop), timestamp
# = the record's time in ns.
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

summary formats
