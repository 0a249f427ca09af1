# SPDX-License-Identifier: GPL-2.0-or-later
# package-lib.sh: what the tests of the installed packages share
# (test-package-chroot.sh, test-package-systemd.sh); sourced after
# functions.sh.
#
# debian_root ROOT [DEBOOTSTRAP-OPTION...]: a fresh Debian 12 (minbase)
# in ROOT from the host's mirror (deb822 or one-line sources, else
# Debian's default), with the host's suites (security updates: the
# build's libraries may be newer than bookworm's first release) and its
# resolv.conf, ready for apt-get.  When debootstrap cannot make it, the
# test is skipped, saying why: the packages cannot be tried here.
debian_root() {
	local root=$1 mirror
	shift
	mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$mirror" ] ||
		mirror=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null)
	mirror=${mirror:-http://deb.debian.org/debian}
	if ! debootstrap --variant=minbase "$@" bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
		echo "$0: skipped: debootstrap bookworm from $mirror failed: $(tail -n 1 "$root.debootstrap.log")"
		rm -f "$root.debootstrap.log"
		exit 77
	fi
	rm -f "$root.debootstrap.log"
	rm -f "$root/etc/apt/sources.list"
	cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
	[ -f /etc/apt/sources.list ] && grep -v '^#' /etc/apt/sources.list > "$root/etc/apt/sources.list"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
}
