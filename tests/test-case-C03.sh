#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C03: req_prod moved more than the ring size past our consumer: that
# ring stops, the device is marked broken (error node, Closing), no
# response is written, the daemon lives and another device keeps working.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest; bad=$DOM
new_disk 4M memory
add_disk $bad "$params"
new_guest; good=$DOM
new_disk 4M memory
add_disk $good "$params"
cat > "$BK_TMP/bad" <<'EOS'
send op=read id=1 sector=0 seg=p0 expect=OKAY
req-prod +33
notify
expect-none timeout=500
xs-expect be state 5 timeout=5000
EOS
cat > "$BK_TMP/good" <<'EOS'
fill p0 seed:7
send op=write sector=0 seg=p0 expect=OKAY
send op=read sector=0 seg=p1 expect=OKAY
check p1 seed:7
EOS
run_script $bad "$BK_TMP/bad" --no-close
case "$(xenstore-read "$(bk_be $bad)/error")" in
"ring: ring 0: request producer index moved more than the ring size"*) ;;
*) fail "error node: \"$(xenstore-read "$(bk_be $bad)/error")\"" ;;
esac
grep -q "ring=broken" "$BACKEND_TRACE" || fail "no ring=broken in the trace"
run_script $good "$BK_TMP/good"
kill -0 "$(cat "$BACKEND_PIDFILE")" || fail "blkbackd died"
stop_backend
exit 0
