#!/usr/bin/env python3
"""Write the DTA golden captures from the wire format of
src/plugins/dta/README.md, byte by byte (no intspect or intgen code):

  make-dta.py OUTDIR    -> OUTDIR/dta-every-opcode.pcap, OUTDIR/dta-no-seq.pcap

Ethernet / IPv4 / UDP (source port 50001, destination 40040) / DTA.
The expectations (dta-*.expect) are written from these bytes by hand.
"""
import struct
import sys


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def frame(payload, sport=50001, dport=40040):
    udp = struct.pack('!HHHH', sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                     bytes([10, 0, 0, 2]), bytes([10, 0, 100, 1]))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    eth = bytes.fromhex('020000000002' '020000000001' '0800')
    return eth + ip + udp


def pcap(path, frames):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack('<IIII', 1700000000 + i, 0, len(fr), len(fr)))
            f.write(fr)


def main():
    out = sys.argv[1]
    with_seq = [
        # Key-Write: opcode 1, seq 7, flags 0x41 (retransmit, priority 1),
        # redundancy 2, key 0x01020304, data 0xdeadbeef 0x00000005
        bytes([1, 7, 0x41, 2]) + bytes.fromhex('01020304' 'deadbeef' '00000005'),
        # Append: seq 8, flags 0x83 (immediate, priority 3), list 3, data 42
        bytes([2, 8, 0x83]) + bytes.fromhex('00000003' '0000002a'),
        # Key-Increment: seq 9, flags 0x40, redundancy 4, key 0xa0b0c0d0,
        # counter 0x0000000100000002
        bytes([3, 9, 0x40, 4]) + bytes.fromhex('a0b0c0d0' '0000000100000002'),
        # Postcarder: seq 10, flags 0x42, key 77, hop 2, data 0x0a0b0c0d
        bytes([4, 10, 0x42]) + bytes.fromhex('0000004d' '02' '0a0b0c0d'),
        # Sketch-Merge: seq 11, flags 0x40, sketch 1, reporter 3, epoch 9,
        # column 16, columns 2, reserved 0; 2 rows: 1, 2, 3, 0xffffffff
        bytes([5, 11, 0x40]) + bytes.fromhex('0001' '0003' '0009' '0010' '0002' '0000'
                                             '00000001' '00000002' '00000003' 'ffffffff'),
        # opcode 9: no such opcode (bad_version)
        bytes([9, 12, 0x40]) + bytes.fromhex('00000000'),
        # Key-Write whose data is 3 bytes (not a multiple of 4: bad_length)
        bytes([1, 13, 0x40, 1]) + bytes.fromhex('00000001' 'aabbcc'),
        # Key-Increment with a byte too many (bad_length)
        bytes([3, 14, 0x40, 1]) + bytes.fromhex('00000001' '0000000000000001' '00'),
        # Sketch-Merge with columns 0 (bad_length)
        bytes([5, 15, 0x40]) + bytes.fromhex('0001' '0000' '0000' '0000' '0000' '0000'
                                             '00000001'),
    ]
    pcap(out + '/dta-every-opcode.pcap', [frame(p) for p in with_seq])
    no_seq = [
        # the 2-byte header: Key-Write, flags 0x00, redundancy 1, key 5, data 6
        bytes([1, 0x00, 1]) + bytes.fromhex('00000005' '00000006'),
        # Append, flags 0x01, list 0, data 1 2
        bytes([2, 0x01]) + bytes.fromhex('00000000' '00000001' '00000002'),
    ]
    pcap(out + '/dta-no-seq.pcap', [frame(p) for p in no_seq])


main()
