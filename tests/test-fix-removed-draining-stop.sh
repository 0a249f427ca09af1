#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd stopped (SIGTERM, no --close) while a vbd the toolstack has
# removed is still answering its requests in flight.  That vbd is
# detached, not stalled: blkbackd used to keep its recovery record and
# warn that it left it "Connected without a backend", blkbackd-ctl
# status then reported the guest's disk stalled (exit 3), and the next
# blkbackd said the directory had gone while no blkbackd ran.  Now the
# stop says nothing of it, its record goes, and status names no
# stalled disk; its
# writes in flight are answered first.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
sd=$BK_TMP/state
start_sim_backend --state-dir="$sd"
new_guest; A=$DOM
be=$(bk_be $A)
add_disk $A memory:4M,delay-ms=1000
xs_wait "$be/state" 2 30
writes_in_flight $A 8
[ -e "$sd/vbd-$A-51712-q0" ] || { ls -l "$sd"; fail "no recovery record for the connected vbd"; }
xenstore-rm "$be"
wait_for 10 eval 'blkbackd-ctl list --json 2>/dev/null | grep -q "\"phase\": *\"draining\""' ||
	{ blkbackd-ctl list --json || true; fail "the removed vbd was never seen draining"; }
# list says it is removed, not only the Connected it last wrote
blkbackd-ctl list --json > "$BK_TMP/list.json" || fail "list --json"
python3 - "$BK_TMP/list.json" "$A/51712" <<'PY' || { cat "$BK_TMP/list.json"; fail "list --json does not say the vbd is removed"; }
import json, sys
v = {r["vbd"]: r for r in json.load(open(sys.argv[1]))["vbds"]}
assert v[sys.argv[2]]["removed"] is True, v.get(sys.argv[2])
PY
blkbackd-ctl list > "$BK_TMP/list" || fail "list"
grep -qE "^$A/51712 +[^ ]+ +Connected,REMOVED " "$BK_TMP/list" ||
	{ cat "$BK_TMP/list"; fail "list does not show the vbd Connected,REMOVED"; }
stop_backend
writes_answered $A 8 || fail "the removed vbd's writes in flight were not all answered OKAY"
if grep -q "without a backend" "$BACKEND_LOG"; then
	fail "the stop reported the removed vbd as left without a backend"
fi
[ ! -e "$sd/vbd-$A-51712-q0" ] || { ls -l "$sd"; fail "the removed vbd's recovery record was kept"; }
# blkbackd is down (exit 3); what status says of the guests' disks
blkbackd-ctl --state-dir="$sd" status > "$BK_TMP/status" 2>&1 && fail "status found blkbackd running"
grep -q "cannot connect" "$BK_TMP/status" || { cat "$BK_TMP/status"; fail "status did not say blkbackd is down"; }
if grep -qi "stalled" "$BK_TMP/status"; then
	cat "$BK_TMP/status"; fail "status says a guest's disk is stalled"
fi
exit 0
