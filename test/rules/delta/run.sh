#!/bin/sh
# Plain delta-cond events (no band, no threshold) on every kind of value:
# a string and a MAC address, an IPv4 address and per-hop arrays (with
# unavailable hops and 64-bit times) under a key, an IPv6 address, and a
# per-hop rule. The records are those of an independent model computed
# from the --dump of the same capture by the rule's definition
# (dsl/README.md), in order on one worker, the same set on 2: report when
# the key is new or any delta value differs from the last reported ones;
# an item with none of them present reports nothing. Also the boundaries
# of delta-threshold (a move of more than N) and keepalive-ms (silent N ms
# or more), each on both sides.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

cat >"$tmp/r.conf" <<CONF
event-report kinds {
  event = "meta.packet_len"
  delta-cond = {"meta.proto_hierarchy", "eth.src"}
  attributes = {"meta.packet_index", "meta.report_index"}
  output-channel = {stdout}
}
event-report mixed {
  event = "meta.packet_len"
  delta-key = {"ip.dst"}
  delta-cond = {"ip.src", "int.hop_latencies", "int.hop_egress_times"}
  attributes = {"meta.packet_index", "meta.report_index"}
  output-channel = {stdout}
}
event-report six {
  event = "meta.packet_len"
  delta-cond = {"ipv6.src"}
  attributes = {"meta.packet_index", "meta.report_index"}
  output-channel = {stdout}
}
event-report hops {
  per-hop = true
  event = "int.hop_queue_occups"
  delta-key = {"int.hop_switch_ids"}
  delta-cond = {"int.hop_queue_occups"}
  attributes = {"meta.packet_index", "meta.report_index", "int.hop_switch_ids"}
  output-channel = {stdout}
}
CONF

cat >"$tmp/model.py" <<'PY'
import json, sys

RULES = [("kinds", [], ["meta.proto_hierarchy", "eth.src"]),
         ("mixed", ["ip.dst"], ["ip.src", "int.hop_latencies", "int.hop_egress_times"]),
         ("six", [], ["ipv6.src"])]
last = {name: {} for name, _, _ in RULES}
hop_last = {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    at = (d["meta.packet_index"], d["meta.report_index"])
    for name, keys, cond in RULES:
        vals = [d.get(a) for a in cond]
        if all(v is None for v in vals):
            continue
        key = json.dumps([d.get(k) for k in keys])
        if last[name].get(key, "new") != vals:
            last[name][key] = vals
            print(name, *at)
    occ, sw = d.get("int.hop_queue_occups"), d.get("int.hop_switch_ids")
    for h in range(len(occ) if isinstance(occ, list) else 0):
        if occ[h] is None:
            continue
        key = sw[h] if isinstance(sw, list) and h < len(sw) else None
        if hop_last.get(key, "new") != occ[h]:
            hop_last[key] = occ[h]
            print("hops", *at, key)
PY
got() {
	python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    extra = [d["int.hop_switch_ids"]] if d["report"] == "hops" else []
    print(d["report"], d["meta.packet_index"], d["meta.report_index"], *extra)'
}

"$bld/intgen" -o "$tmp/gen.pcap" -n 3000 --seed 5 --format report --report-version 2.0 \
	--coalesce 3 --hops 1-6 --flows 12 --unavailable 2>/dev/null
for cap in "$src/test/data/gen-mesh-reports.pcap" "$src/test/data/gen-int-v2.1-ipv6.pcap" \
	   "$src/test/data/gen-report-v2.0-coalesced.pcap" "$tmp/gen.pcap"; do
	name=$(basename "$cap")
	"$bld/intspect" -r "$cap" --dump >"$tmp/dump" 2>/dev/null
	python3 "$tmp/model.py" "$tmp/dump" >"$tmp/model"
	n=$(wc -l <"$tmp/model" | tr -d ' ')
	kinds=$(cut -d' ' -f1 "$tmp/model" | sort -u | tr '\n' ' ')
	"$bld/intspect" -r "$cap" -C "$tmp/r.conf" 2>"$tmp/err" | got >"$tmp/got"
	cmp -s "$tmp/got" "$tmp/model" && [ "$n" -gt 2 ] &&
		ok "$name: the model's $n records ($kinds), in order" ||
		{ diff "$tmp/model" "$tmp/got" | head -20 >"$tmp/d"; cat "$tmp/err" >>"$tmp/d"; bad "$name: records differ from the model" "$tmp/d"; }
	"$bld/intspect" -r "$cap" -C "$tmp/r.conf" -w 2 2>"$tmp/err" | got | sort >"$tmp/got2"
	sort "$tmp/model" | cmp -s - "$tmp/got2" &&
		ok "$name: 2 workers, the same $n records" ||
		{ sort "$tmp/model" | diff - "$tmp/got2" | head -20 >"$tmp/d"; cat "$tmp/err" >>"$tmp/d"; bad "$name: 2 workers differ from the model" "$tmp/d"; }
done
# the boundaries: delta-threshold reports a move of more than N (not N),
# keepalive-ms a key silent for N ms or more (packets 250 ms apart); the
# model's counts from the dump
cap=$src/test/data/gen-rules-8.pcap
"$bld/intspect" -r "$cap" --dump >"$tmp/dump8" 2>/dev/null
bound() {       # KEY VALUE: the rule's records
	printf 'event-report b {\n  event = "int.latency"\n  %s\n  %s = %s\n}\n' \
		"$( [ "$1" = delta-threshold ] && echo 'delta-cond = {"int.latency"}' || echo 'delta-cond = {"int.is_hop_latency"}')" \
		"$1" "$2" >"$tmp/b.conf"
	"$bld/intspect" -r "$cap" -C "$tmp/b.conf" 2>/dev/null | wc -l | tr -d ' '
}
for kv in "delta-threshold 316" "delta-threshold 317" "keepalive-ms 500" "keepalive-ms 501"; do
	set -- $kv
	want=$(python3 -c '
import json, sys
key, n = sys.argv[2], int(sys.argv[3])
recs, last, last_t = 0, None, None
for l in open(sys.argv[1]):
    d = json.loads(l)
    t = round(d["meta.timestamp"] * 1000)
    if key == "delta-threshold":
        v = d["int.latency"]
        if last is None or abs(v - last) > n:
            recs, last = recs + 1, v
    elif last_t is None or t - last_t >= n:
        recs, last_t = recs + 1, t
print(recs)' "$tmp/dump8" "$1" "$2")
	got=$(bound "$1" "$2")
	[ "$got" = "$want" ] && ok "$1 = $2: $got records, as the model's boundary says" ||
		bad "$1 = $2: $got records, the model $want"
done
summary delta
