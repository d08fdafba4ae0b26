#!/bin/sh
# setup.sh - install what intspect needs on Debian 12, build it, and run the
# demo or the whole test suite. Idempotent: a second run installs nothing
# and rebuilds only what changed.
#
#   ./setup.sh demo    decode a bundled capture and run the default rules on
#                      another (no external service)
#   ./setup.sh test    the whole test suite: ASan+UBSan build and `make check`,
#                      then the release build's allocation check, the
#                      threads under TSan, make distcheck, the Debian package
#   ./setup.sh build   just the release build (build/rel)
#   ./setup.sh packages demo|test   print the Debian packages each needs
set -eu
cd "$(dirname "$0")"
top=$(pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# Building and running intspect (the demo, `build`): the toolchain, libpcap,
# zlib (gzip to InfluxDB), Jansson (the control socket's JSON), and the
# libraries of the Redis and Kafka outputs (OpenSSL: Redis over TLS).
BUILD_PACKAGES="autoconf automake libtool pkg-config make gcc libpcap-dev flex bison \
libxxhash-dev zlib1g-dev libjansson-dev libhiredis-dev libssl-dev librdkafka-dev"
# What only the tests use: Check, sanitizers' and fuzzers' compiler,
# valgrind, the services they start (Redis, a Kafka broker on Java with its
# jars from Maven Central, openssl for its test certificates), network
# tools, and DPDK for the DPDK input.
TEST_PACKAGES="check clang python3 valgrind tcpreplay iproute2 procps socat openjdk-17-jre-headless openssl \
maven kcat redis-server redis-tools influxdb influxdb-client prometheus libclang-rt-14-dev cppcheck libdpdk-dev strace systemd mandoc groff-base man-db \
debhelper dpkg-dev fakeroot lintian"

# What `make distcheck` runs in the tarball's tree: the suite without
# services (the whole suite runs in build/asan).
DISTCHECK_TESTS="test/cli/run.sh test/golden/run.sh test/rules/golden/run.sh \
test/rules/grammar/run.sh test/rules/mmt/run.sh test/rules/formats/run.sh test/unit/check_int test/unit/check_int_layout test/outputs/check_file test/outputs/check_file_mmt test/outputs/check_stdout \
test/cli/service.sh test/doc/man.sh test/dist/systemd.sh"

# install_deps PACKAGES...: the ones not installed yet
install_deps() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "setup: installing$missing"
	sudo=""
	[ "$(id -u)" -ne 0 ] && sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

# build DIR [configure args...]: out-of-tree build under build/DIR
build() {
	dir=$1
	shift
	build_some "$dir" "" "$@"
}

# build_some DIR "TARGETS" [configure args...]: only these targets ("": all)
build_some() {
	dir=$1 targets=$2
	shift 2
	if [ ! -x configure ] || [ configure.ac -nt configure ] || [ Makefile.am -nt configure ]; then
		autoreconf -fi >/dev/null 2>&1 || autoreconf -fi
	fi
	mkdir -p "build/$dir"
	if [ ! -f "build/$dir/Makefile" ] || [ configure -nt "build/$dir/Makefile" ]; then
		(cd "build/$dir" && "$top/configure" -q "$@")
	fi
	make -s -C "build/$dir" -j"$jobs" $targets >/dev/null
}

run_demo() {
	bin=build/rel/intspect
	f=test/data/report-v0.5-int-v0.5-tcp.pcap
	echo "== $bin -r $f --dump      (every decoded attribute of a real INT report)"
	"$bin" -r "$f" --dump
	f=test/data/gen-report-v2.0-coalesced.pcap
	echo "== $bin -C conf/intspect.conf -r $f      (the default rules: records)"
	"$bin" -C conf/intspect.conf -r "$f"
}

run_tests() {
	# the Kafka broker the tests start: jars from Maven Central, cached
	sh test/services/kafka.sh fetch || echo "setup: no Kafka jars; the Kafka tests will be skipped"
	build asan --enable-sanitizers CFLAGS="-O1 -g"
	status=0
	make -C build/asan -j"$jobs" check >build/asan/check.out 2>&1 || status=$?
	grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' build/asan/check.out || true
	for log in $(find build/asan/test -name '*.log' ! -name test-suite.log | sort); do
		grep -h -E '^[0-9]+%: Checks:|passed, [0-9]+ failed' "$log" || true
	done
	if [ "$status" -ne 0 ]; then
		cat build/asan/test-suite.log 2>/dev/null || cat build/asan/check.out
	fi
	build rel CFLAGS="-O2 -g"
	sh test/alloc/run.sh build/rel >build/rel/alloc.out 2>&1 || status=1
	cat build/rel/alloc.out
	# every benchmark once at a small size: the scripts still run and
	# print every figure (the campaigns themselves are not part of this)
	sh test/bench/smoke.sh build/rel >build/rel/bench-smoke.out 2>&1 || status=1
	cat build/rel/bench-smoke.out
	# the threads under ThreadSanitizer (only what they need is built)
	build_some tsan "intspect intspect-ctl intgen test/unit/check_pipeline test/outputs/check_queue test/outputs/check_queue_wake test/outputs/check_queue_held" \
		CFLAGS="-O1 -g -fsanitize=thread" LDFLAGS=-fsanitize=thread
	sh test/tsan/run.sh build/tsan >build/tsan/tsan.out 2>&1 || status=1
	cat build/tsan/tsan.out
	# every libFuzzer target (clang, ASan + UBSan) briefly from its corpus;
	# the campaign is bench/fuzz.sh with its defaults
	fz=0
	FUZZ_BUILD=$top/build/fuzz FUZZ_OUT=$top/build/fuzz/smoke sh bench/fuzz.sh 20 0 3 \
		>build/fuzz-smoke.log 2>&1 || fz=$?
	: >build/fuzz-smoke.out
	if [ "$fz" -eq 77 ]; then
		echo "skip fuzz: no clang" >>build/fuzz-smoke.out
	else
		for row in build/fuzz/smoke/*.row; do
			[ -f "$row" ] || continue
			set -- $(cat "$row")
			if [ "$7" = 0 ]; then
				echo "ok fuzz $1: $3 executions in $2, no finding" >>build/fuzz-smoke.out
			else
				echo "FAIL fuzz $1: $7 finding(s) in build/fuzz/smoke/$1/findings" >>build/fuzz-smoke.out
			fi
		done
		if [ "$fz" -ne 0 ] && [ "$fz" -ne 1 ]; then
			echo "FAIL fuzz: bench/fuzz.sh exit $fz (build/fuzz-smoke.log)" >>build/fuzz-smoke.out
		elif ! ls build/fuzz/smoke/*.row >/dev/null 2>&1; then
			echo "FAIL fuzz: no target ran (build/fuzz-smoke.log)" >>build/fuzz-smoke.out
		fi
	fi
	n_ok=$(grep -c '^ok ' build/fuzz-smoke.out || true)
	n_bad=$(grep -c '^FAIL ' build/fuzz-smoke.out || true)
	echo "fuzz: $n_ok passed, $n_bad failed" >>build/fuzz-smoke.out
	if [ "$n_bad" -ne 0 ]; then
		status=1
	fi
	cat build/fuzz-smoke.out
	# the release tarball: builds and tests out of tree (a smoke subset,
	# the whole suite ran above), installs, installchecks, uninstalls
	if make -C build/rel distcheck TESTS="$DISTCHECK_TESTS" >build/rel/distcheck.log 2>&1; then
		echo "ok distcheck" >build/rel/distcheck.out
		echo "distcheck: 1 passed, 0 failed" >>build/rel/distcheck.out
	else
		tail -40 build/rel/distcheck.log >build/rel/distcheck.out
		echo "FAIL distcheck (build/rel/distcheck.log)" >>build/rel/distcheck.out
		echo "distcheck: 0 passed, 1 failed" >>build/rel/distcheck.out
		status=1
	fi
	cat build/rel/distcheck.out
	# the Debian package: built from a copy of the tree, linted, installed,
	# removed and purged (root only; skipped otherwise)
	pkg=0
	sh test/dist/package.sh . >build/rel/package.out 2>&1 || pkg=$?
	[ "$pkg" -ne 0 ] && [ "$pkg" -ne 77 ] && status=1
	grep -E '^(ok|FAIL|package:|skip)' build/rel/package.out
	# one closing line over every test case: script cases and Check tests
	counts=$(cat $(find build/asan/test -name '*.log' ! -name test-suite.log) build/rel/alloc.out \
		build/rel/bench-smoke.out build/tsan/tsan.out build/fuzz-smoke.out build/rel/distcheck.out build/rel/package.out 2>/dev/null |
		awk '/^[0-9]+%: Checks:/ { gsub(",", ""); p += $3 - $5 - $7; f += $5 + $7 }
		     / passed, [0-9]+ failed$/ { p += $(NF-3); f += $(NF-1) }
		     END { printf "%d %d", p, f }')
	pass=${counts% *}
	fail=${counts#* }
	[ "$status" -ne 0 ] && [ "$fail" -eq 0 ] && fail=1
	echo "$pass passed, $fail failed"
	return "$status"
}

case "${1:-demo}" in
demo) install_deps $BUILD_PACKAGES; build rel CFLAGS="-O2 -g"; run_demo ;;
test) install_deps $BUILD_PACKAGES $TEST_PACKAGES; run_tests ;;
build) install_deps $BUILD_PACKAGES; build rel CFLAGS="-O2 -g" ;;
packages)
	case "${2:-}" in
	demo | build) echo $BUILD_PACKAGES ;;
	test) echo $BUILD_PACKAGES $TEST_PACKAGES ;;
	*) echo "usage: $0 packages demo|test" >&2; exit 2 ;;
	esac ;;
*) echo "usage: $0 demo|test|build|packages" >&2; exit 2 ;;
esac
