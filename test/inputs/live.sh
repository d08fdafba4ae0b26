#!/bin/sh
# Live capture behind an INT sink: a veth pair whose far end sits in a
# network namespace made by this test; tcpreplay plays a capture of
# telemetry reports into it and intspect captures on the near end. The
# records must equal those of the offline run of the same capture (arrival
# timestamps aside). Needs root, iproute2 and tcpreplay: skipped (77) with a
# message where the machine forbids namespaces.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
ns=isp-test-$$
a=ispa$$
b=ispb$$
tmp=$(mktemp -d)
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	ip link del "$a" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
skip() { echo "live: skipped: $1"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root for a network namespace"
command -v ip >/dev/null || skip "iproute2 (ip) is not installed"
command -v tcpreplay >/dev/null || skip "tcpreplay is not installed"
ip netns add "$ns" 2>/dev/null || skip "this machine does not allow network namespaces"
ip link add "$a" type veth peer name "$b" 2>/dev/null || skip "no veth support"
ip link set "$b" netns "$ns"
sysctl -qw "net.ipv6.conf.$a.disable_ipv6=1" 2>/dev/null
ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$b.disable_ipv6=1" 2>/dev/null
ip link set "$a" up
ip netns exec "$ns" ip link set "$b" up
ip netns exec "$ns" ip link set lo up

pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

"$bld/intgen" -o "$tmp/r.pcap" -n 300 --seed 8 --format report --report-version 2.0 \
	--coalesce 2 --hops 1-5 2>/dev/null
cat >"$tmp/rules.conf" <<CONF
event-report each {
  event = "int_report.seq_num"
  attributes = {"int_report.node_id", "meta.report_index", "ip.src", "int.hop_switch_ids", "int.hop_latencies"}
}
query-report per-node {
  ms-period = 3600000
  select = {"count()", "sum(int.latency)", "avg(int.hop_latencies)"}
  group-by = {"int_report.node_id"}
}
CONF
strip() { sed -e 's/"ts":"[^"]*","time":[0-9.]*,//' -e 's/"window_start":[0-9.]*,"window_end":[0-9.]*,//'; }
"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/r.pcap" 2>/dev/null | strip >"$tmp/offline"

# capture in the namespace, on the far end; the sink side replays into it
ip netns exec "$ns" "$bld/intspect" -i "$b" -f "udp" -C "$tmp/rules.conf" \
	>"$tmp/live.raw" 2>"$tmp/live.err" &
pid=$!
sleep 1
tcpreplay -q -i "$a" --pps=3000 "$tmp/r.pcap" >"$tmp/replay.out" 2>&1 || bad "tcpreplay failed"
sleep 1
kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
strip <"$tmp/live.raw" >"$tmp/live"
[ "$rc" -eq 0 ] && ok "capture stops cleanly on SIGINT, windows flushed" || { bad "exit status $rc"; cat "$tmp/live.err"; }
grep -q "^intspect: 300 packets" "$tmp/live.err" && ok "300 packets captured" || { bad "packet count"; cat "$tmp/live.err"; }
grep -q "received by the kernel, 0 dropped" "$tmp/live.err" && ok "kernel drop counter reported" \
	|| { bad "kernel counters"; cat "$tmp/live.err"; }
if cmp -s "$tmp/offline" "$tmp/live"; then
	ok "records equal the offline run"
else
	bad "records differ from the offline run"; diff "$tmp/offline" "$tmp/live" | head -6
fi
echo "live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
