#!/bin/sh
# test/services/kafka.sh - a real single-node Apache Kafka broker (KRaft:
# broker and controller in one JVM) on 127.0.0.1, for tests and benchmarks.
#
#   kafka.sh fetch         download the jars into the cache (Maven), once
#   kafka.sh start DIR     start a broker whose config, data and logs live in
#                          DIR; print its bootstrap address (127.0.0.1:PORT)
#                          once it answers. Starting again a DIR that was
#                          stopped restarts the same broker: same ports, same
#                          topics and records.
#   kafka.sh stop DIR      SIGTERM (controlled shutdown), wait, SIGKILL at 30 s
#   kafka.sh addr DIR      print the bootstrap address of DIR (running or not)
#   kafka.sh sasl-addr DIR the address of its SASL_PLAINTEXT listener
#                          (mechanism PLAIN, user "intspect", password
#                          "s3cret"; the same topics)
#   kafka.sh tls-addr DIR  the address of its SSL listener (TLS; the CA a
#                          client trusts is DIR/tls/ca.pem; the same topics)
#   kafka.sh topic DIR N NAME...  create topics NAME... with N partitions
#                          each (Kafka's AdminClient; nothing when one exists)
#
# KAFKA_REBALANCE_DELAY_MS (at the first start of DIR): how long a new
# consumer group waits for more members before its first assignment
# (group.initial.rebalance.delay.ms; default 0).
#
# Exit 77 (the automake "skip" status) when java is missing or the jars are
# neither cached nor downloadable, with the reason on stderr.
#
# The jars are org.apache.kafka:kafka_2.13 and slf4j-reload4j with their
# dependencies (test/services/kafka/pom.xml), copied by Maven into
# ${INTSPECT_CACHE:-~/.cache/intspect}/kafka-3.9.1/jars; once there, nothing
# is downloaded again (offline runs work). How it works:
# test/services/kafka/README.md.
set -eu

KAFKA_VERSION=3.9.1
here=$(cd "$(dirname "$0")" && pwd)
cache=${INTSPECT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/intspect}/kafka-$KAFKA_VERSION
jars=$cache/jars

die() { echo "kafka.sh: $*" >&2; exit 1; }
skip() { echo "kafka.sh: $*; skipping" >&2; exit 77; }

need_java() {
	command -v java >/dev/null 2>&1 ||
		skip "java not found (Debian: openjdk-17-jre-headless)"
}

# The jars, from the cache or Maven Central. The copy goes to a temporary
# directory renamed at the end, so an interrupted download is never taken
# for a complete one.
fetch() {
	[ -f "$jars/.complete" ] && return 0
	command -v mvn >/dev/null 2>&1 ||
		skip "the Kafka jars are not in $jars and mvn is missing (Debian: maven)"
	mkdir -p "$cache"
	tmpj=$cache/jars.tmp.$$
	rm -rf "$tmpj"
	echo "kafka.sh: downloading Kafka $KAFKA_VERSION jars into $jars (once)" >&2
	if ! mvn -q -B -Dstyle.color=never -f "$here/kafka/pom.xml" \
		dependency:copy-dependencies -DincludeScope=runtime \
		-DoutputDirectory="$tmpj" >"$cache/mvn.log" 2>&1; then
		rm -rf "$tmpj"
		tail -n 20 "$cache/mvn.log" >&2
		skip "cannot download the Kafka jars with Maven (see $cache/mvn.log)"
	fi
	ls "$tmpj"/kafka_2.13-*.jar >/dev/null 2>&1 || { rm -rf "$tmpj"; die "Maven copied no kafka jar"; }
	touch "$tmpj/.complete"
	rm -rf "$jars"
	mv "$tmpj" "$jars"
}

# Three free TCP ports on 127.0.0.1 (broker, controller, SASL). Asked of the kernel;
# another program could take them before the broker binds, which a test
# run on a quiet machine does not meet.
free_ports() {
	python3 -c '
import socket
ss = [socket.socket() for _ in range(4)]
for s in ss:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))'
}

# A KRaft cluster id: 16 random bytes, URL-safe base64 without padding.
# a random id; one in 64 starts with '-', which the tool's argument parser
# would take for an option: hence --cluster-id=ID below
cluster_id() {
	python3 -c 'import base64, uuid; print(base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("="))'
}

# A certificate authority and the broker's certificate for 127.0.0.1, in
# DIR/tls: ca.pem (what a client trusts), broker.pem (the broker's key and
# certificate chain, PEM, as Kafka reads them with ssl.keystore.type=PEM).
make_tls() {
	t=$1/tls
	mkdir -p "$t"
	openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=intspect test CA" \
		-keyout "$t/ca.key" -out "$t/ca.pem" >"$t/openssl.log" 2>&1 &&
	openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
		-keyout "$t/broker.key" -out "$t/broker.csr" >>"$t/openssl.log" 2>&1 &&
	printf 'subjectAltName=IP:127.0.0.1\n' >"$t/san.ext" &&
	openssl x509 -req -in "$t/broker.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" \
		-CAcreateserial -days 30 -extfile "$t/san.ext" -out "$t/broker.crt" \
		>>"$t/openssl.log" 2>&1 &&
	openssl pkcs8 -topk8 -nocrypt -in "$t/broker.key" -out "$t/broker.pk8" \
		>>"$t/openssl.log" 2>&1 &&
	cat "$t/broker.pk8" "$t/broker.crt" "$t/ca.pem" >"$t/broker.pem" ||
		{ cat "$t/openssl.log" >&2; die "making the test certificates failed (openssl)"; }
}

