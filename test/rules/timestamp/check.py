#!/usr/bin/env python3
"""check.py EXPECT.jsonl LP : the record times of test/rules/timestamp's
rules, against the values intgen encoded (EXPECT, one object per item).

LP holds the line protocol of five event rules that fire on every item
(hop: on every hop with a latency):
cap (capture time), rep (timestamp = report: int_report.ingress_time),
ing (ingress: hop 0's int.hop_ingress_times), egr (egress: the last hop's
int.hop_egress_times), hop (per-hop, egress: each hop's own). The capture
time of item k is cap's k-th timestamp. A value below 2^32 (a 4-byte wire
field) is expected as the time nearest to the capture time with those low
32 bits; an absent value (unavailable hop, or none) as the capture time.
Prints what it checked; exits 1 at the first difference."""
import json
import sys

WRAP = 1 << 32


def widen(t, now):
    if t >= WRAP:
        return t
    best = None
    for base in ((now >> 32) - 1, now >> 32, (now >> 32) + 1):
        c = (base << 32) | t
        if c >= 0 and (best is None or abs(c - now) < abs(best - now)):
            best = c
    return best


def main():
    items = [json.loads(line) for line in open(sys.argv[1])]
    got = {}
    for line in open(sys.argv[2]):
        meas = line.split(",", 1)[0].split(" ", 1)[0]
        got.setdefault(meas, []).append(int(line.rsplit(" ", 1)[1]))
    cap = got.get("cap", [])
    if len(cap) != len(items):
        print("cap: %d records for %d items" % (len(cap), len(items)))
        return 1
    want = {"rep": [], "ing": [], "egr": [], "hop": []}
    for it, now in zip(items, cap):
        rep = it.get("int_report.ingress_time")
        want["rep"].append(widen(rep, now) if rep is not None else now)
        ing = it.get("int.hop_ingress_times") or []
        egr = it.get("int.hop_egress_times") or []
        want["ing"].append(widen(ing[0], now) if ing and ing[0] is not None else now)
        want["egr"].append(widen(egr[-1], now) if egr and egr[-1] is not None else now)
        # a per-hop rule fires on the hops that have its event attribute
        for k, lat in enumerate(it.get("int.hop_latencies") or []):
            v = egr[k] if k < len(egr) else None
            if lat is not None:
                want["hop"].append(widen(v, now) if v is not None else now)
    for rule, w in want.items():
        g = got.get(rule, [])
        if g != w:
            bad = next((i for i in range(min(len(g), len(w))) if g[i] != w[i]), min(len(g), len(w)))
            print("%s: record %d stamped %s, expected %s (%d records, %d expected)" %
                  (rule, bad, g[bad] if bad < len(g) else "-", w[bad] if bad < len(w) else "-",
                   len(g), len(w)))
            return 1
    absent = sum(1 for it in items for v in (it.get("int.hop_egress_times") or []) if v is None)
    print("%d items, %d records stamped as expected (%d absent hop values)" %
          (len(items), sum(len(w) for w in want.values()) + len(cap), absent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
