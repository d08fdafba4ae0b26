# test/outputs/prometheus/prometheus.mk - the "prometheus" channel type
# (outputs/prometheus*.c: series from line-protocol records, the program's
# counters, an HTTP endpoint; no library) and its tests: check_prometheus
# (Check, through the channel API: keys, the exposition text of chosen
# records, max-series, expiry, HTTP answers) and run.sh (intspect end to
# end, scraped by a real Prometheus server that test/services/prometheus.sh
# starts, queried with PromQL, and promtool check metrics; skipped without
# prometheus). Included from the top-level Makefile.am after
# test/outputs/outputs.mk; paths from the top directory.
libispout_la_SOURCES += outputs/prometheus.c outputs/prometheus_series.c \
	outputs/prometheus_http.c outputs/prometheus.h outputs/prometheus_int.h

TESTS += test/outputs/prometheus/run.sh
EXTRA_DIST += test/outputs/prometheus/run.sh test/outputs/prometheus/expect.py \
	test/services/prometheus.sh

if HAVE_CHECK
check_PROGRAMS += test/outputs/prometheus/check_prometheus
TESTS += test/outputs/prometheus/check_prometheus
test_outputs_prometheus_check_prometheus_SOURCES = test/outputs/prometheus/check_prometheus.c \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_prometheus_check_prometheus_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_prometheus_check_prometheus_LDADD = libispout.la $(CHECK_LIBS) -lpthread -lm
endif
