#!/bin/sh
# Replay the merge seed corpus (test/fuzz/corpus/merge) through
# test/fuzz/fuzz_merge.c with the replay main, the same way as the
# dissector's corpus.
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
FUZZ_REPLAY=${FUZZ_MERGE_REPLAY:-$build/test/fuzz/fuzz_merge_replay} \
FUZZ_CORPUS=$src/test/fuzz/corpus/merge \
	exec sh "$src/test/fuzz/replay_corpus.sh" "$@"
