#!/bin/sh
# Golden tests: every capture in test/data with a test/golden/NAME.expect is
# dumped and compared field by field (test/tools/jsoncheck.py). A run fails
# on a mismatch, a non-zero exit, or any sanitizer report on stderr.
set -u
src=${top_srcdir:-.}
bin=${top_builddir:-.}/intspect
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 n=0
for exp in "$src"/test/golden/*.expect; do
	name=$(basename "$exp" .expect)
	args=""
	[ -f "$src/test/golden/$name.args" ] && args=$(cat "$src/test/golden/$name.args")
	pcap="$src/test/data/$name.pcap"
	[ -f "$src/test/golden/$name.pcap-name" ] && pcap="$src/test/data/$(cat "$src/test/golden/$name.pcap-name")"
	n=$((n + 1))
	# shellcheck disable=SC2086
	if ! "$bin" -r "$pcap" --dump $args >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL $name: exit status"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/err"; then
		echo "FAIL $name: sanitizer report"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if ! python3 "$src/test/tools/jsoncheck.py" "$exp" "$tmp/out"; then
		echo "FAIL $name"; fail=$((fail + 1)); continue
	fi
	echo "ok $name"
done
echo "golden: $((n - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
