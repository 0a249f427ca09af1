#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# check-newer-xen.sh: build the tree against a newer Debian's Xen and run
# the tests that need no Xen, in a debootstrap'ed chroot.  "make
# check-xen-versions" runs it; never part of "make check" or .ci/run (a
# first run fetches a few hundred MB: about 5 minutes here, most of it
# debootstrap and apt; with NEWER_XEN_ROOT kept, about 3).
#
# Debian 12 ships Xen 4.17, Debian 13 (trixie) 4.20: libxenctrl's API
# moves between them (xc_domain_getinfo went in 4.18), and only a build
# against the newer headers shows what no longer compiles.
#
# Root; needs debootstrap, unshare, git (the tree sent in is the
# checkout's files that git knows or does not ignore, as they are now).
# Environment:
#   NEWER_XEN_SUITE   the Debian suite (default trixie)
#   NEWER_XEN_MIRROR  the mirror (default: the host's apt mirror, else
#                     http://deb.debian.org/debian)
#   NEWER_XEN_ROOT    keep the chroot there and reuse it next time (default:
#                     a temporary one, removed at the end)
#   NEWER_XEN_TESTS   tests/ tests to run besides the unit tests of common/,
#                     ring/, sim/ and xenops/ (default: three xensim ones;
#                     "all" for the whole of tests/, which takes much longer)
# Exit 0 when everything built and passed, 77 when it cannot run here
# (saying why), 1 otherwise; the log is in the chroot's /src/check.log.
set -eu

top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
suite=${NEWER_XEN_SUITE:-trixie}
tests=${NEWER_XEN_TESTS:-test-backend-handshake.sh test-backend-rw.sh test-backend-journal.sh}
start=$(date +%s)
say() { printf 'check-newer-xen: %s\n' "$*"; }
skip() { say "skipped: $*"; exit 77; }

[ "$(id -u)" = 0 ] || skip "requires root (debootstrap, chroot)"
for c in debootstrap unshare git; do
	command -v $c >/dev/null || skip "requires $c"
done
git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
	skip "$top_srcdir is not a git checkout (the tree is sent in with git ls-files)"

# the host's mirror (deb822 or one-line sources), else Debian's default
mirror=${NEWER_XEN_MIRROR:-}
[ -n "$mirror" ] || mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' \
	/etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $2 ~ /debian$/ { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null)
mirror=${mirror:-http://deb.debian.org/debian}

if [ -n "${NEWER_XEN_ROOT:-}" ]; then
	root=$NEWER_XEN_ROOT
else
	root=$(mktemp -d /var/tmp/newer-xen.XXXXXX)
	trap 'rm -rf --one-file-system "$root"' EXIT
fi
if [ ! -f "$root/etc/debian_version" ]; then
	say "debootstrap $suite from $mirror into $root"
	mkdir -p "$root"
	debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$root.debootstrap.log" 2>&1 ||
		skip "debootstrap $suite from $mirror failed: $(tail -n 1 "$root.debootstrap.log")"
	rm -f "$root.debootstrap.log"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"

# Everything inside runs in a private mount namespace: /proc, /sys and
# /dev for the chroot vanish with it.
in_root() {
	unshare --mount --propagation private sh -c '
		mount -t proc proc "$1/proc" && mount -t sysfs sys "$1/sys" &&
		mount --rbind /dev "$1/dev" && shift && exec chroot "$@"' sh "$root" "$root" "$@"
}

# .ci/install-deps's build and test packages; librbd for the rbd store
say "apt-get install the build dependencies ($suite)"
in_root sh -c 'export DEBIAN_FRONTEND=noninteractive; apt-get update -qq &&
	apt-get install -y -qq --no-install-recommends \
	build-essential autoconf automake libtool pkgconf \
	libxen-dev xenstore-utils libaio-dev liburing-dev libfuse3-dev fuse3 libsystemd-dev libjson-c-dev libnbd-dev \
	librbd-dev librados-dev python3 procps psmisc e2fsprogs util-linux' \
	>"$root/apt.log" 2>&1 || { tail -n 20 "$root/apt.log"; say "apt-get install failed"; exit 1; }
xen=$(in_root dpkg-query -W -f '${Version}' libxen-dev)
gcc=$(in_root sh -c 'gcc -dumpfullversion')
say "$suite: libxen-dev $xen, gcc $gcc"

# what a fresh clone would have: the files git knows (committed or added),
# as they are in the checkout; never untracked build products of a tree
# built in place (test-package-deb.sh does the same)
rm -rf "$root/src"
mkdir -p "$root/src"
(cd "$top_srcdir" && git ls-files -z --cached |
	while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
	tar --null -cf - -T -) | tar -xf - -C "$root/src"
say "tree: $(git -C "$top_srcdir" describe --always --dirty)"

# -Werror too: a newer gcc's new warnings are as much news as Xen's API
[ "$tests" = all ] && check="make check" ||
	check="make -C tests check TESTS='$tests'"
rc=0
in_root sh -c "cd /src && exec >check.log 2>&1 && set -ex &&
	autoreconf -fi && ./configure --enable-gcc-warnings &&
	make -j\$(nproc) && test -f xenops/libxenops_la-xenops-xen.lo &&
	make -C common check && make -C ring check && make -C sim check &&
	make -C xenops check && $check" || rc=$?
grep -hE '^(PASS|FAIL|XFAIL|XPASS|SKIP|ERROR):' "$root/src/check.log" || true
secs=$(( $(date +%s) - start ))
if [ "$rc" != 0 ]; then
	tail -n 40 "$root/src/check.log"
	say "FAILED on $suite (libxen-dev $xen) after $secs s; log: $root/src/check.log"
	exit 1
fi
say "built and passed on $suite (libxen-dev $xen, gcc $gcc) in $secs s"
