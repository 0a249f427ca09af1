#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd --ctl-group: the control socket 0660 and the group's; its
# members (by gid or a supplementary group) may list, stats and status,
# and are refused resize, shutdown and upgrade by the daemon (EPERM);
# anybody else is refused as before.  A group that does not exist is an
# error at start.  With the socket in the state directory (Xen's default,
# made 0700), the group is let through that directory.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
requires python3 --version
requires setpriv --help
requires groupadd --help
grp=bkctl$$
groupadd "$grp" || fail "groupadd $grp"
cleanup_fn groupdel "$grp"
gid=$(getent group "$grp" | cut -d: -f3)

rc=0; timeout 20 blkbackd -f --transport=sim --sim-dir=/nonexistent \
	--ctl-group=nosuchgroup$$ 2>"$BK_TMP/err0" || rc=$?
[ $rc = 1 ] && grep -qF "ctl-group: no group \"nosuchgroup$$\"" "$BK_TMP/err0" ||
	fail "--ctl-group of no group: rc $rc, $(cat "$BK_TMP/err0")"

start_sim_backend --ctl-group="$grp"
sock=$XENSTORED_PATH.blkbackd-0.ctl
[ "$(stat -c '%a %G' "$sock")" = "660 $grp" ] ||
	fail "socket: $(stat -c '%a %G' "$sock"), expected 660 $grp"
# the simulator's directory is root's (0700): let others reach the socket
chmod o+x "$XENSIM_DIR"
cleanup_fn chmod o-x "$XENSIM_DIR"
new_guest; A=$DOM
add_disk $A memory:1M

as_member() { setpriv --reuid=nobody --regid="$grp" --clear-groups blkbackd-ctl --socket="$sock" "$@"; }
as_supp() { setpriv --reuid=nobody --regid=nogroup --groups="$gid" blkbackd-ctl --socket="$sock" "$@"; }
as_other() { setpriv --reuid=nobody --regid=nogroup --clear-groups blkbackd-ctl --socket="$sock" "$@"; }

# ---- read-only commands: served ----
as_member list --json > "$BK_TMP/list.json" 2>"$BK_TMP/err" || fail "member: list: $(cat "$BK_TMP/err")"
python3 - "$BK_TMP/list.json" $A <<'EOP' || fail "member: list --json: $(cat "$BK_TMP/list.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert [v["vbd"] for v in d["vbds"]] == [sys.argv[2] + "/51712"], d
EOP
as_member stats > /dev/null 2>"$BK_TMP/err" || fail "member: stats: $(cat "$BK_TMP/err")"
as_member stats $A/51712 --prometheus > /dev/null 2>"$BK_TMP/err" ||
	fail "member: stats VBD: $(cat "$BK_TMP/err")"
as_member status > "$BK_TMP/status" 2>"$BK_TMP/err" || fail "member: status: $(cat "$BK_TMP/err")"
grep -qx "pid: $(cat "$BACKEND_PIDFILE")" "$BK_TMP/status" || fail "member: status: $(cat "$BK_TMP/status")"
# a supplementary group is membership too
as_supp status > /dev/null 2>"$BK_TMP/err" || fail "supplementary member: status: $(cat "$BK_TMP/err")"

# ---- the others: EPERM from the daemon, which goes on ----
pid=$(cat "$BACKEND_PIDFILE")
for cmd in "resize $A/51712" "shutdown" "shutdown --close" "upgrade /proc/self/exe"; do
	rc=0; as_member $cmd >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
	[ $rc = 1 ] && grep -qx "blkbackd-ctl: EPERM only root may do that; the control group may list, stats and status" "$BK_TMP/err" ||
		fail "member: $cmd: rc $rc, $(cat "$BK_TMP/err")"
	[ ! -s "$BK_TMP/out" ] || fail "member: $cmd: $(cat "$BK_TMP/out")"
	kill -0 $pid || fail "member's $cmd stopped blkbackd"
done
rc=0; as_supp shutdown 2>"$BK_TMP/err" || rc=$?
[ $rc = 1 ] && grep -q "EPERM only root may do that" "$BK_TMP/err" || fail "supplementary member: shutdown: rc $rc"
# ... and as JSON on stdout
rc=0; as_member resize $A/51712 --json >"$BK_TMP/out" 2>/dev/null || rc=$?
[ $rc = 2 ] || fail "resize --json is a usage error: rc $rc"
# not in the group: the file mode keeps it out (cannot connect: 3) ...
rc=0; as_other list >/dev/null 2>"$BK_TMP/err" || rc=$?
[ $rc = 3 ] && grep -q "Permission denied" "$BK_TMP/err" || fail "other: rc $rc, $(cat "$BK_TMP/err")"
# ... and past the mode, the daemon (SO_PEERCRED)
chmod 666 "$sock"
rc=0; as_other list >"$BK_TMP/out" 2>"$BK_TMP/err" || rc=$?
chmod 660 "$sock"
[ $rc = 1 ] && grep -q "EPERM only root may control blkbackd" "$BK_TMP/err" ||
	fail "the daemon served a non-member: rc $rc, $(cat "$BK_TMP/err")"
[ ! -s "$BK_TMP/out" ] || fail "a non-member got an answer"
grep -q "control socket: refused a client (pid [0-9]*, uid 65534): only root and --ctl-group may control blkbackd" \
	"$BACKEND_LOG" || fail "no log line for the refusal"
# root still does everything (the guest never connected: the daemon's
# own answer, past the permission check)
rc=0; blkbackd-ctl resize $A/51712 2>"$BK_TMP/err" >/dev/null || rc=$?
[ $rc = 1 ] && grep -q "ENOTCONN vbd $A/51712 is not connected" "$BK_TMP/err" ||
	fail "root: resize: rc $rc, $(cat "$BK_TMP/err")"
stop_backend

# Xen's layout: the socket in the state directory (/run/blkbackd), which
# blkbackd makes 0700.  The group is let through it (search only), or no
# member could ever connect.
st=$BK_TMP/state
chmod o+x "$BK_TMP"
cleanup_fn chmod o-x "$BK_TMP"
start_backend --ctl-group="$grp" --state-dir="$st" --ctl-socket="$st/ctl.sock"
[ "$(stat -c '%a %G' "$st")" = "710 $grp" ] ||
	fail "state directory with the socket: $(stat -c '%a %G' "$st"), expected 710 $grp"
sock=$st/ctl.sock
as_member status > /dev/null 2>"$BK_TMP/err" || fail "member, socket in the state directory: $(cat "$BK_TMP/err")"
rc=0; as_other list >/dev/null 2>"$BK_TMP/err" || rc=$?
[ $rc = 3 ] && grep -q "Permission denied" "$BK_TMP/err" || fail "other, socket in the state directory: rc $rc"
stop_backend
exit 0
