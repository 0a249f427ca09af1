#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The handshake to Connected, driven by hand with xenstore-write exactly
# as README "Serving a disk by hand" shows, then by blkfront-test's
# xl-add: the exact keys and values blkbackd publishes for a file, a
# read-only writethrough memory store, each flush-mode, and flush-mode
# auto (the default) per store and cache mode.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend

# ---- by hand (README) ----
new_guest
img=$BK_TMP/disk.img
truncate -s 64M "$img"
B=/local/domain/0/backend/vbd/$DOM/51712
F=/local/domain/$DOM/device/vbd/51712
xenstore-write \
	$F/backend $B $F/backend-id 0 $F/virtual-device 51712 $F/device-type disk $F/state 1 \
	$B/frontend $F $B/frontend-id $DOM $B/params "$img" $B/mode w $B/online 1 \
	$B/device-type disk $B/state 1
xenstore-chmod -r $F n$DOM r0
xenstore-chmod -r $B n0 r$DOM
xs_wait $B/state 2
blkfront-test attach --domid $DOM --hold > "$BK_TMP/attach.out" 2>&1 &
attach=$!
cleanup_fn kill $attach
xs_wait $B/state 4
for kv in feature-flush-cache=1 feature-barrier=0 feature-discard=1 \
	  discard-granularity=4096 discard-alignment=0 discard-secure=0 \
	  feature-persistent=1 sectors=131072 info=0 sector-size=512 \
	  physical-sector-size=512 max-ring-page-order=4 multi-queue-max-queues=4; do
	xs_is "$B/${kv%%=*}" "${kv#*=}"
done
xs_absent $B/error
xs_wait $F/state 4
kill -TERM $attach
wait $attach || fail "blkfront-test attach --hold did not exit cleanly"
xs_wait $B/state 6

# ---- the same guest reconnects (backend Closed -> InitWait -> Connected) ----
blkfront-test attach --domid $DOM > "$BK_TMP/attach2.out" ||
	fail "reconnect failed: $(cat "$BK_TMP/attach2.out")"
xs_wait $B/state 6
# xl destroy after the guest closed: online=0 and Closing -> Closed again
xenstore-write $B/online 0 $B/state 5
xs_wait $B/state 6

# ---- knobs: read-only, writethrough, memory store, both flush features ----
new_guest
add_disk $DOM memory:8M --mode r --be-key cache=writethrough --be-key flush-mode=both
B2=$(bk_be $DOM)
blkfront-test attach --domid $DOM --hold >/dev/null 2>&1 &
attach=$!
cleanup_fn kill $attach
xs_wait $B2/state 4
for kv in feature-flush-cache=1 feature-barrier=1 feature-discard=0 info=4 \
	  sectors=16384 sector-size=512 physical-sector-size=4096; do
	xs_is "$B2/${kv%%=*}" "${kv#*=}"
done
xs_absent $B2/discard-granularity
kill -TERM $attach; wait $attach || true

# ---- flush-mode none / barrier; discard-enable=0 ----
for mode in none barrier; do
	new_guest
	add_disk $DOM memory:1M --be-key flush-mode=$mode --discard-enable 0
	B3=$(bk_be $DOM)
	blkfront-test attach --domid $DOM --hold >/dev/null 2>&1 &
	attach=$!
	cleanup_fn kill $attach
	xs_wait $B3/state 4
	xs_is $B3/feature-flush-cache 0
	xs_is $B3/feature-barrier $([ $mode = barrier ] && echo 1 || echo 0)
	xs_is $B3/feature-discard 0
	kill -TERM $attach; wait $attach || true
done

# ---- flush-mode auto (the default when the key is absent): Linux
# blkback's rule, flush-cache only over a volatile cache; explicit modes
# stay honoured on a writethrough store ----
check_flush() { # PARAMS CACHE FLUSH-MODE(- = no key) FLUSH BARRIER
	local keys=(--be-key cache=$2) be
	[ "$3" = - ] || keys+=(--be-key flush-mode=$3)
	new_guest
	add_disk $DOM "$1" "${keys[@]}"
	be=$(bk_be $DOM)
	blkfront-test attach --domid $DOM --hold >/dev/null 2>&1 &
	attach=$!
	cleanup_fn kill $attach
	xs_wait $be/state 4
	[ "$(xenstore-read $be/feature-flush-cache)/$(xenstore-read $be/feature-barrier)" = "$4/$5" ] ||
		fail "$1 cache=$2 flush-mode=$3: feature-flush-cache/feature-barrier" \
		     "$(xenstore-read $be/feature-flush-cache)/$(xenstore-read $be/feature-barrier), expected $4/$5"
	kill -TERM $attach; wait $attach || true
}
truncate -s 1M "$BK_TMP/wt.img"
for params in memory:1M "$BK_TMP/wt.img"; do
	check_flush "$params" writeback - 1 0
	check_flush "$params" writeback auto 1 0
	check_flush "$params" writethrough - 0 0
	check_flush "$params" writethrough auto 0 0
	check_flush "$params" writethrough both 1 1
	check_flush "$params" writethrough flush 1 0
done
# one line per auto vbd that got no flush feature, saying why
n=$(grep -c "flush-mode=auto: the backing has no volatile write cache" "$BACKEND_LOG")
[ "$n" = 4 ] || fail "$n log lines for auto on writethrough, expected 4"
# the null store has no cache either; a memory store that cannot flush
# gets nothing whatever the mode
check_flush null:1M writeback - 0 0
check_flush memory:1M,no-flush writeback - 0 0
grep -q "flush-mode=auto: the backing cannot flush" "$BACKEND_LOG" ||
	fail "no log line for auto on a store that cannot flush"

# a file whose size is not a multiple of 512: whole sectors only (Linux
# blkback: size >> 9), and a line saying what is left out
head -c 1000 /dev/zero > "$BK_TMP/odd.img"
new_guest
add_disk $DOM "$BK_TMP/odd.img"
blkfront-test attach --domid $DOM >/dev/null || fail "attach to a 1000-byte file"
xs_is "$(bk_be $DOM)/sectors" 1
grep -q "$BK_TMP/odd.img: size 1000 is not a multiple of 512: the last 488 bytes are not served" \
	"$BACKEND_LOG" || fail "no log line for the 488 bytes not served"

stop_backend
exit 0
