#!/bin/sh
# Per-packet event records written straight into a file channel's queue
# (outputs/queue_lease.c) against the same records submitted (copied): a
# default queue, where every record goes in place; a 32 KiB queue, too
# small for a lease (room for the largest record, 64 KiB), where every
# record is submitted; 128 KiB and 50 records, where the file's thread
# falls behind and records go either way (both with drop-policy = block).
# The three files must be the same lines in the same order, JSON and CSV,
# and the channels must count every record queued and delivered. With
# drop-newest on the small queue, what the channel delivers is what the
# file holds, and queued = delivered + dropped.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

"$bld/intgen" -o "$tmp/in.pcap" -n 30000 --seed 5 --format report --report-version 2.0 \
	--hops 1-6 --bitmap 0xFF80 --flows 64 2>/dev/null

run() {         # NAME FORMAT CHANNEL-KEYS: $tmp/NAME.out and the -q lines
	cat >"$tmp/$1.conf" <<CONF
file-output out { path = "$tmp/$1.out"; format = $2; $3 }
event-report ev {
  event = "int.hop_latencies"
  attributes = {"meta.timestamp", "ip.src", "ip.dst", "udp.src_port", "int.num_hop", "int.latency",
                "int.hop_switch_ids", "int.hop_queue_occups", "int.hop_egress_times"}
  output-channel = {out}
}
CONF
	"$bld/intspect" -C "$tmp/$1.conf" -r "$tmp/in.pcap" -q >"$tmp/$1.log" 2>&1
}

for fmt in json csv; do
	run "$fmt-big" "$fmt" ""
	run "$fmt-copy" "$fmt" "queue-bytes = 32768; drop-policy = block"
	run "$fmt-mixed" "$fmt" "queue-bytes = 131072; queue-records = 50; drop-policy = block"
	n=$(wc -l <"$tmp/$fmt-big.out")
	[ "$n" -eq 30000 ] && ok "$fmt: 30000 records in place" ||
		bad "$fmt: $n records in place" "$tmp/$fmt-big.log"
	for v in copy mixed; do
		if cmp -s "$tmp/$fmt-big.out" "$tmp/$fmt-$v.out"; then
			ok "$fmt: $v records the same as in place"
		else
			diff "$tmp/$fmt-big.out" "$tmp/$fmt-$v.out" | head -5 >"$tmp/diff"
			bad "$fmt: $v records differ from in place" "$tmp/diff"
		fi
	done
	for v in big copy mixed; do
		if grep -q "channel out: 30000 records queued, 30000 delivered, 0 dropped" "$tmp/$fmt-$v.log"; then
			ok "$fmt: $v counts every record"
		else
			bad "$fmt: $v counts" "$tmp/$fmt-$v.log"
		fi
	done
done

run drop json "queue-bytes = 131072; queue-records = 20"
lines=$(wc -l <"$tmp/drop.out")
set -- $(sed -n 's/.*channel out: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped.*/\1 \2 \3/p' "$tmp/drop.log")
if [ $# -eq 3 ] && [ "$1" -eq 30000 ] && [ "$2" -eq "$lines" ] && [ $(($2 + $3)) -eq 30000 ]; then
	ok "drop-newest: queued $1 = delivered $2 (the file's lines) + dropped $3"
else
	bad "drop-newest: counts against $lines lines" "$tmp/drop.log"
fi
# every line delivered is one of the records, whole and in order
if awk 'NR == FNR { want[$0] = FNR; next } !($0 in want) || want[$0] <= last { exit 1 } { last = want[$0] }' \
	"$tmp/json-big.out" "$tmp/drop.out"; then
	ok "drop-newest: the lines delivered are records, whole, in order"
else
	bad "drop-newest: a line delivered is not a record in order"
fi
summary "outputs/inplace"
