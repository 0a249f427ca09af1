# SPDX-License-Identifier: GPL-2.0-or-later
# lib-nbd.sh: NBD servers for the nbd store's tests (sourced after
# lib-backend.sh): nbdkit and qemu-nbd on unix sockets in $BK_TMP.

# nbd_requires: skip the test unless blkbackd has the nbd store and
# nbdkit is installed (.ci/install-deps installs both).
nbd_requires() {
	grep -q "^#define HAVE_LIBNBD 1" "$abs_top_builddir/config.h" || {
		echo "$0: skipped: blkbackd built without the nbd store (libnbd-dev)"; exit 77; }
	requires nbdkit --version
}

# nbdkit_start NAME [NBDKIT ARGS]...: nbdkit serving on $BK_TMP/NAME.sock
# (the export "", read by nbd+unix:///?socket=...), in the background;
# sets NBD_URI (the store's params without "nbd:") and NBDKIT_PID.
# Killed at exit.
nbdkit_start() {
	local name=$1
	shift
	rm -f "$BK_TMP/$name.sock" "$BK_TMP/$name.pid"
	nbdkit -U "$BK_TMP/$name.sock" -P "$BK_TMP/$name.pid" "$@" ||
		fail "nbdkit $* did not start"
	wait_for 10 test -s "$BK_TMP/$name.pid" || fail "nbdkit $name: no pid file"
	NBDKIT_PID=$(cat "$BK_TMP/$name.pid")
	cleanup_fn kill -KILL "$NBDKIT_PID"
	NBD_URI="nbd+unix:///?socket=$BK_TMP/$name.sock"
}

# qemu_nbd_start NAME FILE [QEMU-NBD ARGS]...: qemu-nbd serving FILE on
# $BK_TMP/NAME.sock (export "", a persistent server); sets NBD_URI and
# QEMU_NBD_PID.  Killed at exit.
qemu_nbd_start() {
	local name=$1 file=$2
	shift 2
	rm -f "$BK_TMP/$name.sock"
	qemu-nbd --persistent --socket="$BK_TMP/$name.sock" "$@" "$file" \
		> "$BK_TMP/$name.log" 2>&1 &
	QEMU_NBD_PID=$!
	cleanup_fn kill -KILL "$QEMU_NBD_PID"
	wait_for 10 test -S "$BK_TMP/$name.sock" || fail "qemu-nbd $name did not start"
	NBD_URI="nbd+unix:///?socket=$BK_TMP/$name.sock"
}
