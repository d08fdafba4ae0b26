#!/bin/sh
# The Grafana dashboard (conf/examples/grafana-metrics.json) against what
# intspect writes: conf/examples/grafana-metrics.conf (metrics net { ... }
# to an influxdb-output) runs on a capture into a real influxd, then every
# panel's InfluxQL query runs on that database ($timeFilter: the capture's
# 3 s and a margin, $__interval: 100ms) and must return data, and the measurement, field and
# GROUP BY tags it names must be ones the database has (SHOW MEASUREMENTS,
# SHOW FIELD KEYS, SHOW TAG KEYS). The dashboard is valid JSON with one
# InfluxDB data source input. Skipped (77) without influxd.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
svc=$src/test/services/influxdb.sh
tmp=$(mktemp -d)
. "$src/test/tools/checks.sh"
trap 'sh "$svc" stop "$tmp/i" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

ports=$(sh "$svc" start "$tmp/i")
case $? in
0) ;;
77) echo "grafana: skipped (influxd not installed)"; exit 77 ;;
*) echo "FAIL start influxd"; echo "grafana: 0 passed, 1 failed"; exit 1 ;;
esac
P=${ports% *}
# the example as shipped, on this server, quicker to push and expire
sed -e "s/port = 8086/port = $P; create-database = true/" \
    -e 's/push-interval-ms = 10000/push-interval-ms = 200/' \
    -e 's/idle-timeout-ms = 60000/idle-timeout-ms = 40/' \
    "$src/conf/examples/grafana-metrics.conf" >"$tmp/m.conf"
"$bld/intgen" -o "$tmp/in.pcap" -n 3000 --seed 12 --format report --report-version 2.0 \
	--coalesce 2 --hops 1-5 --flows 16 --pps 1000 --bitmap 0xFF80 2>/dev/null
"$bld/intspect" -C "$tmp/m.conf" -r "$tmp/in.pcap" >/dev/null 2>"$tmp/run.err"
rc=$?
d=$(sed -n 's/.*channel tsdb: [0-9]* records queued, \([0-9]*\) delivered, 0 dropped.*/\1/p' "$tmp/run.err")
[ "$rc" -eq 0 ] && [ "${d:-0}" -gt 1000 ] && ok "the example configuration writes $d points" ||
	bad "run: exit $rc" "$tmp/run.err"

python3 - "$src/conf/examples/grafana-metrics.json" "$P" >"$tmp/check" 2>&1 <<'PY'
import json, re, sys, urllib.parse, urllib.request

dash = json.load(open(sys.argv[1]))
port = sys.argv[2]

def q(query):
    url = "http://127.0.0.1:%s/query?db=int&q=%s" % (port, urllib.parse.quote(query))
    with urllib.request.urlopen(url, timeout=10) as r:
        res = json.load(r)["results"][0]
    if "error" in res:
        raise RuntimeError("%s: %s" % (query, res["error"]))
    return res.get("series", [])

def names(series):
    return {v[0] for s in series for v in s.get("values", [])}

bad = 0
assert [i["pluginId"] for i in dash["__inputs"]] == ["influxdb"], "one InfluxDB data source"
measurements = names(q("SHOW MEASUREMENTS"))
for p in dash["panels"]:
    for t in p["targets"]:
        text = t["query"]
        m = re.search(r'FROM "([^"]+)"', text)
        meas = m.group(1)
        fields = re.findall(r'\w+\("([^"]+)"\)', text)
        tags = re.findall(r'"([^"]+)"', text.split("GROUP BY", 1)[1]) if "GROUP BY" in text else []
        problems = []
        if meas not in measurements:
            problems.append("no measurement %s" % meas)
        else:
            fk = names(q('SHOW FIELD KEYS FROM "%s"' % meas))
            tk = names(q('SHOW TAG KEYS FROM "%s"' % meas))
            problems += ["no field %s" % f for f in fields if f not in fk]
            problems += ["no tag %s" % g for g in tags if g not in tk]
        # intgen's packets start at 1700000000 s (--ts-start's default)
        run = text.replace("$timeFilter", "time >= 1700000000s AND time < 1700000010s")
        run = run.replace("$__interval", "100ms")
        series = q(run)
        points = sum(1 for s in series for v in s["values"] if v[1] not in (None, 0))
        if points == 0:
            problems.append("the query returns no data")
        if problems:
            bad += 1
            print("FAIL panel '%s': %s" % (p["title"], "; ".join(problems)))
        else:
            print("ok panel '%s': %d series, %d non-zero points" % (p["title"], len(series), points))
sys.exit(1 if bad else 0)
PY
rc=$?
cat "$tmp/check"
n=$(grep -c '^ok panel' "$tmp/check")
[ "$rc" -eq 0 ] && [ "$n" -ge 6 ] && ok "every one of the $n panels queries data the exporter wrote" ||
	bad "dashboard queries"
summary grafana
