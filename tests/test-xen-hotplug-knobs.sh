#!/usr/bin/env bash
# backend/block-blkbackd refuses a bad per-device knob from xl's environment
# at "add" time (hotplug-status=error, hotplug-error naming the variable),
# so that xl create fails clearly instead of leaving the guest a disk that
# never connects; good values reach the backend directory.  Runs over
# xensim's xenstore (the script only uses xenstore-read/write).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
script=$abs_top_srcdir/backend/block-blkbackd
img=$BK_TMP/disk.img
truncate -s 1M "$img"

B=/local/domain/0/backend/vbd/7/51712
xenstore-write $B/params "$img" $B/mode w
if BLKBACKD_FLUSH_MODE=fua XENBUS_PATH=$B "$script" add 2>/dev/null; then
	fail "add accepted BLKBACKD_FLUSH_MODE=fua"
fi
xs_is $B/hotplug-status error
[ "$(xenstore-read $B/hotplug-error)" = \
  "BLKBACKD_FLUSH_MODE=fua is not one of auto, flush, barrier, both, none" ] ||
	fail "hotplug-error: $(xenstore-read $B/hotplug-error)"
xenstore-exists $B/flush-mode && fail "a refused flush-mode was written"

B2=/local/domain/0/backend/vbd/7/51728
xenstore-write $B2/params "$img" $B2/mode w
if BLKBACKD_CACHE=none XENBUS_PATH=$B2 "$script" add 2>/dev/null; then
	fail "add accepted BLKBACKD_CACHE=none"
fi
xs_is $B2/hotplug-status error
[ "$(xenstore-read $B2/hotplug-error)" = \
  "BLKBACKD_CACHE=none is neither writeback nor writethrough" ] ||
	fail "hotplug-error: $(xenstore-read $B2/hotplug-error)"

B3=/local/domain/0/backend/vbd/7/51744
xenstore-write $B3/params "$img" $B3/mode w
BLKBACKD_FLUSH_MODE=both BLKBACKD_CACHE=writeback XENBUS_PATH=$B3 "$script" add ||
	fail "add refused good knobs"
xs_is $B3/hotplug-status connected
xs_is $B3/flush-mode both
xs_is $B3/cache writeback

# auto (blkbackd's default) is accepted and written as given
B4=/local/domain/0/backend/vbd/7/51760
xenstore-write $B4/params "$img" $B4/mode w
BLKBACKD_FLUSH_MODE=auto BLKBACKD_CACHE=writethrough XENBUS_PATH=$B4 "$script" add ||
	fail "add refused BLKBACKD_FLUSH_MODE=auto"
xs_is $B4/hotplug-status connected
xs_is $B4/flush-mode auto
xs_is $B4/cache writethrough
exit 0
