#!/bin/sh
# test/static/cppcheck.sh - static analysis of every C file (src, outputs,
# dsl, tools, test) with cppcheck's warning, portability and performance
# checks: no finding. A finding that is not one is suppressed where it is,
# with `// cppcheck-suppress ID` under a comment that says why (today:
# src/filters/record.c, a key text kept one byte past its allocation;
# test/outputs/tcfg.c, a returned pointer that is not the local it names;
# outputs/qrec.h, a short literal paired with a branch it never takes).
# Exit 77 (skipped) without cppcheck (Debian: cppcheck).
set -u
src=${top_srcdir:-.}
build=${top_builddir:-.}
command -v cppcheck >/dev/null 2>&1 || { echo "cppcheck not installed (Debian: cppcheck): skipped"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# config.h from the build; the sources with the project's own defines
cppcheck --quiet --enable=warning,portability,performance --std=c11 -D__GNUC__ -D_GNU_SOURCE \
	--inline-suppr -I "$src/src/core" -I "$build" -j2 \
	--template='{file}:{line}: {severity}: {id}: {message}' \
	"$src/src" "$src/outputs" "$src/dsl" "$src/tools" "$src/test" >"$out" 2>&1
rc=$?
n=$(grep -c ': \(error\|warning\|portability\|performance\): ' "$out")
if [ "$rc" -ne 0 ] || [ "$n" -ne 0 ]; then
	cat "$out"
	echo "FAIL cppcheck: $n finding(s)"
	echo "cppcheck: 0 passed, 1 failed"
	exit 1
fi
echo "ok cppcheck $(cppcheck --version | sed 's/Cppcheck //'): no finding in $(find "$src/src" "$src/outputs" "$src/dsl" "$src/tools" "$src/test" -name '*.c' | wc -l) C files"
echo "cppcheck: 1 passed, 0 failed"
