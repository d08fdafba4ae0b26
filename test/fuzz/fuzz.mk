# test/fuzz/fuzz.mk - fuzz targets. Included from the top-level Makefile.am;
# paths are relative to the top directory.
#
# test/fuzz/fuzz_dissect_replay: the target with a replay main(), always
# built for `make check`, which runs it over the seed corpus (under ASan and
# UBSan when configured with --enable-sanitizers).
#
# `make fuzz` builds test/fuzz/fuzz_dissect: with --enable-fuzztargets (clang)
# a libFuzzer binary whose own copy of the decoders is coverage-instrumented;
# otherwise the same replay program under the fuzzer's name.

FUZZ_REPLAY_SOURCES = test/fuzz/fuzz_dissect.c test/fuzz/fuzz_main.c

check_PROGRAMS += test/fuzz/fuzz_dissect_replay
test_fuzz_fuzz_dissect_replay_SOURCES = $(FUZZ_REPLAY_SOURCES)
test_fuzz_fuzz_dissect_replay_LDADD = libispcore.la $(PCAP_LIBS)

TESTS += test/fuzz/replay_corpus.sh
EXTRA_DIST += test/fuzz/replay_corpus.sh test/fuzz/README.md test/fuzz/corpus

if HAVE_LIBFUZZER
# libispcore is built without coverage instrumentation, so the fuzzer
# compiles the core and plugin sources again with it.
noinst_PROGRAMS += test/fuzz/fuzz_dissect
test_fuzz_fuzz_dissect_SOURCES = test/fuzz/fuzz_dissect.c $(CORE_SOURCES) $(CORE_KAFKA) $(PLUGIN_SOURCES)
test_fuzz_fuzz_dissect_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS) -fsanitize=fuzzer-no-link
test_fuzz_fuzz_dissect_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
test_fuzz_fuzz_dissect_LDADD = $(DPDK_LIB) $(PCAP_LIBS) $(XXHASH_LIBS) $(CORE_KAFKA_LIBS) -lm -lpthread
else
check_PROGRAMS += test/fuzz/fuzz_dissect
test_fuzz_fuzz_dissect_SOURCES = $(FUZZ_REPLAY_SOURCES)
test_fuzz_fuzz_dissect_CFLAGS = $(AM_CFLAGS)
test_fuzz_fuzz_dissect_LDFLAGS = $(AM_LDFLAGS)
test_fuzz_fuzz_dissect_LDADD = libispcore.la $(PCAP_LIBS)
endif

.PHONY: fuzz
fuzz: test/fuzz/fuzz_dissect

# test/fuzz/fuzz_pcap: the capture-file readers (pcapmap.c, libpcap through
# source.c) on whole files, each packet dissected. The replay runs over
# corpus/pcap in `make check`; `make fuzz` builds the libFuzzer binary.
check_PROGRAMS += test/fuzz/fuzz_pcap_replay
test_fuzz_fuzz_pcap_replay_SOURCES = test/fuzz/fuzz_pcap.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_pcap_replay_LDADD = libispcore.la $(PCAP_LIBS)
TESTS += test/fuzz/replay_pcap.sh
EXTRA_DIST += test/fuzz/replay_pcap.sh

if HAVE_LIBFUZZER
noinst_PROGRAMS += test/fuzz/fuzz_pcap
test_fuzz_fuzz_pcap_SOURCES = test/fuzz/fuzz_pcap.c $(CORE_SOURCES) $(CORE_KAFKA) $(PLUGIN_SOURCES)
test_fuzz_fuzz_pcap_CFLAGS = $(AM_CFLAGS) $(RDKAFKA_CFLAGS) -fsanitize=fuzzer-no-link
test_fuzz_fuzz_pcap_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
test_fuzz_fuzz_pcap_LDADD = $(DPDK_LIB) $(PCAP_LIBS) $(XXHASH_LIBS) $(CORE_KAFKA_LIBS) -lm -lpthread
else
check_PROGRAMS += test/fuzz/fuzz_pcap
test_fuzz_fuzz_pcap_SOURCES = test/fuzz/fuzz_pcap.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_pcap_CFLAGS = $(AM_CFLAGS)
test_fuzz_fuzz_pcap_LDFLAGS = $(AM_LDFLAGS)
test_fuzz_fuzz_pcap_LDADD = libispcore.la $(PCAP_LIBS)
endif

fuzz: test/fuzz/fuzz_pcap
