#!/bin/sh
# Replay the fuzz seed corpus through the dissector and every attribute
# getter (test/fuzz/fuzz_dissect.c with the replay main). Run by `make check`
# from the top build directory; the corpus is found through $top_srcdir
# (AM_TESTS_ENVIRONMENT) or $srcdir (the automake test driver), so VPATH
# builds work. Extra arguments (files, directories) are replayed too.
# FUZZ_REPLAY and FUZZ_CORPUS select another target (replay_config.sh).
set -e
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
replay=${FUZZ_REPLAY:-$build/test/fuzz/fuzz_dissect_replay}
corpus=${FUZZ_CORPUS:-$src/test/fuzz/corpus/dissect}

if [ ! -x "$replay" ]; then
	echo "replay_corpus.sh: $replay not built (make check builds it)" >&2
	exit 99     # hard error for the automake test driver
fi
if [ ! -d "$corpus" ]; then
	echo "replay_corpus.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$replay" "$corpus" "$@"
