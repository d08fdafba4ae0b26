#!/usr/bin/env python3
"""Write test/data/gen-bad-wirelen.pcap: the INT v2.1 over UDP packet of
int-v2.1-md-udp.pcap six times, with record original lengths (the second
column) that are fine or corrupt. test/cli/run.sh expects records 2, 3 and
5 refused as meta.bad_wire_len, and 1, 4 and 6 decoded.

    python3 test/tools/gen_bad_wirelen.py [DATA_DIR]    (default: test/data)
"""
import os
import struct
import sys

# original length for each copy; None = the captured length
ORIG = (
    None,       # 1: as captured
    100,        # 2: fewer bytes on the wire than captured
    300000,     # 3: more than any link carries (above 262144)
    262144,     # 4: the largest allowed: a packet cut by a snap length
    262145,     # 5: one more
    None,       # 6: as captured, after the bad ones
)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join('test', 'data')
    with open(os.path.join(data, 'int-v2.1-md-udp.pcap'), 'rb') as f:
        src = f.read()
    assert struct.unpack('<I', src[:4])[0] == 0xa1b2c3d4
    sec, usec, incl, _ = struct.unpack('<IIII', src[24:40])
    pkt = src[40:40 + incl]
    out = src[:24]
    for i, orig in enumerate(ORIG):
        out += struct.pack('<IIII', sec, usec + i, incl, incl if orig is None else orig) + pkt
    with open(os.path.join(data, 'gen-bad-wirelen.pcap'), 'wb') as f:
        f.write(out)


if __name__ == '__main__':
    main()
