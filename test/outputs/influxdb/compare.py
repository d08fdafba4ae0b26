#!/usr/bin/env python3
"""compare.py - InfluxDB (1.x HTTP API, python's urllib) for the influxdb
channel's tests.

  compare.py create PORT DB              CREATE DATABASE through /query
  compare.py points PORT DB              the number of points in DB (every
                                         measurement, SELECT * rows)
  compare.py check PORT DB JSON [--subset] REPORT=TAG,TAG ...
      the points of DB against the JSON records of the same run (a file
      output's JSON lines, parsed with the json module): each record is a
      point of measurement "report", tags the listed attributes of its
      report (arrays as compact JSON, absent ones left out), fields every
      other value (arrays one field per element, "name.N"; nulls left
      out), time the record's "time" (microseconds; the point's is in
      nanoseconds). Checks every record has its point with those tags and
      values (integers stored as integers; a JSON integer may be a float
      field of the same value: avg() of whole numbers) and that DB holds
      no other point. --subset: DB may lack records (an outage dropped
      them) but holds nothing else, and has the newest record (what came
      after the outage was delivered). Prints what it checked; exit 1 at the
      first difference.
"""
import json
import sys
import urllib.parse
import urllib.request
from decimal import Decimal

SKIP = {"report", "type", "ts", "time", "window_start", "window_end"}


def query(port, db, q, post=False):
    args = {"q": q, "epoch": "ns"}
    if db:
        args["db"] = db
    url = "http://127.0.0.1:%s/query?%s" % (port, urllib.parse.urlencode(args))
    req = urllib.request.Request(url, data=b"" if post else None)
    with urllib.request.urlopen(req, timeout=30) as r:
        res = json.loads(r.read().decode(), parse_float=Decimal)
    for st in res.get("results", []):
        if "error" in st:
            raise RuntimeError("%s: %s" % (q, st["error"]))
    return res["results"][0].get("series", [])


def measurements(port, db):
    return [v[0] for s in query(port, db, "SHOW MEASUREMENTS") for v in s["values"]]


def quote(name):
    return '"%s"' % name.replace("\\", "\\\\").replace('"', '\\"')


def points(port, db, meas):
    """[(tags, fields, ts)] of a measurement; field types {name: type}."""
    tagkeys = {v[0] for s in query(port, db, "SHOW TAG KEYS FROM " + quote(meas)) for v in s["values"]}
    types = {v[0]: v[1] for s in query(port, db, "SHOW FIELD KEYS FROM " + quote(meas))
             for v in s["values"]}
    out = []
    for s in query(port, db, "SELECT * FROM " + quote(meas)):
        cols = s["columns"]
        for row in s["values"]:
            tags, fields = {}, {}
            for c, v in zip(cols[1:], row[1:]):
                if v is None:
                    continue
                (tags if c in tagkeys else fields)[c] = v
            out.append((tags, fields, int(row[0])))
    return out, types


def expected(rec, tagnames):
    tags, fields = {}, {}
    for k, v in rec.items():
        if k in SKIP or v is None:
            continue
        if k in tagnames:
            tags[k] = json.dumps(v, separators=(",", ":"), default=str) if isinstance(v, list) else str(v)
            continue
        items = [(k + "." + str(i), e) for i, e in enumerate(v)] if isinstance(v, list) else [(k, v)]
        for name, e in items:
            if e is not None:
                fields[name] = e
    return tags, fields


def same_field(want, got, ftype):
    if isinstance(want, bool):
        return ftype == "boolean" and got == want
    if isinstance(want, str):
        return ftype == "string" and got == want
    if isinstance(want, int):
        if ftype == "integer":
            return isinstance(got, int) and got == want
        # beyond int64, or a float result that happens to be whole
        return ftype == "float" and float(got) == float(want)
    return ftype == "float" and abs(float(got) - float(want)) <= 1e-12 * max(1.0, abs(float(want)))


def check(port, db, jpath, subset, keyspec):
    keys = {}
    for a in keyspec:
        r, t = a.split("=", 1)
        keys[r] = set(x for x in t.split(",") if x)
    with open(jpath) as f:
        recs = [json.loads(l, parse_float=Decimal) for l in f if l.strip()]
    want = {}
    for rec in recs:
        tags, fields = expected(rec, keys.get(rec["report"], set()))
        us = int(Decimal(str(rec["time"])) * 1000000)
        k = (rec["report"], tuple(sorted(tags.items())), us)
        if k in want:
            print("two records are one point (same report, tags and time): %s" % (k,))
            return 1
        want[k] = fields
    got = {}
    types = {}
    for meas in measurements(port, db):
        pts, types[meas] = points(port, db, meas)
        for tags, fields, ts in pts:
            got[(meas, tuple(sorted(tags.items())), ts // 1000)] = (fields, ts)
    extra = [k for k in got if k not in want]
    if extra:
        print("%d point(s) no record has, e.g. %s %s" % (len(extra), extra[0], got[extra[0]]))
        return 1
    missing = [k for k in want if k not in got]
    if missing and not subset:
        print("%d of %d records have no point, e.g. %s" % (len(missing), len(want), missing[0]))
        return 1
    newest = max(want, key=lambda k: k[2]) if want else None
    if subset and newest not in got:
        print("the newest record has no point: %s" % (newest,))
        return 1
    for k, (fields, _ts) in got.items():
        wf = want[k]
        if set(fields) != set(wf):
            print("%s: fields %s, want %s" % (k, sorted(fields), sorted(wf)))
            return 1
        for name, w in wf.items():
            if not same_field(w, fields[name], types[k[0]].get(name)):
                print("%s: field %s = %r (%s), want %r" % (k, name, fields[name],
                                                          types[k[0]].get(name), w))
                return 1
    per = {}
    for k in got:
        per[k[0]] = per.get(k[0], 0) + 1
    print("%d points checked (%s)%s" % (len(got), ", ".join("%s %d" % kv for kv in sorted(per.items())),
                                        ", %d records without a point, the newest one with" % len(missing)
                                        if subset else ""))
    return 0


def main():
    cmd, port, db = sys.argv[1], sys.argv[2], sys.argv[3]
    if cmd == "create":
        query(port, None, "CREATE DATABASE " + quote(db), post=True)
        return 0
    if cmd == "points":
        print(sum(len(points(port, db, m)[0]) for m in measurements(port, db)))
        return 0
    if cmd == "check":
        args = sys.argv[5:]
        subset = "--subset" in args
        return check(port, db, sys.argv[4], subset, [a for a in args if a != "--subset"])
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
