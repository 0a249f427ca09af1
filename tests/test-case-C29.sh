#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C29: a backing opened twice, as a migration does.  Guest A is Connected
# to image X; guest B, the migration target (the same VM: the same
# /local/domain/N/vm path), attaches X mode=w: B connects, with no lock
# error; after A closes, B's I/O is byte-exact and B reads A's data.  A
# third guest of another VM is refused X (error node naming the holder),
# as Xen's block hotplug script refuses it (check_sharing/same_vm), and
# so is a guest with no vm path.  blkbackd takes no lock on the file.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
[ "${BK_STORE:-}" = rbd ] && { echo "skipped: the rbd store takes its exclusive lock"; exit 77; }
start_sim_backend
new_disk 16M
X=$img

new_guest; A=$DOM
new_guest; B=$DOM
new_guest; C=$DOM
new_guest; D=$DOM
uuid=/vm/4f0b2c3a-0c29-4c29-8c29-00000000c029
xenstore-write /local/domain/$A/vm $uuid /local/domain/$B/vm $uuid \
	/local/domain/$C/vm /vm/00000000-0000-0000-0000-0000000000cc
add_disk $A "$params"
cat > "$BK_TMP/a" <<EOS
fill p0 seed:29
send op=write sector=64 seg=p0 expect=OKAY
send op=flush nr_segments=0 expect=OKAY
xs-write fe written 1
xs-expect fe go 1 timeout=30000
close
EOS
blkfront-test script --domid $A --max-indirect 16 "$BK_TMP/a" > "$BK_TMP/a.out" 2>&1 &
fa=$!
cleanup_fn kill $fa
xs_wait /local/domain/$A/device/vbd/51712/written 1

# B: the same VM, mode=w, while A is Connected
add_disk $B "$params"
cat > "$BK_TMP/b" <<EOS
xs-expect fe go 1 timeout=30000
xs-expect be error -
send op=read sector=64 seg=p1 expect=OKAY
check p1 seed:29
fill p2 seed:30
send op=write sector=128 seg=p2 expect=OKAY
send op=read sector=128 seg=p3 expect=OKAY
check p3 seed:30
dump p2 $BK_TMP/b-p2
close
EOS
blkfront-test script --domid $B --max-indirect 16 "$BK_TMP/b" > "$BK_TMP/b.out" 2>&1 &
fb=$!
cleanup_fn kill $fb
xs_wait "$(bk_be $B)/state" 4
xs_is "$(bk_be $A)/state" 4
xs_absent "$(bk_be $B)/error"
grep -q "vbd $B/51712: shares \"" "$BACKEND_LOG" || fail "B's sharing not logged"
if grep -qE ":$(stat -c %i "$X") " /proc/locks; then fail "a lock is held on $X"; fi

# C (another VM) and D (no vm path): refused
for g in $C $D; do
	add_disk $g "$params"
	xs_wait "$(bk_be $g)/state" 5
	case "$(xenstore-read "$(bk_be $g)/error")" in
	"params: \"$X\" is already served by vbd "*) ;;
	*) fail "vbd $g: error \"$(xenstore-read "$(bk_be $g)/error")\"" ;;
	esac
done

# A closes (the migration's source goes); B goes on, byte-exact
xenstore-write /local/domain/$A/device/vbd/51712/go 1
wait $fa || { cat "$BK_TMP/a.out"; fail "A's close failed"; }
xs_wait "$(bk_be $A)/state" 6
xenstore-write /local/domain/$B/device/vbd/51712/go 1
wait $fb || { cat "$BK_TMP/b.out"; fail "B's I/O failed"; }
cmp "$BK_TMP/b-p2" <(backing_dd 128 8) || fail "B's write is not on X"
stop_backend
exit 0
