#!/bin/sh
# Every benchmark of bench/ run once at a small size, so that a change
# that breaks a bench script (its rules, its captures, its parsing of
# intspect's summary, its service start-up) fails the test command
# instead of the next campaign. Each must exit 0 and print every figure
# line it promises; a bench that compares records (bench/workers.sh)
# must find them equal. The figures themselves are not judged: at these
# sizes they measure start-up, and the goals live in the full runs.
# usage: test/bench/smoke.sh BUILD_DIR (a build without sanitizers)
set -u
bld=$(cd "${1:-build/rel}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export BUILD="$bld" BENCH_TMP="$tmp" INTSPECT="$bld/intspect" INTGEN="$bld/intgen"
pass=0 fail=0 skip=0

# lines FILE REGEX: how many lines of FILE match REGEX
lines() { grep -c -E "$2" "$1" || true; }

# bench NAME ARGS...: run bench/NAME.sh ARGS, into $tmp/NAME.out
bench() {
	name=$1
	shift
	t0=$(date +%s)
	sh "$top/bench/$name.sh" "$@" >"$tmp/$name.out" 2>&1
	rc=$?
	took=$(($(date +%s) - t0))
}

# expect NAME WHAT N REGEX: NAME's output has N lines matching REGEX
expect() {
	got=$(lines "$tmp/$1.out" "$4")
	if [ "$got" -ne "$3" ]; then
		echo "FAIL bench $1: $3 lines of $2 expected, $got found ($tmp kept)"
		sed 's/^/  | /' "$tmp/$1.out" | tail -30
		bad=1
	fi
}

# verdict NAME: after bench and expects
verdict() {
	if [ "$rc" -eq 77 ]; then
		echo "skip bench $1: a service it needs is missing"
		skip=$((skip + 1))
	elif [ "$rc" -ne 0 ] || [ "$bad" -ne 0 ]; then
		[ "$rc" -ne 0 ] && { echo "FAIL bench $1: exit $rc"; tail -20 "$tmp/$1.out" | sed 's/^/  | /'; }
		fail=$((fail + 1))
		trap - EXIT     # kept for a look
	else
		echo "ok bench $1 (${took} s)"
		pass=$((pass + 1))
	fi
}

num='[0-9]+(\.[0-9]+)?'

bad=0; bench run 20000 1
expect run "a workload's figure" 18 "^  [a-z0-9].* +$num Mpps +$num% of the floor$"
expect run "(c) against (b)" 4 "^  .* $num""x +(met|not met)$"
verdict run

bad=0; bench workers 20000 1
expect workers "ratio against its goal" 12 " $num""x \\((goal $num""x: (met|not met)|no goal)\\); 2 runs at once $num""x$"
expect workers "share of the ceiling" 9 "2 workers = [0-9]+% of 2 runs at once \\(goal [0-9]+%: (met|not met)\\)$"
expect workers "equal records" 3 "^  records of 2 workers = 1 worker, in order \\([0-9]+ records\\)$"
expect workers "records differing or dropped" 0 "RECORDS"
verdict workers

bad=0; bench instructions 2000
expect instructions "a workload's counts" 6 "^ +(\\([abc]\\))? +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+$"
expect instructions "a goal" 4 "^    .* <= [0-9]+: \\(a\\) (met|not met) \\(b\\) (met|not met) \\(c\\) (met|not met)$"
verdict instructions

bad=0; bench monitor 20000 1
expect monitor "a get round trip" 3 "^ +[0-9]+ flows \\([0-9]+ returned, [0-9]+ KiB\\): +$num ms$"
expect monitor "reloads done" 2 "^  [12] worker\\(s\\): 20 of 20 reloads done"
verdict monitor

bad=0; bench metrics 20000 1
expect metrics "a table's points" 6 "^    net_[a-z_]+: [0-9]+ of [0-9]+$"
verdict metrics

bad=0; bench dta --quick
expect dta "the end-to-end run" 1 "^  \\(last run: [0-9]+ reports, [0-9]+ applied, 0 rejected"
verdict dta

bad=0; bench memory
expect memory "a peak" 5 "^  [a-z]+ +[0-9]+ MiB"
verdict memory

bad=0; bench flows 1
expect flows "a rule's row" 4 "^  [a-z ]+ +$num +$num +$num "
verdict flows

bad=0; bench redis 20000 1
expect redis "a command's rate" 5 "M records/s +\\(20000 delivered per run\\)$"
verdict redis

bad=0; bench kafka 20000 1
expect kafka "the acknowledged rate" 1 "records/s to Kafka, all acked \\(wall\\): +[0-9]+ +\\(20000 acked per run\\)$"
verdict kafka

bad=0; bench scaleout 20000 1
expect scaleout "a rule's rate from Kafka" 2 "^  [a-z0-9]+ +[0-9]+ reports/s from Kafka"
expect scaleout "the latency" 1 "^  latency, report -> merged record"
verdict scaleout

echo "bench smoke: $pass passed, $fail failed"
exit $((fail > 0))
