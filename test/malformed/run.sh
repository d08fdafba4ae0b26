#!/bin/sh
# test/malformed/run.sh - the generated malformed corpus (malformed.c) over
# every test capture and the fuzz seed frames. A capture whose golden test
# takes options (test/golden/NAME.args, e.g. -o dta.sequence=no) is cut
# with them, in a run of its own.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
plain=""
status=0
for f in "$src"/test/data/*.pcap "$src"/test/data/*.pcapng; do
	args="$src/test/golden/$(basename "$f" .pcap).args"
	if [ -f "$args" ]; then
		# shellcheck disable=SC2046
		"$bld/test/malformed/malformed" $(cat "$args") "$f" >>"${TMPDIR:-/tmp}/malformed-args.$$" || status=1
	else
		plain="$plain $f"
	fi
done
# shellcheck disable=SC2086
"$bld/test/malformed/malformed" $plain "$src/test/fuzz/corpus/dissect" >"${TMPDIR:-/tmp}/malformed.$$" || status=1
cat "${TMPDIR:-/tmp}/malformed-args.$$" "${TMPDIR:-/tmp}/malformed.$$" 2>/dev/null
# the field mutations skip what has no such header: the main run must
# have had each kind
for kind in "INT header fields" "telemetry report fields" "carrier length fields" "DTA fields"; do
	grep -q "^ok $kind" "${TMPDIR:-/tmp}/malformed.$$" ||
		{ echo "FAIL $kind: not run (no such header in the captures?)"; status=1; }
done
# the corpus's size as README.md ("Malformed input") gives it, summed
# over every run above: a capture added to test/data/ makes it grow, and
# the README with it
if [ -f "$src/README.md" ]; then
	figures=$(cat "${TMPDIR:-/tmp}/malformed-args.$$" "${TMPDIR:-/tmp}/malformed.$$" 2>/dev/null | awk '
		function n(x,  s) {    # 1234567 -> 1,234,567 (any locale)
			s = ""
			while (x >= 1000) { s = sprintf(",%03d", x % 1000) s; x = int(x / 1000) }
			return x s
		}
		{ kind = /^ok INT header fields:/ ? "int" : /^ok telemetry report fields:/ ? "report" : \
		         /^ok carrier length fields/ ? "carrier" : ""; sub(/.*: /, "") }
		/ packets cut at each of / { pk += $1; pt += $7 }
		kind == "int" { im += $3 }
		kind == "report" { rm_ += $3 }
		kind == "carrier" { cm += $3 }
		END { printf "%s well-formed test packets|%s captures cut short|%s INT header|%s report mutants|%s carrier mutants",
		      n(pk), n(pt), n(im), n(rm_), n(cm) }')
	readme=$(tr '\n' ' ' <"$src/README.md" | tr -s ' ')
	missing=""
	old_ifs=$IFS
	IFS='|'
	for f in $figures; do
		case $readme in *"$f"*) ;; *) missing="$missing; $f" ;; esac
	done
	IFS=$old_ifs
	if [ -z "$missing" ]; then
		echo "ok README's corpus figures: $figures"
	else
		echo "FAIL README's corpus figures: not in README.md, \"Malformed input\"${missing#;}"
		status=1
	fi
fi
rm -f "${TMPDIR:-/tmp}/malformed.$$" "${TMPDIR:-/tmp}/malformed-args.$$"
exit $status
