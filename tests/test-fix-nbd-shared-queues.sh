#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An nbd: vbd on a server without multi-conn, and a guest on two queues:
# both queues share the store's one connection, each polling its socket
# from its own thread.  A reply one thread read while another had just
# polled it readable left libnbd waiting for nothing: every request on
# the connection stalled until timeout= dropped it, and the guest got
# BLKIF_RSP_ERROR (and, after a flush, a failed vbd).  Judged from
# outside: the guest's verify run on two queues passes, byte-exact (verify
# fails on any response but OKAY), and the vbd is neither failed nor in error.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
start_sim_backend
# nbdkit's memory plugin offers multi-conn; the filter takes it away
nbdkit_start srv --filter=multi-conn memory size=32M multi-conn-mode=disable
new_guest
be=$(bk_be $DOM)
add_disk $DOM "nbd:$NBD_URI,timeout=5"
blkfront-test verify --domid $DOM --timeout 20000 --queues 2 --iodepth 64 --count 20000 \
	--size 16M --flush-every 100 > "$BK_TMP/out" 2>&1 ||
	{ cat "$BK_TMP/out"; fail "verify on two queues sharing one connection failed"; }
grep "^verify: ok: 20000 writes acknowledged" "$BK_TMP/out" || { cat "$BK_TMP/out"; fail "no verify summary"; }
xs_absent $be/blkbackd-failed
xs_absent $be/error
stop_backend
exit 0
