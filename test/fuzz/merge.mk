# test/fuzz/merge.mk - fuzz target for the merge stage (src/filters/pmerge.c,
# src/filters/partial.c: partial windows read back and merged). Included
# from test/Makefile.inc after dta.mk; paths are relative to the top
# directory.
#
# test/fuzz/fuzz_merge_replay: the target with the replay main of
# fuzz_main.c, built for `make check`, which runs it over corpus/merge.
# `make fuzz` also builds test/fuzz/fuzz_merge: with --enable-fuzztargets
# a libFuzzer binary whose copies of the merge and of the partial reader
# are coverage-instrumented (the rest comes from the library).

check_PROGRAMS += test/fuzz/fuzz_merge_replay
test_fuzz_fuzz_merge_replay_SOURCES = test/fuzz/fuzz_merge.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_merge_replay_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_merge_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
test_fuzz_fuzz_merge_replay_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread

TESTS += test/fuzz/replay_merge.sh
EXTRA_DIST += test/fuzz/replay_merge.sh test/fuzz/corpus/merge

if HAVE_LIBFUZZER
noinst_PROGRAMS += test/fuzz/fuzz_merge
test_fuzz_fuzz_merge_SOURCES = test/fuzz/fuzz_merge.c src/filters/pmerge.c src/filters/partial.c
test_fuzz_fuzz_merge_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_merge_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) -fsanitize=fuzzer-no-link
test_fuzz_fuzz_merge_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
test_fuzz_fuzz_merge_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread
else
check_PROGRAMS += test/fuzz/fuzz_merge
test_fuzz_fuzz_merge_SOURCES = test/fuzz/fuzz_merge.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_merge_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_merge_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
test_fuzz_fuzz_merge_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread
endif

fuzz: test/fuzz/fuzz_merge
