#!/bin/sh
# flow-monitor { ... }: what the reference model (rules/refmodel) does not
# cover. The same records, byte for byte, on 1, 2 and 4 workers (JSON, MMT
# CSV, line protocol), sampling included; sampling only chooses flows (a
# sampled flow's records equal its records at sampling 1, and about the
# ratio of flows is kept, the same ones in every run); max-entries evicts
# and counts; -T states the filter's false-positive rate; bad sections are
# refused with file:line:col; the counters at exit add up.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

"$bld/intgen" -o "$tmp/c.pcap" -n 20000 --seed 31 --hops 1-4 --flows 400 --pps 20000 \
	--unavailable 2>/dev/null || { bad "intgen"; summary monitor; exit 1; }

# NAME SAMPLING FORMAT [EXTRA]: a config writing to $tmp/NAME.out (line
# protocol is the channel's format)
conf() {
	chfmt=
	[ "$3" = influx ] && chfmt='format = "influx"'
	cat >"$tmp/$1.conf" <<CONF
file-output f {
  path = "$tmp/$1.out"
  $chfmt
}
flow-monitor fm {
  match = {"ip.src", "udp.dst_port", "int.hop_switch_ids"}
  sampling = $2
  query-interval = 200
  buffer = 4
  counters = {"sum(int.hop_latencies)", "max(int.hop_queue_occups)"}
  overflow-threshold = 150
  output-channel = {f}
  output-format = $( [ "$3" = influx ] && echo json || echo "$3")
  $4
}
CONF
}

for fmt in json csv influx; do
	for s in 1 0.5; do
		same=true
		for w in 1 2 4; do
			conf "$fmt$s-$w" "$s" "$fmt" ""
			"$bld/intspect" -C "$tmp/$fmt$s-$w.conf" -r "$tmp/c.pcap" -w $w 2>"$tmp/err.$w" ||
				{ bad "$fmt sampling $s, $w workers: exit status" "$tmp/err.$w"; same=false; }
			[ $w = 1 ] && continue
			cmp -s "$tmp/${fmt}$s-1.out" "$tmp/${fmt}$s-$w.out" || same=false
		done
		n=$(wc -l <"$tmp/${fmt}$s-1.out")
		if $same && [ "$n" -gt 100 ]; then
			ok "$fmt, sampling $s: 1, 2 and 4 workers write the same $n records"
		else
			bad "$fmt, sampling $s: the records depend on the number of workers"
		fi
	done
done

