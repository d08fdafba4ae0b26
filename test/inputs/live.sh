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

. "$src/test/inputs/lib.sh"
make_reports 300 8 2 1-5

# capture NAME PCAP PPS [intspect options]: intspect captures in the
# namespace, on the far end, while the sink side replays PCAP into it;
# $tmp/NAME.raw and .err, its exit status in rc
capture() {
	name=$1 pcap=$2 pps=$3
	shift 3
	ip netns exec "$ns" "$bld/intspect" -i "$b" -f "udp" -C "$tmp/rules.conf" "$@" \
		>"$tmp/$name.raw" 2>"$tmp/$name.err" &
	pid=$!
	sleep 1
	tcpreplay -q -i "$a" --pps="$pps" "$pcap" >"$tmp/replay.out" 2>&1 || bad "tcpreplay failed"
	sleep 1
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	pid=""
}

capture live "$tmp/r.pcap" 3000
[ "$rc" -eq 0 ] && ok "capture stops cleanly on SIGINT, windows flushed" || { bad "exit status $rc"; cat "$tmp/live.err"; }
grep -q "^intspect: 300 packets" "$tmp/live.err" && ok "300 packets captured" || { bad "packet count"; cat "$tmp/live.err"; }
grep -q "received by the kernel, 0 dropped" "$tmp/live.err" && ok "kernel drop counter reported" \
	|| { bad "kernel counters"; cat "$tmp/live.err"; }
same_as_offline "$tmp/live.raw"

# two workers, each with its own socket of one PACKET_FANOUT group: inline
# INT of 40 flows, which the kernel spreads by flow hash
"$bld/intgen" -o "$tmp/inline.pcap" -n 2000 --flows 40 --hops 1-5 --seed 5 2>/dev/null
"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/inline.pcap" >"$tmp/inline.offline" 2>/dev/null
capture fanout "$tmp/inline.pcap" 4000 -w 2
[ "$rc" -eq 0 ] && ok "fanout: stops cleanly" || { bad "fanout: exit status $rc"; cat "$tmp/fanout.err"; }
grep -q "^intspect: 2000 packets" "$tmp/fanout.err" && grep -q "2000 packets received by the kernel, 0 dropped" \
	"$tmp/fanout.err" && ok "fanout: 2000 packets, kernel counters summed over the sockets" \
	|| { bad "fanout: packet counts"; cat "$tmp/fanout.err"; }
shares_read "$tmp/fanout.err" 2
same_set_as "$tmp/fanout.raw" "$tmp/inline.offline"
# the interface goes away under a run: an input failure, exit 1, said
ip netns exec "$ns" "$bld/intspect" -i "$b" -q --control none >/dev/null 2>"$tmp/gone.err" &
pid=$!
sleep 1
ip link del "$a" 2>/dev/null       # its peer, in the namespace, goes with it
i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT "$pid" 2>/dev/null
wait "$pid"
rc=$?
pid=""
[ "$rc" -eq 1 ] && ok "the interface gone: exit 1 ($(grep -v '^intspect: [0-9]' "$tmp/gone.err" | head -1))" ||
	{ bad "the interface gone: exit $rc"; cat "$tmp/gone.err"; }
echo "live: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
