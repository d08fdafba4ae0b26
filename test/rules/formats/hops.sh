#!/bin/sh
# Per-hop arrays in event records, JSON and MMT-Probe's CSV: whichever
# way the writer takes (the INT plugin's put, straight from the packet, or
# the getter's array when a hop's value is unavailable or a rule read the
# attribute already), every record holds the values --dump shows for its
# item, which reads each attribute through its getter alone. JSON: the
# same array, null where unavailable; CSV: one cell a hop, the last hop
# first, 0 where unavailable. Captures: inline INT v1.0 and v2.1 (8-byte
# timestamps) and coalesced v2.0 reports, 1 to 6 hops, 1 in 50 values
# all-ones.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

hops="int.hop_switch_ids int.hop_ingress_port_ids int.hop_egress_port_ids int.hop_latencies
int.hop_queue_ids int.hop_queue_occups int.hop_ingress_times int.hop_egress_times
int.hop_lv2_ingress_port_ids int.hop_tx_utilizes"
list=$(for a in $hops; do printf '"%s", ' "$a"; done)
# e1 reads no per-hop attribute before writing them (each goes by put);
# e2's event is a per-hop attribute, which its record then writes from
# the rule's cached array, next to the others; e3 writes 42 attributes,
# its per-hop ones past the writers' batch of 32 fields
cat >"$tmp/r.conf" <<CONF
event-report e1 {
  event = "int.num_hop"
  attributes = {${list}"ip.src"}
  output-channel = {"json", "csv"}
}
event-report e2 {
  event = "int.hop_latencies"
  attributes = {${list}"ip.src"}
  output-channel = {"json", "csv"}
}
event-report e3 {
  event = "int.num_hop"
  attributes = {"eth.dst", "eth.src", "eth.ethertype", "ip.version", "ip.header_len", "ip.tos",
                "ip.dscp", "ip.ecn", "ip.tot_len", "ip.identification", "ip.df", "ip.mf",
                "ip.frag_offset", "ip.ttl", "ip.proto", "ip.checksum", "ip.dst", "ip.options_len",
                "udp.src_port", "udp.dst_port", "udp.len", "udp.checksum", "int.version",
                "int.mode", "int.carrier", "int.instruction_bits", "int.wire_instruction_bits",
                "int.e_bit", "int.m_bit", "int.shim_len", "int.domain_id", ${list}"ip.src"}
  output-channel = {"json", "csv"}
}
file-output json { path = "$tmp/r.json" }
file-output csv { path = "$tmp/r.csv"; format = csv }
CONF

check_capture() {
	name=$1
	shift
	"$bld/intgen" -o "$tmp/$name.pcap" -n 600 --seed 5 --hops 1-6 --bitmap 0xFF00 --unavailable "$@" 2>/dev/null
	rm -f "$tmp/r.json" "$tmp/r.csv"
	"$bld/intspect" -C "$tmp/r.conf" -r "$tmp/$name.pcap" 2>"$tmp/err"
	rc=$?
	[ "$rc" -eq 0 ] && ok "$name: run" || bad "$name: run: exit $rc" "$tmp/err"
	"$bld/intspect" --dump -r "$tmp/$name.pcap" >"$tmp/dump" 2>/dev/null
	if python3 - "$tmp/dump" "$tmp/r.json" "$tmp/r.csv" "$hops" >"$tmp/py" 2>&1 <<'PY'
import csv, json, sys
dump = [json.loads(l) for l in open(sys.argv[1])]
hops = sys.argv[4].split()
recs = [json.loads(l) for l in open(sys.argv[2])]
rows = list(csv.reader(open(sys.argv[3])))
items = [d for d in dump if "int.num_hop" in d]
assert len(items) > 500, len(items)
unavail = sum(1 for d in items for a in hops for v in d.get(a) or [] if v is None)
assert unavail > 0, "no unavailable value in the capture"
by = {"e1": [], "e2": [], "e3": []}
for r in recs:
    by[r["report"]].append(r)
assert all(len(by[e]) == len(items) for e in by), ([len(by[e]) for e in by], len(items))
for name in ("e1", "e2", "e3"):
    for d, r in zip(items, by[name]):
        for a in hops:
            assert r.get(a) == d.get(a), (name, a, r.get(a), d.get(a))
# CSV: 1000, probe, source, time, report, the event's value (its hops'
# cells for e2), then each attribute's cells
csvby = {"e1": [], "e2": [], "e3": []}
for row in rows:
    csvby[row[4]].append(row[5:])
for name in ("e1", "e2"):
    assert len(csvby[name]) == len(items)
    for d, cells in zip(items, csvby[name]):
        n = d["int.num_hop"]
        first = [d["int.num_hop"]] if name != "e2" else d["int.hop_latencies"][::-1]
        want = [str(0 if v is None else v) for v in first]
        for a in hops:
            want += [str(0 if v is None else v) for v in d[a][::-1]]
        want.append(d["ip.src"])
        assert len(d[hops[0]]) == n
        # e3's other attributes first: its per-hop cells are the row's end
        got = cells if name != "e3" else cells[:1] + cells[len(cells) - len(want) + 1:]
        assert got == want, (name, cells, want)
print(len(items), "items,", unavail, "unavailable values")
PY
	then
		ok "$name: per-hop arrays as --dump has them ($(cat "$tmp/py"))"
	else
		bad "$name: per-hop arrays differ from --dump" "$tmp/py"
	fi
}

check_capture inline-v1 --int-version 1.0
check_capture inline-v21 --int-version 2.1
check_capture report-v20 --format report --report-version 2.0 --coalesce 3
summary formats-hops
