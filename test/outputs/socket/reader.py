#!/usr/bin/env python3
"""reader.py stall tcp PORT | stall unix PATH - a reader that accepts
connections and never reads from them, so intspect's socket buffers fill
up. Runs until killed."""
import socket
import sys
import time


def main():
    mode, kind, where = sys.argv[1:4]
    if mode != "stall":
        sys.exit("usage: reader.py stall tcp PORT | stall unix PATH")
    if kind == "tcp":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(where)))
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(where)
    s.listen(4)
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)          # kept open, never read
        time.sleep(0.01)


if __name__ == "__main__":
    main()
