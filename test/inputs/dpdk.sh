#!/bin/sh
# DPDK input: the net_pcap virtual device replays a capture into a DPDK
# port (no hugepages, no PCI: any machine); the records must equal those of
# the offline run of the capture (arrival timestamps aside). Skipped (77)
# when intspect was built without DPDK.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bld/intspect" -V | grep -q dpdk || { echo "dpdk: skipped: built without DPDK"; exit 77; }
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
eal="--no-huge --no-pci -m 512 --log-level=error --file-prefix=isp$$ --vdev net_pcap0,rx_pcap=$tmp/r.pcap"
timeout 120 "$bld/intspect" --dpdk "$eal" -c 300 -C "$tmp/rules.conf" >"$tmp/dpdk.raw" 2>"$tmp/dpdk.err"
rc=$?
strip <"$tmp/dpdk.raw" >"$tmp/dpdk"
[ "$rc" -eq 0 ] && ok "DPDK run exits cleanly" || { bad "exit status $rc"; cat "$tmp/dpdk.err"; }
grep -q "^intspect: 300 packets (" "$tmp/dpdk.err" && ok "300 packets read from the port" \
	|| { bad "packet count"; cat "$tmp/dpdk.err"; }
grep -q "300 packets received by the port, 0 dropped" "$tmp/dpdk.err" && ok "port counters reported" \
	|| { bad "port counters"; cat "$tmp/dpdk.err"; }
if cmp -s "$tmp/offline" "$tmp/dpdk"; then
	ok "records equal the offline run"
else
	bad "records differ from the offline run"; diff "$tmp/offline" "$tmp/dpdk" | head -5
fi
"$bld/intspect" --dpdk "--no-such-eal-option" -q >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" -ne 0 ] && grep -q "DPDK EAL" "$tmp/e" && ok "bad EAL arguments are an error" \
	|| { bad "bad EAL arguments"; cat "$tmp/e"; }
echo "dpdk: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
