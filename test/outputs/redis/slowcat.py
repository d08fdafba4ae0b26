#!/usr/bin/env python3
"""slowcat.py PCAP DELAY_MS - copy a classic pcap file to standard output
one packet at a time, flushing and sleeping DELAY_MS between packets.

intspect reads a capture as fast as it can (it does not replay packet
times), so the outage test feeds it through this script with
`intspect -r -` to make one run last long enough to span a Redis restart.
"""
import struct
import sys
import time


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: slowcat.py PCAP DELAY_MS")
    delay = float(sys.argv[2]) / 1000.0
    out = sys.stdout.buffer
    with open(sys.argv[1], "rb") as f:
        head = f.read(24)
        magic = head[:4]
        if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
            order = "<"
        elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
            order = ">"
        else:
            sys.exit("slowcat.py: not a classic pcap file")
        out.write(head)
        out.flush()
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                break
            caplen = struct.unpack(order + "IIII", rec)[2]
            out.write(rec + f.read(caplen))
            out.flush()
            time.sleep(delay)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(1)
