#!/usr/bin/env python3
"""reader.py stall tcp PORT | stall unix PATH - a reader that accepts
connections and never reads from them, so intspect's socket buffers fill
up. reader.py shutwr tcp PORT OUT - a reader that shuts down its sending
side on its first connection (and reads it), then reads the next ones;
each connection's bytes go to OUT.N (N from 1), and OUT.shut is
created once the first is shut down. Both run until killed."""
import socket
import sys
import time


def shutwr(s, out):
    n = 0
    while True:
        c, _ = s.accept()
        n += 1
        if n == 1:
            c.shutdown(socket.SHUT_WR)
            open("%s.shut" % out, "w").close()
        with open("%s.%d" % (out, n), "wb") as f:
            while True:
                b = c.recv(65536)
                if not b:
                    break
                f.write(b)
                f.flush()
        c.close()


def main():
    mode, kind, where = sys.argv[1:4]
    if mode not in ("stall", "shutwr"):
        sys.exit("usage: reader.py stall tcp PORT | stall unix PATH | shutwr tcp PORT OUT")
    if kind == "tcp":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", int(where)))
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(where)
    s.listen(4)
    if mode == "shutwr":
        shutwr(s, sys.argv[4])
    held = []
    while True:
        c, _ = s.accept()
        held.append(c)          # kept open, never read
        time.sleep(0.01)


if __name__ == "__main__":
    main()
