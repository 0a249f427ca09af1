#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd-ctl upgrade PATH refuses a PATH that is not a blkbackd
# (blkbackd runs "PATH --version" first and wants its own banner): an
# executable such as /bin/false, or a script that says something else,
# is refused with the reason (exit 1), and the same blkbackd serves on.
# A program that passes that check but exits instead of serving (the
# daemon is then gone, its guests stalled) is reported as such by
# blkbackd-ctl as soon as the daemon is gone (exit 3), not as an answer
# that never came after --timeout.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
pid=$(bk_pid)

refused() { # PATH EXPECTED-MESSAGE-PART
	rc=0
	blkbackd-ctl upgrade "$1" > "$BK_TMP/out" 2> "$BK_TMP/err" || rc=$?
	[ $rc = 1 ] || fail "upgrade $1: exit $rc ($(cat "$BK_TMP/out" "$BK_TMP/err"))"
	grep -qF -- "$2" "$BK_TMP/err" || fail "upgrade $1: $(cat "$BK_TMP/err")"
	kill -0 $pid 2>/dev/null || fail "a refused upgrade to $1 stopped blkbackd"
	blkbackd-ctl status | grep -qx "pid: $pid" || fail "after upgrade $1: not served by $pid"
}
false_bin=$(type -P false)
refused "$false_bin" "upgrade: $false_bin: not a blkbackd (its --version exited with status 1 and printed"
printf '#!/bin/sh\necho "hello from $0 $*"\n' > "$BK_TMP/hello"
chmod +x "$BK_TMP/hello"
refused "$BK_TMP/hello" "not a blkbackd (its --version exited with status 0 and printed \"hello from $BK_TMP/hello --version\""
# still serving guests
good_device_works memory:1M

# passes --version, then exits 1 where blkbackd would serve
cat > "$BK_TMP/fake" <<'EOS'
#!/bin/sh
case "$1" in
--version) echo "blkbackd 0.0 (fake)" ;;
*) exit 1 ;;
esac
EOS
chmod +x "$BK_TMP/fake"
rc=0
blkbackd-ctl upgrade --timeout=100 "$BK_TMP/fake" > "$BK_TMP/out" 2> "$BK_TMP/err" || rc=$?
_backend_running=
[ $rc = 3 ] && grep -qF "blkbackd (pid $pid) exited during the upgrade" "$BK_TMP/err" ||
	fail "upgrade to a program that exits: exit $rc: $(cat "$BK_TMP/out" "$BK_TMP/err")"
exit 0
