#!/usr/bin/env python3
"""Reference model of intspect's report rules, written from dsl/README.md only.

It is a second, independent implementation of the event and query report
semantics: given a pcap (timestamps and wire lengths), intgen's expected-values
file (the attribute values of every telemetry item) and a rule description,
it computes the records intspect should write, and compares them with what
intspect wrote.

Rule description: a JSON list of rules.

  {"name": "q", "type": "query", "period_ms": 100,
   "select": ["count()", "avg(int.hop_latencies)", ...],
   "group_by": ["ip.src", "ip.dst"],                 (optional)
   "where": ["int.latency"] | "int.latency > 5000"}  (optional)

  {"name": "e", "type": "event", "event": "int.hop_latencies",
   "where": ..., "delta_cond": [...], "delta_key": [...],
   "delta_band": N, "delta_threshold": N, "keepalive_ms": N,
   "attributes": [...]}                               (all but event optional)

  flow monitors: monitor_model.py

Expressions are the strings of the rule language (they are copied into the
intspect config as written), parsed here by a small recursive-descent parser.

Usage:
  refmodel.py conf  RULES                        intspect config on stdout
  refmodel.py model RULES PCAP EXPECT            model records on stdout
  refmodel.py check RULES PCAP EXPECT ACTUAL     compare; exit 1 on a difference
"""
import datetime
import ipaddress
import json
import math
import re
import struct
import sys
from fractions import Fraction

from monitor_model import render_monitor, run_monitor

# --------------------------------------------------------------------------
# Input: classic pcap + expected values
# --------------------------------------------------------------------------


def read_pcap(path):
    """[(timestamp in ns, wire length, captured length)] per packet."""
    with open(path, "rb") as f:
        data = f.read()
    magics = {b"\xd4\xc3\xb2\xa1": ("<", 1000), b"\xa1\xb2\xc3\xd4": (">", 1000),
              b"\x4d\x3c\xb2\xa1": ("<", 1), b"\xa1\xb2\x3c\x4d": (">", 1)}
    if data[:4] not in magics:
        raise SystemExit(f"{path}: not a classic pcap file")
    endian, mult = magics[data[:4]]
    off, pkts = 24, []
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack(endian + "IIII", data[off:off + 16])
        off += 16 + incl
        pkts.append((sec * 1_000_000_000 + frac * mult, orig, incl))
    return pkts


def load_items(pcap, expect):
    """Telemetry items in input order, with the meta.* attributes added."""
    pkts = read_pcap(pcap)
    items, last_idx, rep = [], None, 0
    with open(expect) as f:
        for line in f:
            if not line.strip():
                continue
            it = json.loads(line)
            idx = it["meta.packet_index"]
            rep = rep + 1 if idx == last_idx else 0
            last_idx = idx
            if "malformed" in it:
                continue
            ts_ns, wire, cap = pkts[idx - 1]
            it["_ts_ns"] = ts_ns
            # inside expressions meta.timestamp counts in microseconds
            it["meta.timestamp"] = ts_ns // 1000 if ts_ns % 1000 == 0 else ts_ns / 1000
            it["meta.packet_len"] = wire
            it["meta.caplen"] = cap
            it["meta.report_index"] = rep
            items.append(it)
    return items


# --------------------------------------------------------------------------
# Expressions
# --------------------------------------------------------------------------

TOKEN_RE = re.compile(r"""\s*(?:
   (?P<ip>\d+\.\d+\.\d+\.\d+(?:/\d+)?)
  |(?P<num>0[xX][0-9a-fA-F]+|\d+\.\d+|\d+)
  |(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)
  |(?P<str>'[^']*')
  |(?P<op>==|!=|<=|>=|&&|\|\||[<>=!+\-*/%(){}\[\],])
  )""", re.X)

KEYWORDS = {"and", "or", "not", "in"}


