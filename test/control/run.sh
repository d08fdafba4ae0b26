#!/bin/sh
# The control socket, through intspect-ctl, against intspect -u with two
# workers and telemetry reports sent in paced bursts: every command and its
# effect on the counters and the records; the socket's mode; errors as
# JSON on a connection that stays open; the TCP port refused without its
# token.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"
ctl() { "$bld/intspect-ctl" -s "$tmp/c.sock" "$@"; }
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
# N JSON lines to the socket (PATH or HOST:PORT) on one connection; the
# responses, one line each
raw() {
	python3 "$src/test/control/raw.py" "$@"
}

"$bld/intgen" -o "$tmp/r.pcap" -n 400 --seed 41 --format report --report-version 2.0 \
	--hops 1-3 --flows 20 --flow-order shuffle 2>/dev/null
udp=$(free_port)
tcp=$(free_port)
cat >"$tmp/c.conf" <<CONF
file-output f { path = "$tmp/out.jsonl" }
flow-monitor fm {
  match = {"ip.src", "ip.dst"}
  query-interval = 200
  buffer = 2
  output-channel = {f}
}
query-report per-node {
  ms-period = 100000
  select = {"count()"}
  group-by = {"int_report.node_id"}
  output-channel = {f}
}
control {
  path = "$tmp/c.sock"
  tcp = "127.0.0.1:$tcp"
  token = "s3cret"
}
CONF
"$bld/intspect" -C "$tmp/c.conf" -u "127.0.0.1:$udp" -w 2 >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 50); do [ -S "$tmp/c.sock" ] && break; sleep 0.1; done
# one burst: the capture's 400 reports, then a pause for them to land
burst() {
	python3 "$src/test/inputs/send_reports.py" "$tmp/r.pcap" 127.0.0.1 "$udp" 100 0.01 >/dev/null
	sleep 0.4
}
# the value of a field of a rule in `rules --json`
rule_field() {       # RULE FIELD
	ctl --json rules | python3 -c '
import json, sys
r = json.load(sys.stdin)
print([x for x in r["rules"] if x["name"] == sys.argv[1]][0][sys.argv[2]])' "$1" "$2"
}

mode=$(stat -c %a "$tmp/c.sock" 2>/dev/null)
[ "$mode" = 600 ] && ok "the socket is mode 0600" || bad "socket mode '$mode'"

burst
if ctl --json stats >"$tmp/s.json" && python3 - "$tmp/s.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["ok"] and s["packets"] == 400, s["packets"]
assert s["decoded"]["int_report"] == 400
assert len(s["workers"]) == 2 and s["workers_answered"] == 2
assert sum(w["packets"] for w in s["workers"]) == 400
# the monitor is keyed by flow, the query by node: an item has 1 or 2 owners
assert 400 <= sum(w["items"] for w in s["workers"]) <= 800, s["workers"]
names = {r["name"]: r for r in s["rules"]}
assert names["fm"]["kind"] == "monitor" and names["fm"]["flows"] == 20, names["fm"]
assert names["per-node"]["matched"] == 400
assert [c["name"] for c in s["channels"]] == ["f"]
PY
then
	ok "stats: 400 packets over 2 workers, 20 flows, the rules and the channel"
else
	bad "stats" "$tmp/s.json"
fi
ctl rules >"$tmp/rules.txt"
if grep -q "^monitor	fm	yes	400	" "$tmp/rules.txt" && grep -q "^query	per-node	yes	400	" "$tmp/rules.txt"; then
	ok "rules: a table of both, enabled"
else
	bad "rules table" "$tmp/rules.txt"
fi

# disable stops a rule between two packets; enable runs it again
ctl disable per-node >/dev/null && burst
a=$(rule_field per-node matched)
e=$(rule_field per-node enabled)
ctl enable per-node >/dev/null && burst
b=$(rule_field per-node matched)
if [ "$a" = 400 ] && [ "$e" = False ] && [ "$b" = 800 ]; then
	ok "disable: the query skipped a burst (matched 400); enable: it counts again ($b)"
