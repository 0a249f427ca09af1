#!/usr/bin/env bash
# A backend that breaks the protocol is caught, as hardened Linux blkfront
# catches it: a response with an id never sent, a duplicate, an rsp_prod
# past the requests, a wrong operation; and a backend that stops answering
# times out.  Each time the device is marked broken with one clear
# message, the I/O fails (EIO, exit 1), and nothing hangs.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
blkfront-test xl-add --domid $DOM --params memory:4M >/dev/null || fail "xl-add"

run_fault() { # fault expected-message
	local bpid rc=0
	"$abs_top_builddir/tests/front-bad-backend" --domid $DOM --fault $1 --after 5 &
	bpid=$!
	timeout 60 blkfront-test verify --domid $DOM --timeout 2000 --size 1M --iodepth 4 \
		>"$FT/out.$1" 2>&1 || rc=$?
	wait $bpid || fail "front-bad-backend --fault $1 failed"
	[ "$rc" = 1 ] || { cat "$FT/out.$1"; fail "fault $1: verify exited $rc, expected 1"; }
	grep -q "$2.*device disabled for further use" "$FT/out.$1" ||
		{ cat "$FT/out.$1"; fail "fault $1: no \"$2\" message"; }
	grep -q "verify: FAILED: .*Input/output error" "$FT/out.$1" ||
		{ cat "$FT/out.$1"; fail "fault $1: the I/O did not fail with EIO"; }
	[ "$(grep -c 'device disabled' "$FT/out.$1")" = 1 ] ||
		fail "fault $1: the fault was reported more than once"
}

# the double itself is a correct backend without a fault
"$abs_top_builddir/tests/front-bad-backend" --domid $DOM &
bpid=$!
blkfront-test verify --domid $DOM --timeout 5000 --size 1M --iodepth 8 >"$FT/ok" 2>&1 ||
	{ cat "$FT/ok"; fail "verify against the correct double failed"; }
wait $bpid || fail "front-bad-backend exited non-zero"

run_fault wrong-id "response has incorrect id"
run_fault duplicate "response references no pending request"
run_fault overflow "illegal number of responses (rsp_prod overflow)"
run_fault wrong-op "response has wrong operation (0 instead of 1)"
run_fault silent "no response to write .* within 2000 ms"
exit 0
