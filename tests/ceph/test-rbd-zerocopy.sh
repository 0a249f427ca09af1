#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rbd store, the guest's pages handed to librbd as they are (DESIGN-NOTES
# "The rbd store"):
#  - librbd does not copy the writes: with blkbackd's cache=writethrough
#    (no librbd cache) librbd's own log (debug_rbd=5) must not say
#    "disabling zero-copy writes", which it says when it will copy every
#    write into buffers of its own; and an image whose own configuration
#    (rbd config image set) turns a writethrough cache on is reopened
#    with copies (zero-copy there would hold each write's completion
#    until the cache drops the pages);
#  - byte-exact through the ring with persistent grants on and off, in
#    4 KiB and 1 MiB blocks (1 MiB: the segments' pages, persistent or
#    mapped for the request, given to librbd as few merged iovecs), the
#    data checked again from a fresh connection;
#  - one image handle per vbd: with two queues connected the image has
#    one watcher (rbd status), the vbd's;
#  - a vbd removed (--force) with 1 MiB writes in flight, persistent
#    grants on and off: requests issued before the removal are answered
#    after it (the drain waited for librbd), blkbackd forgets the guest
#    (xensim: no grant of it mapped) and keeps serving.
# Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
start_sim_backend
new_disk 96M
base=$params
rlog=$BK_TMP/librbd.log

vfy() { # DOM PARAMS [add_disk args] -- blkfront-test verify options...
	local dom=$1 p=$2 a=()
	shift 2
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	add_disk $dom "$p" "${a[@]}"
	blkfront-test verify --domid $dom --timeout 30000 "$@" >"$BK_TMP/out" 2>&1 ||
		{ cat "$BK_TMP/out"; fail "verify $* ($p ${a[*]}) failed"; }
	grep -q "^verify: ok: " "$BK_TMP/out" || fail "verify $*: no summary"
	blkfront-test xl-remove --domid $dom >/dev/null || fail "xl-remove"
}

# 1. cache=writethrough: librbd takes the guest's pages, no copy
new_guest
wt="$base:debug_rbd=5:log_file=$rlog"
vfy $DOM "$wt" --be-key cache=writethrough -- --bs 4k --size 4M --offset 0 --iodepth 16
[ -s "$rlog" ] || fail "librbd wrote no log to $rlog (debug_rbd=5:log_file=)"
grep -q "disabling zero-copy writes" "$rlog" &&
	fail "librbd copies the writes: $(grep -m1 "disabling zero-copy" "$rlog")"
grep -q "writethrough" "$BACKEND_LOG" || fail "the vbd did not run with cache=writethrough"

# 1b. the image's own configuration turns a writethrough cache on: librbd
#     would keep the written pages as clean cache and hold every write's
#     completion until they are evicted; blkbackd reopens the image with
#     copies, and the writes complete
rbdi() { timeout 60 rbd -c "$CEPH_CONF" "$@"; }
# (the metadata is written under the image's lock: the vbd of step 1 may
# still be closing its store)
wait_for 30 rbdi config image set "$img" rbd_cache true 2>"$BK_TMP/cfg.err" ||
	fail "rbd config image set: $(cat "$BK_TMP/cfg.err")"
wait_for 30 rbdi config image set "$img" rbd_cache_policy writethrough 2>"$BK_TMP/cfg.err" ||
	fail "rbd config image set: $(cat "$BK_TMP/cfg.err")"
new_guest
vfy $DOM "$base" --be-key cache=writethrough -- --bs 4k --size 1M --offset 0 --iodepth 4
grep -q "librbd's cache is on: its writes are copied" "$BACKEND_LOG" ||
	fail "no reopen with copies for an image whose own configuration has the cache on"
rbdi config image remove "$img" rbd_cache || fail "rbd config image remove"
rbdi config image remove "$img" rbd_cache_policy || fail "rbd config image remove"

# 2. byte-exact, persistent grants on and off, 4 KiB and 1 MiB, with and
#    without librbd's cache (the default cache copies in librbd)
off=4
for p in "$base" "$base:rbd_cache=false"; do
	for pers in "" --no-persistent; do
		for bs in 4k 1m; do
			new_guest
			vfy $DOM "$p" -- --bs $bs --size 4M --offset ${off}M --iodepth 8 \
				--max-indirect 256 --flush-every 16 $pers
			new_guest
			vfy $DOM "$p" -- --check-only --bs $bs --size 4M --offset ${off}M \
				--max-indirect 256 $pers
			off=$((off + 4))
		done
	done
done

# 3. one image handle for all of a vbd's queues
new_guest
add_disk $DOM "$base"
blkfront-test io --domid $DOM --queues 2 --rw randwrite --bs 4k --iodepth 8 --size 4M \
	--runtime 30 > "$BK_TMP/io.out" 2>&1 &
io=$!
cleanup_fn kill $io
wait_for 20 grep -q "vbd $DOM/51712: .*Connected.* 2 queues" "$BACKEND_LOG" ||
	fail "the vbd did not connect with 2 queues"
timeout 60 rbd -c "$CEPH_CONF" status "$img" --format json > "$BK_TMP/status" || fail "rbd status $img"
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["watchers"]))' "$BK_TMP/status")
[ "$n" = 1 ] || fail "two queues, $n watchers on the image (one handle per vbd: 1): $(cat "$BK_TMP/status")"
blkfront-test xl-remove --domid $DOM --force >/dev/null || fail "xl-remove --force"
wait_for 60 bk_forgot $DOM || fail "vbd $DOM: never forgotten"
kill $io 2>/dev/null || true; wait $io 2>/dev/null || true

# 4. removed with 1 MiB writes in flight
for pers in "" --no-persistent; do
	new_guest
	add_disk $DOM "$base"
	blkfront-test io --domid $DOM --rw write --bs 1m --iodepth 8 --size 32M \
		--max-indirect 256 --runtime 30 $pers > "$BK_TMP/io.out" 2>&1 &
	io=$!
	cleanup_fn kill $io
	wait_for 20 grep -q "vbd=$DOM/51712 ring=0 id=[0-9]* issue=" "$BACKEND_TRACE" ||
		fail "vbd $DOM: no write reached blkbackd"
	sleep 1
	at=$(wc -l < "$BACKEND_TRACE")
	blkfront-test xl-remove --domid $DOM --force >/dev/null || fail "xl-remove --force"
	wait_for 60 bk_forgot $DOM ||
		fail "vbd $DOM ($pers): never forgotten: blkbackd still holds \"$(bk_holds $DOM)\" of it"
	kill $io 2>/dev/null || true; wait $io 2>/dev/null || true
	# a write issued before the removal, answered after it: the drain
	tail -n +"$((at + 1))" "$BACKEND_TRACE" |
		grep -q "vbd=$DOM/51712 .*-> host=[a-z_,+]*rbd_aio_writev status=0" ||
		fail "vbd $DOM ($pers): no write was in flight at the removal (or none answered after it): $(tail -n +"$((at - 3))" "$BACKEND_TRACE" | grep "vbd=$DOM/" | tail -n 8)"
	kill -0 "$(bk_pid)" 2>/dev/null || fail "blkbackd died after the removal"
done
good_device_works "$base" || fail "blkbackd does not serve the image after the removals"
if grep -qi "error\|sanitizer\|runtime error" "$BACKEND_LOG"; then
	fail "blkbackd logged: $(grep -i "error\|sanitizer" "$BACKEND_LOG" | head -3)"
fi
stop_backend
exit 0
