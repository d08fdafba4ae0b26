#!/usr/bin/env python3
"""Set a dump's link layer aside, so dumps of one packet under different
link types compare equal (test/inputs/linktypes.sh).

    intspect -r X.pcap --dump | linkstrip.py HDRLEN|-

For each JSON line: the outermost layer's attributes are dropped (the
instances of its protocol further in are renumbered as they would be
without it), it leaves meta.proto_hierarchy, HDRLEN (its length) is taken
off meta.packet_len and meta.caplen; "-" (LINKTYPE_IPV4, LINKTYPE_IPV6:
no link layer) keeps the layers. meta.packet_index is dropped (a file may
gather packets of several captures). Keys are written sorted.
"""
import json
import re
import sys


def strip(d, hdrlen):
    del d['meta.packet_index']
    if hdrlen is None:
        return d
    parts = d['meta.proto_hierarchy'].split('.')
    link, n = parts[0], parts.count(parts[0])
    d['meta.proto_hierarchy'] = '.'.join(parts[1:])
    d['meta.packet_len'] -= hdrlen
    d['meta.caplen'] -= hdrlen
    out = {}
    for k, v in d.items():
        m = re.match(r'^%s\.(?:(\d+)\.)?(.*)$' % re.escape(link), k)
        if not m:
            out[k] = v
            continue
        inst = int(m.group(1)) if m.group(1) else n   # bare = innermost
        if inst == 1:
            continue                                  # the link layer
        out[k if inst == n else '%s.%d.%s' % (link, inst - 1, m.group(2))] = v
    return out


def main():
    hdrlen = None if sys.argv[1] == '-' else int(sys.argv[1])
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(strip(json.loads(line), hdrlen), sort_keys=True))


if __name__ == '__main__':
    main()
