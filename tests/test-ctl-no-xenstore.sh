#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd-ctl list and stats read no xenstore: what they show of a vbd
# (the guest's name, its virtual device, params, the frontend's state,
# the error node) is what blkbackd read or wrote itself, kept with the
# vbd.  So a --ctl-group user asking in a loop costs the control thread
# no xenstore round trips, and an admin can still list while xenstored
# hangs.  Seen from outside: with xensim (our xenstored) stopped, both
# answer at once, with the same values xenstore holds.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
requires python3 --version
start_sim_backend

new_guest; A=$DOM
add_disk $A memory:4M
cat > "$BK_TMP/s" <<'EOS'
send op=write sector=0 seg=p0 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
EOS
run_script $A "$BK_TMP/s" --no-close
# a second vbd whose configuration blkbackd refuses: its error node
new_guest; B=$DOM
add_vbd $B 7 memory:1M cache=sometimes
xs_wait "$(bk_be $B 7)/state" 5
nameA=$(xenstore-read /local/domain/$A/name)
nameB=$(xenstore-read /local/domain/$B/name)
errB=$(xenstore-read "$(bk_be $B 7)/error")
feA=$(xenstore-read /local/domain/$A/device/vbd/51712/state)
vdevA=$(xenstore-read "$(bk_be $A)/dev")

simpid=$(cat "$XENSIM_DIR/xensim.pid")
kill -STOP "$simpid"
cleanup_fn kill -CONT "$simpid"
rc=0
timeout 10 blkbackd-ctl --json list > "$BK_TMP/list.json" 2>"$BK_TMP/err" || rc=$?
timeout 10 blkbackd-ctl --json stats > "$BK_TMP/stats.json" 2>>"$BK_TMP/err" || rc=$((rc + $?))
kill -CONT "$simpid"
[ $rc = 0 ] || fail "list/stats with xenstore stopped: rc $rc, $(cat "$BK_TMP/err")"
python3 - "$BK_TMP/list.json" "$BK_TMP/stats.json" "$A/51712" "$B/7" "$nameA" "$nameB" \
	"$errB" "$feA" "$vdevA" <<'EOP' || fail "list/stats differ from xenstore: $(cat "$BK_TMP/list.json")"
import json, sys
lst, st = (json.load(open(f)) for f in sys.argv[1:3])
va, vb, name_a, name_b, err_b, fe_a, vdev_a = sys.argv[3:]
l = {v["vbd"]: v for v in lst["vbds"]}
s = {v["vbd"]: v for v in st["vbds"]}
a, b = l[va], l[vb]
assert a["guest"] == name_a and a["vdev"] == vdev_a == "xvda", a
assert a["frontend_state"] == int(fe_a) == 4 and a["error"] is None, a
assert a["params"] == "memory:4M" and a["phase"] == "connected", a
assert b["guest"] == name_b and b["error"] == err_b and err_b.startswith("cache:"), b
assert b["params"] == "memory:1M", b
assert s[va]["guest"] == name_a and s[va]["vdev"] == "xvda" and s[va]["wr_req"] == 1, s[va]
EOP
exit 0