else
	bad "disable/enable: matched $a (enabled $e), then $b"
fi

# get: every flow, or one
ctl --json get fm >"$tmp/g.json"
n=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["flows"], len(r["entries"]))' "$tmp/g.json")
[ "$n" = "20 20" ] && ok "get: 20 flows" || bad "get: '$n'" "$tmp/g.json"
key=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["entries"][0]; print(e["ip.src"], e["ip.dst"])' "$tmp/g.json")
# shellcheck disable=SC2086
ctl --json get fm $key >"$tmp/g1.json"
if python3 - "$tmp/g1.json" $key <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["flows"] == 1 and len(r["entries"]) == 1
e = r["entries"][0]
assert (e["ip.src"], e["ip.dst"]) == (sys.argv[2], sys.argv[3])
assert e["packets"] == 60 and len(e["buffer.packets"]) == 2, e   # 3 bursts, 20 flows shuffled
PY
then
	ok "get fm $key: that flow, 60 packets over 3 bursts"
else
	bad "get one flow" "$tmp/g1.json"
fi

# entry-remove: the flow goes, its packets are excluded; entry-add: back
# shellcheck disable=SC2086
ctl entry-remove fm $key >"$tmp/o" && burst
ex=$(rule_field fm excluded_packets)
# shellcheck disable=SC2086
gone=$(ctl --json get fm $key | python3 -c 'import json,sys; print(json.load(sys.stdin)["flows"])')
# shellcheck disable=SC2086
ctl entry-add fm $key >"$tmp/o2" && burst
# shellcheck disable=SC2086
back=$(ctl --json get fm $key | python3 -c 'import json,sys; print(json.load(sys.stdin)["entries"][0]["packets"])')
if grep -q "^removed	yes" "$tmp/o" && [ "$ex" = 20 ] && [ "$gone" = 0 ] && grep -q "^added	yes" "$tmp/o2" &&
   [ "$back" = 20 ]; then
	ok "entry-remove: the flow's 20 packets excluded; entry-add: monitored again (20 packets)"
else
	bad "entry-remove/add: excluded $ex, flows after removal $gone, packets after adding $back"
fi

# reset forgets the removed flows too: removed, then reset, counted again
# shellcheck disable=SC2086
ctl entry-remove fm $key >/dev/null && ctl reset fm >/dev/null && burst
# shellcheck disable=SC2086
again=$(ctl --json get fm $key | python3 -c 'import json,sys; e=json.load(sys.stdin)["entries"]; print(e[0]["packets"] if e else 0)')
[ "$again" = 20 ] && ok "reset after entry-remove: the removed flow is monitored again (20 packets)" ||
	bad "reset after entry-remove: the flow has $again packets"

# reset and sampling: a hash keeps about half of the 20 flows
ctl set-sampling fm 0.5 >/dev/null && ctl reset fm >"$tmp/o" && burst
kept=$(rule_field fm entries)
out=$(rule_field fm sampled_out_packets)
if grep -q "^flows_removed	20" "$tmp/o" && [ "$kept" -gt 2 ] && [ "$kept" -lt 18 ] &&
   [ "$out" = $(((20 - kept) * 20)) ]; then
	ok "reset then sampling 0.5: $kept of 20 flows kept, the others' $out packets counted"
else
	bad "sampling: $kept flows kept, $out packets sampled out" "$tmp/o"
fi
ctl set-sampling fm 1 >/dev/null

# overflow: a threshold under the flows now gives one overflow record
ctl set-overflow fm 5 >/dev/null && burst && burst
over=$(grep -c '"type":"overflow"' "$tmp/out.jsonl")
[ "$over" = 1 ] && ok "set-overflow 5: one overflow record" || bad "overflow records: $over"

