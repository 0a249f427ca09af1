#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench --platform xen-host / xen-nested where they cannot run: exit 1,
# one message naming everything that is missing (/proc/xen/capabilities,
# xl, the hotplug script, a running blkbackd, --backing, the guest
# kernel...), and nothing left behind: no mount, no loop device, no work
# directory.  Part of "make check": no Xen needed (skips on a real dom0).
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires python3 --version
tmp=$(mktemp -d /tmp/xen-refusal.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
common=(--out "$tmp/res" --workdir "$tmp" --runs 1 --fs ext4 --mem 16 --size 32 --files 1)

expect_error() {	# expect_error PATTERN blkbench-args...
	local pat=$1 rc=0; shift
	blkbench "$@" > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$tmp/err"; fail "blkbench $*: exit $rc, want 1"; }
	grep -qF -- "$pat" "$tmp/err" || { cat "$tmp/err"; fail "blkbench $*: no '$pat' in the message"; }
	[ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "blkbench $*: printed a table"; }
	[ ! -e "$tmp/res/results.csv" ] || fail "blkbench $*: wrote results"
	assert_clean "$tmp"
}

# the option itself
expect_error "--platform bogus: not one of sim, xen-nested, xen-host" run "${common[@]}" --platform bogus
# on sim --backing names an RBD image (the domU rows on Ceph), never a file
expect_error "--backing $tmp/disk: on --platform sim only an RBD image" run "${common[@]}" --backing "$tmp/disk"
expect_error "--guest-kernel is for --platform xen-host only" run "${common[@]}" --guest-kernel /boot/x
expect_error "are for --platform xen-host only" run "${common[@]}" --platform xen-nested --backing "$tmp/disk"
expect_error "--where dom0,raw: unknown where 'raw' (known: dom0, domU)" \
	run "${common[@]}" --platform xen-nested --where dom0,raw

# xen-host on a machine that is not a Xen dom0
if grep -qs control_d /proc/xen/capabilities; then
	echo "this machine is a Xen dom0: the xen-host refusal cannot be shown" >&2
	exit 77
fi
expect_error "--platform xen-host cannot run here: " run "${common[@]}" --platform xen-host
for what in "/proc/xen/capabilities is missing" "--backing LV|FILE" "see blkbench(1), Platforms"; do
	grep -qF -- "$what" "$tmp/err" || { cat "$tmp/err"; fail "xen-host refusal does not name: $what"; }
done
[ "$(wc -l < "$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "xen-host refusal: more than one line"; }
truncate -s 64M "$tmp/disk"
expect_error "--platform xen-host cannot run here: " run "${common[@]}" --platform xen-host \
	--backing "$tmp/disk" --guest-kernel "$tmp/no-vmlinuz-1.0"
grep -qF "a guest kernel: $tmp/no-vmlinuz-1.0 (--guest-kernel)" "$tmp/err" ||
	{ cat "$tmp/err"; fail "xen-host refusal does not name the guest kernel"; }
grep -qF -- "--backing LV|FILE" "$tmp/err" && fail "a given --backing is reported missing"

# xen-nested: refused before any boot, either for what is missing or for
# a workload the guests cannot run
if [ "$(id -u)" != 0 ]; then
	expect_error "--platform xen-nested cannot run here: needs root" run "${common[@]}" --platform xen-nested
else
	rc=0
	timeout 60 blkbench run "${common[@]}" --platform xen-nested --workload tar > "$tmp/out" 2> "$tmp/err" || rc=$?
	[ "$rc" = 1 ] || { cat "$tmp/err"; fail "xen-nested --workload tar: exit $rc, want 1"; }
	grep -qE -- "--platform xen-nested( cannot run here: .*tests/xen/install-deps|: workload tar is not supported there \(supported: bonnie, fsmark\))" "$tmp/err" ||
		{ cat "$tmp/err"; fail "xen-nested refusal unclear"; }
	assert_clean "$tmp"
	if ! grep -qF "cannot run here" "$tmp/err"; then
		# sizes that cannot fit in the nested dom0's 1024 MiB
		expect_error "--mem 512 MiB and --size 1024 MiB do not fit in the nested dom0's 1024 MiB" \
			run "${common[@]}" --platform xen-nested --mem 512 --size 1024
	fi
fi
echo ok
