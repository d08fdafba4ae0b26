#!/bin/sh
# Several workers give the same records as one: query reports identical
# (merged windows, groups in first-packet order), event reports the same
# set (their order between flows depends on the threads). Rules cover flow
# groups, groups across workers (per switch), exact avg/var, merged
# quantile sketches, per-flow and global event state.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

cat >"$tmp/rules.conf" <<CONF
query-report flows {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.hop_queue_occups)", "avg(int.hop_latencies)", "p99(int.latency)", "first(int.latency)",
            "last(int.latency)", "avg(diff(meta.timestamp))"}
  group-by = {"ip.src", "ip.dst"}
}
query-report per-switch {
  ms-period = 500
  select = {"count()", "avg(int.hop_latencies)", "var(int.hop_latencies)", "p50(int.hop_queue_occups)", "last(ip.src)"}
  group-by = {"int.hop_switch_ids"}
}
event-report flow-delta {
  event = "int.hop_switch_ids"
  delta-cond = {"int.num_hop"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "int.num_hop"}
}
event-report global-band {
  event = "int.latency"
  delta-cond = {"int.latency"}
  delta-band = 5000
}
CONF
"$bld/intgen" -o "$tmp/inline.pcap" -n 20000 --flows 50 --hops 1-6 --seed 9 --pps 5000 --unavailable 2>/dev/null
"$bld/intgen" -o "$tmp/reports.pcap" -n 6000 --flows 40 --hops 1-4 --seed 10 --pps 3000 \
	--format report --report-version 2.0 --coalesce 3 2>/dev/null
for cap in inline reports; do
	"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcap" -w 1 >"$tmp/$cap.1" 2>"$tmp/$cap.1.err" ||
		bad "$cap: one worker"
	grep '"type":"query"' "$tmp/$cap.1" >"$tmp/$cap.q1"
	grep '"type":"event"' "$tmp/$cap.1" | sort >"$tmp/$cap.e1"
	[ -s "$tmp/$cap.q1" ] && [ -s "$tmp/$cap.e1" ] || bad "$cap: no records"
	for n in 2 4; do
		if ! "$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/$cap.pcap" -w "$n" >"$tmp/$cap.$n" 2>"$tmp/$cap.$n.err"; then
			bad "$cap: $n workers exit status"; cat "$tmp/$cap.$n.err"; continue
		fi
		grep '"type":"query"' "$tmp/$cap.$n" >"$tmp/$cap.qn"
		grep '"type":"event"' "$tmp/$cap.$n" | sort >"$tmp/$cap.en"
		cmp -s "$tmp/$cap.q1" "$tmp/$cap.qn" && ok "$cap: query records of $n workers = 1 worker" \
			|| { bad "$cap: query records differ with $n workers"; diff "$tmp/$cap.q1" "$tmp/$cap.qn" | head -4; }
		cmp -s "$tmp/$cap.e1" "$tmp/$cap.en" && ok "$cap: event records of $n workers = 1 worker" \
			|| { bad "$cap: event records differ with $n workers"; diff "$tmp/$cap.e1" "$tmp/$cap.en" | head -4; }
		grep -v "s, " "$tmp/$cap.1.err" | grep -v -e "packets/s" -e "^intspect: note:" >"$tmp/c1"
		grep -v "s, " "$tmp/$cap.$n.err" | grep -v -e "packets/s" -e "^intspect: note:" >"$tmp/cn"
		cmp -s "$tmp/c1" "$tmp/cn" && ok "$cap: counters of $n workers = 1 worker" \
			|| { bad "$cap: counters differ with $n workers"; diff "$tmp/c1" "$tmp/cn" | head -6; }
	done
done
"$bld/intspect" -w 0 -r "$tmp/inline.pcap" 2>"$tmp/e"; rc=$?
[ "$rc" -eq 2 ] && grep -q "number of workers" "$tmp/e" && ok "bad worker count is an error" || bad "bad worker count"
echo "workers: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
