#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# verify's read-back at a stop signal is a check that can fail: blocks
# verify wrote, zeroed in the backing file behind its back, and then
# SIGINT (as the kill and restart tests stop it): it must exit 1, say
# "FAILED" and never "ok", and name zeroed sectors, and only those.  A
# clean run stopped the same way reads back every block of its region.
# Two signals: either the second came before the read-back began or
# after it ended (ok, every block read back) or it abandoned the
# read-back and that is a failure, never an "ok" for a partial check.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
requires python3 --version
front_sim
start_backend
img=$FT/disk.img
truncate -s 32M "$img"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add $img"

_kill_quiet() { kill "$1" 2>/dev/null; return 0; }
# verify_bg OUT ARGS...: a verify that writes until told to stop ($vpid)
verify_bg() {
	local out=$1
	shift
	blkfront-test verify --domid $DOM --timeout 30000 --bs 4k --iodepth 4 \
		--count 100000000 "$@" > "$out" 2>&1 &
	vpid=$!
	cleanup_fn _kill_quiet $vpid
}

# written OFFSET SIZE [N]: the sectors of the blocks of the region that
# carry verify's header in the file (N of them spread over the region:
# every one if N is not given)
written() {
	python3 - "$img" "$1" "$2" "${3:-0}" <<'EOF'
import struct, sys
magic = struct.pack('<Q', 0x594656544b464c42)	# verify.c's VFY_MAGIC
img, off, size, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
found = []
with open(img, 'rb') as f:
    f.seek(off)
    for i in range(size // 4096):
        if f.read(4096)[:8] == magic:
            found.append((off + i * 4096) // 512)
if n:
    found = [found[i * len(found) // n] for i in range(n)] if len(found) >= n else []
print(' '.join(map(str, found)))
EOF
}
enough_written() { [ "$(written "$@" | wc -w)" -ge 256 ]; }

# 1. lost behind verify's back: 16M at offset 0
verify_bg "$FT/lost.out" --size 16M
wait_for 120 enough_written 0 $((16 << 20)) ||
	{ cat "$FT/lost.out"; fail "verify wrote fewer than 256 blocks in 120 s"; }
lost=$(written 0 $((16 << 20)) 4)
[ -n "$lost" ] || fail "no written blocks to zero"
for s in $lost; do
	dd if=/dev/zero of="$img" bs=512 seek=$s count=8 conv=notrunc,fsync status=none ||
		fail "dd over sector $s"
done
kill -INT $vpid
rc=0
wait $vpid || rc=$?
cat "$FT/lost.out"
echo "zeroed sectors: $lost"
[ "$rc" = 1 ] || fail "verify exited $rc with blocks lost behind its back, expected 1"
# (a sanitizer's report exits 1 too)
! grep -q Sanitizer "$FT/lost.out" || fail "verify's failure was a sanitizer's"
! grep -q "^verify: ok" "$FT/lost.out" || fail "verify said ok with blocks lost behind its back"
grep -q "^verify: FAILED: " "$FT/lost.out" || fail "verify did not say FAILED"
named=$(sed -n 's/.*sector \([0-9]*\): lost write.*/\1/p' "$FT/lost.out" | sort -un)
[ -n "$named" ] || fail "verify named no lost block"
for s in $named; do
	case " $lost " in
	*" $s "*) ;;
	*) fail "verify named sector $s, which was not zeroed" ;;
	esac
done

# 2. nothing lost: the same stop reads back every block (8M at 16M)
verify_bg "$FT/clean.out" --size 8M --offset 16M
wait_for 120 enough_written $((16 << 20)) $((8 << 20)) ||
	{ cat "$FT/clean.out"; fail "verify wrote fewer than 256 blocks in 120 s"; }
kill -INT $vpid
wait $vpid || { cat "$FT/clean.out"; fail "verify of an untouched region failed"; }
cat "$FT/clean.out"
verify_read_all "$FT/clean.out" 2048 "one signal"

# 3. a second signal: ok only with the whole read-back (8M at 24M)
verify_bg "$FT/twice.out" --size 8M --offset 24M
wait_for 120 enough_written $((24 << 20)) $((8 << 20)) ||
	{ cat "$FT/twice.out"; fail "verify wrote fewer than 256 blocks in 120 s"; }
kill -INT $vpid
sleep 0.1
kill -INT $vpid 2>/dev/null || true
rc=0
wait $vpid || rc=$?
cat "$FT/twice.out"
if [ "$rc" = 0 ]; then
	verify_read_all "$FT/twice.out" 2048 "two signals, exit 0"
else
	[ "$rc" = 1 ] || fail "verify exited $rc after two signals"
	! grep -q Sanitizer "$FT/twice.out" || fail "a sanitizer's report"
	! grep -q "^verify: ok" "$FT/twice.out" || fail "verify said ok and exited $rc"
	grep -q "^verify: FAILED: read-back interrupted by a signal" "$FT/twice.out" ||
		fail "verify failed after two signals, but not because of them"
fi

blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
stop_backend
exit 0
