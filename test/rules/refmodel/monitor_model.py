"""Reference model of flow monitors (flow-monitor blocks), written from
dsl/README.md ("Flow monitors") only; used by refmodel.py.

  {"name": "m", "type": "monitor", "match": ["ip.src", ...],
   "interval_ms": 100, "buffer": 4, "counters": ["sum(int.latency)", ...],
   "overflow": N, "report_unchanged": true, "where": ...}   (all but match optional)

Sampling is left at 1 (every flow): which flows a hash samples is checked
statistically by the unit tests, not here. max-entries is left large enough
for every flow.
"""


def run_monitor(rule, items, parse, evaluate, freeze, Where, Time, iso):
    tq = rule.get("interval_ms", 1000) * 1_000_000
    nbuf = rule.get("buffer", 4)
    tu = tq // nbuf
    where = Where(rule.get("where"))
    match = [(m, parse(m)) for m in rule["match"]]
    counters = []
    for c in rule.get("counters", []):
        fn, attr = c[:3], c[4:-1]
        counters.append((c, fn == "max", parse(attr)))
    thr = rule.get("overflow")
    flows, order, out = {}, [], []
    state = {"cur": None, "next_tick": None, "over": False, "last": 0}

    def contribution(v, is_max):
        if v is None:
            return None
        vals = [x for x in (v if isinstance(v, list) else [v]) if x is not None]
        if not vals:
            return None
        return max(vals) if is_max else sum(vals)

    def flush(k):
        for key in order:
            f = flows[key]
            current = f["qi"] == k
            if not current and not rule.get("report_unchanged"):
                continue
            end = (k + 1) * tq
            rec = {"report": rule["name"], "type": "flow", "ts": iso(end), "time": Time(end),
                   "interval_start": Time(k * tq)}
            for (m, _), v in zip(match, f["vals"]):
                rec[m] = v
            rec["packets"] = f["packets"]
            rec["bytes"] = f["bytes"]
            rec["first_seen"] = Time(f["first"])
            rec["last_seen"] = Time(f["last"])
            for (c, _, _), total in zip(counters, f["totals"]):
                rec[c] = total
            names = ["packets", "bytes"] + [c for c, _, _ in counters]
            for j, n in enumerate(names):
                rec["buffer." + n] = [s[j] if current else 0 for s in f["buf"]]
            out.append(rec)

    def overflow(t):
        if thr is None:
            return
        if len(flows) <= thr:
            state["over"] = False
        elif not state["over"]:
            state["over"] = True
            out.append({"report": rule["name"], "type": "overflow", "ts": iso(t), "time": Time(t),
                        "entries": len(flows), "overflow_threshold": thr})

    def tick(now):
        if state["cur"] is not None and now >= (state["cur"] + 1) * tq:
            flush(state["cur"])
            state["cur"] = now // tq
        if state["cur"] is not None:
            overflow(now // tu * tu)

    for it in items:
        t = it["_ts_ns"]
        # a tick at the first packet past each sub-interval, before it counts
        if state["next_tick"] is None:
            state["next_tick"] = (t // tu + 1) * tu
        elif t >= state["next_tick"]:
            tick(t)
            state["next_tick"] = (t // tu + 1) * tu
        state["last"] = max(state["last"], t)
        if not where.holds(it):
            continue
        vals = [evaluate(n, it) for _, n in match]
        if any(v is None for v in vals):
            continue
        key = tuple(freeze(v) for v in vals)
        if state["cur"] is None:
            state["cur"] = t // tq
        f = flows.get(key)
        if f is None:
            f = flows[key] = {"vals": vals, "packets": 0, "bytes": 0, "first": t, "last": t,
                              "totals": [0] * len(counters), "qi": None, "buf": None}
            order.append(key)
        if f["qi"] != state["cur"]:
            f["qi"] = state["cur"]
            f["buf"] = [[0] * (2 + len(counters)) for _ in range(nbuf)]
        start = state["cur"] * tq
        s = min((t - start) // tu if t > start else 0, nbuf - 1)
        slot = f["buf"][s]
        f["packets"] += 1
        f["bytes"] += it["meta.packet_len"]
        f["last"] = max(f["last"], t)
        slot[0] += 1
        slot[1] += it["meta.packet_len"]
        for j, (_, is_max, node) in enumerate(counters):
            x = contribution(evaluate(node, it), is_max)
            if x is None:
                continue
            if is_max:
                f["totals"][j] = max(f["totals"][j], x)
                slot[2 + j] = max(slot[2 + j], x)
            else:
                f["totals"][j] += x
                slot[2 + j] += x
    # the end of the input: the open interval, then the size at the last packet
    if state["cur"] is not None:
        flush(state["cur"])
        overflow(state["last"])
    return out


def render_monitor(r, strlist):
    lines = [f"flow-monitor {r['name']} {{", f"  match = {strlist(r['match'])}"]
    if "interval_ms" in r:
        lines.append(f"  query-interval = {r['interval_ms']}")
    if "buffer" in r:
        lines.append(f"  buffer = {r['buffer']}")
    if r.get("counters"):
        lines.append(f"  counters = {strlist(r['counters'])}")
    if "overflow" in r:
        lines.append(f"  overflow-threshold = {r['overflow']}")
    if r.get("report_unchanged"):
        lines.append("  report-unchanged = true")
    return lines
