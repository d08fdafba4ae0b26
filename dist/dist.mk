# dist/dist.mk - systemd units and packaging (included from Makefile.am).
#
# The units are made from dist/systemd/*.service.in at build time (the
# paths are make variables, so `make prefix=...` and DESTDIR work) and
# installed into $(systemdsystemunitdir): --with-systemdsystemunitdir=DIR,
# else systemd.pc's, else not installed (configure.ac). debian/ builds the
# Debian package; test/dist/package.sh (a stage of ./setup.sh test, as it
# needs root) builds, lints, installs and purges it.

SYSTEMD_UNITS = dist/systemd/intspect.service dist/systemd/intspect@.service
noinst_DATA = $(SYSTEMD_UNITS)
if INSTALL_SYSTEMD_UNITS
systemdsystemunit_DATA = $(SYSTEMD_UNITS)
endif
CLEANFILES += $(SYSTEMD_UNITS)

edit_unit = $(SED) -e 's|@bindir[@]|$(bindir)|g' -e 's|@sysconfdir[@]|$(sysconfdir)|g'

dist/systemd/intspect.service: $(srcdir)/dist/systemd/intspect.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) dist/systemd && rm -f $@ $@.tmp && \
	$(edit_unit) $(srcdir)/dist/systemd/intspect.service.in >$@.tmp && mv $@.tmp $@
dist/systemd/intspect@.service: $(srcdir)/dist/systemd/intspect@.service.in Makefile
	$(AM_V_GEN)$(MKDIR_P) dist/systemd && rm -f $@ $@.tmp && \
	$(edit_unit) $(srcdir)/dist/systemd/intspect@.service.in >$@.tmp && mv $@.tmp $@

# make distcheck installs into a staging prefix: the units follow it there
# instead of going to systemd.pc's absolute directory. Makefile.am: add
# more flags with += after the include of this file.
AM_DISTCHECK_CONFIGURE_FLAGS = --with-systemdsystemunitdir='$${libdir}/systemd/system'

# systemd-analyze verify and security on the built units
TESTS += test/dist/systemd.sh

EXTRA_DIST += dist/README.md dist/systemd/intspect.service.in dist/systemd/intspect@.service.in \
	test/dist/systemd.sh test/dist/package.sh \
	debian/changelog debian/control debian/copyright debian/rules \
	debian/README.Debian debian/intspect.postrm debian/intspect.prerm \
	debian/intspect.lintian-overrides debian/source/format debian/source/lintian-overrides
