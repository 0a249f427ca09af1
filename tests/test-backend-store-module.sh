#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Storage drivers with libraries of their own (rbd) are modules in
# packages of their own (backend/store.h): blkbackd without the module
# refuses such a vbd with an error node naming the package, refuses a
# file that is not a module of this blkbackd by name, and keeps serving
# its other vbds.  (The module loading and working is what every rbd
# test under make check-ceph does.)
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
mods=$BK_TMP/modules
mkdir -p "$mods"
# a shared object that is no module of ours, under a driver's name
# (zlib's: small, no constructors; dpkg itself needs it)
zlib=$(ldconfig -p | awk '/libz\.so\.1 .*x86-64/ { print $NF; exit }')
[ -n "$zlib" ] && cp "$zlib" "$mods/store-zz.so" || fail "no libz.so.1 to copy"
BLKBACKD_STORE_DIR=$mods start_sim_backend
new_guest; F=$DOM

expect_error() { # devid text
	local be
	be=$(bk_be $F "$1")
	xs_wait "$be/state" 5
	[ "$(xenstore-read "$be/error")" = "$2" ] ||
		fail "$be/error is \"$(xenstore-read "$be/error")\", expected \"$2\""
}
add_vbd $F 1 "rbd:rbd/img"
expect_error 1 "params: the \"rbd\" storage driver is not installed ($mods/store-rbd.so: package blkbackd-rbd; from a build tree, BLKBACKD_STORE_DIR=backend/.libs)"
add_vbd $F 2 "zz:x"
expect_error 2 "params: $mods/store-zz.so is not a blkbackd storage driver module for this blkbackd (module ABI -1, want 2)"
add_vbd $F 3 "../zz:x"
expect_error 3 "params: unknown storage driver in \"../zz:x\""
# the daemon serves on
add_disk $F memory:4M
io_works $F || fail "a memory vbd beside them does not work"
exit 0
