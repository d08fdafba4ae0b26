# bench/lib.sh - what the benchmarks share (sourced, with $bld, $tmp and
# $n set, and $reps for measure): the rule files, the workload captures,
# and the median packets/second of runs against the floor.

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# pps of one intspect run (from its -q summary)
pps() {
	"$bld/intspect" "$@" -q 2>&1 >/dev/null | sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p'
}

measure() {     # label floor-pps command...
	label=$1 floor=$2
	shift 2
	i=0
	: >"$tmp/runs"
	while [ "$i" -lt "$reps" ]; do
		"$@" >>"$tmp/runs"
		i=$((i + 1))
	done
	m=$(median <"$tmp/runs")
	echo "$m" >"$tmp/last"          # for a caller that compares workloads
	awk -v l="$label" -v m="$m" -v f="$floor" \
		'BEGIN { printf "  %-34s %8.2f Mpps   %5.1f%% of the floor\n", l, m / 1e6, 100 * m / f }'
}

cat >"$tmp/q9.conf" <<CONF
query-report q9 {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.latency)", "avg(int.hop_latencies)", "max(int.hop_queue_occups)", "avg(diff(meta.timestamp))"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {stdout}
}
CONF
# the same without diff(): its windows merge in any split (no owner)
cat >"$tmp/q8.conf" <<CONF
query-report q8 {
  ms-period = 1000
  select = {"count()", "sum(meta.packet_len)", "avg(int.latency)", "var(int.latency)", "min(int.latency)",
            "max(int.latency)", "avg(int.hop_latencies)", "max(int.hop_queue_occups)"}
  group-by = {"ip.src", "ip.dst"}
  output-channel = {stdout}
}
CONF
cat >"$tmp/delta.conf" <<CONF
event-report delta {
  event = "int.hop_latencies"
  delta-cond = {"int.hop_switch_ids"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src", "ip.dst", "int.hop_switch_ids"}
  output-channel = {stdout}
}
CONF
# ev14_conf FILE FORMAT OUT: a 14-attribute event per packet to a file
# (a queue that holds every record: under valgrind the file's thread runs
# far slower than the packets', and a drop costs the packet thread less
# than a push)
ev14_conf() {
	cat >"$1" <<CONF
file-output { path = "$3"; format = $2; queue-records = 4000000; queue-bytes = 1073741824 }
event-report ev14 {
  event = "int.hop_latencies"
  attributes = {"meta.timestamp", "ip.src", "ip.dst", "udp.src_port", "udp.dst_port", "int.num_hop",
                "int.latency", "int.hop_switch_ids", "int.hop_ingress_port_ids", "int.hop_egress_port_ids",
                "int.hop_queue_ids", "int.hop_queue_occups", "int.hop_ingress_times", "int.hop_egress_times"}
  output-channel = {file}
}
CONF
}
ev14_conf "$tmp/ev14.conf" json "$tmp/ev14.json"
ev14_conf "$tmp/ev14csv.conf" csv "$tmp/ev14.csv"     # as MMT-Probe's CSV

# the workloads: name, description, intgen arguments
WORKLOADS='a|INT v1.0 3 hops over UDP, 230 B, 64 flows|--int-version 1.0 --hops 3 --bitmap 0xFC00 --flows 64 --size 230
b|report v2.0, 6 hops, 9 metric sets|--format report --report-version 2.0 --hops 6 --bitmap 0xFF80 --flows 64
c|report v2.0, 1-6 hops, 9 metric sets|--format report --report-version 2.0 --hops 1-6 --bitmap 0xFF80 --flows 64'

# cold FILE: FILE out of the page cache, so that the next run reads it
# as a capture on the disk is read. A file just written stays cached in
# the small folios its writes made, which the kernel maps 4 KiB at a
# time; read in, it comes in 2 MiB folios on Linux 6.x (ext4, xfs),
# mapped whole: decode only on (a) ran 19.9 against 23.2 Mpps between the
# two (README, "Performance"), so a figure depends on which one it met.
cold() {
	python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); \
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}

# generated FILE INTGEN-ARGS...: FILE written by intgen unless it is
# there (kept between runs), then out of the page cache (cold)
generated() {
	f=$1
	shift
	[ -f "$f" ] || "$bld/intgen" -o "$f" "$@" >/dev/null
	cold "$f"
}

# capture NAME: $tmp/NAME.pcap (n packets; read from the disk by the
# first run of each script)
capture() {
	line=$(echo "$WORKLOADS" | grep "^$1|")
	args=${line##*|}
	cap="$tmp/$1-$n.pcap"
	# shellcheck disable=SC2086
	generated "$cap" -n "$n" --seed 1 $args
	echo "$cap"
}

# description NAME
description() {
	echo "$WORKLOADS" | grep "^$1|" | cut -d'|' -f2
}
# an event keyed by switch path and queues, not by the flow (room for
# every key: evictions would depend on how keys are spread over workers;
# standard output waits for room rather than drop, so that 1 and 2
# workers can be compared record for record on a busy machine)
cat >"$tmp/keyed.conf" <<CONF
stdout-output { drop-policy = block }
event-report per-queue {
  event = "int.hop_queue_occups"
  delta-cond = {"int.hop_queue_occups"}
  delta-band = 2000000
  max-keys = 4000000
  delta-key = {"int.hop_switch_ids", "int.hop_queue_ids"}
  attributes = {"int.hop_switch_ids", "int.hop_queue_ids", "int.hop_queue_occups"}
  output-channel = {stdout}
}
CONF