# set-interval: the intervals after the change are 400 ms long
ctl set-interval fm 400 >/dev/null && burst && burst && burst
last=$(grep '"type":"flow"' "$tmp/out.jsonl" | tail -1)
len=$(echo "$last" | python3 -c 'import json,sys; r=json.load(sys.stdin); print(round(r["time"] - r["interval_start"], 3))')
[ "$len" = 0.4 ] && ok "set-interval 400: intervals of 0.4 s" || bad "interval after set-interval: $len"

# monitor-add: a flow monitor more, without a restart; monitor-remove:
# it writes what it holds and goes
ctl --json monitor-add byport 'match = {"udp.src_port"}; query-interval = 3600000; output-channel = {f}' \
	>"$tmp/ma.json" && burst
m=$(rule_field byport matched)
ctl monitor-add bad 'match = {"ip.srcc"}' 2>"$tmp/ma.err"
bad_rc=$?
ctl monitor-add inj 'match = {"ip.src"} } event-report x { event = "ip.src"' 2>"$tmp/inj.err"
inj_rc=$?
ctl --json monitor-remove byport >"$tmp/mr.json"
sleep 0.3       # the file channel's thread writes them
written=$(grep -c '"report":"byport","type":"flow"' "$tmp/out.jsonl")
ctl monitor-remove nope 2>"$tmp/mr.err"
nope_rc=$?
if grep -q '"new":1' "$tmp/ma.json" && [ "$m" = 400 ] && [ $bad_rc = 1 ] &&
   grep -q "monitor-add bad:2:10: error: unknown attribute 'ip.srcc'" "$tmp/ma.err" && [ $inj_rc = 1 ] &&
   grep -q "braces or quotes do not balance" "$tmp/inj.err" && grep -q '"gone":1' "$tmp/mr.json" &&
   [ "$written" -gt 0 ] && [ $nope_rc = 1 ] && grep -q "no flow monitor named 'nope'" "$tmp/mr.err"; then
	ok "monitor-add: counted the next burst (400); a bad one refused with line:col, an injection refused; monitor-remove: its $written flows written, an unknown name refused"
else
	bad "monitor-add/remove: matched $m, bad $bad_rc, inj $inj_rc, written $written, nope $nope_rc" "$tmp/ma.err"
	cat "$tmp/ma.json" "$tmp/mr.json" "$tmp/inj.err" "$tmp/mr.err"
fi

# a monitor kept by a reload keeps the interval set-interval gave it, and
# the ticks follow it: 10 ms intervals, their packets seen before their end
# (within the live input's tick lateness, a few ms; at its section's
# spacing, 100 ms, they stayed open up to 90 ms past it)
ctl set-interval fm 10 >/dev/null && ctl reload >/dev/null && burst && burst
after=$(wc -l <"$tmp/out.jsonl")
burst && burst && sleep 0.3
if tail -n +"$((after + 1))" "$tmp/out.jsonl" | python3 -c '
import json, sys
fl = [r for r in map(json.loads, sys.stdin) if r["report"] == "fm" and r["type"] == "flow"]
assert fl, "no flow record"
late = max(r["last_seen"] - r["time"] for r in fl)
assert all(round(r["time"] - r["interval_start"], 3) == 0.01 for r in fl), fl[0]
assert late < 0.045, late
print("%d flow records, the latest packet %.1f ms past its interval" % (len(fl), late * 1000))' \
	>"$tmp/iv.out" 2>&1; then
	ok "reload after set-interval 10: $(cat "$tmp/iv.out")"
else
	bad "reload after set-interval" "$tmp/iv.out"
fi

# errors: JSON, and the connection stays open
raw "$tmp/c.sock" 'not json' '{"cmd":"nope"}' '{"cmd":"set-sampling","name":"fm","ratio":2}' \
	'{"cmd":"get","name":"zz"}' '{"cmd":"entry-add","name":"fm","key":["10.1.0.1"]}' \
	'{"cmd":"entry-add","name":"fm","key":["10.1.0.x","10.128.0.1"]}' \
	'{"cmd":"reset","name":"per-node"}' '[1]' '{"cmd":"stats"}' >"$tmp/e.out"
