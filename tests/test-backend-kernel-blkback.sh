#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd refuses to start beside the kernel's xen-blkback (both serve
# the "vbd" kind), naming the way out: loaded and bound to vbds, or
# loaded and bound to none (it would take every new vbd).  Nothing is
# written to xenstore then.  --leave-kernel-vbds starts all the same and
# leaves every vbd bound to the kernel alone (even one in Initialising:
# the kernel probes it), while another vbd is served.  sysfs is faked
# through BLKBACKD_SYSFS_ROOT (under the simulator blkbackd looks at
# sysfs only when that variable is set).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$(command -v xenstore-watch)"
need_frontend
start_xensim

sys=$BK_TMP/sys
mkdir -p $sys/module $sys/bus/xen-backend/drivers/vbd $sys/bus/xen-backend/devices
export BLKBACKD_SYSFS_ROOT=$sys

# the kernel's vbd: just made by the toolstack, bound to xen-blkback
new_guest
kdom=$DOM
be=$(bk_be $kdom)
add_vbd $kdom 51712 $BK_TMP/kernel.img
truncate -s 1M $BK_TMP/kernel.img
xs_record "$BK_TMP/watch"

# refuse: exit 3 before serving, the way out named, nothing written
refused() {
	local rc=0
	timeout 30 blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" \
		--pidfile="$BK_TMP/refused.pid" 2> "$BK_TMP/refused.err" || rc=$?
	cat "$BK_TMP/refused.err"
	[ $rc = 3 ] || fail "blkbackd beside xen-blkback: exit status $rc, expected 3"
	[ ! -e "$BK_TMP/refused.pid" ] || fail "blkbackd beside xen-blkback wrote its pidfile"
	grep -q -- "--leave-kernel-vbds" "$BK_TMP/refused.err" ||
		fail "the refusal does not name --leave-kernel-vbds"
	grep -q "modprobe -r xen-blkback" "$BK_TMP/refused.err" ||
		fail "the refusal does not say how to unload xen-blkback"
}

# loaded, serving none yet
mkdir $sys/module/xen_blkback
refused
grep -q "the kernel's xen-blkback is loaded ($sys/module/xen_blkback): it serves no vbd now but takes every new one" \
	"$BK_TMP/refused.err" || fail "no refusal for a loaded xen-blkback"

# without -f the parent exits with the child's start-up status
rc=0
timeout 30 blkbackd --transport=sim --sim-dir="$XENSIM_DIR" \
	--pidfile="$BK_TMP/refused.pid" 2> "$BK_TMP/refused.err" || rc=$?
[ $rc = 3 ] || { cat "$BK_TMP/refused.err"; fail "blkbackd (detaching) beside xen-blkback: exit status $rc, expected 3"; }

# loaded and bound to the vbd
mkdir $sys/bus/xen-backend/devices/vbd-$kdom-51712
ln -s ../../drivers/vbd $sys/bus/xen-backend/devices/vbd-$kdom-51712/driver
refused
grep -q "the kernel's xen-blkback serves 1 vbd (vbd-$kdom-51712): blkbackd would serve the same ones" \
	"$BK_TMP/refused.err" || fail "no refusal naming the kernel's vbd"
grep -q "Switching a dom0 over" "$BK_TMP/refused.err" ||
	fail "the refusal does not point at the switch-over procedure"
xs_mark "$BK_TMP/watch"	# the refused one exited: all it wrote is in the watch now
[ "$(xs_count "$BK_TMP/watch" $be)" = 0 ] ||
	{ cat "$BK_TMP/watch"; fail "a refused blkbackd wrote under $be"; }
xs_is $be/state 1

# told to leave the kernel's vbds alone: it starts, leaves that one be,
# and serves another
start_backend --leave-kernel-vbds
grep -q "the kernel's xen-blkback is loaded (1 vbd bound to it: vbd-$kdom-51712): --leave-kernel-vbds: those are left alone" \
	"$BACKEND_LOG" || fail "no log line about --leave-kernel-vbds"
grep -q "vbd $kdom/51712: bound to the kernel's xen-blkback (sysfs): left alone" \
	"$BACKEND_LOG" || fail "the kernel's vbd was not left alone"
new_guest
add_disk $DOM memory:1M
io_works $DOM
bk_sync "$BK_TMP/watch"	# all blkbackd wrote so far is in the watch
[ "$(xs_count "$BK_TMP/watch" $be)" = 0 ] ||
	{ cat "$BK_TMP/watch"; fail "blkbackd wrote under the kernel's $be"; }
xs_is $be/state 1
ls -l /proc/$(bk_pid)/fd | grep -q kernel.img && fail "blkbackd opened the kernel's backing"
stop_backend
exit 0
