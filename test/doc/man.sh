#!/bin/sh
# The manual pages (doc/man/*.in, made into $top_builddir/doc/man/ by
# doc/man/man.mk): well formed, and in step with the programs.
#
#  1. mandoc -T lint (every level, style included) and groff -ww have
#     nothing to say about any page; man -l formats each; no @word@ was
#     left unsubstituted.
#  2. intspect.conf.5 documents exactly the sections, keys and report
#     functions intspect accepts. The page's side: under each .SS named
#     after a section, the first word of every .TP tag (see the comment
#     at the top of intspect.conf.5.in). The program's side, asked of
#     intspect itself: `intspect -T` on a section with an unknown key
#     ends its error with "; known: k1, k2, ..." (dsl/compile.c
#     check_keys for the global settings, input, output and report
#     sections; outputs/kv.c for every output type), and an unknown
#     report function with "; known: sum(), count(), ..."
#     (dsl/compile_expr.c). The section names have no such message: they
#     are read from the compiler's own tables (dsl/compile.c's known[] of
#     compile_tree, dsl/settings.c's outside[]), and every section the
#     page documents must be accepted by `intspect -T`.
#  3. intspect.8, intgen.1 and intspect-ctl.1 document, under OPTIONS, exactly the options
#     each program's --help prints (an option the page has beyond --help
#     must at least be one the program accepts: intgen's --help does not
#     list -h, --help, --version and the long forms of -o, -e, -n).
#
# Exit 77 (skipped) without mandoc or groff (Debian: mandoc, groff-base).
# Run from the top build directory, or with $top_srcdir/$top_builddir set
# as `make check` does.
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
bin=${INTSPECT:-$build/intspect}
gen=${INTGEN:-$build/intgen}
ctl=${INTSPECT_CTL:-$build/intspect-ctl}
mandir=$build/doc/man
pages="intspect.8 intspect.conf.5 intgen.1 intspect-ctl.1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/test/tools/checks.sh"

for tool in mandoc groff; do
	if ! command -v $tool >/dev/null 2>&1; then
		echo "man: $tool not installed (Debian: mandoc, groff-base): skipped"
		exit 77
	fi
done
for f in "$bin" "$gen" "$ctl"; do
	if [ ! -x "$f" ]; then
		echo "man: $f not built" >&2
		exit 99
	fi
done


# ---- 1. the pages are well formed ----

# mandoc messages that are not the page's fault, each with its reason.
# (None today: the pages pass at the style level. Add a pattern here, with
# a comment saying why, rather than weakening -W.)
mandoc_ignore='^$'

for p in $pages; do
	f=$mandir/$p
	if [ ! -f "$f" ]; then
		bad "$p: $f not built (make all)"
		continue
	fi
	if grep -n '@[A-Za-z_]*@' "$f" >"$tmp/subst"; then
		bad "$p: placeholders left unsubstituted" "$tmp/subst"
	else
		ok "$p: placeholders substituted"
	fi
	mandoc -T lint -W style "$f" 2>&1 | grep -v -E "$mandoc_ignore" >"$tmp/lint"
	if [ -s "$tmp/lint" ]; then
		bad "$p: mandoc -T lint" "$tmp/lint"
	else
		ok "$p: mandoc -T lint -W style"
	fi
	groff -ww -man -Tutf8 "$f" >/dev/null 2>"$tmp/groff"
	rc=$?
	if [ $rc -ne 0 ] || [ -s "$tmp/groff" ]; then
		echo "groff exit status $rc" >>"$tmp/groff"
		bad "$p: groff -ww -man -Tutf8" "$tmp/groff"
	else
		ok "$p: groff -ww -man -Tutf8"
	fi
	if command -v man >/dev/null 2>&1; then
		if MANWIDTH=80 man -l "$f" >"$tmp/man.out" 2>"$tmp/man.err" &&
		   [ ! -s "$tmp/man.err" ] && [ -s "$tmp/man.out" ]; then
			ok "$p: man -l"
		else
			bad "$p: man -l" "$tmp/man.err"
		fi
	fi
