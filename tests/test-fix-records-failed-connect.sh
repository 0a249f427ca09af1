#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A connect that fails while its queues are set up (an event channel
# the hypervisor refuses, on queue 0 or on queue 1 after queue 0 was
# made) leaves no recovery record (vbd-F-D-qN) in the state directory:
# the vbd is not Connected by anyone, so blkbackd-ctl status, with
# blkbackd down, must not count it among the guests' stalled disks.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
sd=$BK_TMP/state
mkdir -p "$sd"
start_sim_backend --max-queues=2 --state-dir="$sd"

refused() { # blkfront-test-args...: a new guest whose connect is refused
	new_guest
	add_disk $DOM memory:1M
	blkfront-test script --domid $DOM --expect-no-connect "$@" /dev/null ||
		fail "$*: the device connected"
	wait_for 10 xenstore-read "$(bk_be $DOM)/error" >/dev/null || fail "$*: no error node"
	case "$(xenstore-read "$(bk_be $DOM)/error")" in
	"event-channel: queue "*) ;;
	*) fail "$*: error node \"$(xenstore-read "$(bk_be $DOM)/error")\"" ;;
	esac
	left=$(cd "$sd" && ls vbd-$DOM-* 2>/dev/null) &&
		fail "$*: recovery records left behind: $left"
	doms="$doms $DOM"
}
doms=
refused --fe-key event-channel=99999
refused --queues 2 --fe-key queue-1/event-channel=99999
# a good vbd still gets its record while Connected, and loses it at close
good_device_works memory:1M
xs_wait "$(bk_be $DOM)/state" 6
stop_backend
left=$(cd "$sd" && ls vbd-* 2>/dev/null) && fail "records left after the stop: $left"
rc=0
out=$(blkbackd-ctl --state-dir="$sd" status 2>&1) || rc=$?
[ $rc = 3 ] || fail "blkbackd-ctl status with blkbackd down: exit $rc: $out"
! grep -qi stalled <<<"$out" || fail "Closed vbds reported as stalled: $out"
exit 0
