#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C31: a frontend that writes feature-large-sector-size=1, on a backing
# with 4096-byte logical sectors (a loop device with --sector-size 4096
# when we may make one, else memory:...,sector-size=4096).  blkbackd's
# keys are identical with and without it: sector-size=4096, sectors in
# 512-byte units; a WRITE at sector 8 lands at byte 4096 of the backing;
# a WRITE at sector 1 (not 4096-aligned) is ERROR, never written.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
file=
if [ "$(id -u)" = 0 ] && losetup --help 2>&1 | grep -q -- --sector-size; then
	file=$BK_TMP/4k.img
	truncate -s 4M "$file"
	dev=$(losetup -f --show --sector-size 4096 "$file") || fail "losetup --sector-size 4096"
	cleanup_fn losetup -d "$dev"
	params=$dev
	[ "$(blockdev --getss "$dev")" = 4096 ] || fail "$dev: not 4096-byte sectors"
else
	params=memory:4M,sector-size=4096
	skip_part "no 4096-byte loop device (needs root and losetup --sector-size): the memory store stood in"
fi
new_guest
be=$(bk_be $DOM)
add_disk $DOM "$params"
keys() { # the backend's keys a frontend reads, one "key=value" a line
	local k
	for k in sector-size physical-sector-size sectors info feature-flush-cache \
		 feature-barrier feature-discard discard-granularity discard-alignment \
		 feature-persistent feature-max-indirect-segments; do
		echo "$k=$(xenstore-read "$be/$k" 2>/dev/null || echo '<absent>')"
	done
}
cat > "$BK_TMP/s" <<EOS
fill p0 seed:31
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=read id=2 sector=8 seg=p1 expect=OKAY
check p1 seed:31
dump p0 $BK_TMP/p0
fill p2 seed:32
send op=write id=3 sector=1 seg=p2 expect=ERROR
send op=read id=4 sector=0 seg=p3 expect=OKAY
check p3 zero
xs-write fe at connected
xs-expect fe go 1 timeout=30000
close
EOS
for large in "" 1; do
	rm -f "$BK_TMP/keys$large"
	opt=
	[ -n "$large" ] && opt="--fe-key feature-large-sector-size=1"
	# shellcheck disable=SC2086
	blkfront-test script --domid $DOM --max-indirect 16 $opt "$BK_TMP/s" > "$BK_TMP/s.out" 2>&1 &
	f=$!
	xs_wait /local/domain/$DOM/device/vbd/51712/at connected
	keys > "$BK_TMP/keys$large"
	xenstore-write /local/domain/$DOM/device/vbd/51712/go 1
	wait $f || { cat "$BK_TMP/s.out"; fail "large-sector-size=$large: the script failed"; }
	xenstore-rm /local/domain/$DOM/device/vbd/51712/at /local/domain/$DOM/device/vbd/51712/go
	no_host_io 3
done
cat "$BK_TMP/keys"
diff "$BK_TMP/keys" "$BK_TMP/keys1" || fail "the backend's keys differ with feature-large-sector-size=1"
grep -qx "sector-size=4096" "$BK_TMP/keys" || fail "sector-size is not 4096"
grep -qx "sectors=8192" "$BK_TMP/keys" || fail "sectors is not in 512-byte units (4 MiB = 8192)"
if [ -n "$file" ]; then
	cmp "$BK_TMP/p0" <(dd if="$file" bs=4096 skip=1 count=1 status=none) ||
		fail "the write at sector 8 is not at byte 4096"
	cmp <(head -c 4096 /dev/zero) <(dd if="$file" bs=4096 count=1 status=none) ||
		fail "the refused write at sector 1 reached the backing"
fi
stop_backend
exit 0
