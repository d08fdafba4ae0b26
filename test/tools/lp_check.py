#!/usr/bin/env python3
"""lp_check.py JSON LP REPORT=TAG,TAG ... : check InfluxDB line protocol
against the JSON records of the same run, line for line.

Each line of LP is parsed by the line-protocol grammar (InfluxDB 1.x
reference: backslash escapes, quoted string fields, i-suffixed integers)
and compared with the point rebuilt from the JSON record of the same rank:
measurement = "report", tags = the listed attributes of that report
(arrays as compact JSON, absent ones left out), fields = every other value
(arrays one field per element, "name.N"; null left out; JSON integers are
integers with the i suffix, or floats of the same value), timestamp = the
record's "time" (microseconds) in nanoseconds. Prints the number of points
checked; exits 1 at the first difference."""
import json
import sys
from decimal import Decimal

SKIP = {"report", "type", "ts", "time", "window_start", "window_end"}


def split_unescaped(s, seps, quotes=False):
    """Split s at unescaped characters of seps (outside quotes if asked)."""
    out, cur, i, inq = [], "", 0, False
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            cur += s[i:i + 2]
            i += 2
            continue
        if quotes and c == '"':
            inq = not inq
        if c in seps and not inq:
            out.append(cur)
            cur = ""
        else:
            cur += c
        i += 1
    out.append(cur)
    return out


def unescape(s):
    out, i = "", 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in ',= "\\':
            out += s[i + 1]
            i += 2
        else:
            out += s[i]
            i += 1
    return out


def parse_value(v):
    if v.startswith('"'):
        assert v.endswith('"') and len(v) >= 2, v
        return ("str", unescape(v[1:-1]))
    if v.endswith("i"):
        return ("int", int(v[:-1]))
    if v in ("t", "true", "f", "false"):
        return ("bool", v[0] == "t")
    return ("float", float(v))


def parse_line(line):
    parts = split_unescaped(line, " ", quotes=True)
    if len(parts) != 3:
        raise ValueError("not 3 space-separated parts: %r" % line)
    head = split_unescaped(parts[0], ",")
    meas = unescape(head[0])
    tags = {}
    for t in head[1:]:
        k, v = split_unescaped(t, "=")
        tags[unescape(k)] = unescape(v)
    fields = {}
    for f in split_unescaped(parts[1], ",", quotes=True):
        kv = split_unescaped(f, "=", quotes=True)
        if len(kv) != 2:
            raise ValueError("field %r" % f)
        fields[unescape(kv[0])] = parse_value(kv[1])
    return meas, tags, fields, int(parts[2])


def expected(rec, tagnames):
    tags, fields = {}, {}
    for k, v in rec.items():
        if k in SKIP or v is None:
            continue
        if k in tagnames:
            tags[k] = json.dumps(v, separators=(",", ":")) if isinstance(v, list) else str(v)
            continue
        items = [(k + "." + str(i), e) for i, e in enumerate(v)] if isinstance(v, list) else [(k, v)]
        for name, e in items:
            if e is not None:
                fields[name] = e
    return tags, fields


def same_field(want, got):
    kind, g = got
    if isinstance(want, str):
        return kind == "str" and g == want
    if isinstance(want, bool):
        return kind == "bool" and g == want
    if isinstance(want, int) or (isinstance(want, Decimal) and want == want.to_integral_value()
                                 and "." not in str(want) and "E" not in str(want).upper()):
        w = int(want)
        if kind == "int":
            return g == w
        return kind == "float" and (w > 2**63 - 1 or float(g) == float(w))
    return kind == "float" and abs(float(g) - float(want)) <= 1e-12 * max(1.0, abs(float(want)))


def main():
    jpath, lpath = sys.argv[1], sys.argv[2]
    keys = {}
    for a in sys.argv[3:]:
        r, t = a.split("=", 1)
        keys[r] = set(x for x in t.split(",") if x)
    with open(jpath) as jf, open(lpath) as lf:
        recs = [json.loads(l, parse_float=Decimal) for l in jf if l.strip()]
        lines = [l.rstrip("\n") for l in lf if l.strip()]
    if len(recs) != len(lines):
        print("%d JSON records, %d lines" % (len(recs), len(lines)))
        return 1
    for n, (rec, line) in enumerate(zip(recs, lines), 1):
        try:
            meas, tags, fields, ts = parse_line(line)
        except (ValueError, AssertionError) as e:
            print("line %d: %s" % (n, e))
            return 1
        wt, wf = expected(rec, keys.get(rec["report"], set()))
        us = int(Decimal(str(rec["time"])) * 1000000)
        problems = []
        if meas != rec["report"]:
            problems.append("measurement %r, report %r" % (meas, rec["report"]))
        if tags != wt:
            problems.append("tags %r, want %r" % (tags, wt))
        if set(fields) != set(wf):
            problems.append("fields %r, want %r" % (sorted(fields), sorted(wf)))
        else:
            for k in wf:
                if not same_field(wf[k], fields[k]):
                    problems.append("field %s = %r, want %r" % (k, fields[k], wf[k]))
        if ts // 1000 != us:
            problems.append("timestamp %d, record time %s" % (ts, rec["time"]))
        if problems:
            print("line %d: %s\n  %s\n  %s" % (n, "; ".join(problems), line, json.dumps(rec, default=str)))
            return 1
    print("%d points checked" % len(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
