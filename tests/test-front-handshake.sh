#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkfront-test's handshake against blkbackd: the frontend keys are exactly
# Linux blkfront's (single queue: ring-ref + event-channel; multi-queue and
# multi-page: ring-page-order, multi-queue-num-queues, queue-N/ring-refN),
# the features are read in Linux's order, close reaches Closed on both
# sides, and a second session reconnects.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend

# xl-add: libxl's keys and permissions
blkfront-test xl-add --domid $DOM --params memory:8M >/dev/null || fail "xl-add"
fe=$(fe_dir); be=$(be_dir)
xs_is "$fe/backend" "$be"
xs_is "$fe/backend-id" 0
xs_is "$fe/virtual-device" 51712
xs_is "$fe/device-type" disk
xs_is "$be/frontend" "$fe"
xs_is "$be/frontend-id" "$DOM"
xs_is "$be/online" 1
xs_is "$be/mode" w
xs_is "$be/dev" xvda
xs_is "$be/type" phy
[ "$(xenstore-ls -p "$fe" | head -1 | grep -o '(.*)')" = "(n$DOM,r0)" ] ||
	fail "frontend perms: $(xenstore-ls -p "$fe" | head -1)"
[ "$(xenstore-ls -p "$be" | head -1 | grep -o '(.*)')" = "(n0,r$DOM)" ] ||
	fail "backend perms: $(xenstore-ls -p "$be" | head -1)"
blkfront-test xl-add --domid $DOM --params memory:8M 2>/dev/null && fail "xl-add of an existing device succeeded"

# keys: the set of frontend keys while connected
keys() { xenstore-list "$1" | sort | tr '\n' ' '; }

# 1. one queue, one page
blkfront-test attach --domid $DOM --hold > "$FT/info1" 2>"$FT/attach1.log" &
apid=$!
xs_wait "$fe/state" 4
want="backend backend-id device-type event-channel feature-persistent protocol ring-ref state virtual-device "
[ "$(keys "$fe")" = "$want" ] || fail "single-queue keys: $(keys "$fe")"
xs_is "$fe/protocol" x86_64-abi
xs_is "$fe/feature-persistent" 1
xs_is "$be/state" 4
kill -TERM $apid; wait $apid || fail "attach --hold did not exit 0 on SIGTERM"
xs_is "$fe/state" 6
xs_is "$be/state" 6
grep -q '^flush: 1$' "$FT/info1" || fail "flush not negotiated: $(cat "$FT/info1")"
grep -q '^barrier: 0$' "$FT/info1" || fail "barrier used although flush was offered"
grep -q '^sectors: 16384$' "$FT/info1" || fail "sectors: $(grep sectors "$FT/info1")"

# 2. reconnect, now 2 queues of 4 pages (a new session on a Closed device)
blkfront-test attach --domid $DOM --hold --queues 2 --ring-order 2 > "$FT/info2" 2>"$FT/attach2.log" &
apid=$!
xs_wait "$fe/state" 4
want="backend backend-id device-type feature-persistent multi-queue-num-queues protocol queue-0 queue-1 ring-page-order state virtual-device "
[ "$(keys "$fe")" = "$want" ] || fail "multi-queue keys: $(keys "$fe")"
xs_is "$fe/ring-page-order" 2
xs_is "$fe/multi-queue-num-queues" 2
for q in 0 1; do
	[ "$(keys "$fe/queue-$q")" = "event-channel ring-ref0 ring-ref1 ring-ref2 ring-ref3 " ] ||
		fail "queue-$q keys: $(keys "$fe/queue-$q")"
done
kill -TERM $apid; wait $apid || fail "attach (2 queues) failed"
grep -q '^queues: 2$' "$FT/info2" || fail "not 2 queues: $(cat "$FT/info2")"
grep -q '^ring-page-order: 2$' "$FT/info2" || fail "ring order"
grep -q '^ring-size: 128$' "$FT/info2" || fail "ring size: $(grep ring-size "$FT/info2")"
# ours is 32 (Linux's default); the backend may offer fewer (or more)
bmax=$(xenstore-read "$be/feature-max-indirect-segments" 2>/dev/null || echo 0)
want=$(( bmax < 32 ? bmax : 32 )); [ "$want" -gt 11 ] || want=0
grep -q "^max-indirect-segments: $want\$" "$FT/info2" ||
	fail "indirect: $(grep indirect "$FT/info2"), backend offers $bmax, expected $want"

# 3. a reconnect within one process: the same device, a second handshake
blkfront-test attach --domid $DOM --reconnect --json > "$FT/rc" || fail "attach --reconnect"
[ "$(grep -c '"sectors":16384' "$FT/rc")" = 2 ] || fail "reconnect: $(cat "$FT/rc")"
xs_is "$fe/state" 6
xs_is "$be/state" 6

# 4. feature order (blkfront_gather_backend_features), per flush-mode
check_mode() { # flush-mode flush fua barrier
	blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
	blkfront-test xl-add --domid $DOM --params memory:8M --be-key flush-mode=$1 >/dev/null
	blkfront-test attach --domid $DOM --json > "$FT/j" || fail "attach with flush-mode=$1"
	grep -q "\"flush\":$2,\"fua\":$3,\"barrier\":$4" "$FT/j" ||
		fail "flush-mode=$1: expected flush=$2 fua=$3 barrier=$4: $(cat "$FT/j")"
}
check_mode flush true false false
check_mode barrier true true true
check_mode both true false false
check_mode none false false false

# 4. the toolstack removes the disk under a held connection: the
# backend goes Closing, the guest closes its side (as Linux blkfront
# does), so xl-remove sees Closed in time and attach --hold ends
blkfront-test attach --domid $DOM --hold > "$FT/info4" 2>"$FT/attach4.log" &
apid=$!
cleanup_fn kill $apid
xs_wait "$be/state" 4
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove under a held connection"
wait_for 20 eval '! kill -0 $apid 2>/dev/null' || { cat "$FT/attach4.log"; fail "attach --hold did not end when the backend closed"; }
grep -q "backend $be went Closing" "$FT/attach4.log" ||
	fail "attach --hold did not say why: $(cat "$FT/attach4.log")"
xs_absent "$fe"
xs_absent "$be"
stop_backend
exit 0
