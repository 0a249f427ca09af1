#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Host I/O errors reach dom0's log: each names the vbd, the queue, the
# host operation, its length, the sector and the errno, and a backing
# that fails every request does not flood the log (the first 10 of each
# 10 s).  Here the backing file shrinks under a connected vbd: reads
# past the new end fail (-EIO, a short read), each answered ERROR.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
{
	echo "send op=read id=98 sector=4096 seg=p0 expect=OKAY"
	# the test shrinks the file now, then writes the marker
	echo "xs-expect be test-shrunk 1 timeout=20000"
	for i in $(seq 1 25); do
		echo "send op=read id=$i sector=4096 seg=p0 expect=ERROR"
	done
	echo "send op=read id=99 sector=0 seg=p0 expect=OKAY"
} > "$BK_TMP/s"
run_script $DOM "$BK_TMP/s" &
spid=$!
xs_wait "$(bk_be $DOM)/state" 4
wait_for 10 grep -q "op=read id=98 .*status=0" "$BACKEND_TRACE" || fail "the first read was not answered"
truncate -s 1M "$img"
xenstore-write "$(bk_be $DOM)/test-shrunk" 1
wait $spid || fail "the guest's script failed"
n=$(grep -c "error: vbd $DOM/51712 ring 0: preadv of 4096 bytes at sector 4096 (id [0-9]*): Input/output error" "$BACKEND_LOG")
[ "$n" = 10 ] || { grep "ring 0:" "$BACKEND_LOG"; fail "$n host I/O error lines, expected the first 10"; }
stop_backend
exit 0
