#!/bin/sh
# Replay the control-request seed corpus (test/fuzz/corpus/control) through
# test/fuzz/fuzz_control.c with the replay main, the same way as the
# dissector's corpus.
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
FUZZ_REPLAY=${FUZZ_CONTROL_REPLAY:-$build/test/fuzz/fuzz_control_replay} \
FUZZ_CORPUS=$src/test/fuzz/corpus/control \
	exec sh "$src/test/fuzz/replay_corpus.sh" "$@"
