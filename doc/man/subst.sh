#!/bin/sh
# subst.sh SYSCONFDIR PKGLIBDIR DOCDIR VERSION PAGE.in: the page with the
# installation's directories and version, on standard output.
#
# A break point (\:) follows each slash of a directory: a long prefix
# (make distcheck's staging one, a deep --prefix) must leave groff a line
# it can break. Used by man.mk to make the pages and by test/doc/man.sh to
# render them under prefixes of every length.
set -eu
brk() { printf %s "$1" | sed 's|/|/\\\\:|g'; }
sed -e "s|@sysconfdir[@]|$(brk "$1")|g" \
    -e "s|@pkglibdir[@]|$(brk "$2")|g" \
    -e "s|@docdir[@]|$(brk "$3")|g" \
    -e "s|@PACKAGE_VERSION[@]|$4|g" "$5"
