#!/bin/sh
# Round trip: for each line of cases.txt, intgen (an independent encoder)
# writes N random packets and the values it encoded; the dump of intspect
# must carry the same values, field by field.
set -u
src=${top_srcdir:-.}
bld=${top_builddir:-.}
n=${ROUNDTRIP_PACKETS:-300}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0 total=0 seed=1
while IFS= read -r args; do
	case "$args" in ''|'#'*) continue ;; esac
	total=$((total + 1)); seed=$((seed + 1))
	extra=""
	case "$args" in *' | '*) extra=${args#* | }; args=${args%% | *} ;; esac
	# shellcheck disable=SC2086
	if ! "$bld/intgen" -o "$tmp/c.pcap" -e "$tmp/c.jsonl" -n "$n" --seed "$seed" $args 2>"$tmp/gen.err"; then
		echo "FAIL intgen $args"; cat "$tmp/gen.err"; fail=$((fail + 1)); continue
	fi
	# shellcheck disable=SC2086
	if ! "$bld/intspect" -r "$tmp/c.pcap" --dump $extra >"$tmp/out" 2>"$tmp/err"; then
		echo "FAIL intspect on: $args"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	if grep -q -E 'runtime error|AddressSanitizer' "$tmp/err"; then
		echo "FAIL sanitizer on: $args"; cat "$tmp/err"; fail=$((fail + 1)); continue
	fi
	case "$args" in
	*'--format dta'*)       # the reports in capture order, the generator's keys left out
		python3 "$src/test/dta/expect.py" "$tmp/c.jsonl" >"$tmp/e.jsonl" && mv "$tmp/e.jsonl" "$tmp/c.jsonl" ;;
	esac
	if python3 "$src/test/tools/jsoncheck.py" "$tmp/c.jsonl" "$tmp/out" >"$tmp/cmp"; then
		echo "ok $args"
	else
		echo "FAIL $args"; head -20 "$tmp/cmp"; fail=$((fail + 1))
	fi
done <"$src/test/roundtrip/cases.txt"
echo "roundtrip: $((total - fail)) passed, $fail failed"
[ "$fail" -eq 0 ]
