#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Online resize of a file backing, as Linux blkback does it: "sectors"
# and "state" rewritten in one transaction, so the frontend's watch fires
# and it re-reads the capacity, without reconnecting.
#  1. by itself (the periodic size check): a file grown with truncate is
#     seen within seconds; blkfront-test (attach) notices; a guest on a
#     raw ring writes and reads the new space byte-exact;
#  2. with --size-check-interval=0: only on blkbackd-ctl resize and SIGHUP;
#  3. a shrink: reported loudly once (log, error node), sectors rewritten,
#     I/O past the new end is ERROR and does not grow the file back;
#  4. a backing file removed: reported once.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$(command -v xenstore-watch)"
requires python3 --version

# seed_page SEED: the 4096 bytes blkfront-test's "fill PAGE seed:SEED"
# writes, made here independently from blkfront-test(1)'s description
# of the pattern, so the backing is compared with what the guest meant,
# not with itself
seed_page() {
	python3 -c '
import struct, sys
m = (1 << 64) - 1
x = (int(sys.argv[1]) * 0x9e3779b97f4a7c15 + 0x632be59bd9b4e019) & m
out = bytearray()
for _ in range(512):
    x ^= (x << 13) & m; x ^= x >> 7; x ^= (x << 17) & m
    out += struct.pack("<Q", x)
sys.stdout.buffer.write(out)' "$1"
}
start_sim_backend --close-on-exit

# ---- 1. grown by an admin: noticed by itself ----
new_guest; A=$DOM
truncate -s 4M "$BK_TMP/a.img"
add_disk $A "$BK_TMP/a.img"
blkfront-test attach --domid $A --hold >"$BK_TMP/attach.out" 2>"$BK_TMP/attach.err" &
hold=$!
cleanup_fn kill $hold
xs_wait "$(bk_be $A)/state" 4
xs_is "$(bk_be $A)/sectors" 8192
xenstore-watch "$(bk_be $A)/state" >"$BK_TMP/watch" 2>&1 &
cleanup_fn kill $!
wait_for 10 test -s "$BK_TMP/watch" || fail "xenstore-watch did not start"

new_guest; B=$DOM
truncate -s 4M "$BK_TMP/b.img"
add_disk $B "$BK_TMP/b.img"
cat > "$BK_TMP/b.script" <<'EOS'
xs-expect be sectors 8192
fill p0 seed:5
send op=write id=1 sector=8184 seg=p0 expect=OKAY
send op=write id=2 sector=8192 seg=p0 expect=ERROR
xs-expect be sectors 16384 timeout=20000
send op=write id=3 sector=16376 seg=p0 expect=OKAY
send op=read id=4 sector=16376 seg=p1 expect=OKAY
check p1 seed:5
send op=read id=5 sector=8192 seg=p2 expect=OKAY
check p2 zero
EOS
blkfront-test script --domid $B --max-indirect 16 "$BK_TMP/b.script" >"$BK_TMP/b.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "vbd=$B/51712 ring=0 op=write id=2 .*status=-1" "$BACKEND_TRACE" ||
	{ cat "$BK_TMP/b.out"; fail "B: the write past the end was not refused"; }
truncate -s 8M "$BK_TMP/a.img" "$BK_TMP/b.img"
xs_wait "$(bk_be $A)/sectors" 16384 10
xs_is "$(bk_be $A)/state" 4
wait_for 10 grep -q "vbd $A/51712: backing resized: 8192 -> 16384 sectors" "$BACKEND_LOG" ||
	fail "blkbackd did not log the resize"
wait_for 10 grep -q "backend resized: capacity 8192 -> 16384 sectors" "$BK_TMP/attach.err" ||
	{ cat "$BK_TMP/attach.err"; fail "blkfront-test did not notice the new capacity"; }
wait_for 10 test "$(grep -c "^$(bk_be $A)/state\$" "$BK_TMP/watch")" -ge 2 ||
	{ cat "$BK_TMP/watch"; fail "state was not re-written with sectors"; }
