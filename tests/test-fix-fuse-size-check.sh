#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A backing whose file system hangs never stalls blkbackd's control
# thread through the size check.  Vbd A is a file on a FUSE file system
# (tests/fuse-file.c) whose daemon is then stopped (SIGSTOP): every
# access to the file waits, the size check's fstat too -- a dead hard NFS
# mount.  While it hangs, with size checks due (every second, and a
# SIGHUP):
#  a. blkbackd-ctl status answers within a few seconds;
#  b. a new guest's vbd reaches Connected and its verify passes;
#  c. blkbackd-ctl resize of A answers (ETIMEDOUT, within its bound)
#     instead of hanging;
# then, the daemon running again (SIGCONT), A's file grown meanwhile:
#  d. A's sectors node says the new size, and A's guest writes and reads
#     the new space without reconnecting.
# Last, SIGTERM (--close-on-exit) while A's backing hangs again: every
# other vbd is closed at once, A once its backing answers, and blkbackd
# exits 0.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --size-check-interval=1 --close-on-exit
fuse_file_start

# B: connected before A, and held (found first: it comes after A in
# blkbackd's list of vbds)
new_guest; B=$DOM
truncate -s 4M "$BK_TMP/b.img"
add_disk $B "$BK_TMP/b.img"
blkfront-test attach --domid $B --hold >/dev/null 2>"$BK_TMP/b.err" &
cleanup_fn kill $!
xs_wait "$(bk_be $B)/state" 4

# A: on the FUSE file; its guest does I/O, waits for the growth, then
# uses the new space, and leaves the vbd Connected
new_guest; A=$DOM
add_disk $A "$FUSE_DISK"
cat > "$BK_TMP/a.script" <<'EOS'
xs-expect be sectors 8192
fill p0 seed:3
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=read id=2 sector=8 seg=p1 expect=OKAY
check p1 seed:3
xs-expect fe go 1 timeout=60000
xs-expect be sectors 16384 timeout=60000
send op=write id=3 sector=16376 seg=p0 expect=OKAY
send op=read id=4 sector=16376 seg=p2 expect=OKAY
check p2 seed:3
EOS
blkfront-test script --domid $A --max-indirect 16 --no-close "$BK_TMP/a.script" \
	>"$BK_TMP/a.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "vbd=$A/51712 ring=0 op=read id=2 .*status=0" "$BACKEND_TRACE" ||
	{ cat "$BK_TMP/a.out"; fail "A's first I/O was not answered"; }
xs_is "$(bk_be $A)/state" 4

# ---- A's backing hangs; a size check is due within a second ----
fuse_file_stop
sleep 2
kill -HUP "$(bk_pid)"
sleep 0.5
# a. the control socket answers
t0=$(date +%s)
timeout 5 blkbackd-ctl status >"$BK_TMP/status" 2>&1 ||
	{ cat "$BK_TMP/status"; fail "blkbackd-ctl status did not answer while A's backing hangs"; }
# b. a new guest connects and its verify passes
new_guest; C=$DOM
add_disk $C memory:4M
timeout 60 blkfront-test verify --domid $C --size 4M --count 200 --timeout 10000 \
	>"$BK_TMP/c.out" 2>&1 ||
	{ tail -n 20 "$BK_TMP/c.out"; fail "a new guest's verify failed while A's backing hangs"; }
verify_read_all "$BK_TMP/c.out" 1024 "C"
[ "$(be_connects $C)" -ge 1 ] || fail "C never saw Connected"
# c. resize of A answers, within its bound, that the size did not come
rc=0
timeout 20 blkbackd-ctl resize $A/51712 >"$BK_TMP/rs.out" 2>"$BK_TMP/rs.err" || rc=$?
[ $rc = 1 ] && grep -q "ETIMEDOUT" "$BK_TMP/rs.err" ||
	fail "resize of A while its backing hangs: rc $rc, $(cat "$BK_TMP/rs.out" "$BK_TMP/rs.err")"
# all of that while A's backing was stopped, and quickly
fuse_file_stopped || fail "fuse-file was not stopped all along"
[ $(( $(date +%s) - t0 )) -lt 40 ] || fail "the control thread was slow while A's backing hung"
timeout 5 blkbackd-ctl status >/dev/null 2>&1 || fail "status (again) did not answer"
# the probe out for 10 s is said, once (no new one is asked meanwhile)
wait_for 15 grep -q "vbd $A/51712: its backing \"$FUSE_DISK\" has not told its size for" \
	"$BACKEND_LOG" || fail "the hung size check was not logged"

# ---- d. the backing answers again: A grows, and its guest uses it ----
truncate -s 8M "$BK_TMP/under.img"
fuse_file_cont
xs_wait "$(bk_be $A)/sectors" 16384 15
xs_is "$(bk_be $A)/state" 4
[ "$(grep -c "vbd $A/51712: its backing .* has not told its size for" "$BACKEND_LOG")" = 1 ] ||
	fail "the hung size check was not logged exactly once"
grep -q "vbd $A/51712: its backing told its size after" "$BACKEND_LOG" ||
	fail "the end of the hang was not logged"
wait_for 10 grep -q "vbd $A/51712: backing resized: 8192 -> 16384 sectors" "$BACKEND_LOG" ||
	fail "blkbackd did not log A's resize"
xenstore-write /local/domain/$A/device/vbd/51712/go 1
wait $front || { cat "$BK_TMP/a.out"; fail "A's guest did not use the grown disk"; }
out=$(timeout 10 blkbackd-ctl resize $A/51712) || fail "resize of A after SIGCONT failed"
[ "$out" = "vbd $A/51712: 16384 sectors (unchanged)" ] || fail "resize said \"$out\""

# ---- SIGTERM while A's backing hangs again ----
fuse_file_stop
sleep 2
kill -HUP "$(bk_pid)"
sleep 0.5
pid=$(bk_pid)
_backend_running=
kill -TERM $pid
# B (after A in the list) is closed although A cannot finish
xs_wait "$(bk_be $B)/state" 6 10
sleep 1
kill -0 $pid 2>/dev/null || fail "blkbackd exited while A's size check hung"
xs_is "$(bk_be $A)/state" 4
fuse_file_stopped || fail "fuse-file was not stopped all along"
fuse_file_cont
xs_wait "$(bk_be $A)/state" 6 15
wait_for 15 eval '! kill -0 $pid 2>/dev/null' || fail "blkbackd did not exit once A's backing answered"
if wait $pid; then rc=0; else rc=$?; fi
[ $rc = 0 ] || fail "blkbackd exited $rc after SIGTERM"
exit 0