if python3 - "$tmp/e.out" <<'PY'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])]
assert len(r) == 9, len(r)
want = ["not JSON", "unknown command 'nope'; known: help, stats",
        "sampling of fm must be above 0 and at most 1", "no rule or flow monitor named 'zz'",
        "the key of fm has 2 values (ip.src, ...): 1 given",
        "key value 1 of fm: '10.1.0.x' is not a value of ip.src",
        "'per-node' is not a flow monitor", "a request is a JSON object"]
for got, w in zip(r, want):
    assert got["ok"] is False and w in got["error"], (got, w)
assert r[8]["ok"] is True and r[8]["packets"] > 0
PY
then
	ok "8 bad requests: 8 JSON errors with their reason, then a request served on the same connection"
else
	bad "errors" "$tmp/e.out"
fi
# a request line past 1 MiB, whole in one send: refused, the connection
# goes on; 32 connections at once, and the 33rd told why
python3 - "$tmp/c.sock" >"$tmp/big.out" 2>&1 <<'PY'
import json, socket, sys, time
def conn():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1])
    s.settimeout(10); time.sleep(0.01)     # (a blocking connect: the backlog is short)
    return s, s.makefile("rwb")
s, f = conn()
for size in (1100000, 1900000):
    s.sendall(b'{"cmd":"stats","pad":"' + b"x" * size + b'"}\n')
    r = json.loads(f.readline())
    assert r["ok"] is False and "request longer than 1048576 bytes" in r["error"], r
s.sendall(b'{"cmd":"stats"}\n')
assert json.loads(f.readline())["ok"] is True
held = [conn() for _ in range(31)]      # 32 with s
extra, ef = conn()
r = json.loads(ef.readline())
assert r["ok"] is False and "too many control connections (32)" in r["error"], r
print("ok")
PY
grep -q '^ok$' "$tmp/big.out" && ok "a line past 1 MiB refused however it comes, the connection kept; a 33rd connection told why" ||
	bad "control limits" "$tmp/big.out"
ctl nope 2>"$tmp/e"; rc=$?
[ $rc = 1 ] && grep -q "unknown command 'nope'" "$tmp/e" && ok "intspect-ctl: a refused request exits 1 with the message" ||
	bad "intspect-ctl exit on a refused request: $rc" "$tmp/e"

# TCP: the token, or nothing
raw "127.0.0.1:$tcp" '{"cmd":"stats"}' '{"cmd":"stats","token":"nope"}' >"$tmp/t.out"
r1=$("$bld/intspect-ctl" -t "127.0.0.1:$tcp" -k s3cret --json rules | head -c 12)
if grep -q '"error":"a request on TCP needs \\"token\\""' "$tmp/t.out" &&
   grep -q '"error":"wrong token"' "$tmp/t.out" && [ "$r1" = '{"ok":true,"' ]; then
	ok "TCP: refused without the token and with a wrong one, served with it"
else
	bad "TCP token" "$tmp/t.out"
fi

kill -INT "$pid"
wait "$pid"
rc=$?
pid=""
[ $rc = 0 ] && [ ! -e "$tmp/c.sock" ] && ok "exit 0, the socket file removed" || bad "exit $rc" "$tmp/err"
grep -q "runtime error\|AddressSanitizer" "$tmp/err" && bad "sanitizer" "$tmp/err"

# a rule disabled before any item and enabled after: its items reach
# their owner with its values (a worker lists the values of the rules an
# item goes to once, and keeps the list; a disabled rule's are listed too)
cat >"$tmp/d.conf" <<CONF
file-output f { path = "$tmp/d.jsonl" }
event-report x {
  event = "int.hop_latencies"
  delta-cond = {"meta.packet_index"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"int.hop_latencies"}
  output-channel = {f}
}
event-report y {
  event = "ip.src"
  delta-cond = {"meta.packet_index"}
  delta-key = {"ip.src", "ip.dst"}
  attributes = {"ip.src"}
  output-channel = {f}
}
control { path = "$tmp/c.sock" }
CONF
"$bld/intspect" -C "$tmp/d.conf" -u "127.0.0.1:$udp" -w 2 >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 50); do [ -S "$tmp/c.sock" ] && break; sleep 0.1; done
ctl disable x >/dev/null && burst
ctl enable x >/dev/null && burst && burst
x=$(rule_field x matched)
y=$(rule_field y matched)
if [ "$x" = 800 ] && [ "$y" = 1200 ]; then
	ok "a rule enabled after its first items: every item of its two bursts on 2 workers (x $x, y $y)"
