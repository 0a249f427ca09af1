#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The Debian packages: dpkg-buildpackage from the tree as a fresh clone
# has it builds the source package and blkbackd, blkbackd-tools,
# blkbackd-rbd, blkbackd-nbd; each package holds exactly the files below
# (blkbackd-ctl and its page too once the tree has it); the installed
# docs name no path that the installed system lacks; lintian reports
# nothing on the source and the binaries, at any level (what it would
# say is explained in debian/*.lintian-overrides and
# debian/source/lintian-overrides); the systemd unit passes
# systemd-analyze verify.  Needs dpkg-dev, debhelper, the Build-Depends
# (debian/control), lintian and systemd: .ci/install-deps installs them
# (without lintian, its part is skipped, saying so).
. ./functions.sh
requires command -v dpkg-buildpackage
requires command -v dh
requires command -v systemd-analyze
[ -f "$top_srcdir/debian/control" ] || fail "no debian/control in $top_srcdir"
if ! missing=$(cd "$top_srcdir" && dpkg-checkbuilddeps 2>&1); then
	echo "$0: skipped: build dependencies missing: ${missing##*: }"
	exit 77
fi

tmp=$(mktemp -d /tmp/package-deb.XXXXXX)
cleanup_fn rm -rf "$tmp"
src=$tmp/blkbackd
mkdir "$src"
# What a fresh clone has: the files git knows (committed or added), as
# they are in the checkout -- never untracked ones, which in a tree built
# in place include test binaries lintian would judge as source; from a
# release tarball, the distribution itself.
if git -C "$top_srcdir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	(cd "$top_srcdir" && git ls-files -z --cached |
		while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
		tar --null -cf - -T -) | tar -xf - -C "$src"
	# the revision it was built from, as make dist records it in a release
	# tarball (blkbackd --version prints it: backend/git-version.h)
	git -C "$top_srcdir" describe --always --dirty --abbrev=12 > "$src/.tarball-version"
else
	# (relative: automake's subdirectories prefix distdir with ../)
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -s -C "$top_builddir" distdir \
		distdir="$(realpath --relative-to="$top_builddir" "$src")" >"$tmp/distdir.log" 2>&1 ||
		{ tail -n 20 "$tmp/distdir.log"; fail "make distdir"; }
fi

# dpkg-buildpackage runs its own make: not a job slot of ours.  Source
# and binaries: lintian checks both (3.0 (native): the source is a tar)
(cd "$src" && env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS DEB_BUILD_OPTIONS=parallel=2 \
	dpkg-buildpackage -us -uc) >"$tmp/build.log" 2>&1 ||
	{ tail -n 40 "$tmp/build.log"; fail "dpkg-buildpackage -us -uc failed (above)"; }
ver=$(cd "$src" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
for p in blkbackd blkbackd-tools blkbackd-rbd blkbackd-nbd; do
	[ -f "$tmp/${p}_${ver}_${arch}.deb" ] || fail "no ${p}_${ver}_${arch}.deb: $(ls "$tmp")"
done
[ -f "$tmp/blkbackd_${ver}.dsc" ] || fail "no source package blkbackd_${ver}.dsc: $(ls "$tmp")"
grep -q "blkbackd_${ver}.dsc" "$tmp/blkbackd_${ver}_${arch}.changes" ||
	fail "the .changes does not carry the source package"
# for test-package-chroot, which installs them (its .log depends on ours)
rm -rf package-debs
mkdir package-debs
cp "$tmp/blkbackd_${ver}_${arch}.deb" "$tmp/blkbackd-tools_${ver}_${arch}.deb" \
	"$tmp/blkbackd-rbd_${ver}_${arch}.deb" package-debs/

# file_list DEB: the files and links it holds, one a line, sorted
file_list() {
	dpkg-deb -c "$1" | awk '$1 !~ /^d/ { sub(/^\./, "", $6); print $6 }' | sort
}
check_list() {	# check_list DEB EXPECTED...
	local deb=$1 got want
	shift
	got=$(file_list "$deb")
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] || {
		diff <(echo "$want") <(echo "$got") | sed 's/^</missing:/; s/^>/unexpected:/' | grep -E '^(missing|unexpected)'
		fail "$(basename "$deb"): file list differs from the expected one (above)"
	}
}
ctl=()
if [ -f "$top_srcdir/backend/blkbackd-ctl.c" ]; then
	ctl=(/usr/sbin/blkbackd-ctl /usr/share/man/man8/blkbackd-ctl.8.gz)
