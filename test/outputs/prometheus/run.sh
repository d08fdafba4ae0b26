#!/bin/sh
# test/outputs/prometheus/run.sh - the prometheus channel end to end,
# scraped by a real Prometheus server (test/services/prometheus.sh; the
# exact exposition text and the HTTP answers are check_prometheus's).
#
# intspect takes telemetry reports on its UDP input (-u, two workers, the
# reports from 32 source ports) and runs a `metrics` block whose records
# go to a prometheus-output and, as line protocol, to a file. Prometheus
# scrapes it every second. Then, through Prometheus' HTTP API (expect.py):
#   - the metric tables' series are exactly those the line protocol gives
#     by the exporter's rules, with the same values;
#   - intspect's own counters: packets, per worker, decoded reports, 5
#     reports cut short counted malformed per protocol and reason, the
#     records of a rule, the channel's delivered records, up == 1;
# and `promtool check metrics` finds nothing to say about a scrape; the
# endpoint's scrape counter moved; intspect stops cleanly (exit 0).
# Also: -T accepts conf/examples/prometheus.conf without binding; a port
# in use stops the start with the key's position.
# Prints ok NAME / FAIL NAME, then "prometheus: N passed, M failed"; exits
# 1 on a failure, 77 when prometheus is not installed.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
svc=$src/test/services/prometheus.sh
tmp=$(mktemp -d)
pid=""
. "$src/test/tools/checks.sh"

cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	sh "$svc" stop "$tmp/p" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || {
	echo "prometheus: prometheus or promtool not installed (Debian: prometheus): skipped"
	exit 77
}

free_port() {
	python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_'"$1"'); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- -T, and a port in use ----
"$bin" -T "$src/conf/examples/prometheus.conf" >"$tmp/t.out" 2>&1 && ok "-T conf/examples/prometheus.conf" ||
	bad "-T conf/examples/prometheus.conf" "$tmp/t.out"
busy=$(free_port STREAM)
python3 -c 'import socket, sys, time; s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1); time.sleep(30)' "$busy" &
holder=$!
sleep 0.3
printf 'prometheus-output p {\n  listen = "127.0.0.1:%s"\n}\nevent-report e { event = "int.latency"; output-channel = {p} }\n' "$busy" >"$tmp/busy.conf"
"$bin" -C "$tmp/busy.conf" -u "127.0.0.1:$(free_port DGRAM)" >"$tmp/busy.out" 2>&1; rc=$?
kill "$holder" 2>/dev/null
[ "$rc" -eq 2 ] && grep -q "busy.conf:2:3: error: listen: cannot serve 127.0.0.1:$busy: Address already in use" "$tmp/busy.out" &&
	ok "a port in use: exit 2 at the listen key" || bad "a port in use (exit $rc)" "$tmp/busy.out"

