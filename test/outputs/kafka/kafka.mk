# test/outputs/kafka/kafka.mk - channel type "kafka" (outputs/kafka.c, a
# librdkafka producer) and its tests. Include after test/outputs/outputs.mk
# (it adds to libispout.la); paths are relative to the top directory.
#
#   check_kafka   keys, errors with line:col, dead broker accounting,
#                 librdkafka's in-process mock cluster, the channel layer's
#                 lost-after-delivery hook, a fatal producer error (the
#                 producer replaced) (no broker, no java)
#   run.sh        against a real Kafka broker (test/services/kafka.sh);
#                 skipped (77) without java
if HAVE_RDKAFKA
libispout_la_SOURCES += outputs/kafka.c
libispout_la_LIBADD += $(RDKAFKA_LIBS)
libispout_la_CFLAGS += $(RDKAFKA_CFLAGS)

if HAVE_CHECK
check_PROGRAMS += test/outputs/kafka/check_kafka
TESTS += test/outputs/kafka/check_kafka
test_outputs_kafka_check_kafka_SOURCES = test/outputs/kafka/check_kafka.c \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_kafka_check_kafka_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_kafka_check_kafka_LDADD = libispout.la $(CHECK_LIBS) -lpthread
# to hold the channel's producer (a fabricated fatal error)
test_outputs_kafka_check_kafka_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=rd_kafka_new
endif

TESTS += test/outputs/kafka/run.sh
endif
EXTRA_DIST += test/outputs/kafka test/services/kafka.sh test/services/kafka \
	bench/kafka.sh
