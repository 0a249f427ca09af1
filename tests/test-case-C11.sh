#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C11: a backend configured without barrier support (flush-mode=flush,
# the default) does not advertise feature-barrier, and answers a
# WRITE_BARRIER with EOPNOTSUPP without touching the host; flush-mode=none
# does the same for FLUSH_DISKCACHE.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
guest_with_disk 4M
cat > "$BK_TMP/s" <<'EOS'
xs-expect be feature-barrier 0
xs-expect be feature-flush-cache 1
fill p0 seed:9
send op=barrier id=1 sector=0 seg=p0 expect=EOPNOTSUPP
send op=barrier id=2 nr_segments=0 expect=EOPNOTSUPP
send op=flush id=3 nr_segments=0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/s"
no_host_io 1
no_host_io 2
cmp -n 4096 <(backing_dd 0 8) /dev/zero || fail "a refused barrier wrote data"

new_guest
add_disk $DOM "$params"
# written after InitWait, as the hotplug script does: read at connect
xs_wait "$(bk_be $DOM)/state" 2
xenstore-write "$(bk_be $DOM)/flush-mode" none
cat > "$BK_TMP/n" <<'EOS'
xs-expect be feature-barrier 0
xs-expect be feature-flush-cache 0
send op=flush id=11 nr_segments=0 expect=EOPNOTSUPP
send op=barrier id=12 nr_segments=0 expect=EOPNOTSUPP
EOS
run_script $DOM "$BK_TMP/n"
no_host_io 11
no_host_io 12
stop_backend
exit 0
