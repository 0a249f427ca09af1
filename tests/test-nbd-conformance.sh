#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The nbd store held to the store contract (store-conformance.c) against
# real servers on unix sockets: nbdkit's memory plugin (flush, FUA, trim,
# multi-conn: a connection per queue), the same with cache=writethrough
# (FUA on every write), nbdkit without FUA (fua emulated: write, then
# flush), a read-only nbdkit file export checked against a pattern
# written through the file store, and qemu-nbd (no multi-conn for a
# writable export: one connection shared by the queues).  Then what the
# store refuses at open: a read-only export opened for writing, a
# socket nobody serves, a malformed arg.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
conf=./store-conformance
[ -x "$conf" ] || fail "store-conformance not built"

check() { # what ARGS...
	local what=$1
	shift
	"$conf" "$@" > "$BK_TMP/out" 2>&1 || { cat "$BK_TMP/out"; fail "$what: $*"; }
	grep -q ": conforming$" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "$what: no verdict"; }
	cat "$BK_TMP/out"
}
# verdict WHAT WANT: the last run's feature line says WANT
verdict() {
	grep -q "$2" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "$1: want \"$2\""; }
}

nbdkit_start mem memory 16M
check "nbdkit memory" --size $((16 << 20)) "nbd:$NBD_URI"
verdict "nbdkit memory" "read_only 0, flush 1, writeback 1, fua native, discard 1"
check "nbdkit memory, writethrough" --writethrough "nbd:$NBD_URI,timeout=5"
verdict "nbdkit memory, writethrough" "writeback 0, fua native"

# (the filter's default mode is none: no FUA advertised)
nbdkit_start nofua --filter=fua memory size=8M
check "nbdkit without FUA" --size $((8 << 20)) "nbd:$NBD_URI"
verdict "nbdkit without FUA" "writeback 1, fua emulated"
# a cache without FUA cannot be made writethrough: refused, not faked
"$conf" --writethrough "nbd:$NBD_URI" > "$BK_TMP/out" 2>&1 && fail "writethrough without FUA opened"
grep -q "no FUA: cache=writethrough cannot be honoured" "$BK_TMP/out" ||
	{ cat "$BK_TMP/out"; fail "writethrough without FUA: no reason"; }

img=$BK_TMP/ro.img
truncate -s 8M "$img"
check "file, prepared" --write-pattern 21 "$img"
nbdkit_start ro -r file "$img"
check "nbdkit read-only file" --read-only --pattern 21 --size $((8 << 20)) "nbd:$NBD_URI"
verdict "nbdkit read-only file" "read_only 1"
"$conf" "nbd:$NBD_URI" > "$BK_TMP/out" 2>&1 && fail "a read-only export opened for writing"
grep -q "is read-only: it needs mode=r" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "read-only export: no reason"; }

if command -v qemu-nbd >/dev/null; then
	truncate -s 16M "$BK_TMP/q.img"
	qemu_nbd_start q "$BK_TMP/q.img" -f raw --cache=writeback --discard=unmap
	check "qemu-nbd" --size $((16 << 20)) "nbd:$NBD_URI"
	verdict "qemu-nbd" "flush 1, writeback 1"
else
	skip_part "no qemu-nbd (qemu-utils): the shared-connection path"
fi

"$conf" "nbd:nbd+unix:///?socket=$BK_TMP/nobody.sock" > "$BK_TMP/out" 2>&1 && fail "no server, opened"
grep -q "cannot connect to" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "no server: no reason"; }
"$conf" "nbd:/not/a/uri" > "$BK_TMP/out" 2>&1 && fail "a malformed URI opened"
grep -q "bad URI" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "bad URI: no reason"; }
"$conf" "nbd:$NBD_URI,speed=11" > "$BK_TMP/out" 2>&1 && fail "an unknown option opened"
grep -q "unknown option \"speed=11\"" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "unknown option: no reason"; }
# a vsock URI with no peer fails with the socket's own error, not with
# libnbd's complaint about its state (told "readable" while connecting)
"$conf" "nbd:nbd+vsock:///" > "$BK_TMP/out" 2>&1 && fail "a vsock with no peer opened"
grep -q "cannot connect to nbd+vsock:///: .*connect" "$BK_TMP/out" &&
	! grep -q "invalid in state" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "vsock: no reason of its own"; }
# an empty option (a trailing comma too) and an option given twice are
# refused, as the other stores refuse them
"$conf" "nbd:$NBD_URI," > "$BK_TMP/out" 2>&1 && fail "a trailing comma opened"
grep -q "unknown option \"\"" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "trailing comma: no reason"; }
"$conf" "nbd:$NBD_URI,timeout=5,timeout=6" > "$BK_TMP/out" 2>&1 && fail "timeout twice opened"
grep -q "option timeout given twice" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "timeout twice: no reason"; }
exit 0
