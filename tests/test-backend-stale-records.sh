#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Recovery records of vbds that went while no blkbackd ran.  Two guests'
# disks Connected; SIGTERM leaves both attached, each with its record in
# the state directory.  While blkbackd is down the toolstack removes
# guest A's disk (its backend and frontend directories, as xl destroy
# does).  The next blkbackd takes B's vbd over and removes A's record,
# saying so; B's record stays.  Then, stopped again, blkbackd-ctl status
# counts only B among the stalled guests (before, A's record stayed until
# a reboot emptied /run, and status named A's long-gone disk).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim
start_backend
state_dir=$(blkbackd-ctl status | sed -n 's/.*state_dir=\([^ ]*\).*/\1/p')
[ -n "$state_dir" ] || state_dir=$(realpath "$XENSTORED_PATH").blkbackd-0.state

hold() {	# hold: a new guest with a 1 MiB xvda, Connected and held
	new_guest
	truncate -s 1M "$BK_TMP/disk.$DOM"
	add_disk $DOM "$BK_TMP/disk.$DOM" --vdev xvda
	blkfront-test attach --domid $DOM --vdev xvda --hold > "$BK_TMP/hold.$DOM" 2>&1 &
	cleanup_fn kill -KILL $!
	xs_wait $(bk_be $DOM 51712)/state 4
	xs_wait /local/domain/$DOM/device/vbd/51712/state 4
}
hold; A=$DOM
hold; B=$DOM
records() { (cd "$state_dir" && ls vbd-* 2>/dev/null | tr '\n' ' '); }
[ -d "$state_dir" ] || fail "no state directory $state_dir"
stop_backend TERM
r=$(records)
for g in $A $B; do
	grep -q "vbd-$g-51712-q0" <<<"$r" || fail "no record of vbd $g/51712 after SIGTERM: $r"
done
# the toolstack removes A's disk while blkbackd is down
xenstore-rm "$(bk_be $A 51712)"
xenstore-rm "/local/domain/$A/device/vbd/51712"
start_backend
wait_for 10 blkbackd-ctl status > /dev/null || fail "blkbackd does not answer"
r=$(records)
grep -q "vbd-$A-51712-q" <<<"$r" && fail "the record of removed vbd $A/51712 is still there: $r"
grep -q "vbd-$B-51712-q0" <<<"$r" || fail "the record of vbd $B/51712, taken over, went: $r"
grep -q "vbd $A/51712: removed its recovery record .*: its backend directory went while no blkbackd ran" \
	"$BACKEND_LOG" || fail "the removal was not logged"
xs_is $(bk_be $B 51712)/state 4
stop_backend TERM
rc=0
out=$(blkbackd-ctl status 2>&1) || rc=$?
[ $rc = 3 ] || fail "status, blkbackd down: exit $rc: $out"
grep -q "left 1 vbd of 1 guest attached without a backend" <<<"$out" ||
	fail "status with blkbackd down must count B's vbd alone: $out"
grep -q "$A/51712" <<<"$out" && fail "status names the removed vbd $A/51712: $out"
true
