#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frontend whose state node blkbackd has only ever seen holding junk
# (fatal: Closing), and which then goes (the node removed), is a
# frontend gone: Closed, as the table's row "Closing after an error"
# has it for "absent".  blkbackd counted a frontend as "seen" only once
# it had read a valid state, so it took the removal for "not there
# yet" and stayed Closing (found by fuzz-control).  The junk is written
# while blkbackd is stopped (SIGSTOP), so that it never reads the 1
# xl-add wrote.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
pid=$(bk_pid)
_cont() { kill -CONT "$1" 2>/dev/null || true; }
cleanup_fn _cont $pid
kill -STOP $pid
add_disk $DOM memory:1M
xenstore-write $fe/state abc
kill -CONT $pid
xs_wait $be/state 5
xs_is $be/error "state: the frontend's state \"abc\" at $fe/state is not a XenbusState in 1..6"
xenstore-rm $fe/state
xs_wait $be/state 6
stop_backend
exit 0
