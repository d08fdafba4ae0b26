#!/bin/sh
# Reference model: for each case, intgen writes a capture and the values it
# encoded; refmodel.py (an independent implementation of the rules written
# from dsl/README.md) computes the records the rules should produce, and
# they must equal what intspect writes, record by record.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
model="$src/test/rules/refmodel/refmodel.py"
tmp=$(mktemp -d)
[ -n "${REFMODEL_KEEP:-}" ] || trap 'rm -rf "$tmp"' EXIT
fail=0 total=0

# case NAME INTGEN-ARGS [WORKERS], rules (JSON, see refmodel.py) on stdin;
# WORKERS: also checked with -w N for each N listed
case_() {
	name=$1 args=$2 workers=${3:-}
	total=$((total + 1))
	d="$tmp/$name"
	mkdir -p "$d"
	cat >"$d/rules.json"
	# shellcheck disable=SC2086
	if ! "$bld/intgen" -o "$d/capture.pcap" -e "$d/expect.jsonl" $args 2>"$d/gen.err"; then
		echo "FAIL $name (intgen $args)"; cat "$d/gen.err"; fail=$((fail + 1)); return
	fi
	if ! python3 "$model" conf "$d/rules.json" >"$d/rules.conf"; then
		echo "FAIL $name (bad rule description)"; fail=$((fail + 1)); return
	fi
	if ! "$bld/intspect" -C "$d/rules.conf" -r "$d/capture.pcap" >"$d/out.jsonl" 2>"$d/err"; then
		echo "FAIL $name (intspect exit status)"; head -20 "$d/err"; fail=$((fail + 1)); return
	fi
	if grep -q -E 'runtime error|AddressSanitizer' "$d/err"; then
		echo "FAIL $name (sanitizer)"; head -20 "$d/err"; fail=$((fail + 1)); return
	fi
	if python3 "$model" check "$d/rules.json" "$d/capture.pcap" "$d/expect.jsonl" "$d/out.jsonl" >"$d/cmp" 2>&1; then
		echo "ok $name"
	else
		echo "FAIL $name (intgen $args)"; cat "$d/cmp"; fail=$((fail + 1))
	fi
	for w in $workers; do
		total=$((total + 1))
		if "$bld/intspect" -C "$d/rules.conf" -r "$d/capture.pcap" -w "$w" >"$d/out.w$w" 2>"$d/err.w$w" &&
		   ! grep -q -E 'runtime error|AddressSanitizer' "$d/err.w$w" &&
		   python3 "$model" check "$d/rules.json" "$d/capture.pcap" "$d/expect.jsonl" "$d/out.w$w" >"$d/cmp" 2>&1; then
			echo "ok $name, $w workers"
		else
			echo "FAIL $name, $w workers"; cat "$d/cmp"; head -5 "$d/err.w$w"; fail=$((fail + 1))
		fi
	done
}

# 1. Query: 9+ functions, 2 group-by keys, per-hop and scalar attributes,
# hop counts 1-6 mixed inside every group, unavailable hop values, a where
# condition, windows over several periods starting off a period boundary.
case_ query-int-v1.0 "-n 2000 --seed 11 --hops 1-6 --flows 6 --unavailable --pps 4000 --ts-start 1700000000.0371" <<'EOF'
[{"name": "q9", "type": "query", "period_ms": 100,
  "select": ["count()", "sum(meta.packet_len)", "avg(int.hop_latencies)", "var(int.latency)",
             "min(int.hop_queue_occups)", "max(int.hop_latencies)", "first(udp.src_port)",
             "last(int.latency)", "avg(diff(meta.timestamp))", "p99(int.latency)",
             "p50(int.hop_latencies)", "var(int.hop_queue_occups)", "rate(meta.packet_len)",
             "count(int.latency)", "sum(int.hop_egress_times - int.hop_ingress_times)",
             "max(diff(meta.timestamp))", "diff(meta.timestamp)", "first(ip.src)", "ip.proto"],
  "group_by": ["ip.src", "ip.dst"],
  "where": "int.latency > 3000 and not (udp.dst_port == 5007)"}]
EOF