configure() {
	dir=$1
	set -- $(free_ports)
	port=$1 cport=$2 sport=$3 tport=$4
	mkdir -p "$dir/data"
	make_tls "$dir"
	cat >"$dir/server.properties" <<EOF
# written by test/services/kafka.sh: one node, broker and controller
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport,SASL_PLAINTEXT://127.0.0.1:$sport,SSL://127.0.0.1:$tport
advertised.listeners=PLAINTEXT://127.0.0.1:$port,SASL_PLAINTEXT://127.0.0.1:$sport,SSL://127.0.0.1:$tport
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL
# TLS for the tests of librdkafka's ssl.* properties: the broker's key and
# chain (make_tls), no client certificate asked
ssl.keystore.type=PEM
ssl.keystore.location=$dir/tls/broker.pem
ssl.client.auth=none
# SASL/PLAIN for the tests of credentials passed through to librdkafka
sasl.enabled.mechanisms=PLAIN
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_intspect="s3cret";
log.dirs=$dir/data
# auto-created topics get 4 partitions, so keyed records spread
num.partitions=4
auto.create.topics.enable=true
default.replication.factor=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
min.insync.replicas=1
group.initial.rebalance.delay.ms=${KAFKA_REBALANCE_DELAY_MS:-0}
# 2 cores: few threads
num.network.threads=2
num.io.threads=2
num.recovery.threads.per.data.dir=1
log.cleaner.enable=false
EOF
	cat >"$dir/log4j.properties" <<EOF
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$dir/broker.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.state.change.logger=WARN
EOF
	echo "127.0.0.1:$port" >"$dir/addr"
	echo "127.0.0.1:$sport" >"$dir/sasl_addr"
	echo "127.0.0.1:$tport" >"$dir/tls_addr"
	java -cp "$jars/*" -Dlog4j.configuration="file:$dir/log4j.properties" \
		kafka.tools.StorageTool format --cluster-id="$(cluster_id)" \
		-c "$dir/server.properties" >"$dir/format.log" 2>&1 ||
		{ cat "$dir/format.log" >&2; die "formatting $dir/data failed"; }
}

running() {
	[ -f "$1/kafka.pid" ] && kill -0 "$(cat "$1/kafka.pid")" 2>/dev/null
}

# Ready when the broker logged its start and, when kcat is here, answers a
# metadata request (the listener is up and the node is the leader).
wait_ready() {
	dir=$1 addr=$2 pid=$3 marks=$4
	i=0
	while [ "$i" -lt 600 ]; do
		kill -0 "$pid" 2>/dev/null || {
			tail -n 30 "$dir/broker.log" "$dir/broker.out" >&2 2>/dev/null
			die "the broker exited during start-up (logs in $dir)"
		}
		n=$(grep -c 'Kafka Server started' "$dir/broker.log" 2>/dev/null || true)
		if [ "${n:-0}" -gt "$marks" ]; then
			command -v kcat >/dev/null 2>&1 || return 0
			kcat -b "$addr" -L -m 2 >/dev/null 2>&1 && return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	die "the broker did not answer within 60 s (logs in $dir)"
}

start() {
	dir=$1
	need_java
	fetch
	mkdir -p "$dir"
	dir=$(cd "$dir" && pwd)
	if running "$dir"; then
		cat "$dir/addr"
		return 0
	fi
	[ -f "$dir/server.properties" ] || configure "$dir"
	addr=$(cat "$dir/addr")
	# the log is appended to across restarts: count the start marks before
	marks=$(grep -c 'Kafka Server started' "$dir/broker.log" 2>/dev/null || true)
	# All descriptors away from the caller's: a test harness waiting for
	# its pipe to close must not wait for the broker.
	java -Xms256m -Xmx512m -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
		-Dlog4j.configuration="file:$dir/log4j.properties" \
		-cp "$jars/*" kafka.Kafka "$dir/server.properties" \
		</dev/null >>"$dir/broker.out" 2>&1 &
	pid=$!
	echo "$pid" >"$dir/kafka.pid"
	wait_ready "$dir" "$addr" "$pid" "${marks:-0}"
	echo "$addr"
}

stop() {
	dir=$1
	[ -f "$dir/kafka.pid" ] || return 0
	pid=$(cat "$dir/kafka.pid")
	if kill -TERM "$pid" 2>/dev/null; then
		i=0
		while kill -0 "$pid" 2>/dev/null && [ "$i" -lt 300 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "kafka.sh: broker $pid still up after 30 s; SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
		fi
	fi
	rm -f "$dir/kafka.pid"
}

topic() {
	need_java
	fetch
	tdir=$1
	shift
	java -cp "$jars/*" -Dlog4j.configuration="file:$tdir/log4j.properties" \
		"$here/kafka/CreateTopic.java" "$(cat "$tdir/addr")" "$@" >>"$tdir/admin.log" 2>&1 ||
		die "cannot create topics $* (see $tdir/admin.log)"
}

case "${1:-}" in
fetch) need_java; fetch ;;
topic) [ $# -ge 4 ] || die "usage: kafka.sh topic DIR PARTITIONS NAME..."; shift; topic "$@" ;;
start) [ $# -eq 2 ] || die "usage: kafka.sh start DIR"; start "$2" ;;
stop) [ $# -eq 2 ] || die "usage: kafka.sh stop DIR"; stop "$2" ;;
addr) [ $# -eq 2 ] || die "usage: kafka.sh addr DIR"; cat "$2/addr" ;;
sasl-addr) [ $# -eq 2 ] || die "usage: kafka.sh sasl-addr DIR"; cat "$2/sasl_addr" ;;
tls-addr) [ $# -eq 2 ] || die "usage: kafka.sh tls-addr DIR"; cat "$2/tls_addr" ;;
*) echo "usage: kafka.sh fetch | start DIR | stop DIR | addr DIR" >&2; exit 2 ;;
esac
