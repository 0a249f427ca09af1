#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Values blkbackd cannot act on are said once, not ignored silently and
# not once per watch event: a frontend state outside 1..6 (Linux blkback:
# "saw state N at frontend", fatal: error node and Closing), state 0
# (Unknown: taken as Closed), and a directory under backend/vbd whose
# name is not a number (frontend domid or devid).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
start_backend
R=/local/domain/0/backend/vbd

count() { grep -cF -- "$1" "$BACKEND_LOG" || true; }
expect_lines() { # N text
	local got
	got=$(count "$2")
	[ "$got" = "$1" ] || { cat "$BACKEND_LOG"; fail "want $1 line(s) \"$2\", got $got"; }
}

# ---- frontend state ----
add_vbd 3 60 memory:1M
be=$(bk_be 3 60) fe=/local/domain/3/device/vbd/60
xs_wait "$be/state" 2
xenstore-write "$fe/state" 9
xs_wait "$be/state" 5
msg="state: the frontend's state \"9\" at $fe/state is not a XenbusState in 1..6"
xs_is "$be/error" "$msg"
# the same value again (a watch event each): no new line
xenstore-write "$fe/state" 9
xenstore-write "$fe/state" 9
xenstore-write "$fe/state" abc
msg2="state: the frontend's state \"abc\" at $fe/state is not a XenbusState in 1..6"
xs_wait "$be/error" "$msg2"
expect_lines 1 "vbd 3/60: $msg"
expect_lines 1 "vbd 3/60: $msg2"
# back to a real state: a later bad value is reported again
xenstore-write "$fe/state" 6
xs_wait "$be/state" 6
xenstore-write "$fe/state" 9
xs_wait "$be/error" "$msg"
expect_lines 2 "vbd 3/60: $msg"
# a long value (over 24 bytes), with a newline in it: said once, its
# first 32 bytes printable; reporting it must not report it again (the
# error node's own watch event used to bring it back, without end)
xenstore-write "$fe/state" "$(printf 'ab\ncd%s' 1234567890123456789012345678901234567)"
msg3="state: the frontend's state \"ab?cd123456789012345678901234567\"... at $fe/state is not a XenbusState in 1..6"
xs_wait "$be/error" "$msg3"
n=$(timeout 2 xenstore-watch "$be" | wc -l) || true
echo "watch events under $be in 2 s after the long bad state: $n"
# (at least the one a new watch fires at once: the watcher worked)
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n watch events in 2 s under $be after one bad state (a loop)"
expect_lines 1 "vbd 3/60: $msg3"
# nor does it reach the admin's table: frontend_state is a number or null
blkbackd-ctl list --json > "$BK_TMP/list.json" || fail "list --json failed"
python3 - "$BK_TMP/list.json" <<'EOP' || fail "list --json: $(cat "$BK_TMP/list.json")"
import json, sys
v = {x["vbd"]: x for x in json.load(open(sys.argv[1]))["vbds"]}
assert v["3/60"]["frontend_state"] is None, v["3/60"]
EOP
[ "$(count "lines not logged")" = 0 ] || { cat "$BACKEND_LOG"; fail "state-change lines were dropped"; }

# state 0 (Unknown): Closed, with one line
add_vbd 3 61 memory:1M
be=$(bk_be 3 61) fe=/local/domain/3/device/vbd/61
xs_wait "$be/state" 2
xenstore-write "$fe/state" 1
xenstore-write "$fe/state" 0
xenstore-write "$fe/state" 0
wait_for 5 grep -qF "vbd 3/61: frontend state 0 (Unknown) at $fe/state: taken as Closed" \
	"$BACKEND_LOG" || fail "no line for state 0"
xs_is "$be/state" 2	# InitWait: a frontend not started yet, as for Closed
xs_absent "$be/error"
expect_lines 1 "vbd 3/61: frontend state 0 (Unknown)"

# ---- directory names ----
xenstore-write "$R/3/abc/params" memory:1M "$R/3/abc/state" 1
xenstore-write "$R/3/abc/mode" w
xenstore-write "$R/xyz/7/params" memory:1M
xenstore-write "$R/xyz/7/state" 1
line="$R/3/abc: not a number: ignored (blkbackd serves $R/<frontend domid>/<devid>)"
line2="$R/xyz: not a number: ignored (blkbackd serves $R/<frontend domid>/<devid>)"
wait_for 5 grep -qF "$line2" "$BACKEND_LOG" || { cat "$BACKEND_LOG"; fail "no line: $line2"; }
wait_for 5 grep -qF "$line" "$BACKEND_LOG" || { cat "$BACKEND_LOG"; fail "no line: $line"; }
# a good device alongside still works, and rescans say nothing new
add_vbd 3 62 memory:1M
xs_wait "$(bk_be 3 62)/state" 2
xenstore-write "$R/3/abc/mode" r
xs_wait "$(bk_be 3 62)/state" 2
expect_lines 1 "$line"
expect_lines 1 "$line2"
xs_absent "$R/3/abc/error"
stop_backend
exit 0
