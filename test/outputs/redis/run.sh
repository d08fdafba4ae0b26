#!/bin/sh
# test/outputs/redis/run.sh - the redis channel against a real redis-server
# (test/services/redis.sh; no mocks). Every case runs intspect on an intgen
# capture with a redis-output section and compares what Redis holds or what
# a subscriber received with the records the same rules write to stdout:
#   PUBLISH (one channel, and %r: one channel per report), LPUSH, RPUSH,
#   XADD (with stream-maxlen), AUTH + SELECT, ACL user over a Unix socket,
#   config errors, the C checks (check_redis: binary-safe records, error
#   replies, OOM, a paused server), Redis stopped and restarted mid-run
#   (all records arrive; with a small queue the overflow is counted
#   dropped; delivered + dropped == produced), Redis down when intspect
#   starts and up a second later (it starts, says why records wait, and
#   every record arrives), a Redis Cluster node that answers MOVED for
#   another node's keys (dropped, said), and a subscriber that stops
#   reading (packets/s unchanged).
# Prints ok NAME / FAIL NAME, then "redis: N passed, M failed"; exits 1 on a
# failure, 77 when redis-server is not installed.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
svc=$src/test/services/redis.sh
tmp=$(mktemp -d)
pids=""
pass=0 fail=0

cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null; done
	sh "$svc" stop "$tmp/r1" >/dev/null 2>&1
	REDISCLI_AUTH=s3cret sh "$svc" stop "$tmp/r2" >/dev/null 2>&1
	sh "$svc" stop "$tmp/r3" >/dev/null 2>&1
	sh "$svc" stop "$tmp/c1" >/dev/null 2>&1
	sh "$svc" stop "$tmp/c2" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

P=$(sh "$svc" start "$tmp/r1")
case $? in
0) ;;
77) echo "redis: skipped (redis-server not installed)"; exit 77 ;;
*) echo "FAIL start redis-server"; echo "redis: 0 passed, 1 failed"; exit 1 ;;
esac

ok() { echo "ok $1"; pass=$((pass + 1)); }
finish() {
	echo "redis: $pass passed, $fail failed"
	[ "$fail" -eq 0 ] || exit 1
	exit 0
}
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
rcli() { redis-cli -p "$P" "$@"; }

# The rules of most cases: an event per packet and a 10 ms query window,
# both to the channel $1 (their records interleave in submit order).
rules() {
	cat <<EOF
event-report hops {
  event = "int.num_hop"
  attributes = {"ip.src", "int.hop_switch_ids"}
  output-channel = {$1}
}
query-report flows {
  ms-period = 10
  select = {"count()", "avg(int.latency)"}
  group-by = {"ip.src"}
  output-channel = {$1}
}
EOF
}

# isp NAME CONF INPUT: run intspect; out and err in $tmp/NAME.{out,err}.
# 0 when it exited 0 without a sanitizer report.
isp() {
	"$bin" -C "$2" -r "$3" >"$tmp/$1.out" 2>"$tmp/$1.err" || {
		bad "$1" "exit status $? ($(head -c 300 "$tmp/$1.err"))"; return 1; }
	if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/$1.err"; then
		bad "$1" "sanitizer report"; cat "$tmp/$1.err"; return 1
	fi
}

# counters NAME CHANNEL: queued delivered dropped retried reconnects from
# intspect's exit line into q d x r c.
counters() {
	set -- $(sed -n "s/^intspect: channel $2: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped, \([0-9]*\) retried, \([0-9]*\) reconnects, [0-9]* acknowledged$/\1 \2 \3 \4 \5/p" "$tmp/$1.err") x x x x x
	q=$1 d=$2 x=$3 r=$4 c=$5
}

# same NAME GOT WANT: files equal, or a FAIL with the first difference.
same() {
	if cmp -s "$2" "$3"; then
		ok "$1"
	else
		bad "$1" "$(wc -l <"$2") records, want $(wc -l <"$3"); first difference: $(diff "$2" "$3" | sed -n 2p | head -c 200)"
	fi
}

