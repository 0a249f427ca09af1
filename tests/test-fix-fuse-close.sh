#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd whose backing hangs at its close holds up only itself.  Once a
# vbd's queues have drained, its store is closed; a close can wait on
# what backs it (a FUSE file's close(2) sends FLUSH to its daemon;
# rbd_close hands the image's lock back through the cluster).  That
# close ran on the control thread, which then served nobody: the guest
# that closed never saw Closed, no other guest was probed, blkbackd-ctl
# got no answer.  Now, with the FUSE daemon stopped (tests/fuse-file.c:
# a dead hard NFS mount) when A's guest closes its disk: A reaches
# Closed, another guest is probed, connected and verified byte-exact,
# and blkbackd-ctl list answers.  SIGTERM then waits for the close
# still out (an exit would cut it short), and blkbackd exits once the
# daemon runs again.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
fuse_file_start

# A: served from the FUSE file, then closed by its guest
new_guest; A=$DOM
add_disk $A "$FUSE_DISK"
xs_wait "$(bk_be $A)/state" 2 30
cat > "$BK_TMP/a.script" <<'EOS'
fill p0 seed:3
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=read id=2 sector=8 seg=p1 expect=OKAY
check p1 seed:3
xs-expect fe go 1 timeout=60000
EOS
blkfront-test script --domid $A "$BK_TMP/a.script" > "$BK_TMP/a.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 30 grep -q "vbd=$A/51712 .* op=read id=2 .*status=0" "$BACKEND_TRACE" ||
	{ cat "$BK_TMP/a.out"; fail "A's guest was not served"; }
fuse_file_stop
xenstore-write "/local/domain/$A/device/vbd/51712/go" 1
wait $front || { cat "$BK_TMP/a.out"; fail "A's guest did not close cleanly"; }
xs_wait "$(bk_be $A)/state" 6 30

# B: another guest, served while A's store is being closed
new_guest; B=$DOM
truncate -s 4M "$BK_TMP/b.img"
add_disk $B "$BK_TMP/b.img"
xs_wait "$(bk_be $B)/state" 2 30
timeout --foreground 120 blkfront-test verify --domid $B > "$BK_TMP/b.out" 2>&1 ||
	{ cat "$BK_TMP/b.out"; fail "B's verify failed while A's close hung"; }
blkbackd-ctl list > "$BK_TMP/list" || fail "blkbackd-ctl list failed while A's close hung"
grep -qE "^$B/51712 " "$BK_TMP/list" || { cat "$BK_TMP/list"; fail "list does not show B"; }
fuse_file_stopped || fail "fuse-file ran again before B was served: the test proves nothing"

# SIGTERM with A's close still out: blkbackd waits for it (alive: not
# gone, not a zombie waiting for us to reap it)
alive() {
	local st
	st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) && [ "$st" != Z ] && [ "$st" != X ]
}
pid=$(bk_pid)
kill -TERM "$pid"
sleep 1
alive "$pid" || fail "blkbackd exited with a store's close still out"
fuse_file_cont
wait_for 30 eval '! alive $pid' || fail "blkbackd did not exit once the close was done"
if wait "$pid" 2>/dev/null; then rc=0; else rc=$?; fi
[ "$rc" = 0 ] || [ "$rc" = 127 ] || fail "blkbackd exited with status $rc"
_backend_running=
exit 0
