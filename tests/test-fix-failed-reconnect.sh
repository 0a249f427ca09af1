#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A vbd failed by a failed flush (C15) is not connected again behind a
# silent Connected that answers ERROR to everything: the guest's
# reconnect is refused (it never sees Connected), the error node says
# when the flush failed, that data may be lost and how to clear it, and
# the vbd ends Closed.  A blkbackd restart does not forget it.  Detaching
# the vbd and attaching it again (the toolstack's act) clears it.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
be=$(bk_be $DOM)
add_disk $DOM memory:4M,fail-flush
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=0 seg=p0 expect=OKAY
send op=flush id=2 nr_segments=0 expect=ERROR
send op=write id=3 sector=8 seg=p0 expect=ERROR
xs-expect be error * timeout=5000
EOS
run_script $DOM "$BK_TMP/s"
xs_wait $be/state 6
want="failed: the backing failed a flush at [0-9-]+ [0-9:]+ UTC \(mem-flush failed: Input/output error\); data written since its last good flush may be lost; not connected again: detach and reattach the disk to clear"

reconnect_refused() { # WHEN
	blkfront-test script --domid $DOM --timeout 5000 --expect-no-connect /dev/null > "$BK_TMP/r.out" 2>&1 ||
		{ cat "$BK_TMP/r.out"; fail "$1: the failed vbd connected again"; }
	err=$(xenstore-read $be/error) || fail "$1: no error node"
	grep -qE "^$want\$" <<<"$err" || fail "$1: error node \"$err\""
	xs_wait $be/state 6
}
reconnect_refused "a reconnect"
first=$err
reconnect_refused "a second reconnect"
[ "$err" = "$first" ] || fail "the error changed: \"$first\", then \"$err\""
# blkbackd-ctl list still says failed
blkbackd-ctl --json list | python3 -c '
import json, sys
v = [x for x in json.load(sys.stdin)["vbds"] if x["vbd"] == sys.argv[1]]
assert v and v[0]["failed"] is True and v[0]["state"] == 6, v' "$DOM/51712" ||
	fail "blkbackd-ctl list does not say the vbd failed"
st=$(blkbackd-ctl list | awk -v v="$DOM/51712" '$1 == v { print $3 }')
[ "$st" = "Closed,FAILED" ] || fail "blkbackd-ctl list's table shows the failed vbd as \"$st\""
# a restart remembers it (xenstore), with the time of the failure
stop_backend
start_backend
reconnect_refused "a reconnect after a blkbackd restart"
[ "$err" = "$first" ] || fail "after the restart: \"$err\", was \"$first\""
# detach and reattach: a new vbd, served (a write and a read-back; the
# store's flushes would fail again)
blkfront-test xl-remove --domid $DOM --force >/dev/null || fail "xl-remove"
add_disk $DOM memory:4M,fail-flush
cat > "$BK_TMP/s2" <<'EOS'
fill p0 seed:2
send op=write id=1 sector=0 seg=p0 expect=OKAY
send op=read id=2 sector=0 seg=p1 expect=OKAY
check p1 seed:2
EOS
run_script $DOM "$BK_TMP/s2"
xs_absent $be/error
stop_backend
exit 0
