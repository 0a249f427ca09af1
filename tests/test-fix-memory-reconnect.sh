#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A memory: disk across its guest's reconnects.  Its store was closed at
# every disconnect and a new, zeroed one opened at the next connect, so
# a guest that reloaded its driver (or kexec'ed) found an empty disk,
# although the same blkbackd served the same vbd and had answered its
# FLUSH OKAY.  Linux blkback keeps its backing open while the device
# exists; blkbackd now keeps such a store between connections of the
# vbd, and a new one only when the vbd is made again or its params or
# knobs are rewritten.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
add_disk $DOM memory:1M
cat > "$BK_TMP/w" <<'EOS'
fill p0 seed:3
send op=write id=1 sector=8 seg=p0 expect=OKAY
send op=flush id=2 expect=OKAY
EOS
cat > "$BK_TMP/r" <<'EOS'
send op=read id=3 sector=8 seg=p1 expect=OKAY
check p1 seed:3
EOS
cat > "$BK_TMP/z" <<'EOS'
fill p1 byte:255
send op=read id=4 sector=8 seg=p1 expect=OKAY
check p1 zero
EOS
blkfront-test script --domid $DOM "$BK_TMP/w" > "$BK_TMP/w.out" 2>&1 ||
	{ cat "$BK_TMP/w.out"; fail "the first connection's write and flush failed"; }
# the guest's next connection, twice: the vbd's data is still there
for i in 1 2; do
	blkfront-test script --domid $DOM "$BK_TMP/r" > "$BK_TMP/r.out" 2>&1 ||
		{ cat "$BK_TMP/r.out"; fail "connection $((i + 1)) did not read back what was flushed"; }
done
# a vbd made again is a new disk: zeroes
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
add_disk $DOM memory:1M
blkfront-test script --domid $DOM "$BK_TMP/z" > "$BK_TMP/z.out" 2>&1 ||
	{ cat "$BK_TMP/z.out"; fail "a vbd made again did not read zeroes"; }
stop_backend
exit 0