done

# The installation's directories are substituted into the pages (a long
# one in `make distcheck`, whatever --prefix a user chose): groff must
# still be able to set every line, under prefixes of every length from 1
# to 140 characters (cut from a path made of segments of usual lengths).
long=/check/work/main/build/rel/intspect-0.1.0/_inst/usr/local/opt/x86_64-linux-gnu/share/a/bb/ccc/dddd/eeeee/ffffff/ggggggg/hhhhhhhh/iiiiiiiii/j
for p in $pages; do
	: >"$tmp/prefix.err"
	n=1
	while [ $n -le 140 ]; do
		pre=$(printf %s "$long" | cut -c1-$n | sed 's|/*$||')
		sh "$src/doc/man/subst.sh" "$pre/etc" "$pre/lib/intspect" "$pre/share/doc/intspect" 0.0 \
			"$src/doc/man/$p.in" >"$tmp/page" &&
		groff -ww -man -Tutf8 "$tmp/page" >/dev/null 2>"$tmp/groff" || echo "groff failed" >>"$tmp/groff"
		if [ -s "$tmp/groff" ]; then
			echo "prefix $pre:" >>"$tmp/prefix.err"
			sed 's/^/  /' "$tmp/groff" >>"$tmp/prefix.err"
		fi
		n=$((n + 1))
	done
	if [ -s "$tmp/prefix.err" ]; then
		bad "$p: groff -ww under installation prefixes of 1 to 140 characters" "$tmp/prefix.err"
	else
		ok "$p: groff -ww under installation prefixes of 1 to 140 characters"
	fi
done

# ---- helpers ----

# Roff source to plain words: font escapes and quotes out, \- to -.
unroff() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' -e 's/\\-/-/g' -e 's/\\://g' -e 's/\\(dq/"/g' \
	    -e 's/\\(aq/'"'"'/g' -e 's/\\&//g' -e 's/\\e/\\/g' -e 's/"//g'
}

# An .EX block to the text it shows.
unroff_ex() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\://g' -e 's/\\(dq/"/g' -e "s/\\\\(aq/'/g" \
	    -e 's/\\&//g' -e 's/\\e/\\/g'
}

