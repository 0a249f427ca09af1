#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A backing that cannot be served is refused at probe time (Linux blkback
# opens it in backend_changed()): the error node names params and the
# reason, the device goes Closing (5) without ever reaching InitWait, and
# the daemon goes on serving good devices.  --record into a missing
# directory fails at start.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim

rc=0
timeout 20 blkbackd -f --transport=sim --sim-dir="$XENSIM_DIR" \
	--record=/nonexistent/dir/file --pidfile="$BK_TMP/r.pid" 2>"$BK_TMP/r.log" || rc=$?
[ "$rc" = 1 ] || fail "--record=/nonexistent/dir/file: exit $rc, expected 1"
grep -q -- "--record=/nonexistent/dir/file: directory /nonexistent/dir" "$BK_TMP/r.log" ||
	fail "--record: no clear message: $(cat "$BK_TMP/r.log")"

start_backend
expect_refused() { # devid params error-prefix
	local be
	be=$(bk_be 3 "$1")
	add_vbd 3 "$1" "$2"
	xs_wait "$be/state" 5
	case "$(xenstore-read "$be/error")" in
	"$3"*) ;;
	*) fail "params=$2: error is \"$(xenstore-read "$be/error")\", expected \"$3...\"" ;;
	esac
	grep -q "vbd 3/$1: params: " "$BACKEND_LOG" || fail "params=$2: no log line naming params"
	! grep -q "vbd 3/$1: .*-> InitWait" "$BACKEND_LOG" || fail "params=$2: reached InitWait"
}
mkdir "$BK_TMP/dir"
: > "$BK_TMP/empty"
expect_refused 1 "$BK_TMP/missing" "params: cannot open file store \"$BK_TMP/missing\": No such file"
expect_refused 2 "$BK_TMP/dir" "params: cannot open file store \"$BK_TMP/dir\""
expect_refused 3 /dev/zero "params: cannot open file store \"/dev/zero\""
expect_refused 4 "$BK_TMP/empty" "params: file store \"$BK_TMP/empty\" is empty (0 bytes)"
expect_refused 5 memory:abc "params: bad size \"abc\""
expect_refused 6 memory:0 "params: cannot open memory store \"0\""
expect_refused 7 memory:1M,bogus=1 "params: unknown option \"bogus=1\" for driver memory"
expect_refused 8 memory:1M,no-flush,fua=nonsense-ok,delay=3 "params: unknown option \"delay=3\""
# the reason is in the error node itself, not only in the daemon's log
# (it once said "Invalid argument" for both of these)
xs_is "$(bk_be 3 3)/error" \
	"params: cannot open file store \"/dev/zero\": neither a regular file nor a block device"
xs_is "$(bk_be 3 6)/error" \
	"params: cannot open memory store \"0\": size 0 is not a positive multiple of 512"
xs_is "$(bk_be 3 1)/error" \
	"params: cannot open file store \"$BK_TMP/missing\": No such file or directory"
# a FIFO opened read-only would wait for a writer, and hold up the
# daemon with it: refused at once like any other non-disk
mkfifo "$BK_TMP/fifo"
add_vbd 3 10 "$BK_TMP/fifo" mode=r
xs_wait "$(bk_be 3 10)/state" 5
xs_is "$(bk_be 3 10)/error" \
	"params: cannot open file store \"$BK_TMP/fifo\": neither a regular file nor a block device"
add_vbd 3 9 null:1000
xs_wait "$(bk_be 3 9)/state" 5
xs_is "$(bk_be 3 9)/error" \
	"params: cannot open null store \"1000\": size 1000 is not a positive multiple of 512"

# good ones still reach InitWait
truncate -s 1M "$BK_TMP/good"
add_vbd 3 20 "$BK_TMP/good"
add_vbd 3 21 memory:1M,no-flush,fua=emulated,delay-ms=1,no-discard,fail-flush
xs_wait "$(bk_be 3 20)/state" 2
xs_wait "$(bk_be 3 21)/state" 2
xs_absent "$(bk_be 3 20)/error"
xs_absent "$(bk_be 3 21)/error"

# one backing, two vbds: refused unless both are read-only
# (a vbd idling in InitWait does not hold it; a Connected one does)
truncate -s 1M "$BK_TMP/shared" "$BK_TMP/ro"
new_guest
add_disk $DOM "$BK_TMP/shared"
blkfront-test attach --domid $DOM --hold >"$BK_TMP/hold.out" 2>&1 &
hold=$!
cleanup_fn kill $hold
xs_wait "$(bk_be $DOM)/state" 4
add_vbd 3 31 "$BK_TMP/shared" mode=r
xs_wait "$(bk_be 3 31)/state" 5
case "$(xenstore-read "$(bk_be 3 31)/error")" in
"params: \"$BK_TMP/shared\" is already served by vbd $DOM/51712 read-write"*) ;;
*) fail "sharing: error is \"$(xenstore-read "$(bk_be 3 31)/error")\"" ;;
esac
xs_is "$(bk_be $DOM)/state" 4
kill $hold; wait $hold 2>/dev/null || true
add_vbd 3 32 "$BK_TMP/ro" mode=r
add_vbd 3 33 "$BK_TMP/ro" mode=r
xs_wait "$(bk_be 3 32)/state" 2
xs_wait "$(bk_be 3 33)/state" 2
xs_absent "$(bk_be 3 33)/error"
stop_backend
exit 0