fi
check_list "$tmp/blkbackd_${ver}_${arch}.deb" \
	/etc/default/blkbackd \
	/etc/xen/scripts/block-blkbackd \
	/lib/systemd/system/blkbackd.service \
	/usr/lib/modprobe.d/blkbackd.conf \
	/usr/sbin/blkbackd \
	"${ctl[@]}" \
	/usr/share/doc/blkbackd/README.Debian.gz \
	/usr/share/doc/blkbackd/changelog.gz \
	/usr/share/doc/blkbackd/copyright \
	/usr/share/lintian/overrides/blkbackd \
	/usr/share/man/man8/blkbackd.8.gz
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
check_list "$tmp/blkbackd-rbd_${ver}_${arch}.deb" \
	/usr/lib/$multiarch/blkbackd/store-rbd.so \
	/usr/share/doc/blkbackd-rbd/changelog.gz /usr/share/doc/blkbackd-rbd/copyright
check_list "$tmp/blkbackd-nbd_${ver}_${arch}.deb" \
	/usr/lib/$multiarch/blkbackd/store-nbd.so \
	/usr/share/doc/blkbackd-nbd/changelog.gz /usr/share/doc/blkbackd-nbd/copyright
lib=/usr/share/blkbackd/blkbenchlib
check_list "$tmp/blkbackd-tools_${ver}_${arch}.deb" \
	/usr/bin/blkbench /usr/bin/blkcrash /usr/bin/blkfront-test \
	/usr/bin/xensim /usr/bin/xensim-ctl \
	/usr/libexec/blkbackd/blkcrash-run /usr/libexec/blkbackd/fsmark \
	/usr/libexec/blkbackd/fsync-tester \
	$lib/__init__.py $lib/ceiling.py $lib/cli.py $lib/crash.py $lib/matrix.py $lib/parsers.py $lib/report.py \
	$lib/stack.py $lib/system.py $lib/workloads.py $lib/xen.py \
	/usr/share/doc/blkbackd-tools/changelog.gz /usr/share/doc/blkbackd-tools/copyright \
	/usr/share/lintian/overrides/blkbackd-tools \
	/usr/share/man/man1/blkbench.1.gz /usr/share/man/man1/blkcrash.1.gz \
	/usr/share/man/man1/blkfront-test.1.gz /usr/share/man/man1/fsmark.1.gz \
	/usr/share/man/man1/fsync-tester.1.gz /usr/share/man/man1/xensim.1.gz \
	/usr/share/man/man1/xensim-ctl.1.gz

# What dpkg is told: dependencies, conffiles, the unit enabled on install
deb=$tmp/blkbackd_${ver}_${arch}.deb
dpkg-deb -f "$deb" Depends | grep -q 'xenstore-utils' || fail "blkbackd: no Depends on xenstore-utils"
# Ceph's libraries come with the rbd module's package only: a dom0
# without Ceph never gets them
dpkg-deb -f "$deb" Depends | grep -qE 'librbd|librados|libnbd' &&
	fail "blkbackd: Depends on Ceph's libraries: $(dpkg-deb -f "$deb" Depends)"
rdeb=$tmp/blkbackd-rbd_${ver}_${arch}.deb
dpkg-deb -f "$rdeb" Depends | grep -q 'librbd1' && dpkg-deb -f "$rdeb" Depends | grep -q "blkbackd (= $ver)" ||
	fail "blkbackd-rbd: Depends are $(dpkg-deb -f "$rdeb" Depends)"
ndeb=$tmp/blkbackd-nbd_${ver}_${arch}.deb
dpkg-deb -f "$ndeb" Depends | grep -q 'libnbd0' && dpkg-deb -f "$ndeb" Depends | grep -q "blkbackd (= $ver)" ||
	fail "blkbackd-nbd: Depends are $(dpkg-deb -f "$ndeb" Depends)"
# the tools recommend the daemon and never pull it in by Depends: on a
# dom0, installing them must not install and start a vbd backend
dpkg-deb -f "$tmp/blkbackd-tools_${ver}_${arch}.deb" Depends | grep -q "blkbackd (" &&
	fail "blkbackd-tools: Depends on blkbackd"
dpkg-deb -f "$tmp/blkbackd-tools_${ver}_${arch}.deb" Recommends | grep -q "blkbackd (= $ver)" ||
	fail "blkbackd-tools: no Recommends of blkbackd (= $ver)"
mkdir "$tmp/ctrl" "$tmp/root"
dpkg-deb -e "$deb" "$tmp/ctrl"
dpkg-deb -x "$deb" "$tmp/root"
# the modprobe.d file is no conffile: it must go with the package
[ "$(sort "$tmp/ctrl/conffiles")" = "$(printf '%s\n' /etc/default/blkbackd /etc/xen/scripts/block-blkbackd)" ] ||
	fail "conffiles: $(cat "$tmp/ctrl/conffiles")"
