#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A store that is slow to open holds up only its own vbd.  Three nbd:
# vbds on a server that accepts and never speaks (each open waits out
# the nbd store's 10 s handshake bound) used to hold blkbackd's control
# thread 10 s each: a fourth vbd, on a plain file, reached InitWait only
# after all three had failed, and `blkbackd-ctl status` timed out.  Now
# every vbd opens its store on a thread of its own.  Seen from outside,
# as the order of xenstore's changes (xs_record): the file vbd's
# InitWait, the guest's I/O on it (byte-exact) and the test's marks
# after `blkbackd-ctl status` all come before the first error node of
# the three.  A vbd removed while its store opens is forgotten (nothing
# is written under it when the open ends); the three then fail as
# before (error node naming the handshake, Closing); and SIGTERM while a
# store is opening stops blkbackd without waiting for that open.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
. "$abs_top_srcdir/tests/lib-nbd.sh"
nbd_requires
start_sim_backend
mute=$BK_TMP/mute.sock
python3 - "$mute" "$BK_TMP/accepted" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(16)
held = []
while True:
    held.append(s.accept()[0])
    with open(sys.argv[2] + ".new", "w") as f:
        f.write("%d\n" % len(held))
    import os
    os.rename(sys.argv[2] + ".new", sys.argv[2])
EOF
cleanup_fn kill $!
wait_for 10 test -S "$mute" || fail "the mute NBD server did not start"
accepted() { [ "$(cat "$BK_TMP/accepted" 2>/dev/null)" = "$1" ]; }
rec=$BK_TMP/xs
xs_record "$rec"

mutes=()
for i in 1 2 3; do
	new_guest
	mutes+=("$DOM")
	add_vbd "$DOM" 51712 "nbd:nbd+unix:///?socket=$mute"
done
# the three handshakes are out at once
wait_for 30 accepted 3 || fail "the mute server never held three handshakes"
blkbackd-ctl status > "$BK_TMP/status" 2>&1 || { cat "$BK_TMP/status"; fail "blkbackd-ctl status failed"; }
blkbackd-ctl list > "$BK_TMP/list" 2>&1 || { cat "$BK_TMP/list"; fail "blkbackd-ctl list failed"; }
xs_mark "$rec"	# mark 1: status and list answered
for d in "${mutes[@]}"; do
	grep -qE "^$d/51712 +[^ ]+ +[^ ]*,OPENING " "$BK_TMP/list" ||
		{ cat "$BK_TMP/list"; fail "list does not show vbd $d/51712 opening"; }
done
# one removed while its store opens
xenstore-rm "$(bk_be "${mutes[2]}")"

# a guest on a plain file meanwhile: probed, connected, its I/O served
guest_with_disk 8M
cat > "$BK_TMP/io" <<'EOS'
fill p0 seed:7
send op=write id=1 sector=64 seg=p0 expect=OKAY
send op=flush id=2 nr_segments=0 expect=OKAY
send op=read id=3 sector=64 seg=p1 expect=OKAY
check p1 seed:7
EOS
run_script "$DOM" "$BK_TMP/io"
xs_mark "$rec"	# mark 2: the file vbd's I/O done

# the two left fail as before: their handshake's bound, Closing
for d in "${mutes[0]}" "${mutes[1]}"; do
	xs_wait "$(bk_be "$d")/state" 5 60
	grep -q "handshake" <<< "$(xenstore-read "$(bk_be "$d")/error")" ||
		fail "vbd $d/51712's error node does not name the handshake: $(xenstore-read "$(bk_be "$d")/error")"
done
xs_mark "$rec"
# ... and not one of their error nodes before the file vbd was served
first_err=$(grep -nE "^/local/domain/0/backend/vbd/(${mutes[0]}|${mutes[1]})/51712/error$" "$rec" |
	head -n 1 | cut -d: -f1)
mark2=$(grep -nFx /local/domain/0/xs-mark-2 "$rec" | cut -d: -f1)
[ -n "$first_err" ] && [ -n "$mark2" ] || fail "no error node or no mark in $rec"
[ "$mark2" -lt "$first_err" ] ||
	fail "a mute vbd's open failed (line $first_err of $rec) before the file vbd was served (line $mark2): the opens held the control thread"
# the removed one: nothing written under it once its open ended
gone=$(bk_be "${mutes[2]}")
xs_absent "$gone"
after=$(awk -v p="$gone/" 'index($1, p) == 1' \
	<(sed -n '/^\/local\/domain\/0\/xs-mark-1$/,$p' "$rec"))
[ -z "$after" ] || fail "blkbackd wrote under the vbd removed while it opened: $after"

# SIGTERM while a store is opening: blkbackd stops without waiting for it
new_guest
add_vbd "$DOM" 51712 "nbd:nbd+unix:///?socket=$mute"
wait_for 30 accepted 4 || fail "the fourth handshake never reached the mute server"
stop_backend
xs_absent "$(bk_be "$DOM")/error"
exit 0
