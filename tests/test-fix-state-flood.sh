#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A guest flapping its state node cannot flood dom0's log: 300 writes of
# the frontend's state give at most STATE_LOG_BURST (20) state-change
# lines per 10 s for that device, plus one saying it logs fewer; the
# device still serves afterwards.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend
add_disk $DOM memory:4M
fe=$(fe_dir)
xs_wait "$(be_dir)/state" 2
n0=$(grep -c "vbd $DOM/51712: " "$BACKEND_LOG" || true)
for i in $(seq 75); do
	for s in 1 3 5 6; do
		echo "$fe/state $s"
	done
done | while read -r p v; do xenstore-write "$p" "$v"; done
bk_sync	# blkbackd has handled all 300 writes' events
n1=$(grep -c "vbd $DOM/51712: " "$BACKEND_LOG" || true)
echo "300 frontend state writes -> $((n1 - n0)) log lines for the device"
[ $((n1 - n0)) -le 25 ] || fail "$((n1 - n0)) log lines for 300 state writes (flood)"
grep -q "vbd $DOM/51712: state changes too frequent; logging fewer for 10 s" "$BACKEND_LOG" ||
	fail "no line saying state changes are logged less"
xenstore-write "$fe/state" 6
timeout 60 blkfront-test io --domid $DOM --size 64k --timeout 10000 >"$FT/io" 2>&1 ||
	fail "the device does not serve after the flapping: $(cat "$FT/io")"
stop_backend
exit 0
