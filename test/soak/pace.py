#!/usr/bin/env python3
"""pace.py PCAP HOST PORT RATE SECONDS : send the UDP payloads of PCAP's
packets (Ethernet + IPv4 + UDP, classic pcap) to HOST:PORT at RATE a
second, over and over, for SECONDS, as switches send telemetry reports to
a collector. Prints how many were sent."""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "inputs"))
from send_reports import payloads  # noqa: E402


def main():
    path, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rate, secs = float(sys.argv[4]), float(sys.argv[5])
    data = list(payloads(path))
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    start = time.monotonic()
    n = 0
    while True:
        now = time.monotonic() - start
        if now >= secs:
            break
        due = int(now * rate) + 1
        while n < due:
            s.sendto(data[n % len(data)], (host, port))
            n += 1
        time.sleep(0.005)
    print(n)


if __name__ == "__main__":
    main()
