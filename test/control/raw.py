#!/usr/bin/env python3
"""Send request lines to a control socket on one connection and print each
response line: usage raw.py PATH|HOST:PORT LINE...

Each line is sent and its response read before the next, so a test sees
that one connection survives any number of bad requests.
"""
import socket
import sys


def main():
    where, lines = sys.argv[1], sys.argv[2:]
    if ":" in where and not where.startswith("/"):
        host, port = where.rsplit(":", 1)
        s = socket.create_connection((host, int(port)), timeout=10)
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(where)
    f = s.makefile("rwb")
    for line in lines:
        f.write(line.encode() + b"\n")
        f.flush()
        resp = f.readline()
        if not resp:
            print("connection closed", file=sys.stderr)
            return 1
        sys.stdout.write(resp.decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