grep -q 'deb-systemd-helper.*blkbackd.service' "$tmp/ctrl/postinst" || fail "postinst does not enable blkbackd.service"
# the kernel's xen-blkback serves the same kind: kept out (its alias
# autoload by the blacklist, a load by name by the install command), and
# the daemon is not started on install while it is loaded
mp=$tmp/root/usr/lib/modprobe.d/blkbackd.conf
grep -qx 'blacklist xen-blkback' "$mp" || fail "$mp does not blacklist xen-blkback"
grep -qx 'install xen-blkback /bin/false' "$mp" || fail "$mp does not stop a load by name"
grep -q '/sys/module/xen_blkback' "$tmp/ctrl/postinst" ||
	fail "postinst starts blkbackd without looking for xen-blkback"
# dh_installsystemd's own start would come before that check
grep -q 'deb-systemd-invoke.*start.*blkbackd.service' <(sed '/xen_blkback/,$d' "$tmp/ctrl/postinst") &&
	fail "postinst starts blkbackd before looking for xen-blkback"
# the postinst as dpkg runs it, on a dom0 where the module is loaded or
# not (systemd and the helpers faked): started only without the module
fakebin=$tmp/fakebin
mkdir "$fakebin"
for c in deb-systemd-helper deb-systemd-invoke systemctl; do
	printf '#!/bin/sh\necho "%s $*" >> "%s"\n' "$c" "$tmp/calls" > "$fakebin/$c"
	chmod +x "$fakebin/$c"
done
sed "s|/sys/module/xen_blkback|$tmp/sys-xen_blkback|; s|/run/systemd/system|$tmp|" \
	"$tmp/ctrl/postinst" > "$tmp/postinst"
mkdir "$tmp/sys-xen_blkback"
PATH=$fakebin:$PATH DPKG_ROOT= sh "$tmp/postinst" configure "" > "$tmp/postinst.out" 2>&1 ||
	{ cat "$tmp/postinst.out"; fail "postinst configure failed with xen-blkback loaded"; }
grep -q 'start' "$tmp/calls" && { cat "$tmp/calls"; fail "postinst started blkbackd beside xen-blkback"; }
grep -q "xen-blkback is loaded: blkbackd.service is enabled but not started" "$tmp/postinst.out" ||
	{ cat "$tmp/postinst.out"; fail "postinst does not say why blkbackd was not started"; }
rmdir "$tmp/sys-xen_blkback"
: > "$tmp/calls"
PATH=$fakebin:$PATH DPKG_ROOT= sh "$tmp/postinst" configure "" > "$tmp/postinst.out" 2>&1 ||
	{ cat "$tmp/postinst.out"; fail "postinst configure failed"; }
grep -q 'deb-systemd-invoke start blkbackd.service' "$tmp/calls" ||
	{ cat "$tmp/calls"; fail "postinst did not start blkbackd without xen-blkback"; }
# an upgrade restarts it, after the unit files were reloaded
: > "$tmp/calls"
PATH=$fakebin:$PATH DPKG_ROOT= sh "$tmp/postinst" configure 0.1 > "$tmp/postinst.out" 2>&1 ||
	{ cat "$tmp/postinst.out"; fail "postinst configure (upgrade) failed"; }
[ "$(grep -E 'daemon-reload|deb-systemd-invoke' "$tmp/calls" | tail -n 2 | tr '\n' ' ')" = \
	"systemctl --system daemon-reload deb-systemd-invoke restart blkbackd.service " ] ||
	{ cat "$tmp/calls"; fail "postinst did not reload and restart blkbackd on an upgrade"; }
for x in usr/sbin/blkbackd etc/xen/scripts/block-blkbackd; do
	[ -x "$tmp/root/$x" ] || fail "$x is not executable in the package"
done
# json-c is blkbackd-ctl's alone (--json): the daemon never links it;
# the package, which ships blkbackd-ctl, depends on it through shlibs
objdump -p "$tmp/root/usr/sbin/blkbackd" | grep -q 'NEEDED.*libjson-c' &&
	fail "the daemon blkbackd links json-c"
