#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's by-hand walk-through, run as it is written: the commands
# of "Serving a disk by hand" and "A filesystem on the guest's disk" are
# taken from the README (its indented blocks, a trailing "\" joining
# lines), run in one bash from the build tree, each one having to
# succeed; then what the comments promise: the backend in InitWait (2)
# before the guest connects and Closed (6) once removed, bonnie++'s
# table, a clean e2fsck, flushes in the trace, nothing left running,
# mounted or attached.
. ./functions.sh
requires_root
requires test -c /dev/fuse
requires command -v bonnie++
requires command -v xenstore-write
requires command -v mkfs.ext4
readme=$top_srcdir/README
tmp=$(mktemp -d /tmp/test-readme.XXXXXX)
cleanup_fn rm -rf "$tmp"

# section TITLE: the indented lines of the README section whose heading
# (the line above a line of dashes) starts with TITLE
section() {
	awk -v title="$1" '
		/^---/ { inside = (index(prev, title) == 1); prev = $0; next }
		inside && /^  / { print substr($0, 3) }
		{ prev = $0 }' "$readme"
}
{
	echo "set -e"
	section "Serving a disk by hand"
	section "A filesystem on the guest's disk"
} > "$tmp/walk.sh"
grep -q "blkbackd -f --transport=sim" "$tmp/walk.sh" || fail "no walk-through found in README: $(cat "$tmp/walk.sh")"
grep -q "bonnie++ -d" "$tmp/walk.sh" || fail "no filesystem section found in README"
echo "--- the commands, from README:"
cat "$tmp/walk.sh"

# whatever the walk-through leaves if it fails half-way
reap() {
	local m l
	for m in $(grep -F "$tmp/" /proc/mounts | awk '{print $2}' | sort -r); do umount -l "$m"; done
	for l in $(losetup -a | grep -F "$tmp/" | cut -d: -f1); do losetup -d "$l"; done
	pkill -f "$tmp/" 2>/dev/null
	return 0
}
cleanup_fn reap
rc=0
(cd "$top_builddir" && TMPDIR=$tmp timeout 600 bash -x "$tmp/walk.sh") >"$tmp/out" 2>"$tmp/err" || rc=$?
echo "--- its output:"
cat "$tmp/out"
[ "$rc" = 0 ] || { tail -n 30 "$tmp/err"; fail "the README's walk-through failed (exit $rc) at: $(grep '^+' "$tmp/err" | tail -n 1)"; }

# the states the comments promise, in order: 2 (InitWait), then 6 (Closed)
states=$(grep -xE '[0-9]' "$tmp/out" | tr '\n' ' ')
[ "$states" = "2 6 " ] || fail "backend states printed: '$states', want '2 6 ' (InitWait, Closed)"
grep -q "^feature-flush-cache = \"1\"" "$tmp/out" || fail "xenstore-ls shows no feature-flush-cache"
grep -q "^Version  *2\.\|^Version  *1\." "$tmp/out" || fail "no bonnie++ table"
flushes=$(tail -n 1 "$tmp/out")
[ "$flushes" -gt 0 ] 2>/dev/null || fail "grep -c op=flush printed '$flushes'"
sleep 1
if pgrep -f "$tmp/" >/dev/null; then
	pgrep -af "$tmp/"
	fail "the walk-through left processes running (above)"
fi
grep -qF "$tmp/" /proc/mounts && fail "the walk-through left a mount"
losetup -a | grep -qF "$tmp/" && fail "the walk-through left a loop device"
echo ok
