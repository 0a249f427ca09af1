#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What blkbackd finds at start-up is settled before it says it serves
# (pidfile, systemd's READY=1): a vbd already in xenstore is probed
# (InitWait), one whose frontend domain does not exist is closed, both
# before the pidfile appears and before the "serving" line; a vbd the
# toolstack adds afterwards, for a domain that does not exist either, is
# probed and left alone: no domain died since blkbackd started, so
# nothing may close it (the first look at the domains, which xenstore's
# first @releaseDomain firing asks for, is over by then).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
start_xensim
new_guest; A=$DOM
dead=$((A + 50))
add_vbd "$A" 51712 memory:1M
add_vbd "$dead" 51712 memory:1M
start_backend
# no waiting: the pidfile exists, so start-up has settled both
xs_is "$(bk_be "$A")/state" 2
xs_is "$(bk_be "$dead")/state" 6
serving=$(grep -n "blkbackd: serving " "$BACKEND_LOG" | cut -d: -f1)
for v in "$A" "$dead"; do
	line=$(grep -n "vbd $v/51712: ? -> InitWait" "$BACKEND_LOG" | head -n 1 | cut -d: -f1)
	[ -n "$line" ] && [ -n "$serving" ] && [ "$line" -lt "$serving" ] ||
		{ cat "$BACKEND_LOG"; fail "vbd $v/51712 was not probed before the \"serving\" line"; }
done
grep -q "vbd $dead/51712: frontend domain $dead is gone" "$BACKEND_LOG" ||
	{ cat "$BACKEND_LOG"; fail "the dead frontend's vbd was not closed as gone"; }

# added after start-up: probed, and still InitWait once blkbackd has
# done all it does with it (bk_sync)
late=$((A + 51))
add_vbd "$late" 51712 memory:1M
xs_wait "$(bk_be "$late")/state" 2
bk_sync
xs_is "$(bk_be "$late")/state" 2
xs_is "$(bk_be "$A")/state" 2
stop_backend
exit 0
