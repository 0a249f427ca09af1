#!/usr/bin/env bash
# The handshake to Connected, driven by hand with xenstore-write exactly
# as README "Serving a disk by hand" shows, then by blkfront-test's
# xl-add: the exact keys and values blkbackd publishes for a file, a
# read-only writethrough memory store, and each flush-mode.
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
	  feature-persistent=0 sectors=131072 info=0 sector-size=512 \
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

stop_backend
exit 0
