#!/bin/sh
# idle-timeout-ms: a key without packets for that long is swept (every
# quarter of it, on packet time) into an "expired" record and forgotten.
# The records equal an independent model's (model.py, from the --dump of
# the same capture) as a set on 1, 2 and 4 workers (a sweep on several
# workers happens at the same packets); the counters say how many keys
# expired; line protocol has the key as tags and expired=1i; a rule
# without delta-cond is refused. Also: max-keys and max-groups default
# to 65536 (what an explicit 65536 gives, not 65535).
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

idle=40
cat >"$tmp/r.conf" <<CONF
event-report paths {
  event = "int.hop_switch_ids"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  idle-timeout-ms = $idle
  attributes = {"ip.src", "ip.dst", "int.hop_switch_ids"}
  output-channel = {"j", "lp"}
}
file-output j { path = "$tmp/out.json" }
file-output lp { path = "$tmp/out.lp"; format = influx }
CONF
"$bld/intgen" -o "$tmp/in.pcap" -n 3000 --seed 3 --flows 20 --pps 1000 2>/dev/null
"$bld/intspect" -r "$tmp/in.pcap" --dump >"$tmp/dump" 2>/dev/null
python3 "$src/test/rules/expiry/model.py" "$tmp/dump" "$idle" | sort >"$tmp/model"
norm() {
	python3 -c '
import json, sys
from decimal import Decimal
us = lambda x: int(Decimal(str(x)) * 1000000)
for l in sys.stdin:
    d = json.loads(l)
    d.pop("ts", None)
    d["time"] = us(d["time"])
    if "last_seen" in d:
        d["last_seen"] = us(d["last_seen"])
    print(json.dumps(d, sort_keys=True))' | sort
}
nexp=$(grep -c '"expired"' "$tmp/model")
n=$(wc -l <"$tmp/model" | tr -d ' ')
for w in 1 2 4; do
	rm -f "$tmp/out.json" "$tmp/out.lp"
	"$bld/intspect" -C "$tmp/r.conf" -r "$tmp/in.pcap" -w "$w" 2>"$tmp/err"
	rc=$?
	norm <"$tmp/out.json" >"$tmp/got"
	if cmp -s "$tmp/got" "$tmp/model" && [ "$rc" -eq 0 ] && [ "$nexp" -gt 50 ]; then
		ok "$w worker(s): the model's $n records, $nexp of them expiries"
	else
		{ diff "$tmp/model" "$tmp/got" | head -20; cat "$tmp/err"; } >"$tmp/d"
		bad "$w worker(s): records differ from the model (exit $rc)" "$tmp/d"
	fi
	grep -q "event-report paths: 3000 matched, $n records, 0 dropped, 0 keys evicted, $nexp keys expired" "$tmp/err" &&
		ok "$w worker(s): counters: $n records, $nexp keys expired" || bad "$w worker(s): counters" "$tmp/err"
	if [ "$w" -eq 1 ]; then
		cp "$tmp/out.json" "$tmp/one.json"
		cp "$tmp/out.lp" "$tmp/one.lp"
	fi
done
e=$(grep -c ' expired=1i,last_seen=[0-9]*i [0-9]*$' "$tmp/one.lp")
grep -q '^paths,ip.src=[0-9.]*,ip.dst=[0-9.]* expired=1i,last_seen=' "$tmp/one.lp" && [ "$e" -eq "$nexp" ] &&
	ok "line protocol: $e expiries with the key as tags" || bad "line protocol expiries: $e" "$tmp/one.lp"
printf 'event-report x { event = "ip.src"; idle-timeout-ms = 10 }\n' >"$tmp/bad.conf"
"$bld/intspect" -T "$tmp/bad.conf" 2>"$tmp/e"
grep -q ':1:36: error: idle-timeout-ms expires the keys of a delta-cond: give one' "$tmp/e" &&
	ok "idle-timeout-ms without delta-cond: refused, with where" || bad "idle without delta-cond" "$tmp/e"
# max-keys and max-groups default to 65536: on 75,836 keys the counters
# are those of 65536 given, not those of 65535
"$bld/intgen" -o "$tmp/keys.pcap" -n 120000 --flows 120000 --seed 3 2>/dev/null
limits() {      # MAX-KEYS-LINE MAX-GROUPS-LINE: the rules' counters
	printf 'event-report e {\n  event = "int.num_hop"\n  delta-cond = {"int.num_hop"}\n  delta-key = {"ip.src", "ip.dst", "udp.src_port"}\n  %s\n  output-channel = {j}\n}\nquery-report q {\n  ms-period = 0\n  select = {"count()"}\n  group-by = {"ip.src", "ip.dst", "udp.src_port"}\n  %s\n  output-channel = {j}\n}\nfile-output j { path = "/dev/null" }\n' \
		"$1" "$2" >"$tmp/lim.conf"
	"$bld/intspect" -C "$tmp/lim.conf" -r "$tmp/keys.pcap" 2>&1 | grep -E '^intspect: (event|query)-report'
}
limits "" "" >"$tmp/lim.def"
limits "max-keys = 65536" "max-groups = 65536" >"$tmp/lim.65536"
limits "max-keys = 65535" "max-groups = 65535" >"$tmp/lim.65535"
grep -q ' 65536 records, 0 dropped, [1-9][0-9]* packets beyond max-groups' "$tmp/lim.def" &&
	grep -q ' [1-9][0-9]* keys evicted' "$tmp/lim.def" && cmp -s "$tmp/lim.def" "$tmp/lim.65536" &&
	! cmp -s "$tmp/lim.def" "$tmp/lim.65535" &&
	ok "max-keys and max-groups default to 65536 ($(grep -o '[0-9]* keys evicted' "$tmp/lim.def"))" ||
	bad "the defaults of max-keys and max-groups" "$tmp/lim.def"
summary expiry
