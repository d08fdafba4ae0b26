#!/bin/sh
# Rule golden tests: NAME.conf run on test/data/$(cat NAME.pcap-name) must
# print exactly NAME.expected (records on stdout). Expectations are
# computed by hand from the packets' values, see each .conf's comment.
set -u
src=${top_srcdir:-.}
bin=${top_builddir:-.}/intspect
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
for conf in "$src"/test/rules/golden/*.conf; do
	name=$(basename "$conf" .conf)
	dir=$(dirname "$conf")
	pcap="$src/test/data/$(cat "$dir/$name.pcap-name")"
	if ! "$bin" -C "$conf" -r "$pcap" >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL $name: exit status"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer' "$tmp/err"; then
		echo "FAIL $name: sanitizer report"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if diff -u "$dir/$name.expected" "$tmp/out" >"$tmp/diff"; then
		echo "ok $name"; pass=$((pass + 1))
	else
		echo "FAIL $name"; cat "$tmp/diff"; fail=$((fail + 1))
	fi
done
echo "rules-golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
