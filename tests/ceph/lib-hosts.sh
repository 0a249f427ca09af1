# SPDX-License-Identifier: GPL-2.0-or-later
# Several "hosts" in one test, for the tests that move an RBD image
# between blkbackd daemons: each host is its own xensim (so its own
# xenstore, domains and blkbackd state directory) and its own blkbackd.
# Sourced after lib-backend.sh.
#   host_new NAME   start a host's xensim and blkbackd; NAME becomes current
#   host NAME       make NAME current: xenstore-*, blkfront-test, add_disk,
#                   stop_backend and $BACKEND_LOG then talk to that host
#   host_pid NAME   the pid of NAME's blkbackd
declare -A _host_sim=() _host_pidfile=() _host_log=()
_hosts=0
host_new() {
	start_xensim
	if [ $((_hosts++)) -gt 0 ]; then	# the first: lib-backend.sh's defaults
		BACKEND_PIDFILE=$BK_TMP/$1.pid BACKEND_LOG=$BK_TMP/$1.log
		BACKEND_TRACE=$BK_TMP/$1.trace
	fi
	start_backend
	_host_sim[$1]=$XENSIM_DIR _host_pidfile[$1]=$BACKEND_PIDFILE _host_log[$1]=$BACKEND_LOG
	host "$1"
}
host() {
	[ -n "${_host_sim[$1]:-}" ] || fail "host $1: no such host"
	XENSIM_DIR=${_host_sim[$1]} BACKEND_PIDFILE=${_host_pidfile[$1]}
	BACKEND_LOG=${_host_log[$1]}
	XENSTORED_PATH=$XENSIM_DIR/xenstore.sock
	export XENSIM_DIR XENSTORED_PATH
}
host_pid() { cat "${_host_pidfile[$1]}"; }
