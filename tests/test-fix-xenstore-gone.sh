#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# xenstored (here xensim) dies under a serving blkbackd with a guest
# doing I/O: blkbackd notices within seconds, logs that it lost xenstore,
# drains its devices and exits 1 (blkbackd.8 EXIT STATUS), instead of
# running on blind.
. ./functions.sh
requires test -x "$abs_top_builddir/sim/xensim"
# our own xensim: this test kills it (start_xensim would fail at exit)
XENSIM_DIR=$(mktemp -d /tmp/xensim.XXXXXX)
export XENSIM_DIR XENSTORED_PATH="$XENSIM_DIR/xenstore.sock"
cleanup_fn rm -rf "$XENSIM_DIR"
start_daemon -P "$XENSIM_DIR/xensim.pid" xensim --dir "$XENSIM_DIR" --pidfile "$XENSIM_DIR/xensim.pid"
. "$abs_top_srcdir/tests/lib-backend.sh"
start_backend
new_guest
truncate -s 16M "$BK_TMP/d.img"
add_disk $DOM "$BK_TMP/d.img"
blkfront-test io --domid $DOM --rw randwrite --runtime 20 --timeout 5000 >"$BK_TMP/io.out" 2>&1 &
io=$!
cleanup_fn kill $io
xs_wait "$(bk_be $DOM)/state" 4
sleep 0.5
bk=$(cat "$BACKEND_PIDFILE")
kill -KILL "$(cat "$XENSIM_DIR/xensim.pid")"
t0=$(date +%s)
rc=0
timeout 15 tail --pid="$bk" -f /dev/null || fail "blkbackd still runs 15 s after xenstore died"
wait "$bk" || rc=$?
_backend_running=
echo "blkbackd exited $rc after $(( $(date +%s) - t0 )) s"
[ "$rc" = 1 ] || fail "blkbackd exited $rc, expected 1"
grep -q "lost the connection to xenstore" "$BACKEND_LOG" || fail "no log line saying xenstore is gone"
grep -q "stats vbd=$DOM/51712 " "$BACKEND_LOG" || fail "the device was not drained and closed"
wait $io 2>/dev/null || true
exit 0
