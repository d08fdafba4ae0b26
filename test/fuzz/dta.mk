# test/fuzz/dta.mk - fuzz target for the DTA collector and stores
# (src/filters/dta.c, src/plugins/dta/store.c). Included from the
# top-level Makefile.am after control.mk; paths are relative to the top
# directory.
#
# test/fuzz/fuzz_dta_replay: the target with the replay main of
# fuzz_main.c, built for `make check`, which runs it over corpus/dta.
# `make fuzz` also builds test/fuzz/fuzz_dta: with --enable-fuzztargets a
# libFuzzer binary whose copies of the collector, its queries and the
# stores' writers are coverage-instrumented (the rest comes from the
# library; the decoder is fuzz_dissect's).

check_PROGRAMS += test/fuzz/fuzz_dta_replay
test_fuzz_fuzz_dta_replay_SOURCES = test/fuzz/fuzz_dta.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_dta_replay_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_dta_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
test_fuzz_fuzz_dta_replay_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread

TESTS += test/fuzz/replay_dta.sh
EXTRA_DIST += test/fuzz/replay_dta.sh test/fuzz/corpus/dta

if HAVE_LIBFUZZER
noinst_PROGRAMS += test/fuzz/fuzz_dta
test_fuzz_fuzz_dta_SOURCES = test/fuzz/fuzz_dta.c src/filters/dta.c src/filters/dta_query.c \
	src/plugins/dta/store.c
test_fuzz_fuzz_dta_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_dta_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) -fsanitize=fuzzer-no-link
test_fuzz_fuzz_dta_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
test_fuzz_fuzz_dta_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread
else
check_PROGRAMS += test/fuzz/fuzz_dta
test_fuzz_fuzz_dta_SOURCES = test/fuzz/fuzz_dta.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_dta_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_dta_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
test_fuzz_fuzz_dta_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread
endif

fuzz: test/fuzz/fuzz_dta
