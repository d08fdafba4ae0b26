#!/bin/sh
# test/outputs/redis/tls.sh - the redis channel over TLS against a real
# redis-server with a TLS port (test/services/redis.sh; certificates made
# here with openssl: a test CA, a server certificate for localhost and
# 127.0.0.1, a client certificate, and a second CA that signed nothing of
# the server's). Cases: records arrive over TLS checked against the CA
# (by address and by name), with a client certificate where the server
# demands one; refused at start, with the setting's position, the reason
# and no record sent: another CA, a name the certificate does not hold, a
# server that demands a certificate we do not have; tls-verify = no
# accepts any certificate; the settings' errors (a file missing, a tls-
# setting without tls = yes, a Unix socket); and a TLS server stopped and
# restarted mid-run (every record arrives, the reconnection is counted).
# Prints ok NAME / FAIL NAME, then "redis-tls: N passed, M failed"; exits
# 1 on a failure, 77 when redis-server or openssl is missing, or this
# build has no TLS for Redis.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
bin=$bld/intspect
svc=$src/test/services/redis.sh
tmp=$(mktemp -d)
pass=0 fail=0

cleanup() {
	sh "$svc" stop "$tmp/r1" >/dev/null 2>&1
	sh "$svc" stop "$tmp/r2" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

command -v openssl >/dev/null 2>&1 || { echo "redis-tls: skipped (openssl not installed)"; exit 77; }
if ! grep -q '^#define HAVE_OPENSSL 1' "$bld/config.h" 2>/dev/null; then
	echo "redis-tls: skipped (built without OpenSSL)"
	exit 77
fi

ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
finish() {
	echo "redis-tls: $pass passed, $fail failed"
	[ "$fail" -eq 0 ] || exit 1
	exit 0
}

# ---- certificates ----
c=$tmp/certs
mkdir -p "$c"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
# shellcheck disable=SC2086
mkcert() {      # NAME CN SAN: a key and a certificate signed by the test CA
	openssl req $ec -keyout "$c/$1.key" -out "$c/$1.csr" -subj "/CN=$2" 2>/dev/null &&
	printf 'subjectAltName=%s\n' "$3" >"$c/$1.ext" &&
	openssl x509 -req -in "$c/$1.csr" -CA "$c/ca.crt" -CAkey "$c/ca.key" -CAcreateserial \
		-days 2 -extfile "$c/$1.ext" -out "$c/$1.crt" 2>/dev/null
}
# shellcheck disable=SC2086
{ openssl req -x509 $ec -keyout "$c/ca.key" -out "$c/ca.crt" -days 2 -subj /CN=intspect-test-ca &&
  openssl req -x509 $ec -keyout "$c/other.key" -out "$c/other.crt" -days 2 -subj /CN=another-ca &&
  mkcert server localhost "DNS:localhost,IP:127.0.0.1" &&
  mkcert client intspect "DNS:intspect"; } 2>/dev/null ||
	{ bad certificates "openssl failed"; finish; }

# a free port for a TLS listener
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# tls_server DIR TLSPORT AUTH-CLIENTS [PORT]: a redis-server with a TLS
# port as well as its plain one (for the script's own redis-cli); prints
# the plain port
tls_server() {
	REDIS_ARGS="--tls-port $2 --tls-cert-file $c/server.crt --tls-key-file $c/server.key \
--tls-ca-cert-file $c/ca.crt --tls-auth-clients $3" sh "$svc" start "$1" ${4:-}
}
T1=$(free_port)
P=$(tls_server "$tmp/r1" "$T1" no)
case $? in
0) ;;
77) echo "redis-tls: skipped (redis-server not installed)"; exit 77 ;;
*) echo "FAIL start a TLS redis-server: $(tail -3 "$tmp/r1/redis.log" 2>/dev/null)"; fail=1; finish ;;
esac
T2=$(free_port)
P2=$(tls_server "$tmp/r2" "$T2" yes) || { bad start-mutual "cannot start a second server"; finish; }

# ---- the records ----
cap=$tmp/ev.pcap
"$bld/intgen" -o "$cap" -n 300 --seed 7 --hops 1-4 --flows 8 >/dev/null
rules() {
	echo "event-report hops { event = \"int.num_hop\"; attributes = {\"ip.src\", \"int.hop_switch_ids\"}; output-channel = {$1} }"
}
rules stdout >"$tmp/stdout.conf"
"$bin" -C "$tmp/stdout.conf" -r "$cap" >"$tmp/expect" 2>/dev/null
[ "$(wc -l <"$tmp/expect")" -eq 300 ] || bad expected-records "$(wc -l <"$tmp/expect") records"

# run NAME PLAINPORT SECTION-BODY: intspect with redis-output r over TLS,
# its records rpush'ed to the list NAME; compared with the expected ones
run() {
	{ echo "redis-output r {"; echo "  mode = rpush; key = \"$1\""; echo "$3"; echo "}"; rules r; } >"$tmp/$1.conf"
	if ! "$bin" -C "$tmp/$1.conf" -r "$cap" >/dev/null 2>"$tmp/$1.err"; then
		bad "$1" "exit status $? ($(head -c 300 "$tmp/$1.err"))"
	elif grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/$1.err"; then
		bad "$1" "sanitizer report: $(head -c 300 "$tmp/$1.err")"
	elif redis-cli -p "$2" --raw LRANGE "$1" 0 -1 >"$tmp/$1.got" &&
	     cmp -s "$tmp/$1.got" "$tmp/expect"; then
		ok "$1"
	else
		bad "$1" "$(wc -l <"$tmp/$1.got") records in Redis, want 300"
	fi
}

