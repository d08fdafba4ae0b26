#!/usr/bin/env python3
"""feed.py IN.pcap [--delay-ms D] [N:FILE ...] - copy a classic pcap to
standard output packet by packet, flushing each, so that intspect -r -
processes packets as they come. Before packet N (counted from 0) it waits
until FILE exists: the test decides when the rest may come (after a reader
went away, after it came back). Exits 1 if a gate is not opened in 30 s."""
import os
import struct
import sys
import time


def main():
    args = sys.argv[1:]
    delay = 0.0
    if len(args) >= 2 and args[0] == "--delay-ms":
        delay = float(args[1]) / 1000
        args = args[2:]
    path, gates = args[0], {}
    for g in args[1:]:
        n, f = g.split(":", 1)
        gates[int(n)] = f
    out = sys.stdout.buffer
    with open(path, "rb") as f:
        head = f.read(24)
        endian = "<" if head[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
        out.write(head)
        out.flush()
        n = 0
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            incl = struct.unpack(endian + "IIII", rec)[2]
            data = f.read(incl)
            if n in gates:
                end = time.time() + 30
                while not os.path.exists(gates[n]):
                    if time.time() > end:
                        sys.exit("feed.py: gate %s never opened" % gates[n])
                    time.sleep(0.01)
            out.write(rec + data)
            out.flush()
            n += 1
            if delay:
                time.sleep(delay)


if __name__ == "__main__":
    main()
