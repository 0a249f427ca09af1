#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The ring layouts and sizes a frontend may choose: x86_32-abi and
# x86_64-abi (the "protocol" node), multi-page rings (ring-page-order),
# several queues; byte-exact round trips on each.  A ring-page-order above
# max-ring-page-order is refused with an error node naming the key.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --max-ring-page-order=2
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:21
fill p1 seed:22
send op=write id=9000000000 sector=64 seg=p0 seg=p1:2:5 expect=OKAY
send op=read id=9000000001 sector=64 seg=p2 expect=OKAY
check p2 seed:21
send op=flush nr_segments=0 expect=OKAY
send op=discard sector=128 nr_sectors=16 expect=OKAY
send op=indirect indirect_op=read sector=64 seg=p3 seg=p4 igref=p9 expect=OKAY
check p3 seed:21
EOS
for opts in "--protocol x86_32-abi" "--protocol x86_64-abi" "--ring-order 2" "--ring-order 2 --queues 2"; do
	new_guest
	add_disk $DOM memory:4M
	run_script $DOM "$BK_TMP/s" $opts
done
grep -q "x86_32-abi" "$BACKEND_LOG" || fail "no x86_32-abi connection logged"
grep -q "4-page ring" "$BACKEND_LOG" || fail "no 4-page ring logged"
grep -q "2 queues, 4-page ring" "$BACKEND_LOG" || fail "no 2-queue connection logged"

new_guest
add_disk $DOM memory:4M
blkfront-test script --domid $DOM --expect-no-connect --fe-key ring-page-order=3 /dev/null ||
	fail "ring-page-order=3 connected"
wait_for 10 xenstore-read "$(bk_be $DOM)/error" >/dev/null || fail "no error node"
case "$(xenstore-read "$(bk_be $DOM)/error")" in
"ring-page-order: \"3\": too large (max-ring-page-order is 2)") ;;
*) fail "error node: $(xenstore-read "$(bk_be $DOM)/error")" ;;
esac
stop_backend
exit 0
