#!/bin/sh
# Replay the DTA seed corpus (test/fuzz/corpus/dta) through
# test/fuzz/fuzz_dta.c with the replay main, the same way as the
# dissector's corpus.
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
FUZZ_REPLAY=${FUZZ_DTA_REPLAY:-$build/test/fuzz/fuzz_dta_replay} \
FUZZ_CORPUS=$src/test/fuzz/corpus/dta \
	exec sh "$src/test/fuzz/replay_corpus.sh" "$@"
