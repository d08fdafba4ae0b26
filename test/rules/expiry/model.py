#!/usr/bin/env python3
"""model.py DUMP IDLE_MS: the records of run.sh's rule, from `intspect
--dump`, by the definitions of dsl/README.md (not the engine's code):

  event-report with event = delta-cond = int.hop_switch_ids, delta-key =
  {ip.src, ip.dst}, idle-timeout-ms = IDLE_MS, attributes = {ip.src,
  ip.dst, int.hop_switch_ids}.

  Keys are swept every IDLE/4 of packet time: the first packet sets the
  first sweep point, the next multiple of IDLE/4 after its time; a packet
  at or past the point sweeps, before it counts, at its own time t, then
  the point moves to the next multiple after t. A sweep expires every key
  whose last packet is at or before t - IDLE: a record {type expired, time
  t, the key's values, last_seen}, and the key is forgotten (its next
  packet reports as a new key). The end of the input sweeps nothing.

Prints one JSON object per record with times in integer microseconds,
keys sorted."""
import json
import sys
from decimal import Decimal


def us(x):
    return int(Decimal(str(x)) * 1000000)


def main():
    idle = int(sys.argv[2]) * 1000              # microseconds
    period = max(idle // 4, 1000)
    keys = {}                                   # key -> [last switch ids, last seen]
    order = []                                  # insertion order of the live keys
    next_sweep = None
    out = []
    with open(sys.argv[1]) as f:
        for line in f:
            d = json.loads(line)
            t = us(d["meta.timestamp"])
            if next_sweep is None:
                next_sweep = (t // period + 1) * period
            elif t >= next_sweep:
                for k in list(order):
                    if keys[k][1] <= t - idle:
                        out.append({"report": "paths", "type": "expired", "time": t,
                                    "ip.src": k[0], "ip.dst": k[1], "last_seen": keys[k][1]})
                        del keys[k]
                        order.remove(k)
                next_sweep = (t // period + 1) * period
            ids = d.get("int.hop_switch_ids")
            if ids is None:
                continue
            k = (d.get("ip.src"), d.get("ip.dst"))
            if k not in keys:
                keys[k] = [ids, t]
                order.append(k)
                report = True
            else:
                report = keys[k][0] != ids
                keys[k][1] = t
                if report:
                    keys[k][0] = ids
            if report:
                out.append({"report": "paths", "type": "event", "time": t, "ip.src": k[0],
                            "ip.dst": k[1], "int.hop_switch_ids": ids})
    for r in out:
        print(json.dumps(r, sort_keys=True))


if __name__ == "__main__":
    main()
