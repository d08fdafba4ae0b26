#!/bin/sh
# test/malformed/run.sh - the generated malformed corpus (malformed.c) over
# every test capture and the fuzz seed frames.
src=${top_srcdir:-.}
bld=${top_builddir:-.}
exec "$bld/test/malformed/malformed" "$src"/test/data/*.pcap "$src"/test/data/*.pcapng \
	"$src/test/fuzz/corpus/dissect"
