#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkfront-test's messages for a user: a device the backend refuses is
# reported with the backend's error text and "the backend refused the
# device" (not "Connection timed out"); its man page points at xensim(1),
# the page that exists; README.script names only paths inside the repository.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
! grep -n 'xensim (8)' "$abs_top_srcdir/frontend-test/blkfront-test.1" ||
	fail "blkfront-test.1 refers to xensim(8); the page is xensim(1)"
[ -e "$abs_top_srcdir/sim/xensim.1" ] || fail "sim/xensim.1 missing"
! grep -n '\.\./' "$abs_top_srcdir/frontend-test/README.script" ||
	fail "README.script names a path outside the repository"
front_sim
start_backend
add_disk $DOM memory:abc
xs_wait "$(be_dir)/state" 5
rc=0
timeout 60 blkfront-test io --domid $DOM --size 64k --timeout 2000 >"$FT/io" 2>&1 || rc=$?
cat "$FT/io"
[ "$rc" = 1 ] || fail "io on a refused device: exit $rc, expected 1"
grep -q 'error: params: bad size "abc"' "$FT/io" || fail "the backend's error text is not quoted"
grep -q "cannot connect: the backend refused the device" "$FT/io" ||
	fail "no 'the backend refused the device'"
! grep -q "Connection timed out" "$FT/io" || fail "still says Connection timed out"
stop_backend
exit 0
