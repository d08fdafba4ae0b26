#!/bin/sh
# Replay the config-parser seed corpus (test/fuzz/corpus/config) through
# test/fuzz/fuzz_config.c with the replay main. Run by `make check` from the
# top build directory; the corpus is found through $top_srcdir
# (AM_TESTS_ENVIRONMENT) or $srcdir (the automake test driver), so VPATH
# builds work. Extra arguments (files, directories) are replayed too.
set -e
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
replay=${FUZZ_CONFIG_REPLAY:-$build/test/fuzz/fuzz_config_replay}
corpus=$src/test/fuzz/corpus/config

if [ ! -x "$replay" ]; then
	echo "replay_config.sh: $replay not built (make check builds it)" >&2
	exit 99     # hard error for the automake test driver
fi
if [ ! -d "$corpus" ]; then
	echo "replay_config.sh: no corpus at $corpus" >&2
	exit 99
fi
exec "$replay" "$corpus" "$@"
