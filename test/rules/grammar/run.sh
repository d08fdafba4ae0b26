#!/bin/sh
# Grammar corpus of the rule language (nftables/jq style), checked with
# `intspect -T FILE`:
#
#   valid/*.conf    must be accepted: exit 0, a line "FILE: ... ok", nothing
#                   on stderr;
#   invalid/*.conf  hold one error each, announced on their first line as
#                       # expect: LINE:COL: TEXT
#                   and must exit 2 with exactly one error record,
#                   "FILE:LINE:COL: error: MESSAGE" where MESSAGE contains
#                   TEXT, followed by the source line and a caret line whose
#                   '^' stands under column COL.
#
# Any sanitizer report fails the file. Run from the top build directory (or
# with $top_srcdir / $top_builddir set, as `make check` does); extra
# arguments restrict the run to those files.
set -u
src=${top_srcdir:-.}
bin=${INTSPECT:-${top_builddir:-.}/intspect}
dir=$src/test/rules/grammar
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

if [ ! -x "$bin" ]; then
	echo "grammar: $bin not built" >&2
	exit 99
fi

sanitizer() {
	grep -q -E 'runtime error|AddressSanitizer|LeakSanitizer|MemorySanitizer|ThreadSanitizer' "$1"
}

bad() {
	echo "FAIL $1: $2"
	sed 's/^/  | /' "$tmp/out" "$tmp/err"
	fail=$((fail + 1))
}

check_valid() {
	f=$1
	"$bin" -T "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if sanitizer "$tmp/err"; then
		bad "$f" "sanitizer report"; return
	fi
	if [ "$rc" -ne 0 ]; then
		bad "$f" "exit status $rc, expected 0"; return
	fi
	if ! grep -q -F "$f: " "$tmp/out" || ! grep -q -E ': ok$' "$tmp/out"; then
		bad "$f" "no '$f: ... ok' line"; return
	fi
	# a valid file may announce warnings, one line each:
	#     # warning: LINE:COL: TEXT
	# and stderr holds those, and nothing else
	want=$(sed -n 's/^# warning: //p' "$f")
	if [ -n "$want" ]; then
		n=$(printf '%s\n' "$want" | wc -l)
		if [ "$(grep -c ': warning: ' "$tmp/err")" -ne "$n" ] ||
		   [ "$(wc -l <"$tmp/err")" -ne "$n" ]; then
			bad "$f" "expected $n warnings, nothing else"; return
		fi
		while IFS= read -r w; do
			grep -q -F "$f:${w%%: *}: warning: ${w#*: }" "$tmp/err" ||
				{ bad "$f" "no warning '$w'"; return; }
		done <<EOW
$want
EOW
	elif [ -s "$tmp/err" ]; then
		bad "$f" "messages on stderr for a valid file"; return
	fi
	echo "ok $f"
	pass=$((pass + 1))
}

check_invalid() {
	f=$1
	: >"$tmp/out"
	: >"$tmp/err"
	exp=$(sed -n '1s/^# expect: //p' "$f")
	pos=$(printf '%s\n' "$exp" | sed -n 's/^\([0-9][0-9]*:[0-9][0-9]*\): .*/\1/p')
	text=${exp#*: }
	if [ -z "$pos" ] || [ -z "$text" ]; then
		bad "$f" "first line is not '# expect: LINE:COL: TEXT'"; return
	fi
	col=${pos#*:}
	"$bin" -T "$f" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if sanitizer "$tmp/err"; then
		bad "$f" "sanitizer report"; return
	fi
	if [ "$rc" -ne 2 ]; then
		bad "$f" "exit status $rc, expected 2"; return
	fi
	n=$(grep -c ': error: ' "$tmp/err")
	if [ "$n" -ne 1 ]; then
		bad "$f" "$n error records, expected exactly one"; return
	fi
	line=$(grep -n -F "$f:$pos: error: " "$tmp/err" | head -n 1)
	if [ -z "$line" ]; then
		bad "$f" "no error at $pos (expected '$f:$pos: error: ...$text...')"; return
	fi
	at=${line%%:*}
	msg=${line#*: error: }
	case $msg in
	*"$text"*) ;;
	*) bad "$f" "message at $pos does not contain '$text'"; return ;;
	esac
	# the source line follows, then the caret line: "  " + one blank (or
	# tab) per column before COL + "^" + optional "~"s
	caret=$(sed -n "$((at + 2))p" "$tmp/err")
	if ! printf '%s\n' "$caret" | grep -q -E '^  [[:blank:]]*\^~*$'; then
		bad "$f" "no caret line under the message"; return
	fi
	before=${caret%%^*}
	if [ "$(( ${#before} - 2 + 1 ))" -ne "$col" ]; then
		bad "$f" "caret at column $(( ${#before} - 1 )), message says $col"; return
	fi
	echo "ok $f"
	pass=$((pass + 1))
}

if [ $# -gt 0 ]; then
	for f in "$@"; do
		case $f in
		*/invalid/*) check_invalid "$f" ;;
		*) check_valid "$f" ;;
		esac
	done
else
	for f in "$dir"/valid/*.conf; do
		check_valid "$f"
	done
	for f in "$dir"/invalid/*.conf; do
		check_invalid "$f"
	done
fi
echo "grammar: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
