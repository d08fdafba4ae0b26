#!/bin/sh
# test/outputs/kafka/run.sh - the "kafka" channel against a real broker
# (test/services/kafka.sh: Apache Kafka, KRaft, one node on 127.0.0.1),
# started once for every case. Records are consumed with kcat and checked
# by kcheck.py against intspect's own standard output of the same run
# (every rule writes to stdout and to Kafka).
#
#   1 records     the topic holds exactly the records, in order per key;
#                 a message's key is the group-by values, the delta-key,
#                 else the flow's addresses
#   2 partitions  a key keeps its partition across runs, keys spread, and the
#                 partition is the one a Java producer would pick (murmur2)
#   2b default-topic  no topic key: the topic "report"
#   3 per-report  topic = "x.%r": one topic per report
#   4 property    property "compression.type" = "lz4" reaches the broker's
#                 log; a bad property is a config error at its line:col
#   5 restart     broker stopped and restarted mid-run: nothing lost,
#                 acked == delivered == queued, dropped 0
#   6 late        broker down at start, up later: everything arrives
#   7 sasl        SASL/PLAIN credentials passed through (property
#                 "sasl.username" ...): the records arrive; a wrong password
#                 is said (authentication failed), nothing delivered, exit 3
#   8 tls         TLS (properties "security.protocol" = "SSL",
#                 "ssl.ca.location"): the records arrive; a CA that did not
#                 sign the broker's certificate is said (certificate verify
#                 failed), nothing delivered, exit 3
#
# Exit 77 when java or kcat is missing (or the broker's jars cannot be had).
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
gen=$bld/intgen
svc=$src/test/services/kafka.sh
kc="python3 $src/test/outputs/kafka/kcheck.py"

