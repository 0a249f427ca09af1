#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd added on a file whose file system hangs holds up only itself.
# Its probe asks what the backing is (a stat(), for the claims that keep
# one writer per backing) and opens it; on a FUSE file whose daemon is
# stopped (tests/fuse-file.c: a dead hard NFS mount) both wait.  They
# ran on the control thread, which then served nobody.  Now, while the
# daemon stays stopped: blkbackd-ctl list answers and shows the vbd
# OPENING, another guest's vbd is probed, connected and its verify
# passes (byte-exact); once the daemon runs again, the first vbd reaches
# InitWait and its guest's I/O works, and a third, whose frontend went
# away while its probe waited, is Closed; SIGTERM then stops blkbackd.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
fuse_file_start
fuse_file_stop

# A: on the stopped FUSE file
new_guest; A=$DOM
add_disk $A "$FUSE_DISK"
# its probe is out, waiting on the file system: list says so
wait_for 30 eval 'blkbackd-ctl list 2>/dev/null | grep -qE "^$A/51712 +[^ ]+ +[^ ]*,OPENING "' ||
	{ blkbackd-ctl list || true; fail "blkbackd-ctl list never showed vbd $A/51712 opening"; }
# C: on it too, and its frontend goes away while the probe waits: once
# the probe is done, C closes (Closed), as from InitWait
new_guest; C=$DOM
add_disk $C "$FUSE_DISK"
wait_for 30 eval 'blkbackd-ctl list 2>/dev/null | grep -qE "^$C/51712 +[^ ]+ +[^ ]*,OPENING "' ||
	{ blkbackd-ctl list || true; fail "blkbackd-ctl list never showed vbd $C/51712 opening"; }
xenstore-rm "/local/domain/$C/device/vbd/51712"
# B: another guest, served meanwhile
new_guest; B=$DOM
truncate -s 4M "$BK_TMP/b.img"
add_disk $B "$BK_TMP/b.img"
xs_wait "$(bk_be $B)/state" 2 30
blkfront-test verify --domid $B > "$BK_TMP/b.out" 2>&1 ||
	{ cat "$BK_TMP/b.out"; fail "B's verify failed while A's file system hung"; }
fuse_file_stopped || fail "fuse-file ran again before B was served: the test proves nothing"
xs_absent "$(bk_be $A)/error"
[ "$(xenstore-read "$(bk_be $A)/state")" = 1 ] || fail "A left Initialising while its file system hung"

# the daemon runs again: A is probed and serves its guest
fuse_file_cont
xs_wait "$(bk_be $A)/state" 2 30
xs_wait "$(bk_be $C)/state" 6 30
cat > "$BK_TMP/a.script" <<'EOS'
fill p0 seed:9
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=read id=2 sector=8 seg=p1 expect=OKAY
check p1 seed:9
EOS
run_script $A "$BK_TMP/a.script"
stop_backend
exit 0
