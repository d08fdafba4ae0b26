#!/usr/bin/env python3
"""Send the UDP payloads of a pcap's packets to HOST:PORT, as switches send
telemetry reports to a collector. Classic pcap, Ethernet + IPv4 + UDP.

usage: send_reports.py PCAP HOST PORT [PAUSE_EVERY PAUSE_S [SENDERS]]

With SENDERS > 1, the reports go out round-robin from that many sockets
(source ports), as from several switches.
"""
import socket
import struct
import sys
import time


def payloads(path):
    data = open(path, 'rb').read()
    magic = struct.unpack('<I', data[:4])[0]
    endian = '<' if magic in (0xa1b2c3d4, 0xa1b23c4d) else '>'
    off = 24
    while off + 16 <= len(data):
        _, _, incl, _ = struct.unpack(endian + 'IIII', data[off:off + 16])
        pkt = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(pkt) < 14 + 20 + 8 or pkt[12:14] != b'\x08\x00':
            continue
        ihl = (pkt[14] & 0x0f) * 4
        if pkt[14 + 9] != 17:
            continue
        udp = 14 + ihl
        ulen = struct.unpack('>H', pkt[udp + 4:udp + 6])[0]
        yield pkt[udp + 8:udp + ulen]


def main():
    path, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    every = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    pause = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    senders = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(senders)]
    n = 0
    for p in payloads(path):
        socks[n % senders].sendto(p, (host, port))
        n += 1
        if every and n % every == 0:
            time.sleep(pause)
    print(n)


if __name__ == '__main__':
    main()
