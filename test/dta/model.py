#!/usr/bin/env python3
"""The DTA stores' exact model, from intgen's expected values (the reports
it sent, in capture order) and src/plugins/dta/README.md only; compared
with what another process (dta_read) reads from the stores intspect wrote.

  model.py EXPECT READER KV EV CNT WORDS [--any-order] [--all]

KV, EV, CNT: the key-write, append and key-increment store files ("-" to
skip one). WORDS: the stores' value words. --any-order: several workers
or retransmissions, so appends are compared as multisets and each word of
a Key-Write value may be any one the word held. --all: lost reports count too (they were resent).
Exit 0 when everything agrees; otherwise the differences on stderr.
"""
import json
import subprocess
import sys


def reports(path, include_lost):
    out = []
    for line in open(path):
        d = json.loads(line)
        if 'dta.opcode' not in d:
            continue
        if d.get('lost') and not include_lost:
            continue
        out.append(d)
    if not include_lost:
        out.sort(key=lambda d: d['index'])     # capture order (reordering)
    return out


def read(reader, kind, path, keys=None):
    r = subprocess.run([reader, kind, path], input=keys, capture_output=True, text=True,
                       check=True)
    return [l.split() for l in r.stdout.splitlines()]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    any_order = '--any-order' in sys.argv
    expect, reader, kv, ev, cnt, words = args[0], args[1], args[2], args[3], args[4], int(args[5])
    reps = reports(expect, '--all' in sys.argv)
    bad = []

    # Key-Write and Postcarder: the value of a key (words, zero-padded);
    # a postcard beyond the value is rejected
    value, seen_values = {}, {}
    for d in reps:
        k = d.get('dta.key')
        if d['dta.opcode'] == 1 and len(d['dta.data']) <= words:
            value[k] = d['dta.data'] + [0] * (words - len(d['dta.data']))
        elif d['dta.opcode'] == 4 and d['dta.hop'] < words:
            v = value.get(k, [0] * words)
            v = v[:]
            v[d['dta.hop']] = d['dta.data'][0]
            value[k] = v
        else:
            continue
        seen_values.setdefault(k, []).append(tuple(value[k]))
    if kv != '-':
        keys = sorted(value)
        got = read(reader, 'kw', kv, ''.join('%d\n' % k for k in keys))
        for k, row in zip(keys, got):
            if row[1] == '0':
                bad.append('key-write %d: no answer, expected %s' % (k, value[k]))
                continue
            v = [int(x) for x in row[2:]]
            # in another order (workers, retransmissions) a Postcarder word
            # lands on another base: each word must be one it held
            ok = (all(any(v[i] == sv[i] for sv in seen_values[k]) for i in range(words))
                  if any_order else v == value[k])
            if not ok:
                bad.append('key-write %d: %s, expected %s' % (k, v, value[k]))

    # Key-Increment: count-min estimates never below the true sums; at the
    # tests' low load, equal for nearly every key
    sums = {}
    for d in reps:
        if d['dta.opcode'] == 3:
            sums[d['dta.key']] = sums.get(d['dta.key'], 0) + d['dta.counter']
    if cnt != '-':
        keys = sorted(sums)
        got = read(reader, 'ki', cnt, ''.join('%d\n' % k for k in keys))
        exact = 0
        for k, row in zip(keys, got):
            est = int(row[1])
            if est < sums[k]:
                bad.append('key-increment %d: estimate %d below %d' % (k, est, sums[k]))
            exact += est == sums[k]
        if keys and exact < 0.99 * len(keys):
            bad.append('key-increment: only %d of %d estimates exact' % (exact, len(keys)))

    # Append: each list's entries in order (no lap at the tests' sizes)
    if ev != '-':
        want = {}
        for d in reps:
            if d['dta.opcode'] == 2 and len(d['dta.data']) <= words:
                want.setdefault(d['dta.list'], []).append(
                    tuple(d['dta.data'] + [0] * (words - len(d['dta.data']))))
        got, lost = {}, 0
        for row in read(reader, 'poll', ev):
            if row[0] == 'lost':
                lost += int(row[2])
            else:
                got.setdefault(int(row[0]), []).append(tuple(int(x) for x in row[1:]))
        if lost:
            bad.append('append: %d entries lost' % lost)
        for l in set(want) | set(got):
            a, b = want.get(l, []), got.get(l, [])
            if (sorted(a) != sorted(b)) if any_order else (a != b):
                bad.append('append list %d: %d entries read, %d expected%s' %
                           (l, len(b), len(a), '' if len(a) != len(b) else ' (differ)'))
    for b in bad[:20]:
        print('model:', b, file=sys.stderr)
    print('model: %d values, %d sums, %s' % (len(value), len(sums),
                                              'ok' if not bad else '%d differences' % len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
