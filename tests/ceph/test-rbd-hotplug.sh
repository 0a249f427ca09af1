#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The hotplug script (backend/block-blkbackd) on an rbd: target: "add"
# checks with rbd info that the image exists, and refuses a missing one
# with hotplug-status=error and the reason.  Runs over xensim's xenstore.
# Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
script=$abs_top_srcdir/backend/block-blkbackd
new_disk 4M
B=/local/domain/0/backend/vbd/7/51712
xenstore-write $B/params "$params" $B/mode w
XENBUS_PATH=$B "$script" add || fail "add refused an existing image"
xs_is $B/hotplug-status connected
xs_absent $B/hotplug-error
B2=/local/domain/0/backend/vbd/7/51728
xenstore-write $B2/params "rbd:$CEPH_POOL/no-such-image:conf=$CEPH_CONF" $B2/mode w
if XENBUS_PATH=$B2 "$script" add 2>/dev/null; then
	fail "add accepted a missing image"
fi
xs_is $B2/hotplug-status error
xenstore-read $B2/hotplug-error | grep -q "^params: rbd image $CEPH_POOL/no-such-image: .*No such file or directory" ||
	fail "hotplug-error: $(xenstore-read $B2/hotplug-error)"
exit 0
