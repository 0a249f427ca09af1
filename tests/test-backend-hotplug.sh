#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# backend/block-blkbackd, the xl hotplug script: "add" checks params and
# writes hotplug-status=connected; a missing backing gets
# hotplug-status=error and a hotplug-error naming it.  Every file-backed
# prefix blkbackd takes (file:, disk2008:...) is checked as a path.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
script=$abs_top_srcdir/backend/block-blkbackd
img=$BK_TMP/disk.img
truncate -s 1M "$img"
B=/local/domain/0/backend/vbd/7/51712
xenstore-write $B/params "$img" $B/mode w
XENBUS_PATH=$B "$script" add || fail "add failed on a good params"
xs_is $B/hotplug-status connected
XENBUS_PATH=$B "$script" remove || fail "remove failed"

B2=/local/domain/0/backend/vbd/7/51728
xenstore-write $B2/params "$BK_TMP/nosuch.img" $B2/mode w
if XENBUS_PATH=$B2 "$script" add 2>/dev/null; then fail "add accepted a missing backing"; fi
xs_is $B2/hotplug-status error
case "$(xenstore-read $B2/hotplug-error)" in
"params: $BK_TMP/nosuch.img does not exist") ;;
*) fail "hotplug-error: $(xenstore-read $B2/hotplug-error)" ;;
esac

# knobs from xl's environment
BLKBACKD_FLUSH_MODE=barrier BLKBACKD_CACHE=writethrough XENBUS_PATH=$B "$script" add ||
	fail "add with knobs failed"
xs_is $B/flush-mode barrier
xs_is $B/cache writethrough

B3=/local/domain/0/backend/vbd/7/51744
xenstore-write $B3/params memory:64M
XENBUS_PATH=$B3 "$script" add || fail "add failed on memory:"
xs_is $B3/hotplug-status connected

# an NBD URI is not a path to stat
B4=/local/domain/0/backend/vbd/7/51760
xenstore-write $B4/params "nbd:nbd+unix:///disk?socket=/run/x.sock"
XENBUS_PATH=$B4 "$script" add || fail "add failed on nbd:"
xs_is $B4/hotplug-status connected

# disk2008:PATH, like file:PATH, names a file on the host: it is checked
B5=/local/domain/0/backend/vbd/7/51776
xenstore-write $B5/params "disk2008:$img" $B5/mode w
XENBUS_PATH=$B5 "$script" add || fail "add failed on disk2008:$img"
xs_is $B5/hotplug-status connected
B6=/local/domain/0/backend/vbd/7/51792
xenstore-write $B6/params "disk2008:$BK_TMP/nosuch.img" $B6/mode w
if XENBUS_PATH=$B6 "$script" add 2>/dev/null; then fail "add accepted a missing disk2008 file"; fi
xs_is $B6/hotplug-error "params: $BK_TMP/nosuch.img does not exist"
exit 0
