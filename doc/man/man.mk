# doc/man/man.mk - manual pages (included from Makefile.am).
#
# The pages are written as doc/man/*.in and made at build time with the
# installation's directories and version (subst.sh). test/doc/man.sh checks them: mandoc
# and groff find nothing to say, and the configuration keys, report
# functions and command-line options they describe are those the
# programs accept, asked of the programs themselves.

MAN_IN = doc/man/intspect.8.in doc/man/intspect.conf.5.in doc/man/intgen.1.in \
	doc/man/intspect-ctl.1.in
man_MANS = doc/man/intspect.8 doc/man/intspect.conf.5 doc/man/intgen.1 doc/man/intspect-ctl.1
EXTRA_DIST += $(MAN_IN) doc/man/subst.sh test/doc/man.sh doc/man/README.md
CLEANFILES += $(man_MANS)
TESTS += test/doc/man.sh

# the installation's directories and version into a page (subst.sh);
# pkglibdir is known to make only, not to configure
man_subst = $(SHELL) $(srcdir)/doc/man/subst.sh '$(sysconfdir)' '$(pkglibdir)' '$(docdir)' '$(PACKAGE_VERSION)'

doc/man/intspect.8: $(srcdir)/doc/man/intspect.8.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc/man && \
	$(man_subst) $(srcdir)/doc/man/intspect.8.in >$@.tmp && mv $@.tmp $@
doc/man/intspect.conf.5: $(srcdir)/doc/man/intspect.conf.5.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc/man && \
	$(man_subst) $(srcdir)/doc/man/intspect.conf.5.in >$@.tmp && mv $@.tmp $@
doc/man/intgen.1: $(srcdir)/doc/man/intgen.1.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc/man && \
	$(man_subst) $(srcdir)/doc/man/intgen.1.in >$@.tmp && mv $@.tmp $@
doc/man/intspect-ctl.1: $(srcdir)/doc/man/intspect-ctl.1.in Makefile
	$(AM_V_GEN)$(MKDIR_P) doc/man && \
	$(man_subst) $(srcdir)/doc/man/intspect-ctl.1.in >$@.tmp && mv $@.tmp $@
