#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every storage driver a user can name in params, held to the store
# contract from outside (store-conformance.c: sizes, data byte-exact,
# flush/FUA/discard promises kept or refused, bad I/O refused): a file
# (writeback and writethrough, read-write and read-only), a block device
# (a loop device with direct I/O), memory, null and the 2008 disk
# model.  A driver added to blkbackd gets a line here.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
conf=./store-conformance
[ -x "$conf" ] || fail "store-conformance not built"

check() { # what ARGS...
	local what=$1
	shift
	"$conf" "$@" > "$BK_TMP/out" 2>&1 || { cat "$BK_TMP/out"; fail "$what: $*"; }
	grep -q ": conforming$" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "$what: no verdict"; }
	cat "$BK_TMP/out"
}

img=$BK_TMP/disk.img
truncate -s 16M "$img"
check "file" --size $((16 << 20)) "$img"
check "file, libaio" --io-engine libaio "$img"
check "file, io_uring" --io-engine io_uring "$img"
check "file, writethrough" --writethrough "$img"
check "file, aio: prefix" "aio:$img"
check "file, prepared" --write-pattern 11 "$img"
check "file, read-only" --read-only --pattern 11 --size $((16 << 20)) "$img"
# odd size: not a multiple of 4 KiB (the last sector is still served)
truncate -s $((3 * 512 + (1 << 20))) "$BK_TMP/odd.img"
check "file, odd size" --size $((3 * 512 + (1 << 20))) "$BK_TMP/odd.img"

check "memory" --size $((8 << 20)) memory:8M
# the 2008 disk model (its timing is its own; the contract is the same)
truncate -s 16M "$BK_TMP/d2008.img"
check "disk2008" --size $((16 << 20)) "disk2008:$BK_TMP/d2008.img"
check "disk2008, writethrough (wce off)" --writethrough "disk2008:$BK_TMP/d2008.img"
check "null" --no-data --size $((8 << 20)) null:8M

if [ "$(id -u)" = 0 ] && loop=$(losetup --direct-io=on -f --show "$img" 2>/dev/null); then
	cleanup_fn losetup -d "$loop"
	# a read-only flag its last user set (BLKROSET) outlives the detach
	[ "$(blockdev --getro "$loop")" = 0 ] || blockdev --setrw "$loop" ||
		fail "$loop: cannot clear its read-only flag"
	check "block device" --size $((16 << 20)) "phy:$loop"
	check "block device, libaio" --io-engine libaio "phy:$loop"
	check "block device, io_uring" --io-engine io_uring "phy:$loop"
	check "block device, prepared" --write-pattern 12 "$loop"
	check "block device, read-only" --read-only --pattern 12 "$loop"
	# a device with no volatile cache (queue/write_cache "write
	# through": a RAM disk, a battery-backed controller) has nothing
	# to flush: no writeback, so no feature-flush-cache by default,
	# as Linux blkback does
	wc=/sys/block/${loop#/dev/}/queue/write_cache
	grep -qx "write back" "$wc" || fail "$wc: $(cat "$wc"), expected write back"
	echo "write through" > "$wc"
	check "block device, no write cache" "phy:$loop"
	echo "write back" > "$wc"
	grep -q "writeback 0, " "$BK_TMP/out" || fail "a device without a write cache reported writeback"
else
	skip_part "no loop device here (needs root and losetup): the block-device driver path"
fi

# the checker itself says no: a size it does not have, a pattern not there
"$conf" --size 4096 memory:8M > "$BK_TMP/out" 2>&1 && fail "a wrong --size passed"
grep -q "NOT CONFORMING: size 8388608, want 4096" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "wrong size: no reason"; }
"$conf" --read-only --pattern 99 "$img" > "$BK_TMP/out" 2>&1 && fail "a pattern not there passed"
grep -q "NOT CONFORMING: READ the prepared pattern" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "wrong pattern: no reason"; }
exit 0