def tokenize(s):
    pos, out = 0, []
    s = s.rstrip()
    while pos < len(s):
        m = TOKEN_RE.match(s, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot tokenize {s!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
    out.append(("end", None))
    return out


class Parser:
    def __init__(self, text):
        self.toks, self.i, self.text = tokenize(text), 0, text

    def peek(self, k=0):
        return self.toks[self.i + k]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def accept(self, *vals):
        kind, val = self.peek()
        if kind in ("op", "name") and val in vals:
            self.i += 1
            return val
        return None

    def expect(self, val):
        if not self.accept(val):
            raise ValueError(f"{self.text!r}: expected {val!r}, got {self.peek()}")

    def parse(self):
        e = self.or_()
        if self.peek()[0] != "end":
            raise ValueError(f"{self.text!r}: trailing {self.peek()}")
        return e

    def or_(self):
        a = self.and_()
        while self.accept("or", "||"):
            a = ("or", a, self.and_())
        return a

    def and_(self):
        a = self.not_()
        while self.accept("and", "&&"):
            a = ("and", a, self.not_())
        return a

    def not_(self):
        if self.accept("not", "!"):
            return ("not", self.not_())
        return self.cmp()

    def cmp(self):
        a = self.add()
        op = self.accept("==", "!=", "<=", ">=", "<", ">", "=")
        if op:
            return ("cmp", "==" if op == "=" else op, a, self.add())
        if self.accept("in"):
            self.expect("{")
            items = [self.add()]
            while self.accept(","):
                items.append(self.add())
            self.expect("}")
            return ("in", a, items)
        return a

    def add(self):
        a = self.mul()
        while True:
            op = self.accept("+", "-")
            if not op:
                return a
            a = ("arith", op, a, self.mul())

    def mul(self):
        a = self.unary()
        while True:
            op = self.accept("*", "/", "%")
            if not op:
                return a
            a = ("arith", op, a, self.unary())

    def unary(self):
        if self.accept("-"):
            return ("arith", "-", ("num", 0), self.unary())
        return self.primary()

    def primary(self):
        kind, val = self.take()
        if kind == "num":
            return ("num", int(val, 0) if not "." in val else float(val))
        if kind == "str":
            return ("str", val[1:-1])
        if kind == "ip":
            return ("ip", ipaddress.ip_network(val, strict=False))
        if kind == "op" and val == "(":
            e = self.or_()
            self.expect(")")
            return e
        if kind == "name" and val not in KEYWORDS:
            if self.accept("("):
                args = []
                if not self.accept(")"):
                    args.append(self.or_())
                    while self.accept(","):
                        args.append(self.or_())
                    self.expect(")")
                return ("call", val, args)
            idx = None
            if self.accept("["):
                k, v = self.take()
                if k != "num":
                    raise ValueError(f"{self.text!r}: hop index must be a number")
                idx = int(v, 0)
                self.expect("]")
            return ("attr", val, idx)
        raise ValueError(f"{self.text!r}: unexpected {val!r}")


def parse(text):
    return Parser(text).parse()


def _lift(f, a, b):
    """Apply f element-wise when a or b is a per-hop list (None stays None)."""
    if isinstance(a, list) or isinstance(b, list):
        la = a if isinstance(a, list) else None
        lb = b if isinstance(b, list) else None
        n = max(len(la) if la is not None else 0, len(lb) if lb is not None else 0)
        out = []
        for i in range(n):
            x = (la[i] if i < len(la) else None) if la is not None else a
            y = (lb[i] if i < len(lb) else None) if lb is not None else b
            out.append(f(x, y))
        return out
    return f(a, b)


def _arith(op, x, y):
    if x is None or y is None or isinstance(x, (str, bool)) or isinstance(y, (str, bool)):
        return None
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    if op == "/":
        return None if y == 0 else x / y   # division gives a real
    if op == "%":
        return None if y == 0 else math.fmod(x, y) if isinstance(x, float) or isinstance(y, float) \
            else int(math.fmod(x, y))
    raise ValueError(op)


def _compare(op, x, y):
    if x is None or y is None:
        return False                       # a comparison with an absent value is false
    if isinstance(y, ipaddress._BaseNetwork) or isinstance(x, ipaddress._BaseNetwork):
        if isinstance(x, ipaddress._BaseNetwork):
            x, y = y, x
        try:
            inside = ipaddress.ip_address(x) in y
        except ValueError:
            return False
        if op == "==":
            return inside
        if op == "!=":
            return not inside
        raise ValueError("only == and != apply to addresses")
    if isinstance(x, str) != isinstance(y, str):
        return op == "!="
    return {"==": x == y, "!=": x != y, "<": x < y, "<=": x <= y,
            ">": x > y, ">=": x >= y}[op]


def _not(a):
    if isinstance(a, list):
        return [not bool(x) for x in a]
    return not bool(a)


def evaluate(node, item):
    t = node[0]
    if t == "num" or t == "str" or t == "ip":
        return node[1]
    if t == "attr":
        v = item.get(node[1])
        if node[2] is not None:
            if not isinstance(v, list) or node[2] >= len(v):
                return None
            return v[node[2]]
        return v
    if t == "arith":
        return _lift(lambda x, y: _arith(node[1], x, y), evaluate(node[2], item), evaluate(node[3], item))
    if t == "cmp":
        return _lift(lambda x, y: _compare(node[1], x, y), evaluate(node[2], item), evaluate(node[3], item))
    if t == "in":
        a = evaluate(node[1], item)
        vals = [evaluate(x, item) for x in node[2]]
        f = lambda x: x is not None and any(_compare("==", x, v) for v in vals)
        return [f(x) for x in a] if isinstance(a, list) else f(a)
    if t == "not":
        return _not(evaluate(node[1], item))
    if t in ("and", "or"):
        f = (lambda x, y: bool(x) and bool(y)) if t == "and" else (lambda x, y: bool(x) or bool(y))
        return _lift(f, evaluate(node[1], item), evaluate(node[2], item))
    if t == "call":
        name, args = node[1], node[2]
        if name in ("any", "all"):
            v = evaluate(args[0], item)
            if isinstance(v, list):
                return any(bool(x) for x in v) if name == "any" else \
                    (len(v) > 0 and all(bool(x) for x in v))
            return bool(v)
        raise ValueError(f"function {name} outside an aggregate")
    raise ValueError(f"bad node {node}")


def condition(node, item):
    v = evaluate(node, item)
    if isinstance(v, list):
        raise ValueError("a per-hop condition needs an index or any()/all()")
    return bool(v)


class Where:
    """The list form (every item present / holds) or a string condition."""

    def __init__(self, spec):
        if spec is None:
            self.items = []
        elif isinstance(spec, str):
            self.items = [("cond", parse(spec))]
        else:
            self.items = []
            for s in spec:
                n = parse(s)
                self.items.append(("present", n) if n[0] == "attr" else ("cond", n))

    def holds(self, item):
        for kind, n in self.items:
            if kind == "present":
                if evaluate(n, item) is None:
                    return False
            elif not condition(n, item):
                return False
        return True


def freeze(v):
    return tuple(v) if isinstance(v, list) else v


# --------------------------------------------------------------------------
# Query reports
# --------------------------------------------------------------------------

QUANT_RE = re.compile(r"^p(\d+)$")
AGGS = {"count", "sum", "avg", "var", "min", "max", "first", "last", "diff", "rate"}


class Quantile:
    """A quantile result: the true nearest-rank value and the sample count."""

    def __init__(self, value, n):
        self.value, self.n = value, n


def finalize(fname, vals, period_ms):
    if fname == "count":
        return len(vals)
    if fname == "rate":
        return math.fsum(vals) / (period_ms / 1000.0) if vals else 0.0
    if not vals:
        return None
    if fname == "sum":
        if all(isinstance(v, int) for v in vals):
            return sum(vals)
        return math.fsum(vals)
    if fname == "avg":
        return float(sum(Fraction(v) for v in vals) / len(vals))
    if fname == "var":
        fr = [Fraction(v) for v in vals]
        mean = sum(fr) / len(fr)
        return float(sum((x - mean) ** 2 for x in fr) / len(fr))
    if fname == "min":
        return min(vals)
    if fname == "max":
        return max(vals)
    if fname in ("first",):
        return vals[0]
    if fname in ("last", "diff"):
        return vals[-1]
    m = QUANT_RE.match(fname)
    if m:
        q = int(m.group(1))
        s = sorted(vals)
        rank = max(1, -(-q * len(s) // 100))     # nearest rank: ceil(q/100 * n)
        return Quantile(s[rank - 1], len(s))
    raise ValueError(fname)


class Aggregate:
    """One select expression of one group in one window."""

    def __init__(self, text, period_ms):
        node = parse(text)
        if node[0] == "attr":
            node = ("call", "last", [node])       # a bare attribute means last(x)
        if node[0] != "call" or not (node[1] in AGGS or QUANT_RE.match(node[1])):
            raise ValueError(f"select {text!r}: not an aggregate")
        self.fname, args = node[1], node[2]
        self.period_ms = period_ms
        self.arg, self.diff = (args[0] if args else None), False
        if self.fname == "diff":
            self.diff = True                      # diff(x) alone: the last difference
        elif self.arg is not None and self.arg[0] == "call" and self.arg[1] == "diff":
            self.diff, self.arg = True, self.arg[2][0]
        self.scalar, self.hops, self.maxlen, self.perhop = [], [], 0, False
        self.prev = None
        self.packets = 0

    def add(self, item):
        self.packets += 1
        if self.arg is None:                      # count(), rate()
            self.scalar.append(1)
            return
        v = evaluate(self.arg, item)
        if self.diff:
            v = self.difference(v)
        if isinstance(v, list):
            self.perhop = True
            self.maxlen = max(self.maxlen, len(v))
            while len(self.hops) < len(v):
                self.hops.append([])
            for i, x in enumerate(v):
                if x is not None:
                    self.hops[i].append(x)
        elif v is not None:
            self.scalar.append(v)

    def difference(self, v):
        """x minus the previous x of the group (per hop: the previous packet
        that has a value at that hop); None when there is no previous x."""
        if isinstance(v, list):
            if not isinstance(self.prev, list):
                self.prev = []
            out = []
            for i, x in enumerate(v):
                if i >= len(self.prev):
                    self.prev.append(None)
                if x is None:
                    out.append(None)
                    continue
                p, self.prev[i] = self.prev[i], x
                out.append(None if p is None else _arith("-", x, p))
            return out
        if v is None:
            return None
        p, self.prev = self.prev, v
        return None if p is None else _arith("-", v, p)

    def result(self):
        if self.perhop:
            return [finalize(self.fname, self.hops[i], self.period_ms) for i in range(self.maxlen)]
        return finalize(self.fname, self.scalar, self.period_ms)


def iso(ts_ns):
    us = ts_ns // 1000
    d = datetime.datetime.fromtimestamp(us // 1_000_000, datetime.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (us % 1_000_000)


class Time:
    """A time in the record: compared to the microsecond."""

    def __init__(self, ns):
        self.ns = ns


def run_query(rule, items):
    period = rule.get("period_ms", 1000)
    pns = period * 1_000_000
    where = Where(rule.get("where"))
    gby = [(g, parse(g)) for g in rule.get("group_by", [])]
    out, cur, groups = [], None, {}

    def flush(k):
        end = (k + 1) * pns
        for key, (gvals, aggs) in groups.items():
            rec = {"report": rule["name"], "type": "query", "ts": iso(end), "time": Time(end),
                   "window_start": Time(k * pns), "window_end": Time(end)}
            for (g, _), v in zip(gby, gvals):
                rec[g] = v
            for text, agg in aggs:
                rec[text] = agg.result()
            out.append(rec)
        groups.clear()

    for it in items:
        k = it["_ts_ns"] // pns
        if cur is not None and k != cur:
            flush(cur)
        cur = k
        if not where.holds(it):
            continue
        gvals = [evaluate(n, it) for _, n in gby]
        key = tuple(freeze(v) for v in gvals)
        if key not in groups:
            groups[key] = (gvals, [(s, Aggregate(s, period)) for s in rule["select"]])
        for _, agg in groups[key][1]:
            agg.add(it)
    if cur is not None:
        flush(cur)
    return out


# --------------------------------------------------------------------------
# Event reports
# --------------------------------------------------------------------------


def band(v, n):
    if v is None:
        return None
    if isinstance(v, list):
        return [band(x, n) for x in v]
    return math.floor(v / n)


def moved(old, new, thr):
    """delta-threshold: moved by more than thr, appeared, disappeared, hop count."""
    if (old is None) != (new is None):
        return True
    if old is None:
        return False
    if isinstance(old, list) or isinstance(new, list):
        if not (isinstance(old, list) and isinstance(new, list)) or len(old) != len(new):
            return True
        return any(moved(a, b, thr) for a, b in zip(old, new))
    return abs(new - old) > thr


def changed(rule, old, new):
    if "delta_band" in rule:
        n = rule["delta_band"]
        return any(band(a, n) != band(b, n) for a, b in zip(old, new))
    if "delta_threshold" in rule:
        return any(moved(a, b, rule["delta_threshold"]) for a, b in zip(old, new))
    return any(a != b for a, b in zip(old, new))


def run_event(rule, items):
    ev = parse(rule["event"])
    where = Where(rule.get("where"))
    dcond = [parse(a) for a in rule.get("delta_cond", [])]
    dkey = [parse(a) for a in rule.get("delta_key", [])]
    attrs = [(a, parse(a)) for a in rule.get("attributes", [])]
    keep = rule.get("keepalive_ms")
    memory, out = {}, []
    for it in items:
        if evaluate(ev, it) is None or not where.holds(it):
            continue
        t = it["_ts_ns"]
        if dcond:
            vals = [evaluate(n, it) for n in dcond]
            if all(v is None for v in vals):
                continue                          # none of the delta-cond attributes
            key = tuple(freeze(evaluate(n, it)) for n in dkey)
            m = memory.get(key)
            report = (m is None or changed(rule, m[0], vals)
                      or (keep is not None and t - m[1] >= keep * 1_000_000))
            if not report:
                continue
            memory[key] = (vals, t)
        rec = {"report": rule["name"], "type": "event", "ts": iso(t), "time": Time(t),
               rule["event"]: evaluate(ev, it)}
        for a, n in attrs:
            rec[a] = evaluate(n, it)
        out.append(rec)
    return out


def run_model(rules, items):
    out = {}
    for r in rules:
        if r["type"] == "monitor":
            out[r["name"]] = run_monitor(r, items, parse, evaluate, freeze, Where, Time, iso)
        else:
            out[r["name"]] = run_query(r, items) if r["type"] == "query" else run_event(r, items)
    return out


# --------------------------------------------------------------------------
# Config rendering
# --------------------------------------------------------------------------


def strlist(xs):
    return "{" + ", ".join(json.dumps(x) for x in xs) + "}"


def render_conf(rules):
    lines = ["# generated by test/rules/refmodel/refmodel.py", "output { format = json }", ""]
    for r in rules:
        if r["type"] == "monitor":
            lines += render_monitor(r, strlist)
        elif r["type"] == "query":
            lines.append(f"query-report {r['name']} {{")
            lines.append(f"  ms-period = {r.get('period_ms', 1000)}")
            lines.append(f"  select = {strlist(r['select'])}")
            if r.get("group_by"):
                lines.append(f"  group-by = {strlist(r['group_by'])}")
        else:
            lines.append(f"event-report {r['name']} {{")
            lines.append(f"  event = {json.dumps(r['event'])}")
            for k in ("delta_cond", "delta_key", "attributes"):
                if r.get(k):
                    lines.append(f"  {k.replace('_', '-')} = {strlist(r[k])}")
            for k in ("delta_band", "delta_threshold", "keepalive_ms"):
                if k in r:
                    lines.append(f"  {k.replace('_', '-')} = {r[k]}")
        w = r.get("where")
        if w is not None:
            lines.append(f"  where = {json.dumps(w) if isinstance(w, str) else strlist(w)}")
        lines.append("  output-format = json")
        lines.append("  output-channel = {stdout}")
        lines.append("}")
        lines.append("")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------


def plain(v):
    if isinstance(v, Quantile):
        return v.value
    if isinstance(v, Time):
        return round(v.ns / 1e9, 6)
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    return v


def isnum(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def same(m, a):
    """Does the actual value a match the model value m? Returns an error or None."""
    if isinstance(m, Time):
        if not isnum(a) or round(a * 1e6) != m.ns // 1000:
            return f"time {a!r} != {plain(m)}"
        return None
    if isinstance(m, Quantile):
        if m.value is None:
            return None if a is None else f"{a!r} != null"
        if not isnum(a):
            return f"{a!r} is not a number"
        # "exact below 32, within 1/32 of a sample value above": read as values
        # (a log-bucketed sketch with 32 sub-buckets), not as sample counts
        if abs(m.value) < 32:
            return None if a == m.value else f"{a!r} != {m.value} (exact below 32, n={m.n})"
        if abs(a - m.value) <= abs(m.value) / 32:
            return None
        return f"{a!r} not within 1/32 of the nearest-rank value {m.value} (n={m.n})"
    if m is None:
        return None if a is None else f"{a!r} != null"
    if isinstance(m, list):
        if not isinstance(a, list) or len(a) != len(m):
            return f"{json.dumps(a)} != {json.dumps(plain(m))}"
        for i, (x, y) in enumerate(zip(m, a)):
            e = same(x, y)
            if e:
                return f"[{i}]: {e}"
        return None
    if isinstance(m, bool) or isinstance(m, str):
        return None if a == m else f"{a!r} != {m!r}"
    if isinstance(m, int):
        return None if isinstance(a, int) and not isinstance(a, bool) and a == m else f"{a!r} != {m!r}"
    if isinstance(m, float):
        if isnum(a) and math.isclose(a, m, rel_tol=1e-9, abs_tol=1e-9):
            return None
        return f"{a!r} != {m!r}"
    return f"unexpected model value {m!r}"


def compare(rules, model, actual_lines, max_diffs=5):
    actual = {r["name"]: [] for r in rules}
    diffs = []
    for ln in actual_lines:
        rep = ln.get("report")
        if rep not in actual:
            diffs.append(f"unexpected record {json.dumps(ln)}")
            continue
        actual[rep].append(ln)
    for r in rules:
        name, ms, acts = r["name"], model[r["name"]], actual[r["name"]]
        if len(ms) != len(acts):
            diffs.append(f"{name}: {len(acts)} records, model has {len(ms)}")
        for i, (m, a) in enumerate(zip(ms, acts)):
            errs = []
            if set(m) != set(a):
                errs.append(f"keys: missing {sorted(set(m) - set(a))}, extra {sorted(set(a) - set(m))}")
            for k in m:
                if k in a:
                    e = same(m[k], a[k])
                    if e:
                        errs.append(f"{k}: {e}")
            if errs:
                diffs.append(f"{name} record {i + 1}: " + "; ".join(errs)
                             + f"\n    model:  {json.dumps(plain(m))}\n    actual: {json.dumps(a)}")
        if len(ms) != len(acts):
            n = min(len(ms), len(acts))
            if len(ms) > n:
                diffs.append(f"{name}: first missing record: {json.dumps(plain(ms[n]))}")
            else:
                diffs.append(f"{name}: first extra record: {json.dumps(acts[n])}")
    return diffs


def main(argv):
    if len(argv) < 3 or argv[1] not in ("conf", "model", "check"):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[2]) as f:
        rules = json.load(f)
    if argv[1] == "conf":
        sys.stdout.write(render_conf(rules))
        return 0
    items = load_items(argv[3], argv[4])
    model = run_model(rules, items)
    if argv[1] == "model":
        for r in rules:
            for rec in model[r["name"]]:
                print(json.dumps(plain(rec)))
        return 0
    with open(argv[5]) as f:
        actual = []
        for ln in f:
            if ln.strip():
                try:
                    actual.append(json.loads(ln))
                except ValueError:
                    actual.append({"report": None, "unparsable": ln.rstrip()})
    diffs = compare(rules, model, actual)
    counts = ", ".join(f"{r['name']} {len(model[r['name']])}" for r in rules)
    if diffs:
        print(f"  {len(diffs)} difference(s); model records: {counts}")
        for d in diffs[:4]:
            print("  " + d)
        return 1
    print(f"  records: {counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
