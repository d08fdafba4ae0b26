#!/usr/bin/env python3
"""expect.py LP PROM-PORT CHECK... : what a real Prometheus scraped from
intspect, against the line protocol the same rules wrote to a file.

The series the line protocol should give are worked out here from the
exporter's documented rules (outputs/README.md): for each numeric field of
a point, the gauge intspect_ + measurement + "_" + field, a per-hop field
NAME.N as NAME with the label hop="N", names reduced to [a-zA-Z0-9_] (a
run of anything else one "_", none at the end), the tags as labels; the
last point of a measurement and tags (a key) gives the key's series and
their values (a series its last point has no value for is gone); a point
with the field "expired" removes the series of its key. The line protocol is
parsed by test/tools/lp_check.py's grammar.

Then, until they hold or 30 s have passed, Prometheus' HTTP API
(/api/v1/query) must show:
  - exactly those series among intspect_PREFIX*, with those values
    (PREFIX: the measurements' common "net_");
  - each CHECK, "PROMQL=VALUE": the query's single result has VALUE;
    VALUE "lines:MEAS" is the number of points of MEAS in LP, "lines" all.
Prints what it checked; exits 1 with the differences otherwise."""
import json
import os
import re
import sys
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from lp_check import parse_line  # noqa: E402


def name(s):
    return re.sub(r"[^a-zA-Z0-9]+", "_", s).rstrip("_")


OPERATORS = [(">=", "ge"), ("<=", "le"), ("==", "eq"), ("!=", "ne"), ("&&", "and"), ("||", "or"),
             (">", "gt"), ("<", "lt"), ("+", "plus"), ("-", "minus"), ("*", "mul"), ("/", "div"),
             ("%", "mod"), ("!", "not")]


def field_name(s):
    """A field's name: as name(), an operator its word between underscores."""
    out = []
    i = 0
    while i < len(s):
        for op, word in OPERATORS:
            if s.startswith(op, i):
                out.append("_" + word + "_")
                i += len(op)
                break
        else:
            out.append(s[i])
            i += 1
    return name("".join(out))


def expected_series(path):
    series, groups, counts = {}, {}, {}
    for line in open(path):
        line = line.rstrip("\n")
        if not line:
            continue
        meas, tags, fields, _ = parse_line(line)
        counts[meas] = counts.get(meas, 0) + 1
        group = (meas, tuple(sorted(tags.items())))
        # the key's series are its last point's
        for key in groups.pop(group, set()):
            series.pop(key, None)
        if "expired" in fields:
            continue
        for field, (kind, value) in fields.items():
            if kind == "str":
                continue
            labels = {name(k) if not k[0].isdigit() else "_" + name(k): v for k, v in tags.items()}
            m = re.fullmatch(r"(.+)\.([0-9]+)", field)
            if m:
                field = m.group(1)
                labels["hop"] = m.group(2)
            metric = "intspect_" + name(meas) + "_" + field_name(field)
            key = (metric, tuple(sorted(labels.items())))
            series[key] = float(value)
            groups.setdefault(group, set()).add(key)
    return series, counts


def query(port, q):
    url = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    with urllib.request.urlopen(url, timeout=5) as r:
        doc = json.load(r)
    if doc.get("status") != "success":
        raise RuntimeError("%s: %s" % (q, doc))
    return doc["data"]["result"]


def scraped(port, prefix):
    got = {}
    for s in query(port, '{__name__=~"%s.+"}' % prefix):
        labels = dict(s["metric"])
        metric = labels.pop("__name__")
        labels.pop("job", None)
        labels.pop("instance", None)
        got[(metric, tuple(sorted(labels.items())))] = float(s["value"][1])
    return got


def differences(port, want, counts, checks, prefix):
    diffs = []
    got = scraped(port, prefix)
    for k in sorted(set(want) | set(got)):
        if k not in got:
            diffs.append("missing %s %s = %s" % (k[0], dict(k[1]), want[k]))
        elif k not in want:
            diffs.append("extra %s %s = %s" % (k[0], dict(k[1]), got[k]))
        elif abs(got[k] - want[k]) > 1e-9 * max(1.0, abs(want[k])):
            diffs.append("%s %s: %s, expected %s" % (k[0], dict(k[1]), got[k], want[k]))
    for c in checks:
        q, v = c.rsplit("=", 1)
        if v == "lines":
            v = sum(counts.values())
        elif v.startswith("lines:"):
            v = counts.get(v[6:], 0)
        r = query(port, q)
        if len(r) != 1 or float(r[0]["value"][1]) != float(v):
            diffs.append("%s: %s, expected %s" % (q, [x["value"][1] for x in r], v))
    return diffs, len(got)


def main():
    lp, port, checks = sys.argv[1], sys.argv[2], sys.argv[3:]
    want, counts = expected_series(lp)
    prefix = "intspect_net_"
    want = {k: v for k, v in want.items() if k[0].startswith(prefix)}
    if not want:
        print("expect.py: no series expected from %s" % lp)
        return 1
    deadline = time.time() + 30
    while True:
        diffs, n = differences(port, want, counts, checks, prefix)
        if not diffs or time.time() > deadline:
            break
        time.sleep(0.5)
    if diffs:
        print("expect.py: %d difference(s):" % len(diffs))
        for d in diffs[:30]:
            print("  " + d)
        return 1
    print("%d series from %d points, %d queries: as expected" % (n, sum(counts.values()), len(checks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
