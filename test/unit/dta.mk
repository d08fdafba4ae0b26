# test/unit/dta.mk - Check unit tests of DTA: the stores (store.c writers,
# dta_store.h readers) against models written in the tests (check_dta:
# Key-Write, Append, Key-Increment, shared stores; check_dta_sketch:
# Sketch-Merge; dta_models.h what they share), and the dta decoder
# through the dissector. Included from the top-level Makefile.am;
# paths are relative to the top directory. libispcore.la carries store.c.
if HAVE_CHECK
check_PROGRAMS += test/unit/check_dta test/unit/check_dta_sketch test/unit/check_dta_decode
TESTS += test/unit/check_dta test/unit/check_dta_sketch test/unit/check_dta_decode
test_unit_check_dta_SOURCES = test/unit/check_dta.c test/unit/dta_models.h test/unit/testlib.c \
	test/unit/testlib.h
test_unit_check_dta_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_dta_LDADD = libispcore.la $(PCAP_LIBS) $(CHECK_LIBS) -lm -lpthread
test_unit_check_dta_sketch_SOURCES = test/unit/check_dta_sketch.c test/unit/dta_models.h \
	test/unit/testlib.c test/unit/testlib.h
test_unit_check_dta_sketch_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_dta_sketch_LDADD = libispcore.la $(PCAP_LIBS) $(CHECK_LIBS) -lm
test_unit_check_dta_decode_SOURCES = test/unit/check_dta_decode.c test/unit/testlib.c \
	test/unit/testlib.h
test_unit_check_dta_decode_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
test_unit_check_dta_decode_LDADD = libispcore.la $(PCAP_LIBS) $(CHECK_LIBS)
endif
