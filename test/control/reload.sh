#!/bin/sh
# Hot reload while reports flow into intspect -u, on 1 and 2 workers:
# `intspect-ctl reload` swaps the rule set at one point for every worker,
# so every packet is handled by the old rules or by the new, never both,
# never neither: a per-packet event removed and one added write one record
# per packet between them; a flow monitor whose section did not change
# keeps its flows (its packet counts cover the whole run); a query whose
# section changed writes its window at the swap and starts again, and its
# counts add up to every packet. A channel no rule writes to is closed, a
# new one opened, an unchanged one kept. A broken config is refused with
# file:line:col and the rules go on; SIGHUP reloads too.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"
ctl() { "$bld/intspect-ctl" -s "$tmp/c.sock" "$@"; }
# start_live W: intspect -u on a free loopback port, W workers, the rules
# of $tmp/r.conf and the control socket; sets port and pid
start_live() {
	rm -f "$tmp/c.sock"
	port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	"$bld/intspect" -C "$tmp/r.conf" -u "127.0.0.1:$port" -w "$1" --control "$tmp/c.sock" \
		>/dev/null 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 50); do [ -S "$tmp/c.sock" ] && break; sleep 0.1; done
}
# send_pass: the capture once more, 8 senders
send_pass() {
	python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 50 0.005 8 >/dev/null
}
# stop_live: SIGINT, then its exit status in rc
stop_live() {
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	pid=""
}

"$bld/intgen" -o "$tmp/r.pcap" -n 500 --seed 51 --format report --report-version 2.0 \
	--hops 1-3 --flows 16 2>/dev/null

# the rule set before (A) and after (B) the reload
conf_a() {
	cat <<CONF
file-output f { path = "$tmp/f.out" }
file-output g { path = "$tmp/g.out" }
flow-monitor fm {
  match = {"ip.src", "ip.dst"}
  query-interval = 3600000
  output-channel = {f}
}
query-report q {
  ms-period = 3600000
  select = {"count()"}
  output-channel = {f}
}
event-report e {
  event = "int_report.seq_num"
  attributes = {"ip.src"}
  output-channel = {g}
}
CONF
}
conf_b() {
	cat <<CONF
file-output f { path = "$tmp/f.out" }
file-output h { path = "$tmp/h.out" }
flow-monitor fm {
  match = {"ip.src", "ip.dst"}
  query-interval = 3600000
  output-channel = {f}
}
query-report q {
  ms-period = 7200000
  select = {"count()"}
  output-channel = {f}
}
event-report e2 {
  event = "int_report.seq_num"
  attributes = {"ip.dst"}
  output-channel = {h}
}
CONF
}

