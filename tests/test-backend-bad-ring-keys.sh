#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A frontend's ring-ref / event-channel that the hypervisor refuses (a
# grant ref past the table, an unbound port): the error node names that
# key and the frontend directory it was read from (queue-N/ with several
# queues), and the daemon keeps serving other devices.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --max-queues=4

expect_refused() { # expected-error-prefix blkfront-test-args...
	local want=$1 be err
	shift
	new_guest
	add_disk $DOM memory:1M
	blkfront-test script --domid $DOM --expect-no-connect "$@" /dev/null ||
		fail "$*: the device connected"
	be=$(bk_be $DOM)
	wait_for 10 xenstore-read $be/error >/dev/null || fail "$*: no error node"
	err=$(xenstore-read $be/error)
	case "$err" in
	"$want"*) ;;
	*) fail "$*: error node \"$err\", expected \"$want...\"" ;;
	esac
	grep -qF "vbd $DOM/51712: $want" "$BACKEND_LOG" || fail "$*: not logged"
}

expect_refused "event-channel: queue 0: cannot bind the event channel in /local/domain/" \
	--fe-key event-channel=99999
expect_refused "ring-ref: queue 0: cannot map the ring pages in /local/domain/" \
	--fe-key ring-ref=4294967295
expect_refused "event-channel: queue 1: cannot bind the event channel in /local/domain/" \
	--queues 2 --fe-key queue-1/event-channel=99999
grep -qF "/device/vbd/51712/queue-1: " "$BACKEND_LOG" || fail "queue-1's directory not named"

good_device_works memory:1M
stop_backend
exit 0