if [ ${#ctl[@]} -gt 0 ]; then
	objdump -p "$tmp/root/usr/sbin/blkbackd-ctl" | grep -q 'NEEDED.*libjson-c\.so\.5' ||
		fail "blkbackd-ctl does not link json-c"
	dpkg-deb -f "$deb" Depends | grep -q 'libjson-c5' ||
		fail "blkbackd: no Depends on libjson-c5 (for blkbackd-ctl): $(dpkg-deb -f "$deb" Depends)"
fi

# The unit as installed: systemd-analyze checks every key and that its
# commands exist (pointed at the extracted blkbackd) and its man page.
unit=$tmp/root/lib/systemd/system/blkbackd.service
grep -q '^ExecStart=/usr/sbin/blkbackd ' "$unit" || fail "ExecStart does not run /usr/sbin/blkbackd"
# notify only with a blkbackd that links libsystemd (and then runs with -f)
if objdump -p "$tmp/root/usr/sbin/blkbackd" | grep -q 'NEEDED.*libsystemd'; then
	grep -q '^Type=notify' "$unit" && grep -q '^ExecStart=/usr/sbin/blkbackd -f ' "$unit" ||
		fail "blkbackd links libsystemd but the unit is not Type=notify with -f"
else
	grep -q '^Type=forking' "$unit" || fail "blkbackd without libsystemd but the unit is not Type=forking"
fi
grep -q '^Restart=on-failure' "$unit" || fail "no restart policy"
# blkbackd's refusal beside the kernel's xen-blkback is not retried
grep -qx 'RestartPreventExitStatus=3' "$unit" || fail "the unit restarts a refused blkbackd"
mkdir "$tmp/unit"
sed "s|/usr/sbin/blkbackd|$tmp/root/usr/sbin/blkbackd|" "$unit" > "$tmp/unit/blkbackd.service"
out=$(MANPATH=$tmp/root/usr/share/man systemd-analyze verify "$tmp/unit/blkbackd.service" 2>&1) ||
	fail "systemd-analyze verify: $out"
[ -z "$out" ] || fail "systemd-analyze verify: $out"

# The installed docs speak of the installed system: no path of the
# source tree (README's tests/..., harness/...), and every absolute path
# they name is one the packages install, or one the admin or the system
# makes (the prefixes and files below), or the xenstore's.
all=$tmp/all-files
for d in "$tmp"/blkbackd*_"${ver}_${arch}".deb; do
	case $d in *-dbgsym_*) continue ;; esac
	mkdir -p "$tmp/docs/$(basename "$d")"
	dpkg-deb -x "$d" "$tmp/docs/$(basename "$d")"
	file_list "$d"
done | sed "s|/$multiarch/|/<multiarch>/|" | sort > "$all"
find "$tmp"/docs/*/usr/share/doc -type f | while read -r f; do
	case $f in *.gz) zcat "$f" ;; *) cat "$f" ;; esac > "$tmp/doc.txt"
	name=${f#"$tmp"/docs/*/}
	bad=$(grep -Eno '(^|[ ("'\''])(\.ci|backend|bench-data|common|debian|frontend-test|harness|include|ring|service|sim|tests|xenops)/[^ )",]*' \
		"$tmp/doc.txt" || true)
	[ -z "$bad" ] || fail "/$name names paths of the source tree: $bad"
	grep -Eo '(^|[ ("'\''=])/[a-z][^ )",:;]*' "$tmp/doc.txt" | sed -E 's/^[ ("'\''=]//; s/[.]$//' |
		sort -u | while read -r p; do
		case $p in
		/run/*|/proc/*|/sys/*|/dev/*|/srv/*|/local/domain/*) continue ;;	# made at run time, the admin's, xenstore
		/etc/blkbackd/disks|/etc/modprobe.d/blkbackd.conf) continue ;;		# the admin writes them (README.Debian)
		/usr/share/common-licenses/*) continue ;;				# base-files' (copyright)
		esac
		grep -qx -- "${p%/}" "$all" || grep -q -- "^${p%/}/" "$all" ||
			fail "/$name names $p, which no package installs"
	done || exit 1
done || exit 1
# the postinst points at the README the package installs
doc=$(grep -o '/usr/share/doc/blkbackd/[^ ,"]*' "$tmp/ctrl/postinst" | head -n 1)
[ -n "$doc" ] && grep -qx "$doc.gz\|$doc" "$all" || fail "the postinst names \"$doc\", not in the package"

# lintian: nothing left on the source and the binaries, at every level
# (explained overrides aside; as root it also says that it would rather
# not run as root)
if command -v lintian >/dev/null; then
	out=$(lintian -E --pedantic --display-info --fail-on error,warning,info,pedantic,experimental \
		"$tmp/blkbackd_${ver}_${arch}.changes" 2>&1) || fail "lintian: $out"
	out=$(echo "$out" | grep -v 'running with root privileges is not recommended' || true)
	[ -z "$out" ] || fail "lintian: $out"
	echo "lintian: nothing to say on $(sed -n '/^Files:/,$p' "$tmp/blkbackd_${ver}_${arch}.changes" |
		awk 'NF == 5 { print $5 }' | grep -E '\.(dsc|deb)$' | grep -v dbgsym | tr '\n' ' ')"
else
	echo "lintian not installed: the lintian check is skipped (.ci/install-deps installs it)"
fi
echo ok