for w in 1 2; do
	rm -f "$tmp"/*.out
	conf_a >"$tmp/r.conf"
	start_live $w
	# 8 passes of the capture (4,000 reports, 8 senders), a reload in the middle
	python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$port" 25 0.05 8 >/dev/null &
	p1=$!
	# the reload once the old rules have written (a loaded machine may
	# start the sender late): both rule sets then see packets
	for _ in $(seq 100); do [ -s "$tmp/g.out" ] && break; sleep 0.05; done
	conf_b >"$tmp/r.conf"
	ctl --json reload >"$tmp/rl.json"
	wait $p1
	for _ in 2 3 4 5 6 7 8; do
		send_pass
	done
	sleep 0.3
	# a broken file is refused; the rules go on
	cp "$tmp/r.conf" "$tmp/good.conf"
	printf 'query-report bad { select = {"avg(ip.srcc)"} }\n' >>"$tmp/r.conf"
	ctl reload 2>"$tmp/bad.err"
	bad_rc=$?
	ctl --json rules >"$tmp/rules.json"
	# SIGHUP: the good file again (a comment more): everything unchanged
	{ cat "$tmp/good.conf"; echo "# again"; } >"$tmp/r.conf"
	kill -HUP "$pid"
	sleep 0.5
	# the kept rules go on after it (an event's keys, escaped once, kept)
	send_pass
	sleep 0.3
	stop_live
	if python3 - "$tmp" <<'PY' >"$tmp/check.out" 2>&1
import json, os, sys
t = sys.argv[1]
rl = json.load(open(f"{t}/rl.json"))
assert rl["ok"], rl
assert (rl["unchanged"], rl["changed"], rl["new"], rl["gone"]) == (1, 1, 1, 1), rl
assert (rl["channels_opened"], rl["channels_closed"]) == (1, 1), rl
def recs(name):
    p = f"{t}/{name}.out"
    return [json.loads(l) for l in open(p)] if os.path.exists(p) else []
f, g, h = recs("f"), recs("g"), recs("h")
total = 4500
# every packet handled by one rule set: e before the swap, e2 after
# (and after the reload that kept it: the last 500, with their keys)
assert len(g) + len(h) == total, (len(g), len(h))
assert all(set(r) >= {"int_report.seq_num", "ip.dst"} for r in h[-500:]), h[-1]
assert len(g) > 0 and len(h) > 0, (len(g), len(h))
assert all(r["report"] == "e" for r in g) and all(r["report"] == "e2" for r in h)
# the unchanged monitor kept its flows: their counts cover every packet
fm = [r for r in f if r["report"] == "fm"]
assert sum(r["packets"] for r in fm) == total, sum(r["packets"] for r in fm)
assert len(fm) == 16, len(fm)
# the changed query: its window at the swap, then the new one's
q = [r for r in f if r["report"] == "q"]
assert len(q) == 2 and sum(r["count()"] for r in q) == total, q
assert q[0]["count()"] == len(g), (q[0], len(g))
rules = {r["name"] for r in json.load(open(f"{t}/rules.json"))["rules"]}
assert rules == {"fm", "q", "e2"}, rules
print(f"e {len(g)} + e2 {len(h)} records, q {q[0]['count()']} + {q[1]['count()']}")
PY
	then
		ok "$w worker(s): reload while 4,500 reports flow: $(cat "$tmp/check.out"), monitor kept, channels g closed and h opened"
	else
		bad "$w worker(s): reload" "$tmp/check.out"
		cat "$tmp/rl.json" "$tmp/err"
	fi
	if [ "$bad_rc" = 1 ] && grep -q "r.conf:[0-9]*:35: error: unknown attribute 'ip.srcc'" "$tmp/bad.err" &&
	   grep -q "r.conf:[0-9]*:35: error: unknown attribute 'ip.srcc'" "$tmp/err"; then
		ok "$w worker(s): a broken config refused with file:line:col in the response and the log, the rules went on"
	else
		bad "$w worker(s): broken config (exit $bad_rc)" "$tmp/bad.err"
	fi
	if grep -q "reload of .*r.conf: 3 rules (3 unchanged, 0 changed, 0 new, 0 gone), channels: 0 opened, 0 closed" "$tmp/err" &&
	   grep -q "^intspect: 4500 packets received by the kernel, 0 dropped" "$tmp/err" && [ "$rc" = 0 ]; then
		ok "$w worker(s): SIGHUP reloaded (3 rules unchanged), the rules went on; 4,500 packets, none dropped, exit 0"
	else
		bad "$w worker(s): SIGHUP, drops or exit ($rc)" "$tmp/err"
	fi
	grep -q "runtime error\|AddressSanitizer\|ThreadSanitizer" "$tmp/err" && bad "sanitizer" "$tmp/err"
done

# rules kept by a reload that puts a new rule, naming other attributes,
# before them: their state moves to the new engine, whose slot cache is
# its own. Their records must still be of their own attributes: the
# event's fields as the capture has them, the query's count, sums, maxima
# and means those of every packet (an offline run on the capture, times
# the passes sent), nothing read from the engine that went
conf_c() {
	cat <<CONF
file-output k { path = "$tmp/k.out" }
event-report ke {
  event = "int_report.seq_num"
  attributes = {"ip.src", "udp.dst_port"}
  output-channel = {k}
}
query-report kq {
  ms-period = 3600000
  select = {"count()", "sum(udp.dst_port)", "max(int.hop_latencies)", "avg(int.latency)"}
  group-by = {"ip.src"}
  output-channel = {k}
}
CONF
}
conf_d() {
	cat <<CONF
file-output n { path = "$tmp/n.out" }
event-report nw {
  event = "ip.dst"
  attributes = {"ip.ttl", "udp.src_port", "int.num_hop", "int.hop_queue_occups"}
  output-channel = {n}
}
CONF
	conf_c
}
conf_c >"$tmp/c.conf"
"$bld/intspect" -r "$tmp/r.pcap" -C "$tmp/c.conf" -q 2>/dev/null
mv "$tmp/k.out" "$tmp/offline.out"
for w in 1 2; do
	rm -f "$tmp"/k.out "$tmp"/n.out
	conf_c >"$tmp/r.conf"
	start_live $w
	send_pass
	sleep 0.3
	conf_d >"$tmp/r.conf"
	ctl --json reload >"$tmp/rl.json"
	send_pass
	send_pass
	sleep 0.3
	stop_live
	if python3 - "$tmp" <<'PY' >"$tmp/check.out" 2>&1
import collections, json, sys
t = sys.argv[1]
rl = json.load(open(f"{t}/rl.json"))
assert rl["ok"] and (rl["unchanged"], rl["new"]) == (2, 1), rl
load = lambda p: [json.loads(l) for l in open(p)]
off, live = load(f"{t}/offline.out"), load(f"{t}/k.out")
fields = ("int_report.seq_num", "ip.src", "udp.dst_port")
ev = lambda recs: collections.Counter(tuple(r.get(k) for k in fields) for r in recs if r["report"] == "ke")
want = collections.Counter({k: 3 * n for k, n in ev(off).items()})
got = ev(live)
assert got == want, f"event: {sum((got - want).values())} records not of the capture, e.g. {list((got - want))[:2]}"
q = lambda recs: {r["ip.src"]: r for r in recs if r["report"] == "kq"}
qo, ql = q(off), q(live)
assert set(qo) == set(ql), (sorted(qo), sorted(ql))
for src, o in qo.items():
    l = ql[src]
    assert (l["count()"], l["sum(udp.dst_port)"]) == (3 * o["count()"], 3 * o["sum(udp.dst_port)"]), (o, l)
    assert l["max(int.hop_latencies)"] == o["max(int.hop_latencies)"], (o, l)
    assert abs(l["avg(int.latency)"] - o["avg(int.latency)"]) < 1e-6 * abs(o["avg(int.latency)"]) + 1e-9, (o, l)
print(f"{sum(got.values())} event records, {len(ql)} query groups")
PY
	then
		ok "$w worker(s): an event and a query kept by a reload that adds a rule before them: $(cat "$tmp/check.out"), as the capture has them"
	else
		bad "$w worker(s): rules kept by a reload that adds a rule before them (exit $rc)" "$tmp/check.out"
		head -c 3000 "$tmp/err"
	fi
	grep -q "runtime error\|AddressSanitizer\|ThreadSanitizer" "$tmp/err" && bad "sanitizer" "$tmp/err"
done

# several workers on a capture file: refused, said why
conf_a >"$tmp/r.conf"
mkfifo "$tmp/fifo"
"$bld/intspect" -C "$tmp/r.conf" -r "$tmp/fifo" -w 2 --control "$tmp/c.sock" >/dev/null 2>"$tmp/err" &
pid=$!
exec 3>"$tmp/fifo"
head -c 24 "$tmp/r.pcap" >&3     # the file header: intspect opens the capture
for _ in $(seq 50); do [ -S "$tmp/c.sock" ] && break; sleep 0.1; done
ctl reload 2>"$tmp/e"
rc=$?
exec 3>&-
wait "$pid"
pid=""
[ $rc = 1 ] && grep -q "reload refused, the running rules go on: several workers reading a capture file" "$tmp/e" &&
	ok "2 workers on a capture file: reload refused with the reason" || bad "reload on a file with 2 workers: $rc" "$tmp/e"
# SIGHUP without a control socket (its path cannot be made): still a
# reload; with --dump: said why not
conf_a >"$tmp/r.conf"
port=$(python3 -c 'import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# hup_run ERR ARGS...: intspect -u with ARGS, a SIGHUP half a second in,
# stopped half a second later; its stderr in ERR
hup_run() {
	err=$1
	shift
	"$bld/intspect" -C "$tmp/r.conf" -u "127.0.0.1:$port" "$@" >/dev/null 2>"$err" &
	pid=$!
	sleep 0.5
	kill -HUP "$pid"
	sleep 0.5
	kill -INT "$pid"
	wait "$pid"
	pid=""
}
hup_run "$tmp/nosock.err" -q --control "$tmp/no/dir/c.sock"
grep -q "running without a control socket" "$tmp/nosock.err" &&
	grep -q "reload of .*r.conf: 3 rules (3 unchanged" "$tmp/nosock.err" &&
	ok "no control socket: SIGHUP reloads" || bad "no control socket: SIGHUP" "$tmp/nosock.err"
hup_run "$tmp/dump.err" --dump --control none
grep -q "^intspect: SIGHUP: reload: not with --dump" "$tmp/dump.err" &&
	ok "--dump: SIGHUP says why it does not reload" || bad "--dump: SIGHUP" "$tmp/dump.err"
summary reload
