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
. "$src/test/inputs/lib.sh"
make_reports 300 8 2 1-5
eal="--no-huge --no-pci -m 512 --log-level=error --file-prefix=isp$$ --vdev net_pcap0,rx_pcap=$tmp/r.pcap"
timeout 120 "$bld/intspect" --dpdk "$eal" -c 300 -C "$tmp/rules.conf" >"$tmp/dpdk.raw" 2>"$tmp/dpdk.err"
rc=$?
[ "$rc" -eq 0 ] && ok "DPDK run exits cleanly" || { bad "exit status $rc"; cat "$tmp/dpdk.err"; }
grep -q "^intspect: 300 packets (" "$tmp/dpdk.err" && ok "300 packets read from the port" \
	|| { bad "packet count"; cat "$tmp/dpdk.err"; }
grep -q "300 packets received by the port, 0 dropped" "$tmp/dpdk.err" && ok "port counters reported" \
	|| { bad "port counters"; cat "$tmp/dpdk.err"; }
same_as_offline "$tmp/dpdk.raw"
# two workers, two RX queues (net_pcap: one per rx_pcap), each queue
# replaying the capture: the records of the capture played twice
{ cat "$tmp/r.pcap"; tail -c +25 "$tmp/r.pcap"; } >"$tmp/twice.pcap"
"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/twice.pcap" >"$tmp/twice.offline" 2>/dev/null
eal2="--no-huge --no-pci -m 512 --log-level=error --file-prefix=isq$$ --vdev net_pcap0,rx_pcap=$tmp/r.pcap,rx_pcap=$tmp/r.pcap"
timeout 120 "$bld/intspect" --dpdk "$eal2" -w 2 -c 600 -C "$tmp/rules.conf" >"$tmp/q2.raw" 2>"$tmp/q2.err"
rc=$?
[ "$rc" -eq 0 ] && grep -q "600 packets received by the port, 0 dropped" "$tmp/q2.err" \
	&& ok "two queues: 600 packets, port counters" || { bad "two queues: exit $rc"; cat "$tmp/q2.err"; }
grep -q "^intspect: 2 workers read 2 shares: 300 + 300 packets" "$tmp/q2.err" \
	&& ok "two queues: each worker reads its own" || { bad "two queues: shares"; cat "$tmp/q2.err"; }
same_set_as "$tmp/q2.raw" "$tmp/twice.offline"
# the same from the config's input section, two workers from thread-nb
{ printf 'thread-nb = 2\ninput { mode = dpdk; source = "%s" }\n' \
	"--no-huge --no-pci -m 512 --log-level=error --file-prefix=isc$$ --vdev net_pcap0,rx_pcap=$tmp/r.pcap,rx_pcap=$tmp/r.pcap"
  cat "$tmp/rules.conf"; } >"$tmp/dpdk.conf"
timeout 120 "$bld/intspect" -C "$tmp/dpdk.conf" -c 600 >"$tmp/cfg.raw" 2>"$tmp/cfg.err"
rc=$?
[ "$rc" -eq 0 ] && grep -q "^intspect: 2 workers read 2 shares: 300 + 300 packets" "$tmp/cfg.err" \
	&& ok "input { mode = dpdk } and thread-nb from the config" || { bad "dpdk from the config: exit $rc"; cat "$tmp/cfg.err"; }
same_set_as "$tmp/cfg.raw" "$tmp/twice.offline"

"$bld/intspect" --dpdk "--no-such-eal-option" -q >/dev/null 2>"$tmp/e"; rc=$?
[ "$rc" -ne 0 ] && grep -q "DPDK EAL" "$tmp/e" && ok "bad EAL arguments are an error" \
	|| { bad "bad EAL arguments"; cat "$tmp/e"; }
echo "dpdk: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
