#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stop that leaves guests stalled is not silent.  SIGTERM leaves every
# vbd Connected for the next blkbackd, and meanwhile its guest's I/O
# waits (test-backend-stop-keep: nothing is written to xenstore).  Here,
# with 3 vbds of 2 guests Connected:
#  - blkbackd's last words are a warning at the journal's priority 4
#    ("<4>" starts the line when stderr is the journal, JOURNAL_STREAM
#    naming it) counting the vbds and the guests and naming each vbd;
#  - blkbackd-ctl status, blkbackd down, exits 3 (not running) and says
#    the guests' disks are stalled, counting and naming the same vbds
#    (from the recovery records in blkbackd's state directory); --json
#    says it in the error's message, --prometheus as
#    blkbackd_vbds_stalled 3;
#  - it says nothing of the kind while a blkbackd serves them again, nor
#    after a stop that closed them (shutdown --close), nor for another
#    state directory (--state-dir).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim
# stderr is "the journal": its lines carry their priority
: > "$BACKEND_LOG"
export JOURNAL_STREAM=$(stat -c %d:%i "$BACKEND_LOG")
start_backend
unset JOURNAL_STREAM

# hold VDEV: a frontend of $DOM's VDEV (a file: it outlives blkbackd)
# that stays Connected
hold() {
	truncate -s 1M "$BK_TMP/disk.$DOM.$1"
	add_disk $DOM "$BK_TMP/disk.$DOM.$1" --vdev $1
	blkfront-test attach --domid $DOM --vdev $1 --hold > "$BK_TMP/hold.$DOM.$1" 2>&1 &
	cleanup_fn kill -KILL $!
}
new_guest; A=$DOM
hold xvda; hold xvdb
new_guest; B=$DOM
hold xvda
vbds="$A/51712 $A/51728 $B/51712"
for v in $vbds; do
	xs_wait $(bk_be ${v%/*} ${v#*/})/state 4
	xs_wait /local/domain/${v%/*}/device/vbd/${v#*/}/state 4
done

status() {	# status [OPTION...]: blkbackd-ctl status; $out, $rc
	rc=0
	out=$(blkbackd-ctl "$@" status 2>&1) || rc=$?
}
status
[ $rc = 0 ] || fail "blkbackd-ctl status with blkbackd serving: exit $rc: $out"
grep -qi stalled <<<"$out" && fail "blkbackd-ctl status with blkbackd serving speaks of stalled disks: $out"

stop_backend TERM
for v in $vbds; do
	xs_is $(bk_be ${v%/*} ${v#*/})/state 4
done
# the warning, at priority warning, counting vbds and guests
warn=$(grep 'stopped with ' "$BACKEND_LOG") || fail "no \"stopped with\" line in the log"
grep -Eq '^<4>warning: stopped with 3 vbds of 2 guests left Connected without a backend \(.*\): those guests. I/O waits until a blkbackd starts again$' <<<"$warn" ||
	fail "the stop's warning: \"$warn\", expected \"<4>warning: stopped with 3 vbds of 2 guests left Connected without a backend (...): ...\""
for v in $vbds; do
	grep -Eq "[( ]$v[ )]" <<<"$warn" || fail "the stop's warning does not name vbd $v: $warn"
done

# blkbackd-ctl status, blkbackd down
status
[ $rc = 3 ] || fail "blkbackd-ctl status with blkbackd down: exit $rc (3 expected): $out"
grep -q "is blkbackd running?" <<<"$out" || fail "blkbackd-ctl status does not say blkbackd is down: $out"
stall=$(grep "GUESTS' DISKS STALLED" <<<"$out") ||
	fail "blkbackd-ctl status with 3 vbds left attached does not say the guests' disks are stalled: $out"
grep -q "left 3 vbds of 2 guests attached without a backend" <<<"$stall" ||
	fail "blkbackd-ctl status: wrong count: $stall"
for v in $vbds; do
	grep -Eq "[( ]$v[ ;]" <<<"$stall" || fail "blkbackd-ctl status does not name vbd $v: $stall"
done
rc=0
json=$(blkbackd-ctl --json status 2>/dev/null) || rc=$?
[ $rc = 3 ] || fail "blkbackd-ctl --json status: exit $rc"
python3 -c '
import json, sys
e = json.loads(sys.argv[1])["error"]
assert e["exit"] == 3, e
assert "DISKS STALLED" in e["message"] and "3 vbds of 2 guests" in e["message"], e
' "$json" || fail "blkbackd-ctl --json status: $json"
prom=$(blkbackd-ctl --prometheus status 2>/dev/null) && fail "blkbackd-ctl --prometheus status exits 0 with blkbackd down"
grep -qx 'blkbackd_up 0' <<<"$prom" && grep -qx 'blkbackd_vbds_stalled 3' <<<"$prom" ||
	fail "blkbackd-ctl --prometheus status: $prom"
# another state directory holds no record: nothing stalled there
mkdir "$BK_TMP/empty"
status --state-dir="$BK_TMP/empty"
[ $rc = 3 ] && ! grep -qi stalled <<<"$out" || fail "blkbackd-ctl --state-dir=(empty) status: exit $rc: $out"

# served again: nothing stalled
start_backend
wait_for 20 eval 'status; grep -qx "connected: 3" <<<"$out"' ||
	fail "the restarted blkbackd does not serve the 3 vbds: $out"
! grep -qi stalled <<<"$out" || fail "blkbackd-ctl status after the restart: $out"

# a stop that closes them leaves no guest waiting: no warning, and
# status says only that blkbackd is down
: > "$BACKEND_LOG"
blkbackd-ctl shutdown --close >/dev/null || fail "blkbackd-ctl shutdown --close"
_backend_running=
wait_for 30 eval '! kill -0 $(cat "$BACKEND_PIDFILE") 2>/dev/null' || fail "blkbackd still running after shutdown --close"
grep -q 'stopped with ' "$BACKEND_LOG" && fail "a closing stop warns of stalled vbds: $(grep 'stopped with ' "$BACKEND_LOG")"
status
[ $rc = 3 ] && ! grep -qi stalled <<<"$out" || fail "blkbackd-ctl status after shutdown --close: exit $rc: $out"
exit 0
