#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# More requests in flight than the ring has slots, in every mode of
# blkfront-test, on the default one-page ring (32 slots): a frontend
# waits for a slot (Linux blkfront stops its queue) and never deadlocks.
#  io:      --bs 1M --iodepth 4 with 16 segments a request = 64 requests
#           (this hung: the submitter reaps its own completions and
#           waited for a slot nobody freed); write and read, with and
#           without persistent grants (then each request's grants are
#           ended at its response)
#  verify:  --iodepth 64 of 4 KiB blocks, byte-exact
#  script:  48 writes queued without a push: the 33rd pushes and waits
#  export:  fio through the FUSE export and a loop device, 1 MiB direct
#           I/O at depth 16, verified (root and FUSE only)
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
start_sim_backend

new_guest
add_disk $DOM memory:64M
for p in "" --no-persistent; do
	for rw in write read; do
		timeout 60 blkfront-test io --domid $DOM --max-indirect 16 $p --rw $rw \
			--bs 1M --iodepth 4 --size 16M > "$BK_TMP/io" 2>&1 ||
			{ cat "$BK_TMP/io"; fail "io --rw $rw $p failed or hung"; }
		grep -q "16 ios in .* 0 errors" "$BK_TMP/io" ||
			{ cat "$BK_TMP/io"; fail "io --rw $rw $p: not 16 ios without error"; }
	done
	timeout 60 blkfront-test verify --domid $DOM $p --bs 4k --size 4M --count 2000 \
		--iodepth 64 > "$BK_TMP/verify" 2>&1 ||
		{ cat "$BK_TMP/verify"; fail "verify --iodepth 64 $p failed or hung"; }
	grep -q "^verify: ok: 2000 writes acknowledged" "$BK_TMP/verify" ||
		{ cat "$BK_TMP/verify"; fail "verify $p"; }
done

{
	for i in $(seq 1 48); do
		echo "fill p$i seed:$i"
		echo "send op=write id=$i sector=$((i * 8)) seg=p$i nopush"
	done
	echo "push"
	echo "wait-all status=OKAY"
	for i in $(seq 1 48); do
		echo "send op=read sector=$((i * 8)) seg=p100 expect=OKAY"
		echo "check p100 seed:$i"
	done
} > "$BK_TMP/s"
timeout 60 blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" ||
	fail "script with 48 requests in flight failed"

if [ "$(id -u)" = 0 ] && [ -c /dev/fuse ] && losetup --version >/dev/null 2>&1 &&
   command -v fio >/dev/null; then
	new_guest
	add_disk $DOM memory:64M
	start_export "$BK_TMP/mnt" --domid $DOM --max-indirect 0
	attach_loop "$BK_TMP/mnt/disk"
	timeout 120 fio --name=ringfull --filename="$LOOPDEV" --direct=1 --ioengine=libaio \
		--rw=randwrite --bs=1M --iodepth=16 --size=32M --verify=crc32c --verify_state_save=0 \
		--verify_fatal=1 > "$BK_TMP/fio" 2>&1 ||
		{ cat "$BK_TMP/fio"; fail "fio through the export failed or hung"; }
	grep -q "err= 0" "$BK_TMP/fio" || { cat "$BK_TMP/fio"; fail "fio reported errors"; }
	losetup -d "$LOOPDEV"
	stop_export
else
	skip_part "export (fio through FUSE and a loop device) needs root, /dev/fuse, losetup and fio"
fi
grep -q "still maps" "$BK_TMP"/* && fail "a grant was still mapped somewhere"
stop_backend
exit 0