# listen with port 0: any free one, said, and served; an IPv6 address too
for l in "127.0.0.1:0" "[::1]:0"; do
	printf 'prometheus-output prom { listen = "%s" }\nmetrics net { output-channel = {prom} }\n' "$l" >"$tmp/p0.conf"
	: >"$tmp/p0.err"
	"$bin" -C "$tmp/p0.conf" -u "127.0.0.1:$(free_port DGRAM)" -q --control none 2>>"$tmp/p0.err" &
	p0=$!
	i=0
	until grep -q 'serving http://' "$tmp/p0.err" || [ "$i" -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
	url=$(sed -n 's|.*serving \(http://[^ ]*/metrics\).*|\1|p' "$tmp/p0.err")
	n=$(python3 -c 'import sys, urllib.request; print(sum(l.startswith(b"intspect_packets_total ") for l in urllib.request.urlopen(sys.argv[1], timeout=5)))' "$url" 2>/dev/null)
	kill -INT "$p0"; wait "$p0"
	case $url in http://127.0.0.1:0/*|http://\[::1\]:0/*|"") n=0 ;; esac
	[ "${n:-0}" = 1 ] && ok "listen = \"$l\": a free port, said ($url) and served" ||
		bad "listen = \"$l\" ($url)" "$tmp/p0.err"
done

# ---- intspect scraped by Prometheus ----
"$bld/intgen" -o "$tmp/r.pcap" -n 400 --seed 7 --format report --report-version 2.0 --hops 2-5 \
	>/dev/null 2>&1 || { bad "intgen"; summary prometheus; exit 1; }
mport=$(free_port STREAM)
uport=$(free_port DGRAM)
cat >"$tmp/rules.conf" <<CONF
prometheus-output prom { listen = "127.0.0.1:$mport" }
file-output lp { path = "$tmp/lp.txt"; format = influx; flush-ms = 10 }
metrics net {
  output-channel = {prom, lp}
}
# a string field (ip.dst) where other records have numbers; operators in
# select texts (their words keep the two sums apart). The event has no
# key: its series are its last record's, so its records must come in one
# order to both channels, which they do from one worker (a delta-cond
# with one memory for all runs on one); two workers each writing some
# could interleave them differently in each channel
event-report net_ev {
  event = "int.latency"
  delta-cond = {"int.latency"}
  attributes = {"ip.dst", "int.hop_latencies"}
  output-channel = {prom, lp}
}
query-report net_split {
  ms-period = 100
  select = {"sum(int.latency > 2000)", "sum(int.latency <= 2000)", "max(int.latency)"}
  group-by = {"ip.dst"}
  output-channel = {prom, lp}
}
CONF
"$bin" -C "$tmp/rules.conf" -u "127.0.0.1:$uport" -w 2 -q >"$tmp/run.out" 2>"$tmp/run.err" &
pid=$!
i=0
until grep -q "serving http://127.0.0.1:$mport/metrics" "$tmp/run.err" || [ "$i" -ge 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
pport=$(sh "$svc" start "$tmp/p" "127.0.0.1:$mport") || { bad "prometheus start"; summary prometheus; exit 1; }
sent=$(python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$uport" 50 0.01 32)
[ "$sent" -eq 400 ] && ok "400 reports sent" || bad "sent $sent reports"
# and 5 reports cut after 6 bytes: malformed, counted per protocol and reason
python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    s.sendto(bytes([0x20, 0, 0, 0, 0, 0]), ("127.0.0.1", int(sys.argv[1])))' "$uport"
if python3 "$src/test/outputs/prometheus/expect.py" "$tmp/lp.txt" "$pport" \
	'up{job="intspect"}=1' \
	'intspect_packets_total=405' \
	'sum(intspect_worker_packets_total)=405' \
	'intspect_malformed_packets_total=5' \
	'intspect_malformed_total{protocol="int_report",reason="truncated"}=5' \
	'count(intspect_worker_packets_total)=2' \
	'count(intspect_worker_items_total)=2' \
	'intspect_decoded_total{protocol="int_report"}=400' \
	'intspect_rule_records_total{rule="net_flow_latency"}=lines:net_flow_latency' \
	'intspect_rule_records_total{rule="net_flow_hop_latency"}=lines:net_flow_hop_latency' \
	'intspect_channel_records_queued_total{channel="prom"}=lines' \
	'intspect_channel_records_delivered_total{channel="prom"}=lines' \
	'intspect_channel_records_dropped_total{channel="prom"}=0' \
	'intspect_channel_records_retried_total{channel="prom"}=0' \
	'intspect_channel_records_acknowledged_total{channel="prom"}=0' \
	'intspect_channel_reconnects_total{channel="prom"}=0' \
	'intspect_channel_queue_depth{channel="prom"}=0' \
	'intspect_prometheus_series_refused_total=0' >"$tmp/expect.out" 2>&1; then
	ok "Prometheus: $(cat "$tmp/expect.out")"
else
	bad "Prometheus' view" "$tmp/expect.out"
fi
python3 -c 'import sys, urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())' \
	"http://127.0.0.1:$mport/metrics" >"$tmp/scrape.txt"
if promtool check metrics <"$tmp/scrape.txt" >"$tmp/promtool.out" 2>&1 && [ ! -s "$tmp/promtool.out" ]; then
	ok "promtool check metrics: nothing to say ($(grep -vc '^#' "$tmp/scrape.txt") samples)"
else
	bad "promtool check metrics" "$tmp/promtool.out"
fi
scrapes=$(sed -n 's/^intspect_prometheus_scrapes_total{channel="prom"} \([0-9]*\)$/\1/p' "$tmp/scrape.txt")
[ "${scrapes:-0}" -ge 2 ] && ok "scrapes counted ($scrapes)" || bad "scrapes counted: '$scrapes'"
kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
[ "$rc" -eq 0 ] && grep -q "^intspect: channel prom: [0-9]* records queued, [0-9]* delivered, 0 dropped" "$tmp/run.err" &&
	ok "intspect stops cleanly, nothing dropped" || bad "intspect exit $rc" "$tmp/run.err"
summary prometheus
