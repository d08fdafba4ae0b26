#!/usr/bin/env python3
"""model.py DUMP BAND: the records of the per-hop event rule of run.sh,
computed from `intspect --dump` (every attribute of every item) by the
rule's definition in dsl/README.md, not by the engine's code:

  for each item, for each hop h (0 .. the longest of the rule's arrays - 1):
    the event, int.hop_queue_occups[h], must be there (not null);
    key = (int.hop_switch_ids[h], int.hop_queue_ids[h]);
    band = floor(int.hop_queue_occups[h] / BAND);
    report when the key is new or its band differs from the last reported;
    the record: the occupancy, the switch, the queue (the hop's values),
    ip.src (the item's).

One JSON object per record, without report/type/ts/time, keys sorted."""
import json
import math
import sys

ARRAYS = ["int.hop_queue_occups", "int.hop_switch_ids", "int.hop_queue_ids"]


def at(d, name, h):
    v = d.get(name)
    if v is None:
        return None
    if isinstance(v, list):
        return v[h] if h < len(v) else None
    return v


def main():
    band = float(sys.argv[2])
    last = {}
    with open(sys.argv[1]) as f:
        for line in f:
            d = json.loads(line)
            nh = max([len(d[a]) for a in ARRAYS if isinstance(d.get(a), list)] or [0])
            for h in range(nh):
                occ = at(d, "int.hop_queue_occups", h)
                if occ is None:
                    continue
                key = (at(d, "int.hop_switch_ids", h), at(d, "int.hop_queue_ids", h))
                b = math.floor(occ / band)
                if key in last and last[key] == b:
                    continue
                last[key] = b
                rec = {"int.hop_queue_occups": occ, "int.hop_switch_ids": key[0],
                       "int.hop_queue_ids": key[1], "ip.src": d.get("ip.src")}
                print(json.dumps(rec, sort_keys=True))


if __name__ == "__main__":
    main()
