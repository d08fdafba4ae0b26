#!/bin/sh
# Per-hop event reports (per-hop = true): the rule runs once per hop with
# the hop's values, keyed by switch and queue. The records equal those of
# an independent model (model.py, from the --dump of the same capture), in
# order on one worker and as the same set on 2 and 4 workers (each hop's
# key has one owner), with hops whose values are unavailable; JSON and
# line protocol agree (the tags are the hop's switch and queue).
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

band=20000
cat >"$tmp/r.conf" <<CONF
event-report queues {
  per-hop = true
  event = "int.hop_queue_occups"
  delta-key = {"int.hop_switch_ids", "int.hop_queue_ids"}
  delta-cond = {"int.hop_queue_occups"}
  delta-band = $band
  attributes = {"int.hop_queue_occups", "int.hop_switch_ids", "int.hop_queue_ids", "ip.src"}
  output-channel = {"j", "lp"}
}
file-output j { path = "$tmp/out.json" }
file-output lp { path = "$tmp/out.lp"; format = influx }
CONF
"$bld/intgen" -o "$tmp/in.pcap" -n 3000 --seed 9 --format report --report-version 2.0 \
	--coalesce 3 --hops 1-6 --flows 12 --unavailable 2>/dev/null
"$bld/intspect" -r "$tmp/in.pcap" --dump >"$tmp/dump" 2>/dev/null
python3 "$src/test/rules/perhop/model.py" "$tmp/dump" "$band" >"$tmp/model"
strip() {
	python3 -c '
import json, sys
for l in sys.stdin:
    d = json.loads(l)
    for k in ("report", "type", "ts", "time"):
        d.pop(k, None)
    print(json.dumps(d, sort_keys=True))'
}
n=$(wc -l <"$tmp/model" | tr -d ' ')
# each hop with the event's value is one match
m=$(python3 -c '
import json, sys
print(sum(1 for l in open(sys.argv[1])
          for v in [json.loads(l).get("int.hop_queue_occups")] if isinstance(v, list)
          for x in v if x is not None))' "$tmp/dump")
for w in 1 2 4; do
	rm -f "$tmp/out.json" "$tmp/out.lp"
	"$bld/intspect" -C "$tmp/r.conf" -r "$tmp/in.pcap" -w "$w" 2>"$tmp/err"
	rc=$?
	strip <"$tmp/out.json" >"$tmp/got"
	if [ "$w" -eq 1 ]; then
		# one worker: both channels in the same order
		cp "$tmp/out.json" "$tmp/one.json"
		cp "$tmp/out.lp" "$tmp/one.lp"
		cmp -s "$tmp/got" "$tmp/model" && [ "$rc" -eq 0 ] && [ "$n" -gt 100 ] &&
			ok "1 worker: the model's $n records, in order" ||
			{ diff "$tmp/model" "$tmp/got" | head -20 >"$tmp/d"; cat "$tmp/err" >>"$tmp/d"; bad "1 worker: records differ from the model (exit $rc)" "$tmp/d"; }
	else
		sort "$tmp/got" >"$tmp/got.s"
		sort "$tmp/model" >"$tmp/model.s"
		cmp -s "$tmp/got.s" "$tmp/model.s" && [ "$rc" -eq 0 ] &&
			ok "$w workers: the same $n records" ||
			{ diff "$tmp/model.s" "$tmp/got.s" | head -20 >"$tmp/d"; cat "$tmp/err" >>"$tmp/d"; bad "$w workers: records differ (exit $rc)" "$tmp/d"; }
	fi
	grep -q "event-report queues: $m matched, $n records, 0 dropped" "$tmp/err" &&
		ok "$w workers: the rule counts each of $m hops one match, $n records once" ||
		bad "$w workers: rule counters ($m hops)" "$tmp/err"
done
if python3 "$src/test/tools/lp_check.py" "$tmp/one.json" "$tmp/one.lp" \
	queues=int.hop_switch_ids,int.hop_queue_ids >"$tmp/check" 2>&1; then
	ok "line protocol: the hop's switch and queue as tags ($(tail -n 1 "$tmp/check"))"
else
	bad "line protocol against the JSON records" "$tmp/check"
fi
grep -q '"int.hop_switch_ids":\[' "$tmp/out.json" && bad "an array in a per-hop record" ||
	ok "per-hop attributes are the hop's scalars"
summary perhop