# The tags of a page: "SECTION<TAB>SUBSECTION<TAB>TAG" per .TP, the names
# lower-case with their escapes removed.
tags() {
	awk '
	function clean(t) {
		gsub(/\\f[BIRP]/, "", t); gsub(/\\-/, "-", t); gsub(/"/, "", t)
		gsub(/\\&/, "", t)
		return t
	}
	/^\.SH[ \t]/ { sh = $0; sub(/^\.SH[ \t]+/, "", sh); sh = tolower(clean(sh)); ss = ""; next }
	/^\.SS[ \t]/ { ss = $0; sub(/^\.SS[ \t]+/, "", ss); ss = tolower(clean(ss)); next }
	/^\.T[PQ]/ { want = 1; next }     # .TQ: one more tag for the same text
	want { want = 0; t = $0; sub(/^\.[A-Z]+[ \t]*/, "", t); print sh "\t" ss "\t" t }
	' "$1"
}

# The first word of each tag (a key, a function, a section name).
first_words() {
	unroff | sed -n 's/^[[:space:]]*\([A-Za-z0-9_][A-Za-z0-9_.-]*\).*/\1/p' | sort -u
}

# Options named in text: -x and --name tokens, each at the start of a word.
option_words() {
	tr ' ,[|\t' '\n\n\n\n\n' | grep -E '^--?[A-Za-z]' | sed 's/[]=(].*//' | sort -u
}

# The program's list after "; known: " in its message for FILE.
known_of() {
	"$bin" -T "$1" 2>&1 | sed -n 's/.*; known: //p' | head -n 1 |
		sed 's/, /,/g' | tr ',' '\n' | sed -e 's/[ (].*//' | sort -u
}

compare() {         # WHAT PAGE-LIST PROGRAM-LIST
	comm -13 "$2" "$3" >"$tmp/missing"
	comm -23 "$2" "$3" >"$tmp/extra"
	if [ -s "$tmp/missing" ] || [ -s "$tmp/extra" ]; then
		{
			[ -s "$tmp/missing" ] && echo "accepted by the program, not in the page:" &&
				sed 's/^/    /' "$tmp/missing"
			[ -s "$tmp/extra" ] && echo "in the page, not accepted by the program:" &&
				sed 's/^/    /' "$tmp/extra"
		} >"$tmp/diff"
		bad "$1" "$tmp/diff"
	else
		ok "$1 ($(wc -l <"$3" | tr -d ' ') names)"
	fi
}

# ---- 2. intspect.conf.5: sections, keys, report functions ----

conf=$mandir/intspect.conf.5
if [ -f "$conf" ]; then
	tags "$conf" >"$tmp/conf.tags"
	page_keys() {       # SUBSECTION
		awk -F '\t' -v ss="$1" '$2 == ss { print $3 }' "$tmp/conf.tags" | first_words
	}
	sed -n 's/^\.SS[ \t]*//p' "$conf" | unroff | tr 'A-Z' 'a-z' | sort -u >"$tmp/conf.ss"

	# sections: the compiler's tables, and the page's .SS
	awk '/static const char \*const known\[\] = \{/ { on = 1 } on { print } on && /};/ { on = 0 }' \
		"$src/dsl/compile.c" | grep -o '"[a-z-]*"' | tr -d '"' | sort -u >"$tmp/sections"
	if [ ! -s "$tmp/sections" ]; then
		bad "intspect.conf.5: no section table found in dsl/compile.c"
	else
		comm -23 "$tmp/sections" "$tmp/conf.ss" >"$tmp/missing"
		if [ -s "$tmp/missing" ]; then
			bad "intspect.conf.5: sections of dsl/compile.c without a .SS" "$tmp/missing"
		else
			ok "intspect.conf.5: a .SS for each of the $(wc -l <"$tmp/sections" | tr -d ' ') sections of dsl/compile.c"
		fi
	fi
	: >"$tmp/refused"
	for s in $(grep -E '^(input|output|[a-z]+-(output|report))$' "$tmp/conf.ss"); do
		case $s in
		*-report) printf '%s t { event = "ip.src"; select = {"count()"} }\n' "$s" ;;
		*) printf '%s { }\n' "$s" ;;
		esac >"$tmp/s.conf"
		"$bin" -T "$tmp/s.conf" 2>&1 | grep "unknown section\|unknown output type" >>"$tmp/refused"
	done
	if [ -s "$tmp/refused" ]; then
		bad "intspect.conf.5: documented sections intspect -T refuses" "$tmp/refused"
	else
		ok "intspect.conf.5: every documented section is accepted by intspect -T"
	fi

	# MMT-Probe's sections: dsl/settings.c's outside[], each a warning
	awk '/^} outside\[\] = \{/ { on = 1; next } on && /^};/ { on = 0 } on' "$src/dsl/settings.c" |
		sed -n 's/^[[:space:]]*{ "\([a-z-]*\)",.*/\1/p' | sort -u >"$tmp/outside"
	page_keys "mmt-probe sections" >"$tmp/page"
	compare "intspect.conf.5: MMT-Probe sections (dsl/settings.c outside[])" "$tmp/page" "$tmp/outside"
	: >"$tmp/notwarned"
	while read -r s; do
		printf '%s { enable = true }\n' "$s" >"$tmp/s.conf"
		"$bin" -T "$tmp/s.conf" >/dev/null 2>"$tmp/s.err"
		grep -q "warning: section '$s' ignored" "$tmp/s.err" || echo "$s" >>"$tmp/notwarned"
	done <"$tmp/page"
	if [ -s "$tmp/notwarned" ]; then
		bad "intspect.conf.5: documented MMT-Probe sections without the 'ignored' warning" "$tmp/notwarned"
	else
		ok "intspect.conf.5: intspect -T warns about every documented MMT-Probe section"
	fi

	# keys of the global settings, input, output and report sections
	# (dsl/compile.c check_keys)
	for s in "global settings" input output control event-report query-report metrics flow-monitor dta-store dta; do
		case $s in
		"global settings") printf 'zz-no-such-key = 1\n' ;;
		*-report | flow-monitor | dta-store) printf '%s t { zz-no-such-key = 1 }\n' "$s" ;;
		*) printf '%s { zz-no-such-key = 1 }\n' "$s" ;;
		esac >"$tmp/k.conf"
		known_of "$tmp/k.conf" >"$tmp/prog"
		if [ ! -s "$tmp/prog" ]; then
			"$bin" -T "$tmp/k.conf" >"$tmp/out" 2>&1
			bad "intspect.conf.5: $s: no '; known: ' list from intspect -T" "$tmp/out"
			continue
		fi
		page_keys "$s" >"$tmp/page"
		compare "intspect.conf.5: keys of $s" "$tmp/page" "$tmp/prog"
	done

	# keys of the output types (outputs/kv.c: generic keys, then the
	# type's); the generic ones are documented once
	printf 'stdout-output { zz-no-such-key = 1 }\n' >"$tmp/k.conf"
	known_of "$tmp/k.conf" >"$tmp/generic"
	page_keys "keys of every output section" >"$tmp/page.generic"
	compare "intspect.conf.5: keys of every output section (stdout-output's)" \
		"$tmp/page.generic" "$tmp/generic"
	# every type the compiler knows (dsl/channels.c channel_types[])
	types=$(awk '/channel_types\[\] = \{/ { on = 1 } on { print } on && /};/ { on = 0 }' \
		"$src/dsl/channels.c" | grep -o '"[a-z]*"' | tr -d '"')
	[ -n "$types" ] || bad "intspect.conf.5: no channel_types[] found in dsl/channels.c"
	for t in $types; do
		printf '%s-output { zz-no-such-key = 1 }\n' "$t" >"$tmp/k.conf"
		known_of "$tmp/k.conf" >"$tmp/prog"
		if [ ! -s "$tmp/prog" ]; then
			"$bin" -T "$tmp/k.conf" >"$tmp/out" 2>&1
			if ! "$bin" -V | grep -q "^  $t output"; then
				echo "skip $t-output: not built in ($(head -n 1 "$tmp/out"))"
				continue
			fi
			bad "intspect.conf.5: $t-output: no '; known: ' list from intspect -T" "$tmp/out"
			continue
		fi
		page_keys "$t-output" | sort -u - "$tmp/page.generic" >"$tmp/page"
		compare "intspect.conf.5: keys of $t-output" "$tmp/page" "$tmp/prog"
	done

	# report functions (dsl/compile_expr.c, from src/filters/agg.c's table)
	printf 'query-report t { select = {"zz_no_such_function(ip.src)"} }\n' >"$tmp/k.conf"
	known_of "$tmp/k.conf" >"$tmp/prog"
	if [ ! -s "$tmp/prog" ]; then
		"$bin" -T "$tmp/k.conf" >"$tmp/out" 2>&1
		bad "intspect.conf.5: no '; known: ' list of report functions" "$tmp/out"
	else
		page_keys "report functions" | sed 's/(.*//' | sort -u >"$tmp/page"
		compare "intspect.conf.5: report functions" "$tmp/page" "$tmp/prog"
	fi

	# the examples are configurations intspect -T accepts (files go to
	# $tmp instead of /var/log/intspect)
	awk -v dir="$tmp" '
	/^\.SH[ \t]/ { ex = ($0 ~ /EXAMPLES/) }
	ex && /^\.EX/ { n++; out = dir "/example" n ".conf"; printf "" >out; on = 1; next }
	/^\.EE/ { on = 0 }
	on { print >out }
	' "$conf"
	for e in "$tmp"/example*.conf; do
		[ -f "$e" ] || { bad "intspect.conf.5: no example under EXAMPLES"; break; }
		unroff_ex <"$e" | sed "s|/var/log/intspect/|$tmp/|g" >"$tmp/ex.conf"
		n=${e##*/}
		need=$(grep -o -E '^(redis|kafka)-output' "$tmp/ex.conf" | sed 's/-output//' | sort -u)
		missing=
		for t in $need; do
			"$bin" -V | grep -q "^  $t output" || missing="$missing $t"
		done
		if [ -n "$missing" ]; then
			echo "skip intspect.conf.5: $n: needs$missing, not built in"
			continue
		fi
		if "$bin" -T "$tmp/ex.conf" >"$tmp/out" 2>&1; then
			ok "intspect.conf.5: $n accepted by intspect -T"
		else
			cat "$tmp/ex.conf" >>"$tmp/out"
			bad "intspect.conf.5: $n refused by intspect -T" "$tmp/out"
		fi
	done
fi

# ---- 3. intspect.8, intgen.1: the options of --help ----

for pair in "intspect.8 $bin" "intgen.1 $gen" "intspect-ctl.1 $ctl"; do
	p=${pair%% *}
	prog=${pair#* }
	f=$mandir/$p
	[ -f "$f" ] || continue
	# --help: the usage line's words and each option line's first column
	# (two spaces, a dash; the description follows two spaces)
	"$prog" --help 2>&1 | sed -n -e 's/^[Uu]sage: [^ ]* //p' -e 's/^  \(-.*\)/\1/p' |
		sed 's/  .*//' | option_words >"$tmp/help"
	if [ ! -s "$tmp/help" ]; then
		bad "$p: no option in '$prog --help'"
		continue
	fi
	tags "$f" | awk -F '\t' '$1 == "options" { print $3 }' | unroff | option_words >"$tmp/page"
	# in the page only: the program must accept it (getopt knows it)
	comm -23 "$tmp/page" "$tmp/help" >"$tmp/extra"
	: >"$tmp/unknown"
	while read -r o; do
		"$prog" "$o" </dev/null >/dev/null 2>"$tmp/o.err"
		if grep -q -E 'unrecognized option|invalid option' "$tmp/o.err"; then
			echo "$o" >>"$tmp/unknown"
		elif case $o in --*) awk -v o="$o" 'index($0, o) == 1 { f = 1 } END { exit !f }' \
				"$tmp/help" ;; *) false ;; esac; then
			# getopt_long takes an abbreviation: --unavail is
			# --unavailable, yet a misspelling on the page
			echo "$o (an abbreviation)" >>"$tmp/unknown"
		fi
	done <"$tmp/extra"
	comm -13 "$tmp/page" "$tmp/help" >"$tmp/missing"
	if [ -s "$tmp/missing" ] || [ -s "$tmp/unknown" ]; then
		{
			[ -s "$tmp/missing" ] && echo "in --help, not under OPTIONS:" &&
				sed 's/^/    /' "$tmp/missing"
			[ -s "$tmp/unknown" ] && echo "under OPTIONS, refused by the program:" &&
				sed 's/^/    /' "$tmp/unknown"
		} >"$tmp/diff"
		bad "$p: options" "$tmp/diff"
	else
		ok "$p: the $(wc -l <"$tmp/help" | tr -d ' ') options of --help$( [ -s "$tmp/extra" ] && echo ", and $(tr '\n' ' ' <"$tmp/extra")")"
	fi
done

summary man
