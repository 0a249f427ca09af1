#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C25: a late backend.
#  1. The frontend reached Initialised with its keys while no blkbackd
#     ran (the last one was killed at InitWait) and changes nothing
#     more: Connected within 2 s of a new blkbackd starting, I/O works.
#  2. The same while blkbackd is stopped (SIGSTOP) before it processed
#     them: Connected within 2 s of SIGCONT.
#  3. hotplug-status written only after the frontend reached 3:
#     blkbackd does not wait for it (it opens params itself), so the
#     vbd is Connected within 1 s of the key (before it, here), and
#     blkbackd never writes 3.
#  4. Empty params: an error node, as absent (no crash); empty mode: as
#     absent, read-write.
#  5. hotplug-status rewritten to junk while Connected: still
#     Connected, I/O works.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
secs() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }
_connected() { [ "$(be_connects "$1")" -gt 0 ]; }
connected() { # dom secs: blkbackd wrote Connected within secs (xensim's
	       # record: a fast frontend may be done and Closed before the
	       # state node is looked at)
	wait_for "$2" _connected "$1" ||
		fail "vbd $1 not Connected within $2 s"
}
cat > "$BK_TMP/io" <<'EOS'
fill p0 seed:25
send op=write sector=8 seg=p0 expect=OKAY
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:25
close
EOS

# 1.
new_guest; A=$DOM
add_disk $A memory:4M
xs_wait "$(bk_be $A)/state" 2
pid=$(bk_pid)
kill -KILL $pid
wait $pid 2>/dev/null || true
_backend_running=
blkfront-test script --domid $A --max-indirect 16 --timeout 60000 "$BK_TMP/io" \
	> "$BK_TMP/1.out" 2>&1 &
f1=$!
cleanup_fn kill $f1
xs_wait /local/domain/$A/device/vbd/51712/state 3
sleep 0.5
t0=$EPOCHREALTIME
start_backend
connected $A $(case_bound 2)
echo "1: Connected $(secs $t0) s after blkbackd started"
wait $f1 || { cat "$BK_TMP/1.out"; fail "1: the frontend's I/O failed"; }

# 2.
new_guest; B=$DOM
add_disk $B memory:4M
xs_wait "$(bk_be $B)/state" 2
kill -STOP "$(bk_pid)"
cleanup_fn kill -CONT "$(bk_pid)"
blkfront-test script --domid $B --max-indirect 16 --timeout 60000 "$BK_TMP/io" \
	> "$BK_TMP/2.out" 2>&1 &
f2=$!
cleanup_fn kill $f2
xs_wait /local/domain/$B/device/vbd/51712/state 3
sleep 0.5
t0=$EPOCHREALTIME
kill -CONT "$(bk_pid)"
connected $B $(case_bound 2)
echo "2: Connected $(secs $t0) s after SIGCONT"
wait $f2 || { cat "$BK_TMP/2.out"; fail "2: the frontend's I/O failed"; }

# 3.
new_guest; C=$DOM
be=$(bk_be $C)
add_disk $C memory:4M --no-hotplug
cat > "$BK_TMP/3" <<'EOS'
xs-expect be hotplug-status connected timeout=30000
fill p0 seed:3
send op=write sector=8 seg=p0 expect=OKAY
xs-expect fe seen 1 timeout=30000
close
EOS
blkfront-test script --domid $C --max-indirect 16 "$BK_TMP/3" > "$BK_TMP/3.out" 2>&1 &
f3=$!
cleanup_fn kill $f3
xs_wait /local/domain/$C/device/vbd/51712/state 4
xs_absent $be/hotplug-status
t0=$EPOCHREALTIME
xenstore-write $be/hotplug-status connected
xs_wait $be/state 4 $(case_bound 1)
# (the guest closes only once the test has seen Connected)
xenstore-write /local/domain/$C/device/vbd/51712/seen 1
wait $f3 || { cat "$BK_TMP/3.out"; fail "3: the frontend's I/O failed"; }
case " $(be_states $C) " in *" 3 "*) fail "3: blkbackd wrote Initialised" ;; esac
be_states_are $C 2 4 5 6

# 4.
# (a domain that exists: a vbd of one that does not is closed at once,
# past Closing before a poll sees it)
new_guest; D=$DOM
add_vbd $D 1 ""
xs_wait "$(bk_be $D 1)/state" 5
case "$(xenstore-read "$(bk_be $D 1)/error")" in
"params: missing or empty"*) ;;
*) fail "4: empty params: error \"$(xenstore-read "$(bk_be $D 1)/error")\"" ;;
esac
new_guest; E=$DOM
add_disk $E memory:4M --be-key mode=
xs_is "$(bk_be $E)/mode" ""
run_script $E "$BK_TMP/io"
# (not read-only: the script's write was answered OKAY; the log line is
# for a human)
grep "vbd $E/51712: .*-> Connected (" "$BACKEND_LOG" | grep "read-only" || true
kill -0 "$(bk_pid)" || fail "blkbackd died"

# 5.
new_guest; F=$DOM
add_disk $F memory:4M
cat > "$BK_TMP/5" <<'EOS'
xs-expect be hotplug-status junk timeout=10000
sleep 300
xs-expect be state 4
xs-expect be error -
fill p0 seed:5
send op=write sector=8 seg=p0 expect=OKAY
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:5
EOS
blkfront-test script --domid $F --max-indirect 16 "$BK_TMP/5" > "$BK_TMP/5.out" 2>&1 &
f5=$!
cleanup_fn kill $f5
xs_wait "$(bk_be $F)/state" 4
xenstore-write "$(bk_be $F)/hotplug-status" junk
wait $f5 || { cat "$BK_TMP/5.out"; fail "5: I/O after the junk hotplug-status failed"; }
stop_backend
exit 0