# 1b. Sum, avg, count and rate of diff() of attributes, scalar and per
# hop, with values unavailable and hop counts mixed: they keep the window's
# first and last values only (dsl/README.md), which the model does not (it
# takes every difference in turn); with 2 and 3 workers too, where these
# windows merge from partials split batch by batch (the workers take the
# batches in any order: every rule merges). Then with var(diff())
# alongside, which takes its differences in order: the workers handle
# the batches in the file's order, each group on its owner.
case_ query-diff-ends "-n 3000 --seed 23 --hops 1-6 --flows 7 --unavailable --pps 5000 --ts-start 1700000000.0219" "2 3" <<'EOF'
[{"name": "qd", "type": "query", "period_ms": 100,
  "select": ["count()", "sum(diff(int.latency))", "avg(diff(meta.timestamp))",
             "count(diff(int.hop_latencies))", "avg(diff(int.hop_latencies))",
             "sum(diff(int.hop_queue_occups))", "rate(diff(meta.packet_len))",
             "avg(diff(int.hop_latencies[1]))", "sum(diff(int.hop_egress_times))"],
  "group_by": ["ip.src", "ip.dst"]}]
EOF
case_ query-diff-ends-ordered "-n 3000 --seed 23 --hops 1-6 --flows 7 --unavailable --pps 5000 --ts-start 1700000000.0219" "2 3" <<'EOF'
[{"name": "qd", "type": "query", "period_ms": 100,
  "select": ["count()", "sum(diff(int.latency))", "avg(diff(meta.timestamp))",
             "count(diff(int.hop_latencies))", "avg(diff(int.hop_latencies))",
             "sum(diff(int.hop_queue_occups))", "rate(diff(meta.packet_len))",
             "avg(diff(int.hop_latencies[1]))", "sum(diff(int.hop_egress_times))"],
  "group_by": ["ip.src", "ip.dst"]},
 {"name": "qv", "type": "query", "period_ms": 250,
  "select": ["count()", "avg(diff(int.latency))", "var(diff(int.latency))"],
  "group_by": ["udp.dst_port"]}]
EOF

# 2. Query over telemetry report v2.0, 4 coalesced reports per packet (one
# packet, several items with the same time), grouped by a per-hop array and a
# scalar, presence-list where.
case_ query-report-v2.0-coalesced "-n 600 --seed 12 --format report --report-version 2.0 --coalesce 4 --hops 1-6 --flows 5 --unavailable --pps 2000" <<'EOF'
[{"name": "qr", "type": "query", "period_ms": 50,
  "select": ["count()", "sum(int_report.hop_latency)", "avg(int.hop_queue_occups)",
             "max(int_report.queue_occup)", "p95(int.hop_latencies)", "min(meta.packet_len)",
             "avg(diff(meta.timestamp))", "var(int.hop_latencies)", "p90(int_report.hop_latency)",
             "last(meta.report_index)", "sum(int.hop_latencies * 2)", "rate()"],
  "group_by": ["int.hop_switch_ids", "int_report.node_id"],
  "where": ["int.hop_latencies", "int_report.hop_latency"]}]
EOF

# 2b. The same without unavailable values (keeps the coalesced path covered
# independently of the per-hop length question of case 2c).
case_ query-report-v2.0-coalesced-avail "-n 600 --seed 20 --format report --report-version 2.0 --coalesce 4 --hops 1-6 --flows 5 --pps 2000" <<'EOF'
[{"name": "qr", "type": "query", "period_ms": 50,
  "select": ["count()", "sum(int_report.hop_latency)", "avg(int.hop_queue_occups)",
             "max(int_report.queue_occup)", "p95(int.hop_latencies)", "min(meta.packet_len)",
             "avg(diff(meta.timestamp))", "var(int.hop_latencies)", "p90(int_report.hop_latency)",
             "last(meta.report_index)", "sum(int.hop_latencies * 2)", "rate()"],
  "group_by": ["int.hop_switch_ids", "int_report.node_id"],
  "where": ["int.hop_latencies", "int_report.hop_latency"]}]
EOF

# 2c. Per-hop result length: one packet per window, 3 hops, some values
# unavailable. README: "an array as long as the longest path seen (null for
# a hop with no value)", so an unavailable last hop is a trailing null.
# With 2 and 3 workers: a tick at every packet, every batch one packet.
case_ query-perhop-unavailable-last-hop "-n 300 --seed 21 --hops 3 --flows 1 --unavailable --pps 1000" "2 3" <<'EOF'
[{"name": "qn", "type": "query", "period_ms": 1,
  "select": ["count()", "avg(int.hop_latencies)", "max(int.hop_queue_occups)", "min(int.hop_ingress_times)"]}]
EOF