else
	bad "disabled first, then enabled: x matched $x (want 800), y $y (want 1200)" "$tmp/err"
fi
kill -INT "$pid"
wait "$pid"
pid=""

# a client that sends requests and does not read their responses holds
# the socket's thread 5 s at most, then is dropped (its requests with it):
# another client is answered meanwhile, and the slow one's connection
# ends with the line it was sent, cut or not (no other line runs into it)
"$bld/intgen" -o "$tmp/many.pcap" -n 3000 --seed 43 --format report --report-version 2.0 \
	--flows 3000 2>/dev/null
printf 'flow-monitor big {\n  match = {"ip.src", "ip.dst", "udp.src_port"}\n  query-interval = 3600000\n}\ncontrol { path = "%s" }\n' \
	"$tmp/c.sock" >"$tmp/big.conf"
"$bld/intspect" -C "$tmp/big.conf" -u "127.0.0.1:$udp" >/dev/null 2>"$tmp/err" &
pid=$!
for _ in $(seq 50); do [ -S "$tmp/c.sock" ] && break; sleep 0.1; done
python3 "$src/test/inputs/send_reports.py" "$tmp/many.pcap" 127.0.0.1 "$udp" 500 0.05 >/dev/null
sleep 0.5
if python3 - "$tmp/c.sock" <<'PY' >"$tmp/slow.out" 2>&1
import socket, sys, time
slow = socket.socket(socket.AF_UNIX)
slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
slow.connect(sys.argv[1])
slow.sendall(b'{"cmd":"get","name":"big"}\n' * 3)
time.sleep(0.3)
t0 = time.time()
other = socket.socket(socket.AF_UNIX)
other.connect(sys.argv[1])
other.sendall(b'{"cmd":"help"}\n')
other.settimeout(30)
got = b""
while not got.endswith(b"\n"):
    got += other.recv(65536)
waited = time.time() - t0
assert got.startswith(b'{"ok":true'), got[:80]
assert waited < 12, waited
# the slow one: whole responses, at most one cut last, then the end
slow.settimeout(30)
data = b""
while True:
    b = slow.recv(65536)
    if not b:
        break
    data += b
import json
for line in data.split(b"\n")[:-1]:
    json.loads(line)
assert data.count(b"\n") < 3, data.count(b"\n")
print("another client answered after %.1f s; the slow one dropped after %d bytes" % (waited, len(data)))
PY
then
	ok "control: $(cat "$tmp/slow.out")"
else
	bad "control: a client that does not read" "$tmp/slow.out"
fi
kill -INT "$pid"
wait "$pid"
pid=""

# no server: exit 2 and why
"$bld/intspect-ctl" -s "$tmp/none.sock" stats 2>"$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q "none.sock: No such file or directory (is intspect running" "$tmp/e" &&
	ok "intspect-ctl without a server: exit 2, with the reason" || bad "no server: exit $rc" "$tmp/e"
# a config asking for TCP without a token is refused
printf 'control { tcp = "7070" }\n' >"$tmp/bad.conf"
"$bld/intspect" -T "$tmp/bad.conf" 2>"$tmp/e"; rc=$?
[ $rc = 2 ] && grep -q "bad.conf:1:11: error: a TCP control port needs a token" "$tmp/e" &&
	ok "control { tcp } without a token: refused" || bad "tcp without token: exit $rc" "$tmp/e"
summary control
