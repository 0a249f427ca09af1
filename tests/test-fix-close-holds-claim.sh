#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd's store is closed on a thread of its own after its guest
# disconnects, and that close may still write the backing: blkcrash's
# volatile cache writes back what the guest had not flushed.  The vbd's
# claim on the backing used to be released before the close, so a guest
# that reconnected at once opened the backing while the old close was
# still writing it and read stale data.  The claim now stays draining
# until the close is over, and the reconnect waits for it.
#
# The close is made slow on purpose: the volatile cache sits on the
# disk2008 store (a 2008 disk: once its own cache is full, each write
# waits for a positioning), so writing back 2400 scattered writes takes
# about 2 s (the reconnect waited 2.2 s for it in one run; with the
# claim released at once the read found zeros in every run tried).
# Seen from the guest: 2400 writes of 4 KiB, no flush, a reconnect,
# then the last write read back byte-exact; seen by an admin meanwhile:
# blkbackd-ctl list shows the vbd WAITING.  The guest has a vm node, as
# libxl writes one: the vbd's own next connection is the same VM, and
# the rule that lets a migration's two domains share a backing must not
# let it past a close.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --cache=volatile
new_disk 1G
new_guest
# as libxl writes it: the frontend's VM, which a migration's two domains
# share and may share a backing by (a closing store is never shared)
xenstore-write /local/domain/$DOM/vm /vm/6d1c0a52-35c1-4f6e-9d35-00000000c10e ||
	fail "xenstore-write vm failed"
add_disk $DOM "disk2008:$img"
n=${N_WRITES:-2400}
{
	echo "fill p0 seed:11"
	# every 3 MiB + 4 KiB across the disk: each write-back a positioning
	for (( i=0; i<n; i++ )); do
		echo "send op=write id=$((i + 1)) sector=$(( (i * 6152) % 2097144 )) seg=p0 expect=OKAY"
	done
	last=$(( ((n - 1) * 6152) % 2097144 ))
	cat <<EOS
xs-write fe state 5
xs-write fe state 6
xs-expect be state 6 timeout=30000
xs-write fe state 1
ring-new wait=5000
xs-write fe state 3
xs-expect be state 4 timeout=120000
send op=read id=9999 sector=$last seg=p1 expect=OKAY timeout=30000
check p1 seed:11
EOS
} > "$BK_TMP/s"
t0=$(date +%s%N)
blkfront-test script --domid $DOM --max-indirect 16 "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
front=$! waiting=
cleanup_fn kill $front
# while the close writes back, the reconnecting vbd is listed WAITING
# (an admin's view of what it waits for)
wait_for 30 eval 'blkbackd-ctl list 2>/dev/null | grep -qE "^$DOM/51712 +[^ ]+ +[^ ]*,WAITING "' ||
	{ blkbackd-ctl list; waiting=no; }
wait $front ||
	{ cat "$BK_TMP/s.out"; tail -30 "$BACKEND_LOG"; fail "the last unflushed write was not read back after the guest reconnected"; }
t1=$(date +%s%N)
echo "$n writes, reconnect and read back in $(( (t1 - t0) / 1000000 )) ms"
[ -z "$waiting" ] || fail "blkbackd-ctl list never showed the vbd WAITING for its close"
grep -q 'write cache of up to' "$BACKEND_LOG" || fail "blkbackd did not stack the volatile cache"
exit 0