# 3. Query with boolean conditions: any(), hop index, absent hop under not,
# in {...}; one group, windows aligned on exact period boundaries; TCP flows.
case_ query-conditions "-n 1500 --seed 13 --transport tcp --hops 1-6 --flows 9 --pps 1000" <<'EOF'
[{"name": "qa", "type": "query", "period_ms": 250,
  "select": ["count()", "avg(int.latency)", "p50(int.latency)", "max(int.hop_latencies)",
             "sum(meta.packet_len)", "min(int.hop_latencies)"],
  "where": "ip.proto in {6, 17} and (any(int.hop_latencies > 100000) or int.hop_latencies[0] >= 2000) and not (int.hop_latencies[4] < 2500)"},
 {"name": "qb", "type": "query", "period_ms": 100,
  "select": ["count()", "avg(int.hop_latencies)", "first(ip.dst)", "last(ip.dst)"],
  "group_by": ["tcp.dst_port"],
  "where": ["int.latency", "all(int.hop_latencies < 3000)", "ip.dst == 10.128.0.0/29"]}]
EOF

# 3b. The presence list with one hop's value: present when that hop has
# it, whatever the value (queue IDs are often 0), absent when the hop is
# missing, unavailable or beyond the hop count.
case_ where-hop-present "-n 600 --seed 21 --hops 1-4 --flows 8 --unavailable" <<'EOF'
[{"name": "hp", "type": "event", "event": "int.num_hop",
  "where": ["int.hop_queue_ids[0]", "int.hop_latencies[2]"],
  "attributes": ["meta.packet_index", "int.hop_queue_ids"]}]
EOF

# 3c. var() of large values close together (microsecond timestamps: their
# squares pass 128 bits summed over ~8,000 values) and of their spread,
# 20,000 packets of one flow in one window; with 2 workers, whose states merge.
case_ var-large-values "-n 20000 --seed 22 --flows 1 --pps 100000" "2" <<'EOF'
[{"name": "vt", "type": "query", "period_ms": 1000,
  "select": ["count()", "var(meta.timestamp)", "var(int.latency)", "avg(meta.timestamp)"],
  "group_by": ["ip.src"]}]
EOF

# 3d. Quantiles of values below 0: differences of latencies (they go
# down as often as up), a spread around 0, and only negative values; few
# values a group (exact) and many (bucketed); merged from 2 workers.
case_ quantiles-signed "-n 6000 --seed 23 --flows 3 --hops 1-4 --pps 20000" "2" <<'EOF'
[{"name": "qs", "type": "query", "period_ms": 100,
  "select": ["count()", "p50(diff(int.latency))", "p90(diff(int.latency))",
             "p99(int.latency - 150000)", "p50(0 - int.latency)", "p95(diff(meta.timestamp))"],
  "group_by": ["ip.src"]},
 {"name": "qsmall", "type": "query", "period_ms": 1,
  "select": ["count()", "p50(diff(int.latency))", "p90(int.latency - 150000)"],
  "group_by": ["ip.src"]}]
EOF

# 3e. The where operators in their C spellings and precedence: =, &&, ||,
# !, % and a division that gives a real (dsl/README.md, "Conditions").
case_ where-operators "-n 1500 --seed 24 --hops 1-5 --flows 6" <<'EOF'
[{"name": "wo", "type": "event", "event": "int.num_hop",
  "where": "int.latency / 1000 > 152.5 && int.latency % 3 = 1 || !(int.num_hop >= 2) || int.num_hop = 4 && int.latency <= 150500",
  "attributes": ["meta.packet_index", "int.latency", "int.num_hop"]}]
EOF

# 3f. A group-by value a packet does not have: its group's key is null
# there, and the packet counts (dsl/README.md, "Query reports").
case_ group-absent "-n 800 --seed 25 --hops 1-3 --flows 4" <<'EOF'
[{"name": "ga", "type": "query", "period_ms": 1000,
  "select": ["count()", "avg(int.latency)"],
  "group_by": ["ipv6.src", "ip.src"]}]
EOF

# 4. Event, global delta memory (MMT-Probe): a record when the switch path
# (whole array, hop count included) differs from the last record's.
case_ event-delta-global "-n 1000 --seed 14 --hops 1-3 --flows 3 --unavailable" <<'EOF'
[{"name": "eg", "type": "event", "event": "int.hop_latencies",
  "delta_cond": ["int.hop_switch_ids"],
  "attributes": ["ip.src", "int.hop_switch_ids", "int.latency"]},
 {"name": "eall", "type": "event", "event": "int.latency", "where": "int.latency > 150000",
  "attributes": ["ip.dst", "int.hop_queue_ids"]}]
EOF

# 5. Event, delta memory per flow, two delta-cond attributes.
case_ event-delta-key-flow "-n 1500 --seed 15 --hops 1-4 --flows 8" <<'EOF'
[{"name": "ek", "type": "event", "event": "int.hop_switch_ids",
  "delta_cond": ["int.num_hop", "int.hop_egress_port_ids"],
  "delta_key": ["ip.src", "ip.dst"],
  "attributes": ["ip.src", "ip.dst", "int.num_hop"]}]
