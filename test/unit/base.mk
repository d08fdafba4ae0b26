# test/unit/base.mk - Check unit tests of the base protocol plugins, on
# packets built byte by byte (pktbuild.c). Included from the top-level
# Makefile.am; paths are relative to the top directory.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_base test/unit/check_base_l4 test/unit/check_base_link
TESTS += test/unit/check_base test/unit/check_base_l4 test/unit/check_base_link
test_unit_check_base_SOURCES = test/unit/check_base.c test/unit/basetest.h \
	test/unit/pktbuild.c test/unit/pktbuild.h
test_unit_check_base_l4_SOURCES = test/unit/check_base_l4.c test/unit/basetest.h \
	test/unit/pktbuild.c test/unit/pktbuild.h
test_unit_check_base_l4_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_base_l4_LDADD = libispcore.la $(PCAP_LIBS) $(CHECK_LIBS)
test_unit_check_base_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_base_LDADD = libispcore.la $(PCAP_LIBS) $(CHECK_LIBS)
test_unit_check_base_link_SOURCES = test/unit/check_base_link.c test/unit/basetest.h \
	test/unit/pktbuild.c test/unit/pktbuild.h
test_unit_check_base_link_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_base_link_LDADD = libispcore.la $(PCAP_LIBS) $(CHECK_LIBS)
endif
