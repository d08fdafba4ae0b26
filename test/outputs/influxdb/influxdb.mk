# test/outputs/influxdb/influxdb.mk - the "influxdb" channel type
# (outputs/influxdb*.c: line protocol over HTTP/1.1 or UDP, no library) and
# its tests: check_influxdb (Check, through the channel API against an HTTP
# server inside the test that answers chosen status codes: key errors,
# check mode, 204, 400, 404, 500 then 204, connection refused, max-body,
# UDP datagrams; check_influxdb_answers: the other rows of the README's
# table of answers) and run.sh (intspect end to end against a real influxd
# that test/services/influxdb.sh starts; skipped without influxd).
# Included from the top-level Makefile.am after test/outputs/outputs.mk;
# paths from the top directory.
libispout_la_SOURCES += outputs/influxdb.c outputs/influxdb_http.c \
	outputs/influxdb_open.c outputs/influxdb_int.h

TESTS += test/outputs/influxdb/run.sh test/outputs/influxdb/grafana.sh
EXTRA_DIST += test/outputs/influxdb/run.sh test/outputs/influxdb/compare.py \
	test/outputs/influxdb/grafana.sh \
	test/services/influxdb.sh

if HAVE_CHECK
check_PROGRAMS += test/outputs/influxdb/check_influxdb test/outputs/influxdb/check_influxdb_answers
TESTS += test/outputs/influxdb/check_influxdb test/outputs/influxdb/check_influxdb_answers
test_outputs_influxdb_check_influxdb_SOURCES = test/outputs/influxdb/check_influxdb.c \
	test/outputs/influxdb/ifxtest.c test/outputs/influxdb/ifxtest.h \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_influxdb_check_influxdb_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_influxdb_check_influxdb_LDADD = libispout.la $(CHECK_LIBS) $(ZLIB_LIBS) -lpthread
endif
if HAVE_CHECK
test_outputs_influxdb_check_influxdb_answers_SOURCES = test/outputs/influxdb/check_influxdb_answers.c \
	test/outputs/influxdb/ifxtest.c test/outputs/influxdb/ifxtest.h \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_influxdb_check_influxdb_answers_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_influxdb_check_influxdb_answers_LDADD = libispout.la $(CHECK_LIBS) $(ZLIB_LIBS) -lpthread
endif
