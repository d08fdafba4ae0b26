# test/inputs/lib.sh - what the input tests share (sourced): counters,
# a capture of telemetry reports, rules over them, and the records of the
# offline run that every live input must reproduce (arrival times aside).
# Needs $bld and $tmp.

pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

# make_reports PACKETS SEED COALESCE HOPS: $tmp/r.pcap, $tmp/rules.conf,
# and $tmp/offline, the records of `intspect -r` on it
make_reports() {
	"$bld/intgen" -o "$tmp/r.pcap" -n "$1" --seed "$2" --format report --report-version 2.0 \
		--coalesce "$3" --hops "$4" 2>/dev/null
	cat >"$tmp/rules.conf" <<CONF
event-report each {
  event = "int_report.seq_num"
  attributes = {"int_report.node_id", "meta.report_index", "ip.src", "ip.dst", "int.hop_switch_ids", "int.hop_latencies"}
}
query-report per-node {
  ms-period = 3600000
  select = {"count()", "sum(int.latency)", "avg(int.hop_latencies)", "max(int.hop_queue_occups)"}
  group-by = {"int_report.node_id"}
}
CONF
	"$bld/intspect" -C "$tmp/rules.conf" -r "$tmp/r.pcap" 2>/dev/null | strip_times >"$tmp/offline"
}

# records without what depends on when packets arrived
strip_times() {
	sed -e 's/"ts":"[^"]*","time":[0-9.]*,//' -e 's/"window_start":[0-9.]*,"window_end":[0-9.]*,//'
}

# same_set_as FILE EXPECTED: the same records in any order (workers that
# read their own shares interleave them)
same_set_as() {
	strip_times <"$1" | sort >"$1.sorted"
	strip_times <"$2" | sort >"$2.sorted"
	if [ -s "$1.sorted" ] && cmp -s "$1.sorted" "$2.sorted"; then
		ok "records equal the offline run (in any order)"
	else
		bad "records differ from the offline run"
		diff "$2.sorted" "$1.sorted" | head -5
	fi
}

# shares_read FILE N: the summary says N workers each read a share of
# the input, and every share got packets
shares_read() {
	line=$(grep "workers read .* shares:" "$1")
	if echo "$line" | grep -q "^intspect: $2 workers read $2 shares:" &&
	   ! echo "$line" | grep -Eq "[:+] 0( |$)"; then
		ok "$2 workers read their own shares ($(echo "$line" | sed 's/.*: //'))"
	else
		bad "shares: '$line'"
	fi
}

# same_as_offline FILE: its records equal the offline run's
same_as_offline() {
	strip_times <"$1" >"$1.stripped"
	if cmp -s "$tmp/offline" "$1.stripped"; then
		ok "records equal the offline run"
	else
		bad "records differ from the offline run"
		diff "$tmp/offline" "$1.stripped" | head -5
	fi
}
