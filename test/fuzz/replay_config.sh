#!/bin/sh
# Replay the config-parser seed corpus (test/fuzz/corpus/config) through
# test/fuzz/fuzz_config.c with the replay main, the same way as the
# dissector's corpus.
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
FUZZ_REPLAY=${FUZZ_CONFIG_REPLAY:-$build/test/fuzz/fuzz_config_replay} \
FUZZ_CORPUS=$src/test/fuzz/corpus/config \
	exec sh "$src/test/fuzz/replay_corpus.sh" "$@"
