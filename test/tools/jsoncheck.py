#!/usr/bin/env python3
"""Compare intspect JSON-lines output with expectations, field by field.

Usage: jsoncheck.py EXPECT ACTUAL
EXPECT holds one JSON object per expected output line (same order). Each key
must be present in the actual object with an equal value, except the special
key "absent": a list of keys that must NOT appear, and "malformed": REASON,
which the actual meta.malformed ("proto.REASON") must end with. A key "lines" in the first
object, if present, is the exact number of output lines.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def main():
    expect, actual = load(sys.argv[1]), load(sys.argv[2])
    errors = []
    n = expect[0].pop("lines", None) if expect else None
    if n is not None and n != len(actual):
        errors.append(f"expected {n} lines, got {len(actual)}")
    if len(actual) < len(expect):
        errors.append(f"expected at least {len(expect)} lines, got {len(actual)}")
    for i, (e, a) in enumerate(zip(expect, actual), 1):
        for k, v in e.items():
            if k == "malformed":
                got = a.get("meta.malformed", "")
                if not got.endswith("." + v):
                    errors.append(f"line {i}: meta.malformed = {got!r}, expected *.{v}")
                continue
            if k == "absent":
                for key in v:
                    if key in a:
                        errors.append(f"line {i}: {key} should be absent, is {a[key]!r}")
                continue
            if k not in a:
                errors.append(f"line {i}: missing {k} (expected {v!r})")
            elif a[k] != v:
                errors.append(f"line {i}: {k} = {a[k]!r}, expected {v!r}")
    for e in errors[:50]:
        print(e)
    print(f"{sys.argv[2]}: {len(actual)} lines, {len(errors)} mismatches")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
