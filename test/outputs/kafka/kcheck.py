#!/usr/bin/env python3
"""kcheck.py - helpers of test/outputs/kafka/run.sh (Python 3 standard library).

  kcheck.py feed PCAP SECONDS        copy a classic pcap to stdout over SECONDS
  kcheck.py same STDOUT KCAT [MAP]   the topic holds exactly intspect's records,
                                     in order per key, each key in one partition;
                                     MAP gets "key<TAB>partition" lines
  kcheck.py stable MAP1 MAP2 [MIN]   same key -> same partition; >= MIN partitions
  kcheck.py murmur MAP PARTITIONS    partition == Java client's murmur2(key) % N
  kcheck.py codec SEGMENT CODE       the first record batch's compression codec
  kcheck.py counts STDERR CHANNEL    "queued delivered dropped acked failed"

KCAT files are `kcat -C -e -f '%p\\t%o\\t%k\\t%s\\n'` output. Exit 1 with a
reason on stderr when a check fails.
"""
import struct
import sys
import time


def fail(msg):
    sys.stderr.write(msg + "\n")
    sys.exit(1)


def feed(path, seconds):
    """Packets in 50 slices with a pause after each: intspect reads them as
    a live source would deliver them."""
    data = open(path, "rb").read()
    magic = data[:4]
    order = "<" if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    recs, off = [], 24
    while off + 16 <= len(data):
        incl = struct.unpack(order + "IIII", data[off:off + 16])[2]
        recs.append(data[off:off + 16 + incl])
        off += 16 + incl
    out = sys.stdout.buffer
    out.write(data[:24])
    slices = 50
    per = max(1, (len(recs) + slices - 1) // slices)
    for i in range(0, len(recs), per):
        out.write(b"".join(recs[i:i + per]))
        out.flush()
        time.sleep(seconds / slices)


def read_kcat(path):
    rows = []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            continue
        p, o, k, v = line.split("\t", 3)
        rows.append((int(p), int(o), k, v))
    return rows


def same(stdout_path, kcat_path, map_path=None):
    want = [l.rstrip("\n") for l in open(stdout_path, encoding="utf-8") if l.strip()]
    rows = read_kcat(kcat_path)
    got = [r[3] for r in rows]
    if sorted(want) != sorted(got):
        missing = len([1 for v in set(want) if v not in set(got)])
        fail("records differ: %d on stdout, %d in the topic, %d of stdout missing"
             % (len(want), len(got), missing))
    if len(set(want)) != len(want):
        fail("records are not unique; the order check needs them to be")
    key_of, part_of = {}, {}
    per_key = {}
    for p, o, k, v in sorted(rows, key=lambda r: (r[0], r[1])):
        key_of[v] = k
        if part_of.setdefault(k, p) != p:
            fail("key %r in partitions %d and %d" % (k, part_of[k], p))
        per_key.setdefault(k, []).append(v)
    for k, vals in per_key.items():
        order = [v for v in want if key_of[v] == k]
        if order != vals:
            fail("key %r: records out of order in the topic" % k)
    if map_path:
        with open(map_path, "w", encoding="utf-8") as f:
            for k in sorted(part_of):
                f.write("%s\t%d\n" % (k, part_of[k]))
    print("%d records, %d keys, %d partitions" % (len(got), len(per_key),
                                                   len(set(part_of.values()))))


def read_map(path):
    m = {}
    for line in open(path, encoding="utf-8"):
        k, p = line.rstrip("\n").split("\t")
        m[k] = int(p)
    return m


def stable(a, b, least=1):
    m1, m2 = read_map(a), read_map(b)
    if m1 != m2:
        diff = [k for k in m1 if m2.get(k) != m1[k]]
        fail("partitions differ between runs for %d keys, e.g. %r" % (len(diff), diff[:3]))
    if len(set(m1.values())) < least:
        fail("keys in %d partitions, expected at least %d" % (len(set(m1.values())), least))


def murmur2(data):
    """Kafka's Utils.murmur2 (the Java producer's default partitioner)."""
    m, r = 0x5BD1E995, 24
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(length // 4):
        k = int.from_bytes(data[4 * i:4 * i + 4], "little")
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    tail = length & ~3
    rem = length % 4
    if rem == 3:
        h ^= data[tail + 2] << 16
    if rem >= 2:
        h ^= data[tail + 1] << 8
    if rem >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h


def murmur(map_path, n):
    for k, p in read_map(map_path).items():
        if not k:
            continue
        want = (murmur2(k.encode()) & 0x7FFFFFFF) % n
        if p != want:
            fail("key %r in partition %d, a Java producer would choose %d" % (k, p, want))


def codec(segment, code):
    """Record batch v2: baseOffset(8) length(4) epoch(4) magic(1) crc(4)
    attributes(2), codec in the low 3 bits (1 gzip 2 snappy 3 lz4 4 zstd)."""
    head = open(segment, "rb").read(23)
    if len(head) < 23 or head[16] != 2:
        fail("%s: no v2 record batch" % segment)
    attrs = struct.unpack(">h", head[21:23])[0]
    if attrs & 7 != code:
        fail("%s: codec %d, expected %d" % (segment, attrs & 7, code))


def counts(stderr_path, channel):
    """intspect's channel line and the kafka type's acked line."""
    q = d = dr = a = f = None
    for line in open(stderr_path, encoding="utf-8", errors="replace"):
        pre = "intspect: channel %s: " % channel
        if not line.startswith(pre):
            continue
        w = line[len(pre):].replace(",", "").split()
        if len(w) >= 7 and w[1:3] == ["records", "queued"]:
            q, d, dr = int(w[0]), int(w[3]), int(w[5])
        elif len(w) >= 5 and w[0] == "kafka:" and w[2] == "acked":
            a, f = int(w[1]), int(w[3])
    if None in (q, d, dr, a, f):
        fail("no counters of channel %s in %s" % (channel, stderr_path))
    print(q, d, dr, a, f)


def main(argv):
    cmd, args = argv[1], argv[2:]
    if cmd == "feed":
        feed(args[0], float(args[1]))
    elif cmd == "same":
        same(*args)
    elif cmd == "stable":
        stable(args[0], args[1], int(args[2]) if len(args) > 2 else 1)
    elif cmd == "murmur":
        murmur(args[0], int(args[1]))
    elif cmd == "codec":
        codec(args[0], int(args[1]))
    elif cmd == "counts":
        counts(args[0], args[1])
    else:
        fail("unknown command " + cmd)


if __name__ == "__main__":
    main(sys.argv)
