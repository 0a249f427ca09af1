#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The packages installed on a fresh Debian 12: debootstrap (minbase) a
# chroot, apt-get install the two .deb files test-package-deb built (apt
# fetches their dependencies), then, as installed: the unit is enabled,
# blkbackd serves a disk over xensim to blkfront-test (write + verify),
# blkbench finds its modules and programs; purge leaves nothing behind
# (the modprobe.d file that keeps xen-blkback out included).  First, the
# package's autopkgtest (debian/tests: sim-smoke, the simulator smoke
# test on the installed programs) runs in that same fresh chroot through
# autopkgtest's chroot runner, which installs the packages as a testbed
# would (skipped, saying so, when autopkgtest is not installed).
# Root; needs debootstrap and the Debian mirror the host's apt uses
# (skips, saying so, when debootstrap cannot make the chroot).
. ./functions.sh
. "$abs_top_srcdir/tests/package-lib.sh"
requires_root
requires command -v debootstrap
requires command -v unshare
debs=$(ls package-debs/blkbackd_*.deb package-debs/blkbackd-tools_*.deb 2>/dev/null) || true
[ "$(echo "$debs" | grep -c .)" = 2 ] ||
	{ echo "$0: skipped: no packages built (test-package-deb skipped or failed)"; exit 77; }

root=$(mktemp -d /var/tmp/package-chroot.XXXXXX)
cleanup_fn rm -rf --one-file-system "$root"
debian_root "$root"
mkdir -p "$root/tmp/debs"
cp $debs "$root/tmp/debs/"

# Everything inside runs in a private mount namespace: /proc, /sys and
# /dev for the chroot vanish with it.
in_root() {
	unshare --mount --propagation private sh -c '
		mount -t proc proc "$1/proc" && mount -t sysfs sys "$1/sys" &&
		mount --rbind /dev "$1/dev" && shift && exec chroot "$@"' sh "$root" "$root" "$@"
}
# autopkgtest, before our own install: it installs the .deb files and
# their dependencies itself, in a testbed that is this throw-away root
# (the chroot runner cannot revert; the install below then finds them
# installed, and the purge check at the end covers what it left)
if command -v autopkgtest >/dev/null && [ -x /usr/bin/autopkgtest-virt-chroot ]; then
	apt_src=$(mktemp -d /tmp/package-autopkgtest.XXXXXX)
	cleanup_fn rm -rf "$apt_src"
	# the source as autopkgtest needs it: debian/ (control, tests); -B:
	# not built, the packages are the .deb files given
	cp -r "$top_srcdir/debian" "$apt_src/debian"
	# the testbed's apt must know the mirror's current versions: the
	# build's libraries may be newer than the root's first lists
	in_root sh -c 'apt-get update -qq' >/dev/null 2>&1 || fail "apt-get update in the chroot"
	rc=0
	unshare --mount --propagation private sh -c '
		mount -t proc proc "$1/proc" && mount -t sysfs sys "$1/sys" &&
		mount --rbind /dev "$1/dev" && shift && exec "$@"' sh "$root" \
		autopkgtest -B --output-dir="$apt_src/out" "$apt_src" $(ls package-debs/blkbackd_*.deb package-debs/blkbackd-tools_*.deb) \
		-- chroot "$root" > "$apt_src/log" 2>&1 || rc=$?
	grep -E '^sim-smoke ' "$apt_src/log" || true
	# 0: every test passed (2: some skipped, 4: failed, 8: none, 12+: broken)
	[ $rc = 0 ] && grep -Eq '^sim-smoke +PASS' "$apt_src/log" ||
		{ tail -n 40 "$apt_src/log"; fail "autopkgtest sim-smoke in the chroot: exit $rc (above)"; }
	grep '^sim-smoke: ' "$apt_src/out/sim-smoke-stdout" 2>/dev/null || true
else
	echo "autopkgtest not installed: the package's autopkgtest (debian/tests) is not run here"
fi

in_root sh -c 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	--no-install-recommends /tmp/debs/*.deb' > "$root/../$(basename "$root").install.log" 2>&1 ||
	{ tail -n 30 "$root/../$(basename "$root").install.log"; rm -f "$root/../$(basename "$root").install.log"; \
	  fail "apt-get install of the packages failed (above)"; }
rm -f "$root/../$(basename "$root").install.log"

[ -L "$root/etc/systemd/system/multi-user.target.wants/blkbackd.service" ] ||
	fail "blkbackd.service is not enabled after install"
grep -q '^BLKBACKD_OPTS=' "$root/etc/default/blkbackd" || fail "/etc/default/blkbackd"
[ -x "$root/etc/xen/scripts/block-blkbackd" ] || fail "no hotplug script"

out=$(in_root sh -ec '
	export XENSIM_DIR=/tmp/sim XENSTORED_PATH=/tmp/sim/xenstore.sock
	mkdir -p $XENSIM_DIR
	xensim --dir $XENSIM_DIR --pidfile $XENSIM_DIR/pid 2>/tmp/xensim.log &
	i=0; while [ ! -s $XENSIM_DIR/pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	blkbackd -f --transport=sim --pidfile=/tmp/blkbackd.pid 2>/tmp/blkbackd.log &
	i=0; while [ ! -s /tmp/blkbackd.pid ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
	D=$(xensim-ctl create-domain guest)
	truncate -s 16M /tmp/disk.img
	blkfront-test xl-add --domid $D --params /tmp/disk.img >/dev/null
	blkfront-test verify --domid $D --size 8M --bs 64k
	blkfront-test xl-remove --domid $D >/dev/null
	kill $(cat /tmp/blkbackd.pid); wait $!
	kill $(cat $XENSIM_DIR/pid)
	blkbench --version
	blkbench probe dom0,domU
	/usr/libexec/blkbackd/fsmark --help >/dev/null
	echo installed-ok' 2>&1) || fail "as installed: $out"
echo "$out"
grep -qx "installed-ok" <<<"$out" || fail "as installed: $out"
grep -q "^domU: available" <<<"$out" || fail "blkbench probe as installed: $out"

in_root sh -c 'DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq blkbackd-tools blkbackd' >/dev/null 2>&1 ||
	fail "apt-get purge failed"
for f in usr/sbin/blkbackd usr/bin/blkbench etc/default/blkbackd etc/modprobe.d/blkbackd.conf \
	lib/systemd/system/blkbackd.service \
	etc/systemd/system/multi-user.target.wants/blkbackd.service usr/share/blkbackd; do
	[ ! -e "$root/$f" ] && [ ! -L "$root/$f" ] || fail "/$f left after purge"
done
echo ok
