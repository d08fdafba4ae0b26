#!/bin/sh
# The Debian package (debian/), built from a clean copy of the tree:
#
#  1. dpkg-buildpackage builds the source and the binary package (the
#     source too, so that lintian also checks debian/ itself), without the
#     test suite (nocheck).
#  2. lintian reports no error and no warning (information tags and
#     overridden ones, each justified in its overrides file, are printed).
#  3. The .deb holds the programs, the plugins, the manual pages, both
#     systemd units, the documentation the manual pages name, and
#     /etc/intspect/intspect.conf as a conffile; Redis and Kafka are built
#     in, DPDK is not.
#  4. Installed with dpkg -i: the installed program runs, checks the
#     installed configuration, and decodes with the installed plugins
#     alone; the units pass systemd-analyze verify and are not enabled;
#     man finds the pages. dpkg -r keeps the conffile, dpkg -P leaves
#     nothing behind (the service's log directory included).
#
#   sh test/dist/package.sh [TREE]       (TREE: the source tree, default .)
#
# Exit 77 (skipped) when not root (dpkg -i) or without dpkg-buildpackage,
# debhelper, lintian or fakeroot. When a package named intspect is already
# on the machine, part 4 is skipped rather than replace it. The package is
# never left installed, and the copy and the built files are removed.
set -u
top=$(cd "${1:-.}" && pwd) || exit 99
. "$top/test/tools/checks.sh"
check() { name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
finish() {
	echo "package: took $(($(date +%s) - start)) s"
	echo "package: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
	exit
}

for c in dpkg-buildpackage dpkg-deb dh lintian fakeroot; do
	command -v "$c" >/dev/null 2>&1 || {
		echo "package: $c is not installed (Debian: dpkg-dev, debhelper, lintian, fakeroot): skipped"
		exit 77
	}
done
[ "$(id -u)" -eq 0 ] || { echo "package: dpkg -i needs root: skipped"; exit 77; }
[ -f "$top/debian/changelog" ] || { echo "package: no $top/debian/changelog" >&2; exit 99; }

start=$(date +%s)
version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
tmp=$(mktemp -d)
installed=""
logs_made=""
cleanup() {
	[ -n "$installed" ] && dpkg -P intspect >/dev/null 2>&1
	if [ -n "$logs_made" ]; then
		rm -rf /var/log/intspect /var/log/private/intspect
		[ "$logs_made" = private ] && rmdir /var/log/private 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- 1. build from a clean copy ----
# A git tree gives its files, new ones included, and nothing it ignores
# (no build/, no generated file); otherwise everything but build/ and .git.
src=$tmp/intspect-$version
mkdir "$src"
if [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
	git -C "$top" ls-files --cached --others --exclude-standard |
		(cd "$top" && while IFS= read -r f; do [ -e "$f" ] && printf '%s\n' "$f"; done) |
		(cd "$top" && tar -cf - -T -) | tar -xf - -C "$src"
else
	(cd "$top" && tar -cf - --exclude=./build --exclude=./.git .) | tar -xf - -C "$src"
fi
if (cd "$src" && dpkg-checkbuilddeps) >"$tmp/deps" 2>&1; then
	ok "build dependencies installed"
else
	bad "build dependencies" "$tmp/deps"
	finish
fi
if (cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc 2>/dev/null || echo 2)" \
    dpkg-buildpackage -us -uc) >"$tmp/build.log" 2>&1; then
	ok "dpkg-buildpackage -us -uc ($(($(date +%s) - start)) s)"
else
	# the errors (compiler, make, debhelper), else the end of the log
	grep -E -A3 'error:|\*\*\*' "$tmp/build.log" | head -40 >"$tmp/build.tail"
	[ -s "$tmp/build.tail" ] || tail -25 "$tmp/build.log" >"$tmp/build.tail"
	bad "dpkg-buildpackage -us -uc" "$tmp/build.tail"
	finish
fi
deb=$tmp/intspect_${version}_$arch.deb
changes=$tmp/intspect_${version}_$arch.changes
check "intspect_${version}_$arch.deb built" test -f "$deb"
[ -f "$deb" ] || finish

# ---- 2. lintian ----
# (N: lines are the overrides' comments, shown with each overridden tag)
lintian --fail-on none --display-info --show-overrides "$changes" >"$tmp/lintian.out" 2>"$tmp/lintian.err"
status=$?
grep -E '^[A-MO-Z]: ' "$tmp/lintian.out" >"$tmp/lintian"
echo "lintian $(lintian --version | sed 's/^Lintian v//'):"
sed 's/^/  | /' "$tmp/lintian"
if [ "$status" -ne 0 ]; then
	bad "lintian ran (exit $status)" "$tmp/lintian.err"
elif grep -E '^[EW]: ' "$tmp/lintian" >"$tmp/lintian.ew"; then
	bad "lintian: $(wc -l <"$tmp/lintian.ew" | tr -d ' ') errors and warnings" "$tmp/lintian.ew"
else
	ok "lintian: no error, no warning ($(grep -c '^O: ' "$tmp/lintian") overridden, $(grep -c '^I: ' "$tmp/lintian") information)"
fi

# ---- 3. what the package holds ----
dpkg-deb -c "$deb" | awk '{ sub(/^\./, "", $6); print $6 }' >"$tmp/contents"
has() { grep -qx "$1" "$tmp/contents"; }
missing=
for f in /usr/bin/intspect /usr/bin/intgen /etc/intspect/intspect.conf \
	 /usr/share/man/man8/intspect.8.gz /usr/share/man/man5/intspect.conf.5.gz \
	 /usr/share/man/man1/intgen.1.gz \
	 /usr/share/doc/intspect/copyright /usr/share/doc/intspect/README.Debian \
	 /usr/share/doc/intspect/README.md /usr/share/doc/intspect/examples/mmt-probe.conf; do
	has "$f" || missing="$missing $f"
done
check "programs, default configuration, manual pages, documentation${missing:+ (missing:$missing)}" \
	test -z "$missing"
unitdir=
for d in /lib/systemd/system /usr/lib/systemd/system; do
	has "$d/intspect.service" && unitdir=$d
done
check "systemd units intspect.service and intspect@.service${unitdir:+ in $unitdir}" \
	eval 'test -n "$unitdir" && has "$unitdir/intspect@.service"'
plugdir=/usr/lib/$multiarch/intspect
missing=
for p in ethernet sll sll2 raw null loop vlan ipv4 ipv6 udp tcp vxlan vxlan_gpe geneve gre int int_report \
	dta; do
	has "$plugdir/$p.so" || missing="$missing $p.so"
done
check "the 18 protocol plugins in $plugdir${missing:+ (missing:$missing)}" test -z "$missing"
check "the DTA stores' reader header /usr/include/intspect/dta_store.h" has /usr/include/intspect/dta_store.h
check "no libtool archive, nothing under /usr/local" eval '! grep -q -e "\.la$" -e "^/usr/local" "$tmp/contents"'
# the manual pages name these by their installed paths
zcat_page() { dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ".$1" | gzip -dc; }
# (without the break points, \:, the pages put after each slash)
zcat_page /usr/share/man/man8/intspect.8.gz | sed 's/\\://g' >"$tmp/intspect.8" 2>/dev/null
sed -n 's|.*\(/usr/share/doc/intspect/[A-Za-z0-9_.\\-]*\).*|\1|p' "$tmp/intspect.8" |
	sed 's/\\-/-/g' | sort -u >"$tmp/named"
missing=
while read -r f; do has "$f" || has "${f%/}/" || missing="$missing $f"; done <"$tmp/named"
check "the files intspect(8) names under /usr/share/doc/intspect are there, uncompressed ($(wc -l <"$tmp/named" | tr -d ' '))" \
	eval 'test -s "$tmp/named" && test -z "$missing"'
check "intspect(8) names the plugin directory $plugdir" grep -q "$plugdir" "$tmp/intspect.8"
dpkg-deb -f "$deb" Depends >"$tmp/depends"
check "Depends: libhiredis and librdkafka (Redis and Kafka built in), no DPDK library" \
	eval 'grep -q libhiredis "$tmp/depends" && grep -q librdkafka "$tmp/depends" && ! grep -q -e dpdk -e librte "$tmp/depends"'
dpkg-deb -I "$deb" conffiles >"$tmp/conffiles" 2>/dev/null
check "conffiles: /etc/intspect/intspect.conf" grep -qx /etc/intspect/intspect.conf "$tmp/conffiles"

# ---- 4. install, run, remove, purge ----
if dpkg-query -W -f='${Status}' intspect >/dev/null 2>&1; then
	echo "skip install, remove and purge: a package named intspect is already on this machine" \
		"($(dpkg-query -W -f='${Version} ${Status}' intspect))"
	finish
fi
installed=yes
if dpkg -i "$deb" >"$tmp/install" 2>&1; then
	ok "dpkg -i"
else
	bad "dpkg -i (dependencies: $(cat "$tmp/depends"))" "$tmp/install"
	finish
fi
check "dpkg -s: install ok installed" eval \
	'[ "$(dpkg-query -W -f="\${Status}" intspect)" = "install ok installed" ]'
# /usr/bin/intspect by name: an intspect installed under /usr/local comes
# first in PATH
bin=/usr/bin/intspect
$bin -V >"$tmp/version" 2>&1
check "intspect -V: $(head -1 "$tmp/version")" grep -qx "intspect $version" "$tmp/version"
check "intspect -V: redis and kafka outputs built in" \
	eval 'grep -q "^  redis output: hiredis" "$tmp/version" && grep -q "^  kafka output: librdkafka" "$tmp/version"'
$bin -T /etc/intspect/intspect.conf >"$tmp/T" 2>&1
if grep -q ': ok$' "$tmp/T"; then
	ok "intspect -T /etc/intspect/intspect.conf: ok"
else
	bad "intspect -T /etc/intspect/intspect.conf" "$tmp/T"
fi
n=$($bin --no-builtin --list-protocols 2>/dev/null | grep -c '^[a-z_0-9]* *plugin ')
check "intspect --no-builtin --list-protocols: $n protocols from the installed plugins, 18 expected" \
	test "$n" -eq 18
pcap=$top/test/data/int-v2.1-md-udp.pcap
$bin -r "$pcap" --dump >"$tmp/builtin.json" 2>/dev/null
$bin --no-builtin -r "$pcap" --dump >"$tmp/plugins.json" 2>"$tmp/plugins.err"
if grep -q '"int\.' "$tmp/plugins.json" && cmp -s "$tmp/builtin.json" "$tmp/plugins.json"; then
	ok "intspect --no-builtin decodes with the installed plugins, as the built-ins do"
else
	bad "intspect --no-builtin -r $pcap --dump: not the built-ins' decode" "$tmp/plugins.err"
fi

# the template as an instance: a template alone is not a unit systemd loads
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir "$tmp/units"
	cp "$unitdir/intspect.service" "$tmp/units/"
	cp "$unitdir/intspect@.service" "$tmp/units/intspect@probe.service"
	for u in intspect.service intspect@probe.service; do
		if (cd "$tmp/units" && SYSTEMD_LOG_COLOR=0 systemd-analyze verify "./$u") \
		    >"$tmp/verify" 2>&1 && [ ! -s "$tmp/verify" ]; then
			ok "$u as installed: systemd-analyze verify"
		else
			bad "$u as installed: systemd-analyze verify" "$tmp/verify"
		fi
	done
else
	echo "skip systemd-analyze verify: systemd-analyze is not installed"
fi
# neither enabled nor started: no link in a .wants directory, and (when
# systemctl can read the unit files here) "disabled"
links=$(find /etc/systemd/system -path '*.wants/intspect*' 2>/dev/null)
check "no link to the units in /etc/systemd/system/*.wants${links:+: $links}" test -z "$links"
if enabled=$(systemctl is-enabled intspect.service 2>/dev/null) || [ -n "$enabled" ]; then
	check "systemctl is-enabled intspect: $enabled" test "$enabled" = disabled
fi
# shellcheck disable=SC2010
check "no process of /usr/bin/intspect running" eval '! ls -l /proc/[0-9]*/exe 2>/dev/null | grep -q " /usr/bin/intspect$"'
if ! command -v man >/dev/null 2>&1; then
	echo "skip man -w: man is not installed"
elif grep -qs '^path-exclude.*/usr/share/man' /etc/dpkg/dpkg.cfg.d/*; then
	echo "skip man -w: dpkg is told not to install manual pages here (/etc/dpkg/dpkg.cfg.d)"
else
	for p in 8:intspect 5:intspect.conf 1:intgen; do
		sec=${p%%:*} page=${p#*:}
		found=$(man -w "$sec" "$page" 2>/dev/null)
		check "man -w $sec $page: $found" test "$found" = "/usr/share/man/man$sec/$page.$sec.gz"
	done
fi

# the service's log directory, as systemd makes it for a DynamicUser unit
# (only when this machine has none, so that nothing of its own is touched)
if [ ! -e /var/log/intspect ] && [ ! -e /var/log/private/intspect ]; then
	logs_made=yes
	[ -d /var/log/private ] || { mkdir -m 0700 /var/log/private && logs_made=private; }
	mkdir /var/log/private/intspect && echo '{}' >/var/log/private/intspect/records.json &&
		ln -s private/intspect /var/log/intspect
fi

echo '# kept on remove' >>/etc/intspect/intspect.conf
dpkg -r intspect >"$tmp/remove" 2>&1
check "dpkg -r" eval '[ "$(dpkg-query -W -f="\${Status}" intspect 2>/dev/null)" = "deinstall ok config-files" ]'
gone=
for f in /usr/bin/intspect /usr/bin/intgen "$plugdir" "$unitdir/intspect.service" \
	 "$unitdir/intspect@.service" /usr/share/man/man8/intspect.8.gz /usr/share/doc/intspect; do
	[ -e "$f" ] && gone="$gone $f"
done
check "dpkg -r: programs, plugins, units, manual pages and documentation gone${gone:+ (left:$gone)}" \
	test -z "$gone"
check "dpkg -r: the (changed) conffile stays" grep -q '^# kept on remove' /etc/intspect/intspect.conf
dpkg -P intspect >"$tmp/purge" 2>&1
installed=""
check "dpkg -P: dpkg no longer knows intspect (dpkg -L fails)" eval '! dpkg -L intspect >/dev/null 2>&1'
check "dpkg -P: /etc/intspect gone" test ! -e /etc/intspect
left=$(ls -d /usr/lib/*/intspect /usr/lib/intspect /var/lib/systemd/deb-systemd-helper-enabled/intspect* \
	/var/lib/systemd/deb-systemd-helper-masked/intspect* 2>/dev/null)
check "dpkg -P: no plugin directory, no systemd helper state${left:+ (left: $left)}" test -z "$left"
if [ -n "$logs_made" ]; then
	check "dpkg -P: the service's log directory (/var/log/intspect, /var/log/private/intspect) gone" \
		eval '[ ! -e /var/log/intspect ] && [ ! -L /var/log/intspect ] && [ ! -e /var/log/private/intspect ]'
else
	echo "skip the log directory on purge: /var/log/intspect already exists on this machine"
fi

finish