EOF

# 6. Event, delta-band per path and queue (INT v1.0 over UDP) and per
# reporting queue (coalesced report v2.0 items).
case_ event-delta-band "-n 2000 --seed 16 --hops 1-2 --flows 4 --unavailable" <<'EOF'
[{"name": "eb", "type": "event", "event": "int.hop_queue_occups",
  "delta_cond": ["int.hop_queue_occups"],
  "delta_key": ["int.hop_switch_ids", "int.hop_queue_ids"],
  "delta_band": 1000,
  "attributes": ["int.hop_switch_ids", "int.hop_queue_ids"]},
 {"name": "eb2", "type": "event", "event": "int.hop_queue_occups",
  "delta_cond": ["int.hop_queue_occups"],
  "delta_key": ["int.hop_switch_ids"],
  "delta_band": 20000,
  "attributes": ["ip.src"]}]
EOF
case_ event-delta-band-report "-n 500 --seed 17 --format report --report-version 2.0 --coalesce 3 --hops 1-6 --flows 6" <<'EOF'
[{"name": "ebr", "type": "event", "event": "int_report.queue_occup",
  "delta_cond": ["int_report.queue_occup"],
  "delta_key": ["int_report.node_id", "int_report.queue_id"],
  "delta_band": 4096,
  "attributes": ["int_report.node_id", "int_report.queue_id", "meta.report_index"]}]
EOF

# 7. Event, delta-threshold on a per-hop array: moves by more than N, a hop
# value appearing/disappearing (--unavailable), hop count changes.
case_ event-delta-threshold "-n 2000 --seed 18 --hops 2-3 --flows 4 --unavailable" <<'EOF'
[{"name": "et", "type": "event", "event": "int.hop_latencies",
  "delta_cond": ["int.hop_latencies"],
  "delta_key": ["ip.src"],
  "delta_threshold": 2500,
  "attributes": ["ip.src"]},
 {"name": "ets", "type": "event", "event": "int.latency",
  "delta_cond": ["int.latency"],
  "delta_threshold": 40000,
  "attributes": ["ip.dst"]}]
EOF

# 8. Event, keepalive: a path that never changes reports again after N ms.
# 977 packets/s keeps every elapsed time >= 1 ms away from N (see reply notes).
case_ event-keepalive "-n 1500 --seed 19 --hops 2 --flows 5 --pps 977" <<'EOF'
[{"name": "ka", "type": "event", "event": "int.hop_switch_ids",
  "delta_cond": ["int.hop_switch_ids"],
  "delta_key": ["ip.src"],
  "keepalive_ms": 50,
  "attributes": ["ip.src", "int.hop_switch_ids"]},
 {"name": "kb", "type": "event", "event": "int.hop_queue_occups",
  "delta_cond": ["int.hop_queue_occups"],
  "delta_key": ["int.hop_switch_ids"],
  "delta_band": 100000,
  "keepalive_ms": 120,
  "attributes": ["int.hop_switch_ids"]}]
EOF

# 9. Flow monitor: flows of chosen fields (a per-hop array among them),
# counters summed and maxed over hops, unavailable hop values, buffers of 5
# sub-intervals, intervals starting off a boundary, an overflow crossing
# (flows appear one after another: each is drawn at random), and a where.
case_ monitor-flows "-n 3000 --seed 21 --hops 1-4 --flows 40 --unavailable --pps 9000 --ts-start 1700000000.0123" <<'EOF'
[{"name": "fm", "type": "monitor", "match": ["ip.src", "udp.dst_port", "int.hop_switch_ids"],
  "interval_ms": 50, "buffer": 5,
  "counters": ["sum(int.hop_latencies)", "max(int.hop_queue_occups)", "sum(meta.packet_len)"],
  "overflow": 150, "where": "int.latency > 2000"}]
EOF

# 10. Flow monitor over coalesced telemetry reports, report-unchanged (a
# flow without packets in an interval is written with an empty buffer).
case_ monitor-report-unchanged "-n 800 --seed 22 --format report --report-version 2.0 --coalesce 3 --hops 1-3 --flows 40 --pps 300" <<'EOF'
[{"name": "fr", "type": "monitor", "match": ["ip.src", "ip.dst"],
  "interval_ms": 40, "buffer": 2, "counters": ["max(int_report.queue_occup)"],
  "report_unchanged": true}]
EOF

echo "refmodel: $((total - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
