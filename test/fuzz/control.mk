# test/fuzz/control.mk - fuzz target for the control socket's requests
# (src/control/commands.c). Included from the top-level Makefile.am after
# config.mk; paths are relative to the top directory.
#
# test/fuzz/fuzz_control_replay: the target with the replay main of
# fuzz_main.c, built for `make check`, which runs it over corpus/control.
# `make fuzz` also builds test/fuzz/fuzz_control: with --enable-fuzztargets
# a libFuzzer binary whose copy of the command handler is
# coverage-instrumented (the rest comes from the libraries).

check_PROGRAMS += test/fuzz/fuzz_control_replay
test_fuzz_fuzz_control_replay_SOURCES = test/fuzz/fuzz_control.c test/fuzz/fuzz_main.c \
	src/control/commands.c src/control/server.c
test_fuzz_fuzz_control_replay_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_control_replay_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
test_fuzz_fuzz_control_replay_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) \
	-lpthread

TESTS += test/fuzz/replay_control.sh
EXTRA_DIST += test/fuzz/replay_control.sh test/fuzz/corpus/control

if HAVE_LIBFUZZER
noinst_PROGRAMS += test/fuzz/fuzz_control
test_fuzz_fuzz_control_SOURCES = test/fuzz/fuzz_control.c src/control/commands.c \
	src/control/server.c
test_fuzz_fuzz_control_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_control_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS) -fsanitize=fuzzer-no-link
test_fuzz_fuzz_control_LDFLAGS = $(AM_LDFLAGS) -fsanitize=fuzzer
test_fuzz_fuzz_control_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread
else
check_PROGRAMS += test/fuzz/fuzz_control
test_fuzz_fuzz_control_SOURCES = test/fuzz/fuzz_control.c test/fuzz/fuzz_main.c \
	src/control/commands.c src/control/server.c
test_fuzz_fuzz_control_CPPFLAGS = $(FUZZ_CONFIG_CPPFLAGS)
test_fuzz_fuzz_control_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
test_fuzz_fuzz_control_LDADD = libispcore.la libispout.la $(PCAP_LIBS) $(JANSSON_LIBS) -lpthread
endif

fuzz: test/fuzz/fuzz_control
