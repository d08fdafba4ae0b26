#!/bin/sh
# bench/fuzz.sh - the fuzzing campaign: every libFuzzer target (test/fuzz/:
# fuzz_dissect, the dissector chain with each decoder also as the first
# layer; fuzz_config, the rule language; fuzz_pcap, the capture-file
# readers; fuzz_control, the control socket's requests; fuzz_dta, the DTA
# collector and stores) built with clang,
# ASan and UBSan, run from its committed corpus,
# then a table of executions, coverage and findings per target.
#
#   bench/fuzz.sh [SECONDS [MIN_EXECS [PARALLEL]]]
#       each target runs SECONDS (default 1800), then on until MIN_EXECS
#       executions (default 10000000; 0: no minimum), PARALLEL targets at
#       once (default 1)
#   FUZZ_TARGETS="dissect pcap"   a subset
#   FUZZ_UPDATE=1                 add to test/fuzz/corpus/TARGET what each
#                                 run found that it does not cover
#                                 (libFuzzer's -merge=1; nothing removed)
#   FUZZ_BUILD=DIR                the build directory (default build/fuzz;
#                                 configured with CC=clang
#                                 --enable-fuzztargets --enable-sanitizers)
#
# A finding (crash-*, leak-*, timeout-*, oom-*) is kept in
# $FUZZ_OUT/TARGET/ (default /tmp/intspect-fuzz) and counted; the exit
# status is 1 when there is one, 2 when the targets could not be built. The
# test command runs this briefly
# (setup.sh: a smoke run of every target).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-1800}
min_execs=${2:-10000000}
parallel=${3:-1}
bld=${FUZZ_BUILD:-$top/build/fuzz}
out=${FUZZ_OUT:-/tmp/intspect-fuzz}
targets=${FUZZ_TARGETS:-dissect config pcap control dta merge}

command -v clang >/dev/null 2>&1 || { echo "fuzz.sh: clang not installed" >&2; exit 77; }
if [ ! -x "$bld/test/fuzz/fuzz_dissect" ] || [ ! -f "$bld/Makefile" ] ||
   ! grep -q -- '--enable-fuzztargets' "$bld/config.status" 2>/dev/null; then
	mkdir -p "$bld"
	(cd "$bld" && "$top/configure" -q CC=clang --enable-fuzztargets --enable-sanitizers) \
		>"$out.configure.log" 2>&1 || { echo "fuzz.sh: configure failed ($out.configure.log)" >&2; exit 2; }
fi
mkdir -p "$out"
make -C "$bld" -j2 fuzz >"$out/make.log" 2>&1 || { echo "fuzz.sh: make fuzz failed ($out/make.log)" >&2; exit 2; }

# max_len: a frame, a config file, a capture of a few packets
max_len() {
	case $1 in
	dissect) echo 2048 ;;
	config) echo 4096 ;;
	pcap) echo 8192 ;;
	control) echo 4096 ;;
	dta) echo 4096 ;;
	merge) echo 8192 ;;
	esac
}

# run TARGET: the campaign of one target, its figures in $out/TARGET.row
run() {
	t=$1
	bin=$bld/test/fuzz/fuzz_$t
	d=$out/$t
	rm -rf "$d"
	mkdir -p "$d/corpus" "$d/findings"
	cp "$top/test/fuzz/corpus/$t/"* "$d/corpus/" 2>/dev/null
	seeds=$(ls "$d/corpus" | wc -l)
	start=$(date +%s)
	# LeakSanitizer at exit only; the dictionary libFuzzer prints is noise
	(cd "$d/findings" && "$bin" -max_len="$(max_len "$t")" -max_total_time="$secs" \
		-print_final_stats=1 -artifact_prefix="$d/findings/" "$d/corpus") >"$d/run1.log" 2>&1
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/run1.log")
	execs=${execs:-0}
	if [ "$min_execs" -gt "$execs" ] && [ -z "$(ls "$d/findings")" ]; then
		(cd "$d/findings" && "$bin" -max_len="$(max_len "$t")" -runs=$((min_execs - execs)) \
			-print_final_stats=1 -artifact_prefix="$d/findings/" "$d/corpus") >"$d/run2.log" 2>&1
		more=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/run2.log")
		execs=$((execs + ${more:-0}))
	fi
	end=$(date +%s)
	last=$(cat "$d"/run*.log | grep -E '^#[0-9]+' | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	findings=$(ls "$d/findings" | wc -l)
	units=$(ls "$d/corpus" | wc -l)
	if [ "${FUZZ_UPDATE:-0}" = 1 ] && [ "$findings" -eq 0 ]; then
		# what the run found that the committed corpus does not cover
		# is added to it (libFuzzer's -merge=1 into the first directory);
		# nothing committed is removed
		c=$top/test/fuzz/corpus/$t
		before=$(ls "$c" | wc -l)
		"$bin" -merge=1 -max_len="$(max_len "$t")" "$c" "$d/corpus" >"$d/merge.log" 2>&1
		units="$units, $(($(ls "$c" | wc -l) - before)) added to the corpus"
	fi
	printf '%-8s %6ss %12s %7s %8s %8s %9s  %s\n' "$t" "$((end - start))" "$execs" "${cov:-?}" \
		"${ft:-?}" "$seeds" "$findings" "$units" >"$out/$t.row"
}

printf 'fuzz campaign, %s, %s s a target (then on to %s executions), clang %s, ASan + UBSan\n' \
	"$(date -u +%Y-%m-%d)" "$secs" "$min_execs" "$(clang -dumpversion)"
running=0
for t in $targets; do
	run "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$parallel" ]; then
		wait
		running=0
	fi
done
wait
printf '%-8s %7s %12s %7s %8s %8s %9s  %s\n' target time executions cov features seeds findings corpus
status=0
for t in $targets; do
	cat "$out/$t.row"
	n=$(ls "$out/$t/findings" | wc -l)
	if [ "$n" -gt 0 ]; then
		status=1
		ls "$out/$t/findings" | sed "s|^|  finding: $out/$t/findings/|"
	fi
done
exit $status
