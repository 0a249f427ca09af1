#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# rbd params that cannot work -- a pool that does not exist, an image
# that does not exist, a configuration file that does not exist, a user
# the cluster does not know -- each give the vbd an error node naming
# the reason exactly and no InitWait; blkbackd lives on and a good vbd beside
# them connects and serves byte-exact I/O.  Run by check-ceph.sh.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "$BK_STORE" = rbd ] || { echo "$0: skipped: run by make check-ceph"; exit 77; }
start_sim_backend
new_disk 4M
good=$params
bad_case() { # PARAMS REGEX: the error node of a vbd on PARAMS matches REGEX
	local be
	new_guest
	add_vbd $DOM 51712 "$1"
	be=$(bk_be $DOM)
	wait_for 30 xenstore-read "$be/error" >/dev/null 2>&1 ||
		fail "$1: no error node in 30 s (state $(xenstore-read $be/state 2>&1))"
	echo "$1: $(xenstore-read "$be/error")"
	xenstore-read "$be/error" | grep -qE "$2" || fail "$1: the error node does not say /$2/"
	[ "$(xenstore-read $be/state)" != 2 ] || fail "$1: InitWait with a store that cannot open"
	kill -0 "$(bk_pid)" || fail "blkbackd died on $1"
}
bad_case "rbd:no-such-pool/img:conf=$CEPH_CONF" 'pool "no-such-pool": No such file or directory'
bad_case "rbd:$CEPH_POOL/no-such-image:conf=$CEPH_CONF" 'image [^ ]*/no-such-image: No such file or directory'
bad_case "rbd:$CEPH_POOL/img:conf=/nonexistent/ceph.conf" 'rados_conf_read_file \(conf /nonexistent/ceph.conf\): No such file or directory'
bad_case "rbd:${good#rbd:}:id=nosuchuser" 'cannot connect to the cluster .*id nosuchuser'
good_device_works "$good"
stop_backend
exit 0
