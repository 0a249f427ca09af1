#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd another backend serves (the kernel's xen-blkback, which answers
# the same "vbd" kind) looks exactly like one a restarted blkbackd takes
# over: backend Connected, hotplug-status connected, frontend Connected
# with its ring keys.  blkbackd has no recovery record for that ring, so
# it leaves the vbd alone: not one write under its backend directory
# (xenstore-watch, and xenstore-ls -p byte-identical), its backing never
# opened, one log line saying so; another vbd is served as usual.  The
# toolstack's close of that vbd (online=0, Closing, the frontend Closed)
# is the other backend's business too.  Once the toolstack makes the vbd
# new (state Initialising, Linux xenbus_probe_node's "new device"),
# blkbackd serves it; and a vbd made again from scratch likewise.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$(command -v xenstore-watch)"
requires test -x "$(command -v xenstore-ls)"
requires python3 --version
need_frontend
start_xensim

# the kernel's vbd, as xen-blkback and a Linux blkfront leave it
new_guest
kdom=$DOM
be=$(bk_be $kdom) fe=/local/domain/$kdom/device/vbd/51712
kimg=$BK_TMP/kernel.img
truncate -s 4M "$kimg"
xenstore-write $be/frontend $fe $be/frontend-id $kdom $be/params "$kimg" \
	$be/mode w $be/online 1 $be/type phy $be/physical-device 7:0 \
	$be/hotplug-status connected $be/feature-flush-cache 1 \
	$be/feature-persistent 1 $be/sectors 8192 $be/info 0 $be/sector-size 512 \
	$be/max-ring-page-order 4 $be/multi-queue-max-queues 4 $be/state 4
xenstore-write $fe/backend $be $fe/backend-id 0 $fe/virtual-device 51712 \
	$fe/ring-ref 8 $fe/event-channel 5 $fe/protocol x86_64-abi \
	$fe/feature-persistent 1 $fe/state 4
xenstore-ls -p $be > "$BK_TMP/be.before"
xenstore-ls -p $fe > "$BK_TMP/fe.before"
# every change under the backend directory from now on (the first line
# is the watch's initial event)
xs_record "$BK_TMP/watch"

start_backend
pid=$(bk_pid)
grep -q "vbd $kdom/51712: Connected, but not by this blkbackd (no recovery record for its ring): left alone; another backend (kernel xen-blkback?) serves it" \
	"$BACKEND_LOG" || fail "no log line saying the vbd is left alone"

# blkbackd-ctl list says so
if [ -x "$abs_top_builddir/backend/blkbackd-ctl" ]; then
	blkbackd-ctl list --json > "$BK_TMP/list" ||
		fail "blkbackd-ctl list failed"
	python3 - "$BK_TMP/list" "$kdom/51712" <<'EOP' ||
import json, sys
v = {x["vbd"]: x for x in json.load(open(sys.argv[1]))["vbds"]}
assert v[sys.argv[2]]["state_name"] == "left-alone", v.get(sys.argv[2])
EOP
		{ cat "$BK_TMP/list"; fail "blkbackd-ctl list does not show the vbd left alone"; }
fi

# another vbd is served as usual meanwhile
new_guest
add_disk $DOM memory:1M
io_works $DOM

bk_sync "$BK_TMP/watch"	# all blkbackd wrote so far is in the watch
xenstore-ls -p $be | cmp -s - "$BK_TMP/be.before" ||
	{ diff "$BK_TMP/be.before" <(xenstore-ls -p $be); fail "blkbackd changed $be"; }
xenstore-ls -p $fe | cmp -s - "$BK_TMP/fe.before" || fail "blkbackd changed $fe"
[ "$(xs_count "$BK_TMP/watch" $be)" = 0 ] ||
	{ cat "$BK_TMP/watch"; fail "blkbackd wrote under $be"; }
ls -l /proc/$pid/fd | grep -q kernel.img && fail "blkbackd opened the other backend's backing"
grep -q "vbd=$kdom/" "$BACKEND_TRACE" && fail "blkbackd touched the other backend's ring"

# the toolstack closes it (libxl: online=0 and Closing), the guest
# closes: the other backend's Closed to write, not ours
xenstore-write $be/online 0 $be/state 5
xenstore-write $fe/state 6
bk_sync "$BK_TMP/watch"	# blkbackd has handled both writes
[ "$(xs_count "$BK_TMP/watch" $be)" = 2 ] ||
	{ cat "$BK_TMP/watch"; fail "blkbackd wrote under $be while it was closed"; }
xs_is $be/state 5
[ "$(grep -c "vbd $kdom/51712" "$BACKEND_LOG")" = 1 ] ||
	{ grep "vbd $kdom/51712" "$BACKEND_LOG"; fail "more than one line about the vbd left alone"; }

# the other backend is gone; the toolstack makes the vbd new in place
xenstore-write $be/online 1 $be/state 1
xs_wait $be/state 2
grep -q "vbd $kdom/51712: Initialising again (made new by the toolstack): served from now on" \
	"$BACKEND_LOG" || fail "no log line saying the vbd is served now"

# ... or removes it and adds it again from scratch: served, I/O works
blkfront-test xl-remove --domid $kdom --force >/dev/null || fail "xl-remove"
wait_for 10 grep -q "vbd $kdom/51712: removed" "$BACKEND_LOG" || fail "the vbd was not forgotten"
add_disk $kdom "$kimg"
io_works $kdom
stop_backend
exit 0