kill -0 $hold 2>/dev/null || fail "attach --hold lost its device: $(cat "$BK_TMP/attach.err")"
wait $front || { cat "$BK_TMP/b.out"; fail "B: the new space was not usable without reconnecting"; }
seed_page 5 > "$BK_TMP/seed5"
cmp <(dd if="$BK_TMP/b.img" bs=512 skip=16376 count=8 status=none) "$BK_TMP/seed5" ||
	fail "B: the write to the new space is not on the backing"
cmp <(dd if="$BK_TMP/b.img" bs=512 skip=8184 count=8 status=none) "$BK_TMP/seed5" ||
	fail "B: the write before the growth is not on the backing"
xs_absent "$(bk_be $A)/error"
kill $hold; wait $hold 2>/dev/null || true
stop_backend

# ---- 2. no periodic check: blkbackd-ctl resize, SIGHUP ----
start_backend --size-check-interval=0
new_guest; C=$DOM
truncate -s 4M "$BK_TMP/c.img"
add_disk $C "$BK_TMP/c.img"
blkfront-test attach --domid $C --hold >"$BK_TMP/attach.out" 2>"$BK_TMP/attach.err" &
hold=$!
cleanup_fn kill $hold
xs_wait "$(bk_be $C)/state" 4
truncate -s 8M "$BK_TMP/c.img"
# nobody asked: by bk_sync the control thread has handled whatever it
# was told (an inotify event, say); a timer of its own it is not told
bk_sync
xs_is "$(bk_be $C)/sectors" 8192
out=$(blkbackd-ctl resize $C/51712) || fail "blkbackd-ctl resize failed"
[ "$out" = "vbd $C/51712: 8192 -> 16384 sectors" ] || fail "resize said \"$out\""
xs_is "$(bk_be $C)/sectors" 16384
wait_for 10 grep -q "backend resized: capacity 8192 -> 16384 sectors" "$BK_TMP/attach.err" ||
	fail "blkfront-test did not notice the ctl resize"
out=$(blkbackd-ctl resize $C/51712) || fail "blkbackd-ctl resize (again) failed"
[ "$out" = "vbd $C/51712: 16384 sectors (unchanged)" ] || fail "resize again said \"$out\""
truncate -s 12M "$BK_TMP/c.img"
kill -HUP "$(cat "$BACKEND_PIDFILE")"
xs_wait "$(bk_be $C)/sectors" 24576 10
wait_for 10 grep -q "backend resized: capacity 16384 -> 24576 sectors" "$BK_TMP/attach.err" ||
	fail "blkfront-test did not notice the SIGHUP resize"
# refusals name the reason
rc=0; blkbackd-ctl resize 4242/51712 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "ENOENT no vbd 4242/51712" "$BK_TMP/err" || fail "unknown vbd: rc $rc, $(cat "$BK_TMP/err")"
new_guest; M=$DOM
add_disk $M memory:1M
blkfront-test attach --domid $M --hold >/dev/null 2>&1 &
mhold=$!
cleanup_fn kill $mhold
xs_wait "$(bk_be $M)/state" 4
rc=0; blkbackd-ctl resize $M/51712 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "EOPNOTSUPP vbd $M/51712: its store cannot tell" "$BK_TMP/err" ||
	fail "memory vbd: rc $rc, $(cat "$BK_TMP/err")"
kill $mhold; wait $mhold 2>/dev/null || true
xs_wait "$(bk_be $M)/state" 6
rc=0; blkbackd-ctl resize $M/51712 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "ENOTCONN vbd $M/51712 is not connected" "$BK_TMP/err" ||
	fail "closed vbd: rc $rc, $(cat "$BK_TMP/err")"