# Sampling chooses flows and changes nothing else.
python3 - "$tmp/json1-1.out" "$tmp/json0.5-1.out" >"$tmp/s.out" 2>&1 <<'PY'
import json, sys
def flows(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r["type"] != "flow":
            continue
        k = (r["ip.src"], r["udp.dst_port"], json.dumps(r["int.hop_switch_ids"]))
        out.setdefault(k, []).append(line)
    return out
full, half = flows(sys.argv[1]), flows(sys.argv[2])
assert set(half) <= set(full), "a sampled flow the full run does not have"
for k, recs in half.items():
    assert recs == full[k], f"flow {k}: its records differ when sampled"
frac = len(half) / len(full)
print(f"{len(half)} of {len(full)} flows kept ({frac:.3f})")
# 5 standard deviations of a binomial with p = 0.5
sd = (len(full) * 0.25) ** 0.5
assert abs(len(half) - len(full) / 2) <= 5 * sd, "kept fraction out of bounds"
PY
if [ $? -eq 0 ]; then
	ok "sampling 0.5: $(cat "$tmp/s.out"), their records equal those at sampling 1"
else
	bad "sampling 0.5" "$tmp/s.out"
fi

# The counters at exit: records = lines written, flows = distinct flows.
flows=$(grep -c '"type":"flow"' "$tmp/json1-1.out")
recs=$(wc -l <"$tmp/json1-1.out")
distinct=$(python3 -c '
import json, sys
print(len({(r["ip.src"], r["udp.dst_port"], str(r["int.hop_switch_ids"]))
           for r in map(json.loads, open(sys.argv[1])) if r["type"] == "flow"}))' "$tmp/json1-1.out")
"$bld/intspect" -C "$tmp/json1-1.conf" -r "$tmp/c.pcap" 2>"$tmp/err"
if grep -q "flow-monitor fm: 20000 matched, $distinct flows ($distinct in the table), 0 packets sampled out, 0 excluded, [0-9]* intervals, $recs records, 0 dropped, 0 evicted, 1 overflow records" "$tmp/err"; then
	ok "counters at exit: $distinct flows, $recs records ($flows of flows), one overflow"
else
	bad "counters at exit ($distinct flows, $recs records)" "$tmp/err"
fi

# max-entries: the least recently seen flows make room, counted.
conf evict 1 json "max-entries = 50"
"$bld/intspect" -C "$tmp/evict.conf" -r "$tmp/c.pcap" 2>"$tmp/err"
ev=$(sed -n 's/.*flow-monitor fm: .*, \([0-9]*\) evicted,.*/\1/p' "$tmp/err")
if grep -q "(50 in the table)" "$tmp/err" && [ "${ev:-0}" -gt 0 ]; then
	ok "max-entries 50: $ev evictions counted, 50 flows kept"
else
	bad "max-entries" "$tmp/err"
fi

# -T: the filter of removed flows and its false-positive rate.
conf t 0.25 json "bloom-bits = 65536
  bloom-hashes = 3"
"$bld/intspect" -T "$tmp/t.conf" >"$tmp/t.out" 2>&1
if grep -q ": 0 event reports, 0 query reports, 1 flow monitors, .*: ok$" "$tmp/t.out" &&
   grep -q "^flow-monitor fm: sampling 0.25, interval 200 ms in 4 sub-intervals, at most 262144 flows per worker; filter of removed flows: 65536 cells, 3 hashes, 32 KiB: false positives 0.0.*% at 1,000 removed flows, 1% at [0-9]*$" "$tmp/t.out"; then
	ok "-T: $(tail -1 "$tmp/t.out" | cut -d';' -f2)"
else
	bad "-T of a flow monitor" "$tmp/t.out"
fi

# the defaults, as -T prints them: sampling 1, 1000 ms in 4 sub-intervals,
# a filter of 2^20 cells and 4 hashes
printf 'flow-monitor m {\n  match = {"ip.src"}\n  output-channel = {stdout}\n}\n' >"$tmp/d.conf"
"$bld/intspect" -T "$tmp/d.conf" >"$tmp/d.out" 2>&1
grep -q '^flow-monitor m: sampling 1, interval 1000 ms in 4 sub-intervals, .*filter of removed flows: 1048576 cells, 4 hashes' "$tmp/d.out" &&
	ok "-T: the defaults (sampling 1, 1000 ms, buffer 4, 2^20 cells, 4 hashes)" || bad "-T: the defaults" "$tmp/d.out"

# Bad sections: file:line:col and what to write.
# TEXT EXPECTED-MESSAGE WHAT
refused() {
	printf '%s\n' "$1" >"$tmp/e.conf"
	"$bld/intspect" -T "$tmp/e.conf" >"$tmp/e" 2>&1
	if [ $? -eq 2 ] && grep -q -- "$2" "$tmp/e"; then
		ok "refused: $3"
	else
		bad "not refused as expected: $3" "$tmp/e"
	fi
}
refused 'flow-monitor m { sampling = 0.5 }' \
	'e.conf:1:1: error: a flow-monitor needs match = {"ATTRIBUTE", ...}' "no match"
refused 'flow-monitor m {
  match = {"ip.src"}
  counters = {"avg(int.latency)"}
}' 'e.conf:3:15: error: counter .avg(int.latency).: write sum(ATTRIBUTE) or max(ATTRIBUTE)' "avg()"
refused 'flow-monitor m {
  match = {"ip.src"}
  counters = {"sum(ip.src)"}
}' 'e.conf:3:15: error: counter .sum(ip.src).: ip.src is not a number' "sum of an address"
refused 'flow-monitor m {
  match = {"ip.src"}
  query-interval = 100
  buffer = 3
}' 'e.conf:4:12: error: query-interval (100 ms) is not a whole number of buffer sub-intervals' "interval / buffer"
refused 'flow-monitor m {
  match = {"ip.src"}
  sampling = 0
}' 'e.conf:3:14: error: sampling must be above 0' "sampling 0"
refused 'flow-monitor m {
  match = {"ip.srcc"}
}' "e.conf:2:12: error: unknown attribute 'ip.srcc'" "an unknown attribute"
refused 'flow-monitor m {
  match = {"ip.src"}
  sampleing = 0.5
}' "e.conf:3:3: error: unknown key 'sampleing' in a flow-monitor; did you mean 'sampling'?" "a misspelt key"
refused 'flow-monitor m {
  match = {"ip.src"}
  buffer = 33
}' "e.conf:3:12: error: 'buffer' must be between 1 and 32" "buffer above 32"
refused 'event-report m { event = "ip.src" }
flow-monitor m { match = {"ip.src"} }' "e.conf:2:1: error: a report named 'm' is already defined" "a name taken"
summary monitor
