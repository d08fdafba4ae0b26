#!/bin/sh
# test/tsan/run.sh BUILD: the multi-threaded paths under ThreadSanitizer
# (a build configured with -fsanitize=thread): the pipeline unit test,
# the channel queue's producers and consumer (records pushed, written
# in place and held runs),
# capture files read as shares by several workers, merged windows written
# by every worker, event reports settled in order, the UDP listener and
# DPDK queues on several workers, per-hop rules on 2 and 4 workers, a
# Prometheus server scraping the counters of 2 workers while they run,
# control requests applied by 2 workers, a hot reload while reports flow,
# flow monitors on 2 and 4, DTA stores written by 2 workers (a capture
# and a live collector with NACKs). Any
# report of a data race fails the case.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
bld=$(cd "${1:?usage: run.sh BUILD}" && pwd)
TSAN_OPTIONS="halt_on_error=1 exitcode=66"
export TSAN_OPTIONS
pass=0 fail=0
case_() {
	name=$1
	shift
	if (cd "$bld" && top_srcdir="$top" top_builddir="$bld" "$@") >"$bld/tsan-$name.out" 2>&1; then
		echo "ok tsan: $name"
		pass=$((pass + 1))
	else
		echo "FAIL tsan: $name"
		tail -40 "$bld/tsan-$name.out"
		fail=$((fail + 1))
	fi
}
case_ pipeline "$bld/test/unit/check_pipeline"
case_ queue "$bld/test/outputs/check_queue"
case_ queue_wake "$bld/test/outputs/check_queue_wake"
case_ queue_held "$bld/test/outputs/check_queue_held"
case_ workers sh "$top/test/inputs/workers.sh"
case_ merge_share sh "$top/test/inputs/merge_share.sh"
case_ settle sh "$top/test/inputs/settle.sh"
case_ udp sh "$top/test/inputs/udp.sh"
case_ dpdk sh "$top/test/inputs/dpdk.sh"
case_ perhop sh "$top/test/rules/perhop/run.sh"
case_ prometheus sh "$top/test/outputs/prometheus/run.sh"
case_ control sh "$top/test/control/run.sh"
case_ reload sh "$top/test/control/reload.sh"
case_ monitor sh "$top/test/rules/monitor/run.sh"
case_ dta env DTA_LIVE_PPS=500 sh "$top/test/dta/run.sh"
echo "tsan: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
