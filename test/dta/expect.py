#!/usr/bin/env python3
"""intgen's DTA expected values as jsoncheck.py takes them: the reports in
the capture's order (lost ones left out, reordered ones where they went),
without the generator's own keys (index, lost, reordered, gen.*) and the
sketch truth lines.  Usage: expect.py INTGEN.jsonl > EXPECT.jsonl"""
import json
import sys

rows = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    if 'dta.opcode' not in d or d.get('lost'):
        continue
    rows.append(d)
rows.sort(key=lambda d: d['index'])
for d in rows:
    for k in ('index', 'lost', 'reordered'):
        d.pop(k, None)
    print(json.dumps({k: v for k, v in d.items() if not k.startswith('gen.')}))