# refused NAME SECTION-BODY LINE:COL MESSAGE: refused at start (exit 2),
# at that position, with that message; nothing sent
refused() {
	{ echo "redis-output r {"; echo "  mode = rpush; key = \"$1\""; echo "$2"; echo "}"; rules r; } >"$tmp/$1.conf"
	"$bin" -C "$tmp/$1.conf" -r "$cap" >/dev/null 2>"$tmp/$1.err"
	st=$?
	if [ "$st" -ne 2 ] || grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/$1.err"; then
		bad "$1" "exit status $st: $(head -c 300 "$tmp/$1.err")"
	elif ! grep -q -F "$1.conf:$3: error: $4" "$tmp/$1.err"; then
		bad "$1" "got: $(head -c 300 "$tmp/$1.err")"
	elif [ "$(redis-cli -p "$P" EXISTS "$1")$(redis-cli -p "$P2" EXISTS "$1")" != 00 ]; then
		bad "$1" "records were sent"
	else
		ok "$1"
	fi
}

run tls-ca "$P" "  port = $T1; tls = yes; tls-ca-cert-file = \"$c/ca.crt\""
run tls-by-name "$P" "  hostname = localhost; port = $T1; tls = yes
  tls-ca-cert-file = \"$c/ca.crt\""
run tls-ca-dir-and-server-name "$P" "  port = $T1; tls = yes; tls-ca-cert-dir = \"$c\"
  tls-ca-cert-file = \"$c/ca.crt\"; tls-server-name = localhost"
run tls-client-cert "$P2" "  port = $T2; tls = yes; tls-ca-cert-file = \"$c/ca.crt\"
  tls-cert-file = \"$c/client.crt\"; tls-key-file = \"$c/client.key\""
run tls-verify-no "$P" "  port = $T1; tls = yes; tls-ca-cert-file = \"$c/other.crt\"; tls-verify = no"

refused tls-other-ca "  port = $T1; tls = yes; tls-ca-cert-file = \"$c/other.crt\"" 3:17 \
	"redis 127.0.0.1:$T1: TLS: the server's certificate: self-signed certificate in certificate chain"
refused tls-wrong-name "  port = $T1; tls = yes; tls-ca-cert-file = \"$c/ca.crt\"
  tls-server-name = db.example.net" 3:17 \
	"redis 127.0.0.1:$T1: TLS: the server's certificate: hostname mismatch"
refused tls-no-client-cert "  port = $T2; tls = yes; tls-ca-cert-file = \"$c/ca.crt\"" 3:17 \
	"redis 127.0.0.1:$T2: TLS: the server ended the session: tlsv13 alert certificate required"
refused tls-missing-ca "  port = $T1; tls = yes; tls-ca-cert-file = \"$c/nothing.crt\"" 3:28 \
	"cannot load the CA certificates $c/nothing.crt: No such file or directory"
refused tls-key-not-cert "  port = $T1; tls = yes; tls-cert-file = \"$c/client.crt\"
  tls-key-file = \"$c/server.key\"" 4:3 \
	"cannot load the private key $c/server.key: key values mismatch"
refused tls-setting-without-tls "  port = $T1; tls-ca-cert-file = \"$c/ca.crt\"" 3:17 \
	"tls-ca-cert-file needs tls = yes"
refused tls-unix-socket "  server = \"$tmp/r1/none.sock\"; tls = yes" 3:48 \
	"tls applies to a TCP connection, not to a Unix socket"

# ---- a TLS server stopped and restarted during a run ----
# a packet every 4 ms; 0.7 s in, the server saves and stops, and comes
# back on the same ports a second later: every record arrives (at least
# once, in order), one reconnection at least
ocap=$tmp/out.pcap
"$bld/intgen" -o "$ocap" -n 600 --seed 9 >/dev/null
echo 'event-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {stdout} }' >"$tmp/oexp.conf"
"$bin" -C "$tmp/oexp.conf" -r "$ocap" >"$tmp/oexp" 2>/dev/null
{ echo "redis-output r { port = $T1; tls = yes; tls-ca-cert-file = \"$c/ca.crt\"; mode = rpush; key = outage }"
  echo 'event-report e { event = "int.num_hop"; attributes = {"ip.src"}; output-channel = {r} }'; } >"$tmp/outage.conf"
. "$src/test/outputs/redis/outage.sh"
outage_name=tls-outage
redis_outage "$tmp/outage.conf" "$tmp/outage.err" "$tmp/r1" "$P" tls_server "$tmp/r1" "$T1" no "$P"
set -- $(sed -n 's/^intspect: channel r: \([0-9]*\) records queued, \([0-9]*\) delivered, \([0-9]*\) dropped, [0-9]* retried, \([0-9]*\) reconnects.*/\1 \2 \3 \4/p' "$tmp/outage.err") x x x x
redis-cli -p "$P" --raw LRANGE outage 0 -1 | awk '!seen[$0]++' >"$tmp/outage.got"
if [ "$ist" -ne 0 ] || grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/outage.err"; then
	bad tls-outage "exit status $ist: $(head -c 300 "$tmp/outage.err")"
elif [ "$1 $2 $3" != "600 600 0" ] || [ "$4" -lt 1 ]; then
	bad tls-outage "queued $1 delivered $2 dropped $3 reconnects $4"
elif ! cmp -s "$tmp/outage.got" "$tmp/oexp"; then
	bad tls-outage "Redis has $(wc -l <"$tmp/outage.got") distinct records of 600, or out of order"
else
	ok tls-outage
	echo "   (queued $1, delivered $2, dropped $3, reconnects $4)"
fi
finish
