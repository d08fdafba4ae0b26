#!/bin/sh
# test/faults/dns.sh TMP INTSPECT - run.sh's slow-DNS scenario, inside a
# mount namespace of its own (unshare -m): /etc/resolv.conf names a
# resolver on 127.0.0.99 that never answers (1 s timeout, 1 attempt), and
# intspect reads TMP/r.pcap with its records to an InfluxDB channel whose
# host is a name. Leaves TMP/dns.{err,rc,secs}.
set -u
tmp=$1 bin=$2
printf 'nameserver 127.0.0.99\noptions timeout:1 attempts:1\n' >"$tmp/resolv.conf"
mount --bind "$tmp/resolv.conf" /etc/resolv.conf || exit 90
# a resolver that takes every query and answers none
python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.99", 53))
sys.stdout.write("up\n"); sys.stdout.flush()
while True:
    s.recvfrom(4096)
' >"$tmp/dns.up" 2>&1 &
dns=$!
i=0
while ! grep -q up "$tmp/dns.up" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
start=$(date +%s.%N)
"$bin" -C "$tmp/dns.conf" -r "$tmp/r.pcap" -q >/dev/null 2>"$tmp/dns.err"
echo $? >"$tmp/dns.rc"
end=$(date +%s.%N)
echo "$start $end" | awk '{ printf "%.1f\n", $2 - $1 }' >"$tmp/dns.secs"
kill "$dns" 2>/dev/null
umount /etc/resolv.conf