# sub_start FILE CHANNEL...: a redis-cli subscriber, ready when it returns.
sub_start() {
	f=$1
	shift
	: >"$f"
	redis-cli -p "$P" SUBSCRIBE "$@" >"$f" 2>&1 &
	sub_pid=$!
	pids="$pids $sub_pid"
	i=0
	while [ "$(wc -l <"$f")" -lt $((3 * $#)) ] && [ "$i" -lt 50 ]; do
		sleep 0.05
		i=$((i + 1))
	done
}

# sub_wait FILE NCHANNELS NMESSAGES: wait (3 s at most) for the messages,
# then stop the subscriber.
sub_wait() {
	i=0
	while [ "$(wc -l <"$1")" -lt $((3 * $2 + 3 * $3)) ] && [ "$i" -lt 60 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill "$sub_pid" 2>/dev/null
	wait "$sub_pid" 2>/dev/null
}

# payloads FILE NCHANNELS CHANNEL: the messages published on CHANNEL, in
# order (redis-cli prints "message", the channel, the payload per line).
payloads() {
	awk -v skip=$((3 * $2)) -v ch="$3" \
		'NR > skip && (NR - skip) % 3 == 2 { c = $0 } NR > skip && (NR - skip) % 3 == 0 && c == ch' "$1"
}

reverse() { awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }' "$@"; }

# ---- captures and the expected records ----
cap=$tmp/ev.pcap
"$bld/intgen" -o "$cap" -n 500 --seed 7 --hops 1-4 --flows 8 --pps 10000 >/dev/null
rules stdout >"$tmp/stdout.conf"
isp expect "$tmp/stdout.conf" "$cap" || finish
exp=$tmp/expect.out
grep '"report":"hops"' "$exp" >"$tmp/exp.hops"
grep '"report":"flows"' "$exp" >"$tmp/exp.flows"
n=$(wc -l <"$exp")
[ "$(wc -l <"$tmp/exp.flows")" -gt 10 ] && [ "$(wc -l <"$tmp/exp.hops")" -eq 500 ] ||
	bad "expected-records" "$(wc -l <"$tmp/exp.hops") events, $(wc -l <"$tmp/exp.flows") query records"

# conf NAME SECTION-BODY: a config with one redis-output r and the rules.
conf() {
	{ echo "redis-output r {"; echo "  port = $P"; echo "$2"; echo "}"; rules r; } >"$tmp/$1.conf"
}

# ---- 1. PUBLISH ----
conf pub ""
sub_start "$tmp/sub1" report
isp publish "$tmp/pub.conf" "$cap" && {
	sub_wait "$tmp/sub1" 1 "$n"
	payloads "$tmp/sub1" 1 report >"$tmp/got"
	same publish "$tmp/got" "$exp"
}

conf pubr '  channel = "int-%r"'
sub_start "$tmp/sub2" int-hops int-flows
isp publish-per-report "$tmp/pubr.conf" "$cap" && {
	sub_wait "$tmp/sub2" 2 "$n"
	payloads "$tmp/sub2" 2 int-hops >"$tmp/got.hops"
	payloads "$tmp/sub2" 2 int-flows >"$tmp/got.flows"
	cat "$tmp/got.hops" "$tmp/got.flows" >"$tmp/got"
	cat "$tmp/exp.hops" "$tmp/exp.flows" >"$tmp/want"
	same publish-per-report "$tmp/got" "$tmp/want"
}

# ---- 2. lists and streams ----
conf lpush '  mode = lpush; key = "lp"'
isp lpush "$tmp/lpush.conf" "$cap" && {
	rcli --raw LRANGE lp 0 -1 | reverse >"$tmp/got"
	same lpush "$tmp/got" "$exp"
}

conf rpush '  mode = rpush; key = "rp-%r"'
isp rpush-per-report "$tmp/rpush.conf" "$cap" && {
	{ rcli --raw LRANGE rp-hops 0 -1; rcli --raw LRANGE rp-flows 0 -1; } >"$tmp/got"
	cat "$tmp/exp.hops" "$tmp/exp.flows" >"$tmp/want"
	same rpush-per-report "$tmp/got" "$tmp/want"
}

conf xadd '  mode = xadd; key = "st"; stream-field = "rec"'
isp xadd "$tmp/xadd.conf" "$cap" && {
	rcli --raw XRANGE st - + >"$tmp/x"
	awk 'NR % 3 == 0' "$tmp/x" >"$tmp/got"
	if [ "$(awk 'NR % 3 == 2 && $0 != "rec"' "$tmp/x" | wc -l)" -ne 0 ]; then
		bad xadd "field names are not 'rec'"
	else
		same xadd "$tmp/got" "$exp"
	fi
}

# MAXLEN ~ 100 trims whole stream nodes: at least 100 entries are kept, the
# newest ones, and fewer than all.
conf xaddmax '  mode = stream; key = "stm"; stream-maxlen = 100'
isp xadd-maxlen "$tmp/xaddmax.conf" "$cap" && {
	len=$(rcli XLEN stm)
	rcli --raw XRANGE stm - + | awk 'NR % 3 == 0' >"$tmp/got"
	tail -n "$len" "$exp" >"$tmp/want"
	if [ "$len" -ge 100 ] && [ "$len" -lt "$n" ]; then
		same xadd-maxlen "$tmp/got" "$tmp/want"
	else
		bad xadd-maxlen "XLEN $len of $n records"
	fi
}

# ---- 4. configuration errors (line:col, did you mean) ----
# err_check NAME CONF WANT: intspect exits 2 and stderr has "CONF" WANT
# (WANT starts at ":line:col:"). Today intspect prints the file name from
# memory already freed (dsl_diags_free runs before the channels open): ASan
# stops it, and that is a skip until the CLI is fixed, not a pass.
err_check() {
	"$bin" -C "$2" -r "$cap" >/dev/null 2>"$tmp/$1.err"
	st=$?
	if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/$1.err"; then
		bad "$1" "sanitizer report: $(head -c 300 "$tmp/$1.err")"
	elif [ "$st" -ne 2 ]; then
		bad "$1" "exit status $st"
	elif ! grep -q -F "$2$3" "$tmp/$1.err"; then
		bad "$1" "got: $(head -c 300 "$tmp/$1.err")"
	else
		ok "$1"
	fi
}
conf error-unknown-key '  hostnam = "127.0.0.1"'
err_check error-unknown-key "$tmp/error-unknown-key.conf" \
	":3:3: error: unknown key 'hostnam' for a redis output (did you mean 'hostname'?); known: enable,"
conf error-bad-mode '  mode = pubsub'
err_check error-bad-mode "$tmp/error-bad-mode.conf" \
	":3:3: error: bad value 'pubsub' for mode: expected channel, publish, list, lpush, rpush, xadd or stream"

# ---- 3. AUTH and SELECT; an ACL user over a Unix socket ----
export REDISCLI_AUTH=s3cret
P2=$(REDIS_ARGS="--requirepass s3cret --unixsocket $tmp/r2/redis.sock --unixsocketperm 700" sh "$svc" start "$tmp/r2")
if [ -z "$P2" ]; then
	bad auth "cannot start a second redis-server"
else
	{ echo "redis-output r { port = $P2; password = \"s3cret\"; database = 3"
	  echo '  mode = rpush; key = "a" }'; rules r; } >"$tmp/auth.conf"
	isp auth-select "$tmp/auth.conf" "$cap" && {
		redis-cli -p "$P2" -n 3 --raw LRANGE a 0 -1 >"$tmp/got"
		if [ "$(redis-cli -p "$P2" -n 0 EXISTS a)" != 0 ]; then
			bad auth-select "records in database 0"
		else
			same auth-select "$tmp/got" "$exp"
		fi
	}
	redis-cli -p "$P2" ACL SETUSER alice on '>wonder' '~*' '&*' '+@all' >/dev/null
	{ echo "redis-output r { server = \"$tmp/r2/redis.sock\"; username = alice; password = wonder"
	  echo "  mode = rpush; key = u }"; rules r; } >"$tmp/user.conf"
	isp auth-user-unix "$tmp/user.conf" "$cap" && {
		redis-cli -p "$P2" --raw LRANGE u 0 -1 >"$tmp/got"
		same auth-user-unix "$tmp/got" "$exp"
	}
	{ echo "redis-output r { port = $P2"; echo '  password = "wrong" }'; rules r; } >"$tmp/wrong.conf"
	err_check auth-wrong-password "$tmp/wrong.conf" \
		":2:3: error: redis 127.0.0.1:$P2: AUTH: WRONGPASS invalid username-password pair"
fi
unset REDISCLI_AUTH

# ---- the C checks through the channel API ----
REDIS_PORT=$P "$bld/test/outputs/redis/check_redis" >"$tmp/check.out" 2>"$tmp/check.err"
cat "$tmp/check.out"
pass=$((pass + $(grep -c '^ok ' "$tmp/check.out")))
fail=$((fail + $(grep -c '^FAIL ' "$tmp/check.out")))
if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/check.err" ||
   ! grep -q '^ok ' "$tmp/check.out"; then
	bad check_redis "$(head -c 500 "$tmp/check.err")"
fi

# ---- 5. outage: Redis stopped and restarted during a run ----
# intspect reads a capture fed a packet every 4 ms; 0.7 s in, Redis saves
# and stops (SHUTDOWN SAVE: what was delivered survives the restart), and
# comes back on the same port a second later.
ocap=$tmp/out.pcap
"$bld/intgen" -o "$ocap" -n 600 --seed 9 >/dev/null
{ echo 'event-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {stdout} }'; } >"$tmp/oexp.conf"
isp outage-expect "$tmp/oexp.conf" "$ocap" || finish

. "$src/test/outputs/redis/outage.sh"
# outage NAME EXTRA-KEYS: run it; counters in q d x r c, Redis list in $tmp/NAME.got
outage() {
	{ echo "redis-output r { port = $P; mode = rpush; key = \"$1\"; $2 }"
	  echo 'event-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {r} }'; } >"$tmp/$1.conf"
	outage_name=$1
	redis_outage "$tmp/$1.conf" "$tmp/$1.err" "$tmp/r1" "$P" sh "$svc" start "$tmp/r1" "$P"
	counters "$1" r
	rcli --raw LRANGE "$1" 0 -1 >"$tmp/$1.got"
	# exit 3 when records were dropped (a queue too small for the outage)
	[ "$ist" -eq 0 ] || { [ "$ist" -eq 3 ] && [ "$x" -gt 0 ]; } || return 1
	! grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/$1.err"
}

if outage outage-all ""; then
	uniq_n=$(sort -u "$tmp/outage-all.got" | wc -l)
	awk '!seen[$0]++' "$tmp/outage-all.got" >"$tmp/got"
	if [ "$q" != 600 ] || [ "$d" != 600 ] || [ "$x" != 0 ] || [ "$c" -lt 1 ] || [ "$r" -lt 1 ]; then
		bad outage-all "queued $q delivered $d dropped $x retried $r reconnects $c"
	elif ! cmp -s "$tmp/got" "$tmp/outage-expect.out"; then
		bad outage-all "Redis has $uniq_n distinct records of 600, or out of order"
	else
		ok outage-all
		echo "   (queued $q, delivered $d, dropped $x, retried $r, reconnects $c; $(wc -l <"$tmp/outage-all.got") in Redis, $uniq_n distinct)"
	fi
else
	bad outage-all "intspect failed: $(head -c 300 "$tmp/outage-all.err")"
fi

if outage outage-small-queue "queue-records = 20"; then
	uniq_n=$(sort -u "$tmp/outage-small-queue.got" | wc -l)
	# what Redis holds must be records intspect produced, in their order
	insub=$(awk 'NR == FNR { w[++nw] = $0; next } !seen[$0]++ { while (i < nw && w[++i] != $0); if (w[i] != $0) bad = 1 }
		END { print bad ? "no" : "yes" }' "$tmp/outage-expect.out" "$tmp/outage-small-queue.got")
	if [ "$q" != 600 ] || [ "$x" -lt 1 ] || [ $((d + x)) -ne 600 ] || [ "$c" -lt 1 ]; then
		bad outage-small-queue "queued $q delivered $d dropped $x reconnects $c"
	elif [ "$uniq_n" -ne "$d" ] || [ "$insub" != yes ]; then
		bad outage-small-queue "Redis has $uniq_n distinct records, delivered $d, in order: $insub"
	else
		ok outage-small-queue
		echo "   (queued $q, delivered $d, dropped $x, retried $r, reconnects $c; $(wc -l <"$tmp/outage-small-queue.got") in Redis, $uniq_n distinct)"
	fi
else
	bad outage-small-queue "intspect failed: $(head -c 300 "$tmp/outage-small-queue.err")"
fi

# ---- 5b. late: Redis not there when intspect starts (it starts all the
# same, says why records wait), up a second later: every record arrives,
# in order, within the channel's shutdown-ms
P3=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
{ echo "redis-output r { port = $P3; mode = rpush; key = \"late\"; shutdown-ms = 20000 }"
  echo 'event-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {r} }'; } >"$tmp/late.conf"
"$bin" -C "$tmp/late.conf" -r "$ocap" >/dev/null 2>"$tmp/late.err" &
lp=$!
pids="$pids $lp"
sleep 1
sh "$svc" start "$tmp/r3" "$P3" >/dev/null
wait "$lp"; lrc=$?
counters late r
redis-cli -p "$P3" --raw LRANGE late 0 -1 >"$tmp/late.got"
sh "$svc" stop "$tmp/r3" >/dev/null 2>&1
if [ "$lrc" = 0 ] && [ "$q $d $x" = "600 600 0" ] && cmp -s "$tmp/late.got" "$tmp/outage-expect.out" &&
   grep -q "redis 127.0.0.1:$P3: Connection refused; records wait in the queue, reconnecting" "$tmp/late.err"; then
	ok late
else
	bad late "exit $lrc, queued $q delivered $d dropped $x; $(head -c 300 "$tmp/late.err")"
fi

# ---- 6. a Redis Cluster node that redirects: not supported ----
# Two nodes share the slots. The records whose key hashes to the other
# node's slots are answered MOVED, a final error (outputs/README.md):
# counted dropped and said; the others are delivered.
C1=$(REDIS_ARGS="--cluster-enabled yes --cluster-config-file $tmp/c1/nodes.conf" sh "$svc" start "$tmp/c1")
C2=$(REDIS_ARGS="--cluster-enabled yes --cluster-config-file $tmp/c2/nodes.conf" sh "$svc" start "$tmp/c2")
redis-cli -p "$C1" CLUSTER ADDSLOTSRANGE 0 8191 >/dev/null
redis-cli -p "$C2" CLUSTER ADDSLOTSRANGE 8192 16383 >/dev/null
redis-cli -p "$C1" CLUSTER MEET 127.0.0.1 "$C2" >/dev/null
i=0
until redis-cli -p "$C1" CLUSTER INFO | grep -q '^cluster_state:ok' &&
      redis-cli -p "$C2" CLUSTER INFO | grep -q '^cluster_state:ok' || [ "$i" -ge 100 ]; do
	sleep 0.1
	i=$((i + 1))
done
# a key prefix that puts "hops" on the first node and "flows" on the second
pfx=""
for k in a b c d e f g h i j k l m n o p q r s t u v w x y z; do
	if [ "$(redis-cli -p "$C1" CLUSTER KEYSLOT "$k-hops")" -le 8191 ] &&
	   [ "$(redis-cli -p "$C1" CLUSTER KEYSLOT "$k-flows")" -gt 8191 ]; then
		pfx=$k; break
	fi
done
{ echo "redis-output r { port = $C1; mode = rpush; key = \"$pfx-%r\" }"; rules r; } >"$tmp/moved.conf"
nf=$(wc -l <"$tmp/exp.flows")
if [ -z "$pfx" ] || ! redis-cli -p "$C1" CLUSTER INFO | grep -q '^cluster_state:ok'; then
	bad moved "no cluster of two nodes (prefix '$pfx')"
else
	"$bin" -C "$tmp/moved.conf" -r "$cap" >/dev/null 2>"$tmp/moved.err"
	mrc=$?          # 3: records were lost
	counters moved r
	redis-cli -p "$C1" --raw LRANGE "$pfx-hops" 0 -1 >"$tmp/moved.got"
	if [ "$mrc $q $d $x $r" = "3 $n 500 $nf 0" ] && cmp -s "$tmp/moved.got" "$tmp/exp.hops" &&
	   grep -q "records refused (.*): MOVED [0-9]* 127.0.0.1:$C2" "$tmp/moved.err" &&
	   grep -q ": $nf record(s) refused by the server in all (counted dropped)" "$tmp/moved.err"; then
		ok "moved ($nf records for the other node dropped and said, 500 delivered)"
	else
		bad moved "exit $mrc, queued $q delivered $d dropped $x retried $r; $(head -c 600 "$tmp/moved.err")"
	fi
fi
sh "$svc" stop "$tmp/c1" >/dev/null 2>&1
sh "$svc" stop "$tmp/c2" >/dev/null 2>&1

# ---- 7. a subscriber that stops reading ----
# redis-cli's stdout is a FIFO nobody reads: once it is full, redis-cli
# stops reading its socket and the server buffers for it (no limit, so it
# stays subscribed); 10 MB published first fill the socket buffers, so
# its output buffer in the server (omem) must grow during the runs. A
# 20 ms query window per flow over 1M packets (3,200 records) PUBLISHed to
# that channel, versus the same channel disabled
# (enable = false: the rules run and submit, the channel counts the records
# dropped): best of 3 packets/s each, printed; the test fails only below
# half (a path that waits would be far slower). At one record per packet the channel
# thread and redis-server compete with the packet thread for this 2-core
# VM's CPUs: a cost bench/redis.sh measures, not back-pressure.
mcap=$tmp/m.pcap
"$bld/intgen" -o "$mcap" -n 1000000 --seed 2 --size 100 >/dev/null
rcli CONFIG SET client-output-buffer-limit "pubsub 0 0 0" >/dev/null
mkfifo "$tmp/fifo"
sleep 600 <"$tmp/fifo" &
pids="$pids $!"
redis-cli -p "$P" SUBSCRIBE slow >"$tmp/fifo" &
pids="$pids $!"
head -c 524288 /dev/zero | tr '\0' x >"$tmp/half-mb"
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	rcli -x PUBLISH slow <"$tmp/half-mb" >/dev/null
done
sleep 0.2
omem() { rcli CLIENT LIST | grep 'cmd=subscribe' | sed -n 's/.* omem=\([0-9]*\) .*/\1/p' | head -1; }
omem0=$(omem)
ev='query-report q { ms-period = 20; select = {"count()", "avg(int.latency)"}; group-by = {"ip.src"}; output-channel = {slow} }'
{ echo "redis-output slow { enable = false }"; echo "$ev"; } >"$tmp/base.conf"
{ echo "redis-output slow { port = $P; channel = slow }"; echo "$ev"; } >"$tmp/slow.conf"
pps() { "$bin" -C "$1" -r "$mcap" -q 2>"$tmp/pps.err" >/dev/null; sed -n 's/.*s, \([0-9]*\) packets\/s.*/\1/p' "$tmp/pps.err"; }
best_base=0 best_slow=0
for i in 1 2 3; do
	v=$(pps "$tmp/base.conf"); [ "${v:-0}" -gt "$best_base" ] && best_base=$v
	v=$(pps "$tmp/slow.conf"); [ "${v:-0}" -gt "$best_slow" ] && best_slow=$v
	cp "$tmp/pps.err" "$tmp/slow-last.err"
done
omem1=$(omem)
sed -n 's/^intspect: channel slow: \(.*\)/\1/p' "$tmp/slow-last.err" >"$tmp/slow.line"
echo "   (packets/s best of 3: channel disabled $best_base, redis with a stuck subscriber $best_slow; subscriber output buffer ${omem0:-?} -> ${omem1:-?} bytes; last run: $(cat "$tmp/slow.line"))"
if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/slow-last.err" ||
   ! grep -q '^3200 records queued, 3200 delivered, 0 dropped' "$tmp/slow.line"; then
	bad slow-subscriber "$(head -c 300 "$tmp/slow-last.err")"
elif [ "${omem1:-0}" -le "${omem0:-0}" ] || [ "${omem0:-0}" -le 0 ]; then
	bad slow-subscriber "the subscriber was not stuck (omem ${omem0:-?} -> ${omem1:-?})"
elif [ $((best_slow * 2)) -lt "$best_base" ]; then
	# a loose bound, not a timing target (bench/redis.sh measures the cost):
	# a packet path that waited on the stuck subscriber would be far slower
	bad slow-subscriber "packets/s $best_slow with the channel, $best_base without: under half"
else
	ok slow-subscriber
fi

finish
