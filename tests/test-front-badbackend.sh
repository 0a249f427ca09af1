#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A backend that breaks the protocol is caught, as hardened Linux blkfront
# catches it: a response with an id never sent, a duplicate, an rsp_prod
# past the requests, a wrong operation; and a backend that stops answering
# times out; a backend that still maps a request's grant at its response
# (no persistent grants), or says Closed while it maps the ring.  Each time the device is marked broken with one clear
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
# no persistent grants (the double offers none): access to a request's
# grants ends at its response, and a backend still mapping one is caught
run_fault still-mapped "the backend still maps a grant of .* at its response"

# Closed while the ring is still mapped: the I/O was fine, the close is
# not, and says so (verify's exit status is the I/O's; the script's
# "close" step fails on it)
"$abs_top_builddir/tests/front-bad-backend" --domid $DOM --fault closed-mapped &
bpid=$!
rc=0
timeout 60 blkfront-test verify --domid $DOM --timeout 5000 --size 1M --iodepth 4 \
	>"$FT/out.closed" 2>&1 || rc=$?
wait $bpid || fail "front-bad-backend --fault closed-mapped failed"
[ "$rc" = 0 ] || { cat "$FT/out.closed"; fail "closed-mapped: verify exited $rc"; }
grep -q "verify: ok" "$FT/out.closed" || { cat "$FT/out.closed"; fail "closed-mapped: the I/O failed"; }
grep -q "is Closed but still maps a ring page of ours" "$FT/out.closed" ||
	{ cat "$FT/out.closed"; fail "closed-mapped: not reported"; }
exit 0