# a shrink is announced too, but said as the mistake it is: exit 1
truncate -s 10M "$BK_TMP/c.img"
rc=0; blkbackd-ctl resize $C/51712 >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "vbd $C/51712: BACKING SHRANK: 24576 -> 20480 sectors" "$BK_TMP/err" ||
	fail "shrink: rc $rc, $(cat "$BK_TMP/out" "$BK_TMP/err")"
xs_is "$(bk_be $C)/sectors" 20480
kill $hold; wait $hold 2>/dev/null || true

# ---- 3. shrunk under a connected guest ----
new_guest; D=$DOM
truncate -s 4M "$BK_TMP/d.img"
add_disk $D "$BK_TMP/d.img"
cat > "$BK_TMP/d.script" <<'EOS'
xs-expect be sectors 8192
fill p0 seed:7
send op=write id=1 sector=4000 seg=p0 expect=OKAY
xs-expect be sectors 2048 timeout=20000
send op=read id=2 sector=4000 seg=p1 expect=ERROR
send op=write id=3 sector=4000 seg=p0 expect=ERROR
send op=write id=4 sector=2040 seg=p0 expect=OKAY
send op=read id=5 sector=2040 seg=p1 expect=OKAY
check p1 seed:7
EOS
blkfront-test script --domid $D --max-indirect 16 --no-close "$BK_TMP/d.script" >"$BK_TMP/d.out" 2>&1 &
front=$!
cleanup_fn kill $front
wait_for 10 grep -q "vbd=$D/51712 ring=0 op=write id=1 .*status=0" "$BACKEND_TRACE" ||
	{ cat "$BK_TMP/d.out"; fail "D: the first write was not answered"; }
truncate -s 1M "$BK_TMP/d.img"
kill -HUP "$(cat "$BACKEND_PIDFILE")"
wait $front || { cat "$BK_TMP/d.out"; fail "D: I/O past the shrunk end was not ERROR"; }
[ "$(stat -c %s "$BK_TMP/d.img")" = 1048576 ] ||
	fail "D: a write past the new end gave the file its size back ($(stat -c %s "$BK_TMP/d.img"))"
grep -q "vbd=$D/51712 ring=0 id=3 host=past-end result=-5" "$BACKEND_TRACE" ||
	fail "D: the write past the new end was not refused by the store"
blkbackd-ctl resize $D/51712 >/dev/null || fail "resize after the shrink"
kill -HUP "$(cat "$BACKEND_PIDFILE")"
sleep 0.5
[ "$(grep -c "vbd $D/51712: BACKING SHRANK: 8192 -> 2048 sectors under a connected guest" "$BACKEND_LOG")" = 1 ] ||
	{ grep SHRANK "$BACKEND_LOG"; fail "the shrink was not reported exactly once"; }
xs_is "$(bk_be $D)/error" "params: the backing shrank from 8192 to 2048 sectors while connected"
xs_is "$(bk_be $D)/sectors" 2048

# ---- 4. the backing file removed ----
new_guest; E=$DOM
truncate -s 1M "$BK_TMP/e.img"
add_disk $E "$BK_TMP/e.img"
blkfront-test attach --domid $E --hold >/dev/null 2>&1 &
ehold=$!
cleanup_fn kill $ehold
xs_wait "$(bk_be $E)/state" 4
rm "$BK_TMP/e.img"
kill -HUP "$(cat "$BACKEND_PIDFILE")"
wait_for 10 grep -q "vbd $E/51712: cannot read the size of its backing \"$BK_TMP/e.img\": No such file or directory (removed?)" \
	"$BACKEND_LOG" || fail "the removed backing was not reported"
kill -HUP "$(cat "$BACKEND_PIDFILE")"
sleep 0.5
[ "$(grep -c "vbd $E/51712: cannot read the size" "$BACKEND_LOG")" = 1 ] || fail "reported more than once"
xs_is "$(bk_be $E)/error" "params: cannot read the size of \"$BK_TMP/e.img\": No such file or directory"
kill $ehold; wait $ehold 2>/dev/null || true
stop_backend
exit 0
