#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkfront-test's options mean what they say, or are refused: --vdev
# takes the same names in attach as in xl-add (xvdq and above: libxl's
# extended form); io --size past the end of the disk is refused, not
# clamped; verify --count 0 and --size 0 are refused, not the defaults;
# io --fua on a write-through disk (no flush, no FUA) is not reported as
# fua; a script's igref= may be a raw number naming none of its pages
# (the backend refuses to map it: ERROR, and the ring goes on).
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"

bad() {	# bad WHAT CMD...: exit 2 and a message with WHAT
	local what=$1 rc=0
	shift
	blkfront-test "$@" > "$FT/out" 2>&1 || rc=$?
	sed "s/^/$1 $2: /" "$FT/out"
	[ "$rc" = 2 ] || fail "blkfront-test $*: exit $rc, expected 2"
	grep -qF -- "$what" "$FT/out" || fail "blkfront-test $*: no \"$what\" in its message"
}
# refused while parsing, before any xenstore
bad "--count 0: expected a whole number above 0" verify --domid 1 --count 0
bad "--size 0: expected a size above 0" verify --domid 1 --size 0
bad "--size 0: expected a size above 0" io --domid 1 --size 0
bad "--vdev xvd1: expected xvdX, xvdXY or a number" attach --domid 1 --vdev xvd1

front_sim
start_backend
# xvdq: the 17th disk, libxl's extended form (1 << 28 | 16 << 8)
add_disk $DOM memory:16M --vdev xvdq
xs_wait "$(be_dir 268439552)/state" 2
blkfront-test attach --domid $DOM --vdev xvdq > "$FT/attach" 2>&1 ||
	fail "attach --vdev xvdq: $(cat "$FT/attach")"
blkfront-test attach --domid $DOM --vdev 268439552 > "$FT/attach2" 2>&1 ||
	fail "attach --vdev 268439552: $(cat "$FT/attach2")"

add_disk $DOM memory:16M
xs_wait "$(be_dir)/state" 2
bad "--size 1073741824 is past the end of the disk" io --domid $DOM --size 1g
# a size that fits is served as given
blkfront-test io --domid $DOM --rw write --bs 4k --size 64k --output-format json \
	> "$FT/io" || fail "io --size 64k"
grep -q '"ios":16,' "$FT/io" || fail "io --size 64k: $(cat "$FT/io")"

# a write-through disk: no flush, no FUA; --fua is plain writes, said so
blkfront-test xl-remove --domid $DOM >/dev/null
add_disk $DOM memory:16M --be-key cache=writethrough
xs_wait "$(be_dir)/state" 2
blkfront-test io --domid $DOM --rw write --bs 4k --size 64k --fua \
	> "$FT/fua" 2> "$FT/fua.err" || fail "io --fua on a write-through disk"
cat "$FT/fua" "$FT/fua.err"
grep -q '^io: rw=write .* fua' "$FT/fua" && fail "io --fua reported fua on a disk without flush/FUA"
grep -q 'neither flush nor barrier' "$FT/fua.err" || fail "io --fua: no warning"

# igref= a raw gref of nobody: sent, refused by the backend, ring goes on
cat > "$FT/igref.script" <<'SCRIPT'
send op=indirect indirect_op=read id=1 sector=0 seg=p0 igref=0x7ffffff0 expect=ERROR
send op=read id=2 sector=0 seg=p0 expect=OKAY
SCRIPT
run_script $DOM "$FT/igref.script"
stop_backend
exit 0
