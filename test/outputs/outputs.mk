# test/outputs/outputs.mk - the output channel layer (outputs/: channel
# registry and delivery thread, bounded record queue, stdout and file
# channels) and its Check tests. Included from the top-level Makefile.am;
# paths are relative to the top directory.
noinst_LTLIBRARIES += libispout.la
libispout_la_SOURCES = \
	outputs/channel.c outputs/channel.h \
	outputs/queue.c outputs/queue.h outputs/queue_int.h outputs/qrec.h outputs/queue_lease.c \
	outputs/kv.c outputs/kv.h outputs/bytes.h \
	outputs/fdlines.c outputs/fdlines.h \
	outputs/builtin.h \
	outputs/stdout.c outputs/file.c
libispout_la_CFLAGS = $(AM_CFLAGS) $(ZLIB_CFLAGS) -pthread
libispout_la_LIBADD = $(ZLIB_LIBS) -lpthread
EXTRA_DIST += outputs/README.md test/outputs/inplace.sh test/check_run.h
TESTS += test/outputs/inplace.sh

if HAVE_CHECK
check_PROGRAMS += test/outputs/check_queue test/outputs/check_queue_wake test/outputs/check_queue_held \
	test/outputs/check_channel test/outputs/check_file test/outputs/check_file_mmt \
	test/outputs/check_stdout test/outputs/bench_submit
TESTS += test/outputs/check_queue test/outputs/check_queue_wake test/outputs/check_queue_held \
	test/outputs/check_channel \
	test/outputs/check_file test/outputs/check_file_mmt test/outputs/check_stdout
OUTPUTS_TEST_FAKE = test/outputs/fake.c test/outputs/fake.h \
	test/outputs/chantest.c test/outputs/chantest.h \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_check_queue_SOURCES = test/outputs/check_queue.c $(OUTPUTS_TEST_FAKE)
test_outputs_check_queue_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_queue_LDADD = libispout.la $(CHECK_LIBS) -lpthread
test_outputs_check_queue_wake_SOURCES = test/outputs/check_queue_wake.c
test_outputs_check_queue_wake_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_queue_wake_LDADD = libispout.la $(CHECK_LIBS) -lpthread
test_outputs_check_queue_held_SOURCES = test/outputs/check_queue_held.c
test_outputs_check_queue_held_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_queue_held_LDADD = libispout.la $(CHECK_LIBS) -lpthread
test_outputs_check_channel_SOURCES = test/outputs/check_channel.c $(OUTPUTS_TEST_FAKE)
test_outputs_check_channel_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_channel_LDADD = libispout.la $(CHECK_LIBS) -lpthread
test_outputs_check_file_SOURCES = test/outputs/check_file.c test/outputs/tfile.h \
	test/outputs/tcfg.c test/outputs/tcfg.h test/outputs/tcheck.h
test_outputs_check_file_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_file_LDADD = libispout.la $(CHECK_LIBS) -lpthread
test_outputs_check_file_mmt_SOURCES = test/outputs/check_file_mmt.c test/outputs/tfile.h \
	test/outputs/tcfg.c test/outputs/tcfg.h test/outputs/tcheck.h
test_outputs_check_file_mmt_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_file_mmt_LDADD = libispout.la $(CHECK_LIBS) -lpthread
test_outputs_check_stdout_SOURCES = test/outputs/check_stdout.c \
	test/outputs/tcfg.c test/outputs/tcfg.h test/outputs/tcheck.h
test_outputs_check_stdout_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_check_stdout_LDADD = libispout.la $(CHECK_LIBS) -lpthread
# Producer-side cost of submit; built by `make check`, run by hand.
test_outputs_bench_submit_SOURCES = test/outputs/bench_submit.c \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_bench_submit_CFLAGS = $(AM_CFLAGS) -pthread
test_outputs_bench_submit_LDADD = libispout.la -lpthread
endif
