#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C23: stale ring keys (Linux blkback's naming: with ring-page-order,
# even 0, the ring is ring-ref0..; without, ring-ref):
#  1. no ring-page-order, a valid ring-ref and a stale ring-ref0 and
#     ring-ref1 from an earlier frontend: blkbackd maps ring-ref,
#     Connected, byte-exact, no error node;
#  2. ring-page-order=0 with only ring-ref0: connects on ring-ref0;
#  3. ring-page-order=0 with only ring-ref: the documented answer (as
#     Linux blkback) is an error node naming ring-ref0, Closing at once,
#     never a silent hang.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_disk 4M
new_guest
be=$(bk_be $DOM) fe=/local/domain/$DOM/device/vbd/51712
add_disk $DOM "$params"

# 1.
cat > "$BK_TMP/s1" <<EOS
xs-expect fe ring-ref0 12345
xs-expect fe ring-ref1 12346
xs-expect fe ring-page-order -
fill p0 seed:23
send op=write sector=8 seg=p0 expect=OKAY
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:23
dump p0 $BK_TMP/p0
xs-expect be error -
close
EOS
run_script $DOM "$BK_TMP/s1" --fe-key ring-ref0=12345 --fe-key ring-ref1=12346
cmp "$BK_TMP/p0" <(backing_dd 8 8) || fail "1: not on the backing"
xs_absent $be/error

# 2. and 3.: a reconnect on a new ring spelled either way
cat > "$BK_TMP/s2" <<'EOS'
xs-write fe state 6
xs-expect be state 6 timeout=2000
ring-new keys=multi
xs-expect fe ring-page-order 0
xs-expect fe ring-ref -
xs-write fe state 1
xs-expect be state 2 timeout=2000
xs-write fe state 3
xs-expect be state 4 timeout=2000
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:23
xs-write fe state 6
xs-expect be state 6 timeout=2000
ring-new keys=single
xs-write fe ring-page-order 0
xs-expect fe ring-ref0 -
xs-write fe state 1
xs-expect be state 2 timeout=2000
xs-write fe state 3
xs-expect be state 5 timeout=2000
xs-expect be error * timeout=2000
EOS
run_script $DOM "$BK_TMP/s2"
case "$(xenstore-read $be/error)" in
"ring-ref0: missing in $fe") ;;
*) fail "3: error node \"$(xenstore-read $be/error)\"" ;;
esac
# 1, the second script's own handshake, and 2
[ "$(be_connects $DOM)" = 3 ] ||
	fail "not exactly three connections: blkbackd wrote the states $(be_states $DOM)"
good_device_works memory:1M
stop_backend
exit 0
