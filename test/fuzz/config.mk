# test/fuzz/config.mk - fuzz target for the rule language (dsl/). Included
# from the top-level Makefile.am after fuzz.mk; paths are relative to the
# top directory.
#
# test/fuzz/fuzz_config_replay: the target with the replay main() of
# fuzz_main.c, always built for `make check`, which runs it over
# corpus/config (under ASan and UBSan when configured with
# --enable-sanitizers).
#
# `make fuzz` also builds test/fuzz/fuzz_config: with --enable-fuzztargets
# (clang) a libFuzzer binary whose own copy of the core, the plugins, the
# dsl sources and the generated scanner and parser is coverage-instrumented;
# otherwise the same replay program under the fuzzer's name.

FUZZ_CONFIG_CPPFLAGS = $(AM_CPPFLAGS) -I$(srcdir)/dsl -Idsl

check_PROGRAMS += test/fuzz/fuzz_config_replay
test_fuzz_fuzz_config_replay_SOURCES = test/fuzz/fuzz_config.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_config_replay_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_config_replay_LDADD = libispcore.la $(PCAP_LIBS)

TESTS += test/fuzz/replay_config.sh
EXTRA_DIST += test/fuzz/replay_config.sh test/fuzz/corpus/config

if HAVE_LIBFUZZER
# libispcore and libispdslgen are built without coverage instrumentation,
# so the fuzzer compiles their sources again with it: the dsl sources, the
# expression trees they build (src/filters/expr.c), the registry they look
# attributes up in, and the scanner and parser generated for libispdslgen
# (dsl/parser.c and dsl/lexer.c in the build tree, hence nodist).
noinst_PROGRAMS += test/fuzz/fuzz_config
test_fuzz_fuzz_config_SOURCES = test/fuzz/fuzz_config.c $(CORE_SOURCES) $(CORE_KAFKA) $(PLUGIN_SOURCES) \
	$(DSL_SOURCES) src/filters/expr.c src/filters/expr.h src/filters/agg.c src/filters/agg.h \
	src/filters/qsketch.c src/filters/qsketch.h src/filters/table.c src/filters/table.h
nodist_test_fuzz_fuzz_config_SOURCES = dsl/parser.c dsl/lexer.c
test_fuzz_fuzz_config_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_config_CFLAGS = $(libispdslgen_la_CFLAGS) $(RDKAFKA_CFLAGS) -fsanitize=fuzzer-no-link
test_fuzz_fuzz_config_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
test_fuzz_fuzz_config_LDADD = $(DPDK_LIB) $(PCAP_LIBS) $(XXHASH_LIBS) $(CORE_KAFKA_LIBS) -lm -lpthread
# the fuzzer's own dsl/parse.c and dsl/lexer.c include the generated
# parser.h, which BUILT_SOURCES does not make for `make fuzz`
$(test_fuzz_fuzz_config_OBJECTS): dsl/parser.h
else
check_PROGRAMS += test/fuzz/fuzz_config
test_fuzz_fuzz_config_SOURCES = test/fuzz/fuzz_config.c test/fuzz/fuzz_main.c
test_fuzz_fuzz_config_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_config_CFLAGS = $(AM_CFLAGS)
test_fuzz_fuzz_config_LDFLAGS = $(AM_LDFLAGS)
test_fuzz_fuzz_config_LDADD = libispcore.la $(PCAP_LIBS)
endif

fuzz: test/fuzz/fuzz_config
