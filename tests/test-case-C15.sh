#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C15: the backing's fdatasync fails with EIO during a FLUSH_DISKCACHE:
# never OKAY (ERROR), the daemon logs it loudly and marks the device
# failed (error node), and every later request is refused.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
add_disk $DOM memory:4M,fail-flush
cat > "$BK_TMP/s" <<'EOS'
fill p0 seed:1
send op=write id=1 sector=0 seg=p0 expect=OKAY
send op=flush id=2 nr_segments=0 expect=ERROR
send op=write id=3 sector=8 seg=p0 expect=ERROR
send op=flush id=4 nr_segments=0 expect=ERROR
xs-expect be error * timeout=5000
EOS
run_script $DOM "$BK_TMP/s"
case "$(xenstore-read "$(bk_be $DOM)/error")" in
"failed: mem-flush failed: Input/output error; device failed"*) ;;
*) fail "error node: \"$(xenstore-read "$(bk_be $DOM)/error")\"" ;;
esac
grep -q "error: vbd $DOM/51712: mem-flush failed: Input/output error" "$BACKEND_LOG" ||
	fail "the failed flush was not logged as an error"
grep -q "op=flush id=.*status=0" "$BACKEND_TRACE" && fail "a flush was acknowledged"
no_host_io 3
stop_backend
exit 0
