#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbackd can be stopped and started again: on start it picks up the
# vbds already in xenstore (InitWait again) and the guest reconnects to
# its data.  Also: without -f it daemonizes, writes the pidfile, and
# still exits 0 on SIGTERM.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
cat > "$BK_TMP/w" <<EOS
fill p0 seed:77
send op=write sector=8 seg=p0 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
EOS
cat > "$BK_TMP/r" <<EOS
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:77
EOS
run_script $DOM "$BK_TMP/w"
stop_backend
xs_is "$(bk_be $DOM)/state" 6

# a restarted daemon (daemonized this time) serves the same device again
rm -f "$BACKEND_PIDFILE"
blkbackd --transport=sim --sim-dir="$XENSIM_DIR" --pidfile="$BACKEND_PIDFILE" ||
	fail "blkbackd (daemonized) exited with $?"
wait_for 10 test -s "$BACKEND_PIDFILE" || fail "no pidfile from the daemonized blkbackd"
pid=$(cat "$BACKEND_PIDFILE")
cleanup_fn kill -9 "$pid"
xs_wait "$(bk_be $DOM)/state" 2
run_script $DOM "$BK_TMP/r"
kill -TERM "$pid"
wait_for 30 eval '! kill -0 '"$pid"' 2>/dev/null' || fail "daemonized blkbackd ignored SIGTERM"
xs_is "$(bk_be $DOM)/state" 6
[ ! -e "$BACKEND_PIDFILE" ] || fail "pidfile left behind after a clean exit"
exit 0
