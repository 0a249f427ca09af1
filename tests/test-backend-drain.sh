#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One slow vbd never holds up another (Linux blkback's deferred free):
# vbd A's store holds every request until the test lets it go, and A has
# writes in flight when its frontend closes.  While A cannot drain, a new
# vbd B is added, reaches InitWait, connects and serves byte-exact I/O
# (liveness by order: B completes while A's writes are still held, so B
# did not wait for A's drain, however slow the machine); only then is A
# let go: every one of its writes answered OKAY, and Closed (6) once the
# frontend is Closed.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
N=3
hold=$BK_TMP/hold-A
touch "$hold"
cleanup_fn rm -f "$hold"

new_guest; A=$DOM
add_disk $A "memory:4M,hold=$hold"
writes_in_flight $A $N

# The guest closes A with all N writes in flight (the first one is in
# the store, the others consumed behind it).
t0=$EPOCHREALTIME
xenstore-write /local/domain/$A/device/vbd/51712/state 5
xs_wait "$(bk_be $A)/state" 5 5

# B: added, InitWait, connected and served while A cannot drain
new_guest; B=$DOM
t1=$EPOCHREALTIME
add_disk $B memory:4M
xs_wait "$(bk_be $B)/state" 2
t2=$EPOCHREALTIME
cat > "$BK_TMP/b" <<'EOS'
fill p0 seed:7
send op=write sector=8 seg=p0 seg=p1 expect=OKAY
send op=read sector=8 seg=p2 seg=p3 expect=OKAY
check p2 seed:7
send op=flush nr_segments=0 expect=OKAY
EOS
run_script $B "$BK_TMP/b"
xs_wait "$(bk_be $B)/state" 6 5
t3=$EPOCHREALTIME
echo "B: InitWait $(secs $t1 $t2) s after xl-add; connected, I/O done and closed $(secs $t0 $t3) s after A's close"

# A is still draining: Closing, none of its writes answered
xs_is "$(bk_be $A)/state" 5
# (no write of A's answered at all: stronger than writes_answered, which
# says whether every one was)
grep -q "vbd=$A/51712 ring=0 op=write " "$BACKEND_TRACE" &&
	fail "A answered a write while its store held every write"
# (xensim: blkbackd still maps A's ring and binds its event channel)
[ "$(bk_holds $A)" != "0 0" ] || fail "A disconnected before its drain"

# let A's writes go
rm -f "$hold"

# A drains: every write answered OKAY, the frontend got them all
wait $front || { cat "$BK_TMP/w$A.out"; fail "A's frontend did not get OKAY for every write"; }
writes_answered $A $N 0 mem-write || fail "A's writes were not all done and answered OKAY"
# the script's close handshake (Closed) completes A's
xs_wait "$(bk_be $A)/state" 6 $(( N * 2 + 10 ))
t4=$EPOCHREALTIME
echo "A: Closed $(secs $t0 $t4) s after its close"
wait_for 5 bk_forgot $A || fail "A is Closed but blkbackd still holds \"$(bk_holds $A)\" of it"
# and the daemon still serves
good_device_works memory:1M
stop_backend
exit 0