command -v java >/dev/null 2>&1 || { echo "kafka: java not found; skipping"; exit 77; }
command -v kcat >/dev/null 2>&1 || { echo "kafka: kcat not found (Debian: kcat); skipping"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/intspect-kafka.XXXXXX")
kdir=$tmp/broker
# KAFKA_TEST_KEEP=1 keeps the directory (configs, outputs, broker logs)
cleanup() {
	sh "$svc" stop "$kdir" >/dev/null 2>&1
	if [ -n "${KAFKA_TEST_KEEP:-}" ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

addr=$(sh "$svc" start "$kdir")
rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -ne 0 ] && { echo "FAIL broker: kafka.sh start exited $rc"; echo "kafka: 0 passed, 1 failed"; exit 1; }
echo "# broker at $addr"

pass=0 fail=0
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }

# sanitizer reports or an unexpected exit make any case fail
clean_run() {   # NAME STDERR STATUS
	if [ "$3" -ne 0 ]; then bad "$1" "intspect exited $3"; sed 's/^/# /' "$2"; return 1; fi
	if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$2"; then
		bad "$1" "sanitizer report"; cat "$2"; return 1
	fi
	return 0
}

consume() {     # TOPIC OUT
	kcat -b "$addr" -t "$1" -C -e -q -f '%p\t%o\t%k\t%s\n' >"$2" 2>"$2.err"
}

# Rules: one event record per packet keyed by ip.src (delta-key) and a query
# keyed by its group; each record is unique (timestamps, windows).
rules() {       # CHANNEL-KEYS... (one per line, inside the kafka section)
	{
		echo "kafka-output k {"
		echo "  brokers = \"$addr\""
		for kv in "$@"; do echo "  $kv"; done
		echo "}"
		cat <<'EOF'
event-report ev {
  event = "int.num_hop"
  delta-key = {"ip.src"}
  attributes = {"meta.timestamp", "ip.src", "ip.dst", "int.latency"}
  output-channel = {stdout, k}
}
query-report q {
  ms-period = 500
  select = {"count()", "avg(int.latency)"}
  group-by = {"ip.src"}
  output-channel = {stdout, k}
}
EOF
	}
}

"$gen" -o "$tmp/a.pcap" -n 2000 --flows 16 --pps 1000 >/dev/null || { echo "FAIL intgen"; exit 1; }
"$gen" -o "$tmp/slow.pcap" -n 3000 --flows 16 --pps 1000 --seed 7 >/dev/null || { echo "FAIL intgen"; exit 1; }

# ---- 1 records, in order per key; each message's key: the query's
# group-by values, the event's delta-key, else the flow's addresses (an
# event without delta-key, added here)
rules 'topic = "t1"' >"$tmp/1.conf"
printf 'event-report flow { event = "int.num_hop"; attributes = {"ip.src", "ip.dst", "int.latency"}; output-channel = {stdout, k} }\n' \
	>>"$tmp/1.conf"
"$bin" -C "$tmp/1.conf" -r "$tmp/a.pcap" >"$tmp/1.out" 2>"$tmp/1.err"
if clean_run records "$tmp/1.err" $?; then
	consume t1 "$tmp/1.k"
	if r=$($kc same "$tmp/1.out" "$tmp/1.k" "$tmp/1.map" 2>&1) &&
	   r=$(python3 - "$tmp/1.k" <<'EOF' 2>&1
import json, sys
n = {}
for line in open(sys.argv[1]):
    part, off, key, text = line.rstrip("\n").split("\t", 3)
    rec = json.loads(text)
    want = rec["ip.src"] + "|" + rec["ip.dst"] if rec["report"] == "flow" else rec["ip.src"]
    assert key == want, (key, want, rec)
    n[rec["report"]] = n.get(rec["report"], 0) + 1
assert set(n) == {"ev", "q", "flow"}, n
print("keys: group-by, delta-key, flow for %s" % n)
EOF
	); then
		echo "# $r"; ok records
	else
		bad records "$r"
	fi
fi

# ---- 2 partitions: the same rules again into the same topic
"$bin" -C "$tmp/1.conf" -r "$tmp/a.pcap" >"$tmp/2.out" 2>"$tmp/2.err"
if clean_run partitions "$tmp/2.err" $?; then
	consume t1 "$tmp/2.all"
	# the second run's records: past the first run's offsets
	awk -F '\t' 'NR == FNR { if ($2 + 1 > end[$1]) end[$1] = $2 + 1; next }
		     $2 >= end[$1] + 0' "$tmp/1.k" "$tmp/2.all" >"$tmp/2.k"
	if r=$($kc same "$tmp/2.out" "$tmp/2.k" "$tmp/2.map" 2>&1) &&
		r=$($kc stable "$tmp/1.map" "$tmp/2.map" 3 2>&1) &&
		r=$($kc murmur "$tmp/1.map" 4 2>&1); then
		ok partitions
	else
		bad partitions "$r"
	fi
fi

# ---- 2b default topic: without a topic key, "report"
rules >"$tmp/2b.conf"
"$bin" -C "$tmp/2b.conf" -r "$tmp/a.pcap" >"$tmp/2b.out" 2>"$tmp/2b.err"
if clean_run default-topic "$tmp/2b.err" $?; then
	consume report "$tmp/2b.k"
	if r=$($kc same "$tmp/2b.out" "$tmp/2b.k" 2>&1); then
		ok default-topic
	else
		bad default-topic "$r"
	fi
fi

# ---- 3 topic per report
rules 'topic = "rep.%r"' >"$tmp/3.conf"
"$bin" -C "$tmp/3.conf" -r "$tmp/a.pcap" >"$tmp/3.out" 2>"$tmp/3.err"
if clean_run per-report "$tmp/3.err" $?; then
	consume rep.ev "$tmp/3.ev.k"
	consume rep.q "$tmp/3.q.k"
	grep '"report":"ev"' "$tmp/3.out" >"$tmp/3.ev.out"
	grep '"report":"q"' "$tmp/3.out" >"$tmp/3.q.out"
	if r=$($kc same "$tmp/3.ev.out" "$tmp/3.ev.k" 2>&1) &&
		r=$($kc same "$tmp/3.q.out" "$tmp/3.q.k" 2>&1); then
		ok per-report
	else
		bad per-report "$r"
	fi
fi

# ---- 4 a property passed through, and a bad one
rules 'topic = "t4"' 'property "compression.type" = "lz4"' 'linger-ms = 50' >"$tmp/4.conf"
"$bin" -C "$tmp/4.conf" -r "$tmp/a.pcap" >"$tmp/4.out" 2>"$tmp/4.err"
if clean_run property "$tmp/4.err" $?; then
	consume t4 "$tmp/4.k"
	seg=$(ls "$kdir"/data/t4-0/*.log 2>/dev/null | head -n 1)
	if r=$($kc same "$tmp/4.out" "$tmp/4.k" 2>&1) && r=$($kc codec "${seg:-none}" 3 2>&1); then
		ok property
	else
		bad property "$r"
	fi
fi
rules 'topic = "t4"' 'property "compresion.type" = "lz4"' >"$tmp/4b.conf"
"$bin" -C "$tmp/4b.conf" -r "$tmp/a.pcap" >"$tmp/4b.out" 2>"$tmp/4b.err"
st=$?
want="$tmp/4b.conf:4:3: error: property 'compresion.type': No such configuration property"
if [ "$st" -ne 0 ] && grep -q -F "$want" "$tmp/4b.err" && [ ! -s "$tmp/4b.out" ]; then
	ok bad-property
else
	bad bad-property "exit $st, expected '$want', got: $(head -c 300 "$tmp/4b.err")"
fi

# ---- 5 broker restart in the middle of a slow run
rules 'topic = "t5"' 'shutdown-ms = 30000' >"$tmp/5.conf"
$kc feed "$tmp/slow.pcap" 8 | "$bin" -C "$tmp/5.conf" -r - >"$tmp/5.out" 2>"$tmp/5.err" &
run=$!
sleep 2
sh "$svc" stop "$kdir"
sleep 2
sh "$svc" start "$kdir" >/dev/null || bad restart "the broker did not come back"
wait "$run"
if clean_run restart "$tmp/5.err" $?; then
	consume t5 "$tmp/5.k"
	set -- $($kc counts "$tmp/5.err" k)
	if [ $# -ne 5 ]; then
		bad restart "no counters"
	elif ! r=$($kc same "$tmp/5.out" "$tmp/5.k" 2>&1); then
		bad restart "$r"
	elif [ "$1" -ne "$(wc -l <"$tmp/5.k")" ] || [ "$2" -ne "$1" ] || [ "$3" -ne 0 ] ||
		[ "$4" -ne "$2" ] || [ "$5" -ne 0 ]; then
		bad restart "queued $1 delivered $2 dropped $3 acked $4 failed $5, topic $(wc -l <"$tmp/5.k")"
	else
		echo "# $r; queued $1 delivered $2 acked $4 dropped $3"
		ok restart
	fi
fi

# ---- 6 broker down at start, up later
sh "$svc" stop "$kdir"
rules 'topic = "t6"' 'shutdown-ms = 30000' >"$tmp/6.conf"
$kc feed "$tmp/slow.pcap" 5 | "$bin" -C "$tmp/6.conf" -r - >"$tmp/6.out" 2>"$tmp/6.err" &
run=$!
sleep 3
sh "$svc" start "$kdir" >/dev/null || bad late "the broker did not start"
wait "$run"
if clean_run late "$tmp/6.err" $?; then
	consume t6 "$tmp/6.k"
	set -- $($kc counts "$tmp/6.err" k)
	if [ $# -ne 5 ]; then
		bad late "no counters"
	elif ! r=$($kc same "$tmp/6.out" "$tmp/6.k" 2>&1); then
		bad late "$r"
	elif [ "$2" -ne "$1" ] || [ "$3" -ne 0 ] || [ "$4" -ne "$2" ]; then
		bad late "queued $1 delivered $2 dropped $3 acked $4 failed $5"
	else
		ok late
	fi
fi

# A secured listener: the records of CONF arrive at ADDR (read back by
# kcat with the same properties), or a refused run exits 3 having said why
# and delivered nothing.
secured_ok() {  # NAME N ADDR KCAT-PROPERTIES...
	name=$1 n=$2 at=$3
	shift 3
	"$bin" -C "$tmp/$n.conf" -r "$tmp/a.pcap" >"$tmp/$n.out" 2>"$tmp/$n.err"
	clean_run "$name" "$tmp/$n.err" $? || return
	kcat -b "$at" "$@" -t "t$n" -C -e -q -f '%p\t%o\t%k\t%s\n' >"$tmp/$n.k" 2>"$tmp/$n.k.err"
	if r=$($kc same "$tmp/$n.out" "$tmp/$n.k" 2>&1); then
		echo "# $r"; ok "$name"
	else
		bad "$name" "$r"
	fi
}
secured_refused() {     # NAME CONF REASON
	"$bin" -C "$2" -r "$tmp/a.pcap" >/dev/null 2>"$2.err"
	st=$?
	if [ "$st" -eq 3 ] && grep -q -i "$3" "$2.err" &&
	   grep -q "^intspect: channel k: .* 0 delivered\|^intspect: channel k: never connected" "$2.err"; then
		ok "$1"
	else
		bad "$1" "exit $st: $(grep -i -m 3 'sasl\|auth\|ssl\|certif\|channel k' "$2.err")"
	fi
}

# ---- 7 SASL/PLAIN: credentials passed through to librdkafka
saddr=$(sh "$svc" sasl-addr "$kdir")
sasl_rules() {  # PASSWORD [KEY]
	plain=$addr
	addr=$saddr
	rules 'topic = "t7"' 'property "security.protocol" = "SASL_PLAINTEXT"' \
		'property "sasl.mechanisms" = "PLAIN"' 'property "sasl.username" = "intspect"' \
		"property \"sasl.password\" = \"$1\"" "${2:-}"
	addr=$plain
}
sasl_rules s3cret >"$tmp/7.conf"
secured_ok sasl 7 "$saddr" -X security.protocol=SASL_PLAINTEXT -X sasl.mechanisms=PLAIN \
	-X sasl.username=intspect -X sasl.password=s3cret
sasl_rules wrong 'shutdown-ms = 3000' >"$tmp/7b.conf"
secured_refused sasl-refused "$tmp/7b.conf" "authentication failed"

# ---- 8 TLS: librdkafka's ssl.* properties passed through
taddr=$(sh "$svc" tls-addr "$kdir")
tls_rules() {   # CA-FILE [KEY]
	plain=$addr
	addr=$taddr
	rules 'topic = "t8"' 'property "security.protocol" = "SSL"' \
		"property \"ssl.ca.location\" = \"$1\"" "${2:-}"
	addr=$plain
}
tls_rules "$kdir/tls/ca.pem" >"$tmp/8.conf"
secured_ok tls 8 "$taddr" -X security.protocol=SSL -X ssl.ca.location="$kdir/tls/ca.pem"
# a CA that did not sign the broker's certificate: refused, said, exit 3
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=another CA" \
	-keyout "$tmp/other.key" -out "$tmp/other.pem" >/dev/null 2>&1
tls_rules "$tmp/other.pem" 'shutdown-ms = 3000' >"$tmp/8b.conf"
secured_refused tls-refused "$tmp/8b.conf" "certificate verify failed"

echo "kafka: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
