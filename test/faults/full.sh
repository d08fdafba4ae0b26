#!/bin/sh
# test/faults/full.sh TMP INTSPECT SEND PORT [stays] - run.sh's disk-full
# scenarios, inside a mount namespace of their own (unshare -m): a 256 KiB
# tmpfs on TMP/disk, 200 KiB of it taken by a filler; intspect writes
# TMP/full.conf's records there while 1000 reports arrive, the filler is
# removed, 1000 more arrive. With `stays`: the disk is still full at the
# exit (no filler removed, no second burst), and TMP/full.cut says whether
# the file then ended inside a line ("cut") or not ("whole"). With `dir`:
# the output-dir layout (a file a cache-period), the disk left full for
# 1.5 s so that a new file is due while a line is cut; every file of the
# disk is copied to TMP/fulldir.
# Leaves TMP/full.{err,rc,df,json} (or TMP/fulldir).
set -u
tmp=$1 bin=$2 send=$3 port=$4 mode=${5:-}
mount -t tmpfs -o size=256k none "$tmp/disk" || exit 90
dd if=/dev/zero of="$tmp/disk/filler" bs=1k count=200 2>/dev/null
"$bin" -C "$tmp/full.conf" -u "127.0.0.1:$port" -q >/dev/null 2>"$tmp/full.err" &
p=$!
sleep 0.5
python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.02 >/dev/null     # fills the disk
sleep 0.3
df -k "$tmp/disk" | tail -n 1 >"$tmp/full.df"
if [ "$mode" = stays ]; then
	tail -c 1 "$tmp/disk/out.json" | od -An -c | grep -q '\\n' && echo whole >"$tmp/full.cut" ||
		echo cut >"$tmp/full.cut"
else
	[ "$mode" = dir ] && sleep 1.5          # a new file is due meanwhile
	rm -f "$tmp/disk/filler"                                        # space again
	python3 "$send" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.02 >/dev/null
	sleep 0.5
fi
kill -INT "$p"
wait "$p"
echo $? >"$tmp/full.rc"
if [ "$mode" = dir ]; then
	rm -rf "$tmp/fulldir"
	mkdir "$tmp/fulldir"
	rm -f "$tmp/disk/filler"
	cp "$tmp/disk/"* "$tmp/fulldir/"
else
	cp "$tmp/disk/out.json" "$tmp/full.json"
fi
umount "$tmp/disk"
