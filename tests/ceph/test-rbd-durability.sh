#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Durability on RBD: with librbd's cache in writeback (writes held in
# blkbackd's process; rbd_cache_max_dirty_age 60 s so librbd does not
# write them back by itself; writethrough_until_flush off), 8 WRITEs and
# a FLUSH are acknowledged, then blkbackd is SIGKILLed at once, before it
# could close anything.  A fresh librbd client (rbd export) must find
# every acknowledged write, byte for byte.  The same with
# --unsafe-ignore-flush (flushes acknowledged without rbd_aio_flush)
# must find writes missing: the check can fail.  Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
start_xensim
cache=rbd_cache=true:rbd_cache_policy=writeback:rbd_cache_writethrough_until_flush=false:rbd_cache_max_dirty_age=60
{
	for i in 0 1 2 3 4 5 6 7; do
		echo "fill p$i seed:$((40 + i))"
		echo "send op=write id=$((i + 1)) sector=$((i * 64)) seg=p$i expect=OKAY"
		echo "dump p$i $BK_TMP/p$i"
	done
	echo "send op=flush id=9 nr_segments=0 expect=OKAY"
	echo "xs-expect fe never 1 timeout=60000"
} > "$BK_TMP/s"
# run DAEMON-ARGS...: the script, the kill, then how many of the 8 pages
# a fresh client finds
run() {
	start_backend "$@"
	new_disk 4M
	new_guest
	add_disk $DOM "$params:$cache"
	: > "$BACKEND_TRACE"
	blkfront-test script --domid $DOM "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
	front=$!
	flushed() { grep -qE "vbd=$DOM/51712 .* id=9 .*status=0" "$BACKEND_TRACE"; }
	wait_for 60 flushed || { cat "$BK_TMP/s.out"; fail "$*: the flush was not acknowledged"; }
	pid=$(bk_pid)
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	_backend_running=
	kill "$front" 2>/dev/null; wait "$front" 2>/dev/null || true
	# (a reader needs no lock: the dead client's stays until the next writer)
	rm -f "$BK_TMP/export"
	timeout 120 rbd -c "$CEPH_CONF" export --no-progress "$img" "$BK_TMP/export" >"$BK_TMP/export.out" 2>&1 ||
		{ cat "$BK_TMP/export.out"; fail "$*: rbd export $img failed"; }
	found=0
	for i in 0 1 2 3 4 5 6 7; do
		cmp -s -n 4096 "$BK_TMP/p$i" <(dd if="$BK_TMP/export" bs=512 skip=$((i * 64)) count=8 2>/dev/null) &&
			found=$((found + 1))
	done
	echo "${*:-flushes honoured}: $found of 8 acknowledged pages on the image after the kill"
}
run
[ "$found" = 8 ] || fail "flushes honoured: only $found of 8 acknowledged writes survived the kill"
run --unsafe-ignore-flush
[ "$found" -lt 8 ] || fail "flushes ignored, yet all 8 writes survived: the check could not fail (librbd wrote back by itself?)"
exit 0
