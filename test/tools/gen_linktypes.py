#!/usr/bin/env python3
"""Write test/data/gen-linktype-*.pcap: the packets of three Ethernet
captures (INT v2.1 over UDP/IPv4, INT v2.1 over UDP/IPv6, a telemetry
report v0.5 around INT v0.5 over TCP) with the Ethernet header replaced by
another link type's header, so test/inputs/linktypes.sh can check that the
decoded attributes do not depend on the link. Bytes only, no scapy.

    python3 test/tools/gen_linktypes.py [DATA_DIR]    (default: test/data)

Each output holds the sources named in FILES, in that order;
test/inputs/linktypes.sh repeats that table.
"""
import os
import struct
import sys

V4, V6, REP = 'int-v2.1-md-udp', 'gen-int-v2.1-ipv6', 'report-v0.5-int-v0.5-tcp'
AF_INET = 2


def read_pcap(path):
    """[(sec, usec, frame)] of a little-endian microsecond pcap."""
    with open(path, 'rb') as f:
        data = f.read()
    magic, = struct.unpack('<I', data[:4])
    assert magic == 0xa1b2c3d4, path + ': expected a little-endian microsecond pcap'
    assert struct.unpack('<I', data[20:24])[0] == 1, path + ': not Ethernet'
    out, off = [], 24
    while off < len(data):
        sec, usec, incl, orig = struct.unpack('<IIII', data[off:off + 16])
        assert incl == orig, path + ': a cut record'
        out.append((sec, usec, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out


def write_pcap(path, linktype, records, endian='<'):
    """records: [(sec, usec, bytes)]; endian '>' writes a big-endian file,
    as a big-endian host would."""
    out = struct.pack(endian + 'IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 262144, linktype)
    for sec, usec, pkt in records:
        out += struct.pack(endian + 'IIII', sec, usec, len(pkt), len(pkt)) + pkt
    with open(path, 'wb') as f:
        f.write(out)


def strip_eth(frame):
    """(ethertype, source MAC, packet after the Ethernet header)"""
    etype, = struct.unpack('>H', frame[12:14])
    assert etype in (0x0800, 0x86dd), 'expected IPv4 or IPv6 right after Ethernet'
    return etype, frame[6:12], frame[14:]


def sll(i, etype, mac, pkt):
    # packet type alternates "to us" (0) and "sent by us" (4); Ethernet device
    return struct.pack('>HHH8sH', 0 if i % 2 == 0 else 4, 1, 6, mac, etype) + pkt


def sll2(i, etype, mac, pkt):
    # interface index 7, Ethernet device, packet type as in sll()
    return struct.pack('>HHIHBB8s', etype, 0, 7, 1, 0 if i % 2 == 0 else 4, 6, mac) + pkt


def raw(i, etype, mac, pkt):
    return pkt


# AF_INET6 as Linux (10), OpenBSD/NetBSD (24), FreeBSD (28), macOS (30) say it
def null_le(i, etype, mac, pkt):
    return struct.pack('<I', AF_INET if etype == 0x0800 else (10, 30)[i % 2]) + pkt


def null_be(i, etype, mac, pkt):
    return struct.pack('>I', AF_INET if etype == 0x0800 else (24, 28)[i % 2]) + pkt


def loop(i, etype, mac, pkt):
    return struct.pack('>I', AF_INET if etype == 0x0800 else 24) + pkt


# name: (LINKTYPE_, header builder, sources, pcap byte order)
FILES = {
    'sll': (113, sll, (V4, V6, REP), '<'),
    'sll2': (276, sll2, (V4, V6, REP), '<'),
    'raw': (101, raw, (V4, V6, REP), '<'),
    'ipv4': (228, raw, (V4, REP), '<'),
    'ipv6': (229, raw, (V6,), '<'),
    'null-le': (0, null_le, (V4, V6, REP), '<'),
    'null-be': (0, null_be, (V4, V6, REP), '>'),
    'loop': (108, loop, (V4, V6, REP), '<'),
}


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join('test', 'data')
    for name, (linktype, build, sources, endian) in FILES.items():
        records = []
        for src in sources:
            for sec, usec, frame in read_pcap(os.path.join(data, src + '.pcap')):
                etype, mac, pkt = strip_eth(frame)
                records.append((sec, usec, build(len(records), etype, mac + b'\0\0', pkt)))
        write_pcap(os.path.join(data, 'gen-linktype-%s.pcap' % name), linktype, records, endian)


if __name__ == '__main__':
    main()
