#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# An upgrade asked while a vbd's backing hangs.  blkbackd first runs
# "PATH --version", and that child inherits the backings' descriptors:
# its exec closes them (close-on-exec), and a FUSE file's close waits
# for its daemon's answer to FLUSH, uninterruptibly.  blkbackd killed
# the probe after 10 s and then waited for it with no bound: SIGKILL
# does not end such a child, so the control thread waited as long as
# the file system hung (no other guest served, no blkbackd-ctl answer,
# no SIGTERM), the client gave up after 10 s with "no answer", and the
# upgrade was dropped without a word.  Now the refusal comes within
# the probe's 10 s and one more, with the reason (exit 1); list
# answers; a second upgrade is refused at once while that child is
# stuck; once the file system answers again, blkbackd stops cleanly.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
# Under valgrind, a thread stays in the scheduler's one lock across a
# system call valgrind counts as quick, fstat among them: queue 0's size
# check on the hung file (every 2 s) would stop every thread of the
# daemon, the control thread with them, until the file system answers.
# Natively only queue 0 waits; so valgrind's run checks without it.
if [ "${BLK_VALGRIND:-}" = 1 ]; then
	start_sim_backend --size-check-interval=0
else
	start_sim_backend
fi
fuse_file_start
new_guest; A=$DOM
add_disk $A "$FUSE_DISK"
# A's guest stays connected: its store (the FUSE file) stays open
cat > "$BK_TMP/a.script" <<'EOS'
fill p0 seed:5
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe go 1 timeout=120000
send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=60000
check p1 seed:5
EOS
blkfront-test script --domid $A --no-close "$BK_TMP/a.script" > "$BK_TMP/a.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 30 grep -q "vbd=$A/51712 .* op=write id=1 .*status=0" "$BACKEND_TRACE" ||
	{ cat "$BK_TMP/a.out"; fail "A's guest was not served"; }
fuse_file_stop
t0=$(date +%s)
rc=0
blkbackd-ctl upgrade --timeout=60 > "$BK_TMP/up.out" 2>&1 || rc=$?
t1=$(date +%s)
[ "$rc" = 1 ] || { cat "$BK_TMP/up.out"; fail "upgrade exited $rc, not 1 (refused)"; }
grep -q "SIGKILL does not end it" "$BK_TMP/up.out" || { cat "$BK_TMP/up.out"; fail "the refusal does not say why"; }
[ $(( t1 - t0 )) -le 20 ] || fail "the refusal took $(( t1 - t0 )) s"
blkbackd-ctl list > "$BK_TMP/list" 2>&1 || { cat "$BK_TMP/list"; fail "list got no answer after the refusal"; }
grep -qE "^$A/51712 +[^ ]+ +Connected " "$BK_TMP/list" || { cat "$BK_TMP/list"; fail "list does not show A Connected"; }
rc=0
blkbackd-ctl upgrade > "$BK_TMP/up2.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "still stuck" "$BK_TMP/up2.out" ||
	{ cat "$BK_TMP/up2.out"; fail "a second upgrade was not refused for the stuck probe (exit $rc)"; }
fuse_file_stopped || fail "fuse-file ran again before the checks: the test proves nothing"
fuse_file_cont
# A's guest reads back what it wrote
xenstore-write "/local/domain/$A/device/vbd/51712/go" 1
wait $front || { cat "$BK_TMP/a.out"; fail "A's guest did not read back its write"; }
stop_backend
exit 0
