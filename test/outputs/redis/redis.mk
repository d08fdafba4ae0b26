# test/outputs/redis/redis.mk - the Redis channel type (outputs/redis.c,
# built when configure finds hiredis) and its tests against a real
# redis-server: test/outputs/redis/run.sh (skips when redis-server is not
# installed) and the C check it runs, and test/outputs/redis/tls.sh (TLS,
# with OpenSSL). Included from the top-level
# Makefile.am after test/outputs/outputs.mk; paths are from the top.
if HAVE_HIREDIS
libispout_la_SOURCES += outputs/redis.c outputs/redis_open.c outputs/redis_int.h outputs/redis_tls.h
libispout_la_LIBADD += $(HIREDIS_LIBS)
libispout_la_CFLAGS += $(HIREDIS_CFLAGS)
if HAVE_OPENSSL
libispout_la_SOURCES += outputs/redis_tls.c
libispout_la_LIBADD += $(OPENSSL_LIBS)
libispout_la_CFLAGS += $(OPENSSL_CFLAGS)
endif
check_PROGRAMS += test/outputs/redis/check_redis
test_outputs_redis_check_redis_SOURCES = test/outputs/redis/check_redis.c \
	test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_redis_check_redis_CFLAGS = $(AM_CFLAGS) $(HIREDIS_CFLAGS) -pthread
test_outputs_redis_check_redis_LDADD = libispout.la $(HIREDIS_LIBS) -lpthread
TESTS += test/outputs/redis/run.sh test/outputs/redis/tls.sh
endif
EXTRA_DIST += test/outputs/redis/run.sh test/outputs/redis/tls.sh test/outputs/redis/outage.sh \
	test/outputs/redis/slowcat.py \
	test/services/redis.sh test/services/lib.sh bench/redis.sh
