#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkfront-test removes the frontend keys it wrote when it closes (ring
# layout, queues, protocol), so a multi-queue, multi-page session leaves
# nothing that breaks the next single-queue connect; and a connect
# overwrites what a killed frontend left behind (Linux blkfront rewrites
# its keys in one transaction).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend
add_disk $DOM memory:16M
fe=$(fe_dir)
blkfront-test io --domid $DOM --queues 4 --ring-order 2 --size 64k --timeout 20000 \
	>"$FT/io1" 2>&1 || fail "multi-queue io: $(cat "$FT/io1")"
for k in multi-queue-num-queues ring-page-order queue-0 queue-3 ring-ref ring-ref0 \
	 event-channel protocol feature-persistent; do
	xs_absent "$fe/$k"
done
xs_is "$fe/virtual-device" 51712	# the toolstack's keys stay
xs_is "$fe/device-type" disk
blkfront-test io --domid $DOM --size 64k --timeout 10000 >"$FT/io2" 2>&1 ||
	fail "single-queue io after a multi-queue one: $(cat "$FT/io2")"
xs_absent "$(be_dir)/error"

# what a SIGKILLed multi-queue frontend leaves: the next connect clears it
xenstore-write "$fe/multi-queue-num-queues" 4 "$fe/ring-page-order" 3 \
	"$fe/queue-0/ring-ref0" 99 "$fe/queue-0/event-channel" 9 "$fe/ring-ref1" 98
blkfront-test io --domid $DOM --size 64k --timeout 10000 >"$FT/io3" 2>&1 ||
	fail "single-queue io over stale keys: $(cat "$FT/io3")"
xs_absent "$(be_dir)/error"
xs_absent "$fe/queue-0"
stop_backend
exit 0
