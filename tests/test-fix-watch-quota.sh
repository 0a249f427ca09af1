#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# More vbds than blkbackd's xenstore connection may watch (xensim, like
# a driver domain's xenstored, allows 128 watches a connection): a vbd
# whose frontend's state cannot be watched used to stay Initialising
# with no error node, and its guest waited for a timeout.  Now it is
# fatal, as in Linux (xenbus_watch_pathfmt failing: "adding watch on"):
# an error node saying so and Closing.  Judged from xenstore: every one
# of 70 vbds is either InitWait or Closing with that error, none is left
# Initialising, and the quota was met (at least one got the error).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
doms=()
for i in $(seq 1 70); do
	new_guest
	doms+=("$DOM")
	add_vbd "$DOM" 51712 memory:1M
done
refused=0
for dom in "${doms[@]}"; do
	be=$(bk_be "$dom")
	wait_for 20 eval '[ "$(xenstore-read $be/state 2>/dev/null)" != 1 ]' ||
		fail "vbd $dom/51712 is still Initialising, with error \"$(xenstore-read $be/error 2>&1)\""
	st=$(xenstore-read "$be/state")
	case $st in
	2) xs_absent "$be/error" ;;
	5) err=$(xenstore-read "$be/error") || fail "vbd $dom/51712 is Closing with no error node"
	   [[ $err == "watch: cannot watch /local/domain/$dom/device/vbd/51712/state: "* ]] ||
		fail "vbd $dom/51712: error \"$err\""
	   refused=$((refused + 1)) ;;
	*) fail "vbd $dom/51712 is in state $st" ;;
	esac
done
[ "$refused" -gt 0 ] || fail "all 70 vbds were watched: this test no longer meets the watch quota"
echo "$refused of 70 vbds refused for the watch quota"
stop_backend
exit 0
