#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A RAM disk (memory:) does not outlive the blkbackd that served it.  A
# new blkbackd that finds it Connected must not hand the guest an empty
# disk as if it were the same one: it serves the ring (no request
# hangs) but answers ERROR to every request, the predecessor's included,
# and says why in the error node, Closing.  A file-backed vbd of another
# guest is taken over as always, Connected, its data intact.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
dom_mem=$DOM
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM memory:4M
guest_with_disk 4M
dom_file=$DOM be_file=$(bk_be $DOM)
cat > "$BK_TMP/s" <<EOS
fill p0 seed:1
send op=write id=1 sector=8 seg=p0 expect=OKAY
xs-expect fe restart-done 1 timeout=60000
EOS
# the RAM disk: ERROR from now on; the file: the data read back
{
	cat "$BK_TMP/s"
	echo "send op=read id=2 sector=8 seg=p1 expect=ERROR timeout=10000"
	echo "send op=write id=3 sector=16 seg=p0 expect=ERROR timeout=10000"
	echo "send op=flush id=4 nr_segments=0 expect=ERROR timeout=10000"
} > "$BK_TMP/m"
{
	cat "$BK_TMP/s"
	echo "send op=read id=2 sector=8 seg=p1 expect=OKAY timeout=10000"
	echo "check p1 seed:1"
} > "$BK_TMP/f"
blkfront-test script --domid $dom_mem --max-indirect 16 --no-close "$BK_TMP/m" > "$BK_TMP/m.out" 2>&1 &
front_mem=$!
cleanup_fn kill $front_mem
blkfront-test script --domid $dom_file --max-indirect 16 --no-close "$BK_TMP/f" > "$BK_TMP/f.out" 2>&1 &
front_file=$!
cleanup_fn kill $front_file
wait_for 10 eval '[ "$(grep -c " op=write id=1 .*status=0" "$BACKEND_TRACE")" = 2 ]' ||
	fail "the first writes were not answered"

stop_backend
xs_is "$be/state" 4
start_backend
want_err="params: memory:4M: the data of this RAM disk died with the blkbackd that served it; every request fails"
xs_wait "$be/error" "$want_err"
xs_wait "$be/state" 5
xenstore-write "$fe/restart-done" 1 "/local/domain/$dom_file/device/vbd/51712/restart-done" 1
wait $front_mem || { cat "$BK_TMP/m.out"; fail "the RAM disk's requests were not all answered ERROR"; }
wait $front_file || { cat "$BK_TMP/f.out"; fail "the file-backed guest's data did not survive the restart"; }
xs_is "$be_file/state" 4
xs_absent "$be_file/error"
xs_is "$be/state" 5
xs_is "$be/error" "$want_err"
grep -q "vbd $dom_mem/51712: params: memory:4M: the data of this RAM disk died" "$BACKEND_LOG" ||
	fail "the log does not say why"
stop_backend
exit 0
