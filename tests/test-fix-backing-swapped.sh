#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A restart (or an upgrade) opens each Connected vbd's params again; the
# name may lead to another file by then (a symlink pointed elsewhere, a
# file removed and made anew, a block device renumbered).  That other
# file must not be served to a guest whose filesystem sits on the first:
# the new blkbackd serves the ring (no request hangs) but answers ERROR
# to every request, says why in the error node, Closing, and writes
# nothing to the other file.  A vbd whose backing is the same is taken
# over as always.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
a=$BK_TMP/A.img b=$BK_TMP/B.img link=$BK_TMP/link.img
truncate -s 4M "$a" "$b"
ln -s A.img "$link"
new_guest
dom_swap=$DOM be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM "$link"
guest_with_disk 4M
dom_same=$DOM be_same=$(bk_be $DOM)
cat > "$BK_TMP/s" <<EOS
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe restart-done 1 timeout=60000
EOS
{
	cat "$BK_TMP/s"
	echo "send op=read id=2 sector=8 seg=p1 expect=ERROR timeout=10000"
	echo "send op=write id=3 sector=16 seg=p0 expect=ERROR timeout=10000"
	echo "send op=flush id=4 nr_segments=0 expect=ERROR timeout=10000"
} > "$BK_TMP/w"
{
	cat "$BK_TMP/s"
	echo "send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=10000"
	echo "check p1 seed:1"
} > "$BK_TMP/f"
blkfront-test script --domid $dom_swap --no-close "$BK_TMP/w" > "$BK_TMP/w.out" 2>&1 &
front_swap=$!
cleanup_fn kill $front_swap
blkfront-test script --domid $dom_same --no-close "$BK_TMP/f" > "$BK_TMP/f.out" 2>&1 &
front_same=$!
cleanup_fn kill $front_same
wait_for 10 eval '[ "$(grep -c " op=write id=1 .*status=0" "$BACKEND_TRACE")" = 2 ]' ||
	fail "the first writes were not answered"
xenstore-read "$be/blkbackd-backing" >/dev/null || fail "no blkbackd-backing node"

stop_backend
xs_is "$be/state" 4
ln -sfn B.img "$link"
start_backend
xs_wait "$be/state" 5
case "$(xenstore-read "$be/error")" in
"params: \"$link\" is not the backing this guest was connected to ("*" then, "*" now); every request fails") ;;
*) fail "error node: \"$(xenstore-read "$be/error")\"" ;;
esac
xenstore-write "$fe/restart-done" 1 "/local/domain/$dom_same/device/vbd/51712/restart-done" 1
wait $front_swap || { cat "$BK_TMP/w.out"; fail "the swapped backing was served"; }
wait $front_same || { cat "$BK_TMP/f.out"; fail "the unchanged guest's data did not survive the restart"; }
xs_is "$be_same/state" 4
xs_absent "$be_same/error"
cmp -s "$b" <(head -c 4M /dev/zero) || fail "the other file was written"
stop_backend
exit 0
