# doc/man/man.mk - manual pages (included from Makefile.am).
