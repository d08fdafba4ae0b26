#!/usr/bin/env python3
"""pcap_times.py FILE: "COUNT FIRST LAST" of a pcap file's records, its
earliest and latest capture times in microseconds (a test's reference for
the times intspect gives, read here without intspect). Classic pcap, either
byte order, microsecond or nanosecond magic."""
import struct
import sys

d = open(sys.argv[1], "rb").read()
magic = d[:4]
if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
    e = "<"
elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
    e = ">"
else:
    sys.exit("%s: not a classic pcap file" % sys.argv[1])
nano = magic in (b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d")
o, ts = 24, []
while o + 16 <= len(d):
    s, frac, incl = struct.unpack(e + "III", d[o:o + 12])
    ts.append(s * 10**6 + (frac // 1000 if nano else frac))
    o += 16 + incl
if not ts:
    sys.exit("%s: no record" % sys.argv[1])
print(len(ts), min(ts), max(ts))
