# test/outputs/socket/socket.mk - the "socket" channel type (outputs/socket.c)
# and its tests: check_socket (Check: framing, partial writes, bounded waits,
# reconnection, datagram limits, key errors; check_socket_mmt.c: MMT-Probe's
# BOTH and type names, check mode) and run.sh (intspect end to end with real
# readers on loopback). Included from the top-level Makefile.am after
# test/outputs/outputs.mk; paths from the top directory.
libispout_la_SOURCES += outputs/socket.c outputs/socket_open.c outputs/socket_int.h

TESTS += test/outputs/socket/run.sh
EXTRA_DIST += test/outputs/socket/run.sh test/outputs/socket/reader.py \
	test/outputs/socket/feed.py

if HAVE_CHECK
check_PROGRAMS += test/outputs/socket/check_socket
TESTS += test/outputs/socket/check_socket
test_outputs_socket_check_socket_SOURCES = test/outputs/socket/check_socket.c \
	test/outputs/socket/check_socket_mmt.c test/outputs/socket/sockutil.c \
	test/outputs/socket/sockutil.h test/outputs/tcfg.c test/outputs/tcfg.h
test_outputs_socket_check_socket_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS) -pthread
test_outputs_socket_check_socket_LDADD = libispout.la $(CHECK_LIBS) -lpthread
endif
