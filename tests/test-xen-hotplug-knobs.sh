#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
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

# good knobs are written as given (auto: blkbackd's default)
expect_accepted() { # DEVID FLUSH-MODE CACHE
	local b=/local/domain/0/backend/vbd/7/$1
	xenstore-write $b/params "$img" $b/mode w
	BLKBACKD_FLUSH_MODE=$2 BLKBACKD_CACHE=$3 XENBUS_PATH=$b "$script" add ||
		fail "add refused BLKBACKD_FLUSH_MODE=$2 BLKBACKD_CACHE=$3"
	xs_is $b/hotplug-status connected
	xs_is $b/flush-mode "$2"
	xs_is $b/cache "$3"
}
expect_accepted 51744 both writeback
expect_accepted 51760 auto writethrough

# the host's disks file: read at every attach (a guest xendomains starts
# has no admin's environment); the first matching pattern wins; xl's
# environment wins over it; a bad value names its file and line
export BLKBACKD_DISKS=$BK_TMP/disks
cat > "$BLKBACKD_DISKS" <<EOD
# per-disk settings
$BK_TMP/other.img  cache=writethrough flush-mode=none
$img   cache=writethrough flush-mode=barrier io-engine=libaio  # the database
$BK_TMP/*.img      flush-mode=flush
EOD
from_file() { # DEVID ENV... : add with ENV, print "flush-mode cache" written
	local b=/local/domain/0/backend/vbd/8/$1
	shift
	xenstore-write $b/params "$img" $b/mode w
	env "$@" XENBUS_PATH=$b "$script" add || fail "add refused with the disks file"
	xs_is $b/hotplug-status connected
	echo "$(xenstore-read $b/flush-mode 2>/dev/null || echo -) $(xenstore-read $b/cache 2>/dev/null || echo -)"
}
got=$(from_file 51712)
[ "$got" = "barrier writethrough" ] || fail "the disks file's line for $img: $got"
xs_is /local/domain/0/backend/vbd/8/51712/io-engine libaio
got=$(from_file 51728 BLKBACKD_CACHE=writeback)
[ "$got" = "barrier writeback" ] || fail "xl's environment did not win over the disks file: $got"
other=$BK_TMP/x.img
truncate -s 1M "$other"
b=/local/domain/0/backend/vbd/8/51744
xenstore-write $b/params "$other" $b/mode w
XENBUS_PATH=$b "$script" add || fail "add refused $other"
xs_is $b/flush-mode flush
xenstore-exists $b/cache && fail "cache written for a line that sets none"
# a last line without its newline is read like any other
printf '%s cache=writethrough' "$img" > "$BLKBACKD_DISKS"
got=$(from_file 51792)
[ "$got" = "- writethrough" ] || fail "the disks file's last line, without a newline: $got"
# a bad value or word on the matching line: refused, its line named,
# nothing of the line written
refused_from_file() { # DEVID LINE HOTPLUG-ERROR
	local b=/local/domain/0/backend/vbd/8/$1
	printf '%s %s\n' "$img" "$2" > "$BLKBACKD_DISKS"
	xenstore-write $b/params "$img" $b/mode w
	if XENBUS_PATH=$b "$script" add 2>/dev/null; then fail "add accepted \"$2\" from the disks file"; fi
	xs_is $b/hotplug-status error
	[ "$(xenstore-read $b/hotplug-error)" = "$BLKBACKD_DISKS:1: $3" ] ||
		fail "hotplug-error: $(xenstore-read $b/hotplug-error)"
	xenstore-exists $b/cache && fail "cache written from a refused line"
	xenstore-exists $b/flush-mode && fail "flush-mode written from a refused line"
	xenstore-exists $b/io-engine && fail "io-engine written from a refused line"
	return 0
}
refused_from_file 51760 "cache=none" "cache=none is neither writeback nor writethrough"
refused_from_file 51776 "cache=writeback fua=yes" '"fua=yes" is not flush-mode=MODE, cache=MODE or io-engine=ENGINE'
refused_from_file 51808 "cache=writeback io-engine=uring" "io-engine=uring is not one of auto, libaio, io_uring"
# an empty value is a bad value, not an absent key
refused_from_file 51824 "flush-mode= cache=writethrough" "flush-mode= is not one of auto, flush, barrier, both, none"
refused_from_file 51840 "cache=" "cache= is neither writeback nor writethrough"

# a pattern is matched against params and, for a path with a driver
# prefix (file:, phy:, disk2008:...), against the path without it
printf '%s cache=writethrough\n' "$BK_TMP/*.img" > "$BLKBACKD_DISKS"
for p in "file:$img" "phy:$img" "disk2008:$img"; do
	b=/local/domain/0/backend/vbd/9/51712
	xenstore-rm $b 2>/dev/null || true
	xenstore-write $b/params "$p" $b/mode w
	XENBUS_PATH=$b "$script" add || fail "add refused params=$p"
	xs_is $b/cache writethrough
done
# and a pattern with the prefix still matches as before
printf 'file:%s cache=writethrough\n' "$img" > "$BLKBACKD_DISKS"
b=/local/domain/0/backend/vbd/9/51728
xenstore-write $b/params "file:$img" $b/mode w
XENBUS_PATH=$b "$script" add || fail "add refused params=file:$img"
xs_is $b/cache writethrough
# memory: is no path: a path pattern does not match it
printf '%s cache=writethrough\n' '/*' > "$BLKBACKD_DISKS"
b=/local/domain/0/backend/vbd/9/51744
xenstore-write $b/params memory:64M
XENBUS_PATH=$b "$script" add || fail "add refused memory:64M"
xenstore-exists $b/cache && fail "a path pattern matched memory:64M"
exit 0
