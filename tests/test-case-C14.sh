#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C14: a frontend that writes multi-queue-num-queues=0 (or not a number), or more than
# multi-queue-max-queues: the device does not connect, its error node
# says why, and the daemon keeps serving other devices.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --max-queues=4
for n in 0 5 abc; do
	new_guest
	new_disk 1M memory
	add_disk $DOM "$params"
	blkfront-test script --domid $DOM --expect-no-connect --fe-key multi-queue-num-queues=$n /dev/null ||
		fail "multi-queue-num-queues=$n: the device connected"
	be=$(bk_be $DOM)
	# Closing (5) with the error; Closed (6) once the frontend gave up
	wait_for 10 xenstore-read $be/error >/dev/null || fail "no error node"
	case "$(xenstore-read $be/state)" in 5|6) ;; *) fail "state $(xenstore-read $be/state)" ;; esac
	case "$(xenstore-read $be/error)" in
	"multi-queue-num-queues: \"$n\": "*" (multi-queue-max-queues is 4)") ;;
	*) fail "error node: \"$(xenstore-read $be/error)\"" ;;
	esac
	grep -q "vbd $DOM/51712: multi-queue-num-queues: " "$BACKEND_LOG" || fail "not logged"
done
# the daemon still serves a good device, with 2 queues
good_device_works memory:1M --queues 2
grep -q "vbd $DOM/51712: .*-> Connected (.*2 queues" "$BACKEND_LOG" || fail "not 2 queues"
stop_backend
exit 0
