#!/bin/sh
# test/faults/full.sh TMP INTSPECT SEND PORT - run.sh's disk-full scenario,
# inside a mount namespace of its own (unshare -m): a 256 KiB tmpfs on
# TMP/disk, 200 KiB of it taken by a filler; intspect writes TMP/full.conf's
# records there while 1000 reports arrive, the filler is removed, 1000
# more arrive. Leaves TMP/full.{err,rc,df,json}.
set -u
tmp=$1 bin=$2 send=$3 port=$4
mount -t tmpfs -o size=256k none "$tmp/disk" || exit 90
dd if=/dev/zero of="$tmp/disk/filler" bs=1k count=200 2>/dev/null
"$bin" -C "$tmp/full.conf" -u "127.0.0.1:$port" -q >/dev/null 2>"$tmp/full.err" &
p=$!
sleep 0.5
python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.02 >/dev/null     # fills the disk
sleep 0.3
df -k "$tmp/disk" | tail -n 1 >"$tmp/full.df"
rm -f "$tmp/disk/filler"                                                # space again
python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.02 >/dev/null
sleep 0.5
kill -INT "$p"
wait "$p"
echo $? >"$tmp/full.rc"
cp "$tmp/disk/out.json" "$tmp/full.json"
umount "$tmp/disk"
