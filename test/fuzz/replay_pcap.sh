#!/bin/sh
# Replay the capture-file corpus (test/fuzz/corpus/pcap: the test captures
# and what the campaign found) through the file readers and the dissector
# (test/fuzz/fuzz_pcap.c with the replay main).
src=${top_srcdir:-${srcdir:-.}}
build=${top_builddir:-.}
FUZZ_REPLAY=$build/test/fuzz/fuzz_pcap_replay FUZZ_CORPUS=$src/test/fuzz/corpus/pcap \
	exec sh "$src/test/fuzz/replay_corpus.sh" "$@"
