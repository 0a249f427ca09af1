#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A read-only block device (losetup -r) given writable (mode=w) is
# refused before the guest connects, with the reason in the error node,
# as a read-only file is: such a device opens O_RDWR all the same and
# would fail every write the guest makes.  Given mode=r it is served.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires_root
requires losetup --version
start_sim_backend
file=$BK_TMP/ro.img
truncate -s 4M "$file"
dev=$(losetup -f --show -r "$file") || fail "losetup -r"
cleanup_fn losetup -d "$dev"

new_guest
add_disk $DOM "$dev" --mode w
blkfront-test script --domid $DOM --expect-no-connect /dev/null ||
	fail "a read-only device was connected writable"
wait_for 10 xenstore-read "$(bk_be $DOM)/error" >/dev/null || fail "no error node"
case "$(xenstore-read "$(bk_be $DOM)/error")" in
*"read-only"*) ;;
*) fail "error node: \"$(xenstore-read "$(bk_be $DOM)/error")\"" ;;
esac

# mode=r: connected read-only, reads work
new_guest
add_disk $DOM "$dev" --mode r
cat > "$BK_TMP/r.script" <<'EOS'
send op=read sector=8 seg=p0 expect=OKAY
EOS
run_script $DOM "$BK_TMP/r.script" || fail "the read-only device was not served read-only"
stop_backend
exit 0
