#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C30: many and large devids.
#  1. devid 268442112 (xvdaa, the extended scheme (1 << 28) | disk << 8)
#     connects and works;
#  2. handle=0 and handle=0x1234 in requests are ignored (OKAY);
#  3. 64 vbds on one guest (BK_C30_VBDS), their frontends all
#     Initialised, connect within 10 s of blkbackd taking them; each
#     writes its own index to its sector 0, then each reads it back:
#     no cross-talk; blkbackd's threads grow by one per vbd and its fds
#     by the same number per vbd (linear), and both are back to the
#     baseline once the vbds are removed and the guest destroyed (its
#     memory files too), RSS within 8 MiB of it.  Each frontend shares
#     at most 64 data pages (--grant-budget): 64 vbds of one guest share
#     its 8192 grants.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend
NV=${BK_C30_VBDS:-64}

# 1. and 2.
new_guest
blkfront-test xl-add --domid $DOM --vdev xvdaa --params memory:4M >/dev/null || fail "xl-add xvdaa"
[ "$(xenstore-read /local/domain/$DOM/device/vbd/268442112/virtual-device)" = 268442112 ] ||
	fail "xvdaa is not devid 268442112"
cat > "$BK_TMP/h" <<'EOS'
fill p0 seed:30
send op=write sector=8 seg=p0 handle=0 expect=OKAY
send op=read sector=8 seg=p1 handle=0x1234 expect=OKAY
check p1 seed:30
send op=write sector=16 seg=p0 handle=0xffff expect=OKAY
close
EOS
run_script $DOM "$BK_TMP/h" --devid 268442112
grep -q "vbd $DOM/268442112: InitWait -> Connected" "$BACKEND_LOG" || fail "xvdaa did not connect"
blkfront-test xl-remove --domid $DOM --devid 268442112 || fail "xl-remove xvdaa"

# 3.
new_guest
read -r fd0 thr0 rss0 <<< "$(bk_res)"
devid() { echo $(( (1 << 28) | ($1 << 8) )); }
fe() { echo "/local/domain/$DOM/device/vbd/$(devid $1)"; }
for i in $(seq 0 $((NV - 1))); do
	blkfront-test xl-add --domid $DOM --devid "$(devid $i)" --params memory:1M >/dev/null ||
		fail "xl-add vbd $i"
	# (the wait for go is a hang bound: the second half's go comes
	# after the first half has read back and closed, over a minute
	# under valgrind on a busy machine)
	cat > "$BK_TMP/v$i" <<EOS
fill p0 seed:$((i + 1000))
send op=write sector=0 seg=p0 expect=OKAY timeout=30000
xs-write fe written 1
xs-expect fe go 1 timeout=600000
send op=read sector=0 seg=p1 expect=OKAY timeout=30000
check p1 seed:$((i + 1000))
close
EOS
done
all() { # key value: every vbd's frontend key has it
	local i
	for i in $(seq 0 $((NV - 1))); do _xs_eq "$(fe $i)/$1" "$2" || return 1; done
}
all_be() {
	local i
	for i in $(seq 0 $((NV - 1))); do _xs_eq "$(bk_be $DOM "$(devid $i)")/state" "$1" || return 1; done
}
# What is timed is blkbackd's work: 64 frontends Initialised at once
# and waiting for it.  So the toolstack's adds are in (every backend in
# InitWait), and blkbackd is stopped while the 64 frontends start (under
# ASan their start-up alone is about 6 s of CPU), then let go.
wait_for 60 all_be 2 || fail "not every backend reached InitWait after xl-add"
kill -STOP "$(bk_pid)"
cleanup_fn kill -CONT "$(bk_pid)"
pids=()
for i in $(seq 0 $((NV - 1))); do
	blkfront-test script --domid $DOM --devid "$(devid $i)" --max-indirect 16 --grant-budget 64 \
		--timeout 60000 "$BK_TMP/v$i" > "$BK_TMP/v$i.out" 2>&1 &
	pids+=($!)
done
cleanup_fn kill "${pids[@]}"
wait_for 60 all state 3 || fail "not every frontend reached Initialised"
t0=$EPOCHREALTIME
kill -CONT "$(bk_pid)"
wait_for $(case_bound 10) all_be 4 || fail "not all $NV vbds Connected within $(case_bound 10) s"
echo "$NV vbds Connected $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { printf "%.2f", b - a }') s after blkbackd went on"
wait_for 30 all written 1 || fail "not every vbd wrote its index"
read -r fdn thrn rssn <<< "$(bk_res)"

# half of them read back and close; then the others
half=$(( NV / 2 ))
for i in $(seq 0 $((half - 1))); do xenstore-write "$(fe $i)/go" 1; done
for i in $(seq 0 $((half - 1))); do
	wait "${pids[$i]}" || { cat "$BK_TMP/v$i.out"; fail "vbd $i: cross-talk or I/O failure"; }
done
wait_for 10 eval '[ "$(bk_res | cut -d" " -f2)" = $(( thr0 + NV - half )) ]' ||
	fail "threads $(bk_res | cut -d' ' -f2) with $((NV - half)) vbds connected (baseline $thr0)"
read -r fdh thrh rssh <<< "$(bk_res)"
for i in $(seq $half $((NV - 1))); do xenstore-write "$(fe $i)/go" 1; done
for i in $(seq $half $((NV - 1))); do
	wait "${pids[$i]}" || { cat "$BK_TMP/v$i.out"; fail "vbd $i: cross-talk or I/O failure"; }
done
k=$(( (fdn - fdh) / half ))
c=$(( fdn - fd0 - k * NV ))
echo "blkbackd, 0 / $half / $NV vbds Connected: fds $fd0 / $fdh / $fdn ($k per vbd + $c for the guest)," \
	"threads $thr0 / $thrh / $thrn, RSS $rss0 / $rssh / $rssn KiB"
[ $(( thrn - thr0 )) = "$NV" ] || fail "threads grew by $(( thrn - thr0 )) for $NV vbds, not one each"
[ $(( (fdn - fdh) % half )) = 0 ] && [ $(( fdh - fd0 - k * half )) = "$c" ] &&
	[ "$c" -ge 0 ] && [ "$c" -lt 16 ] || fail "fds are not linear in the number of vbds"
for i in $(seq 0 $((NV - 1))); do
	blkfront-test xl-remove --domid $DOM --devid "$(devid $i)" || fail "xl-remove vbd $i"
done
destroy_domain $DOM
res_back $fd0 $thr0 $rss0 $(( 8 * 1024 )) 10
echo "after removal: $(bk_res) (fds threads RSS)"
kill -0 "$(bk_pid)" || fail "blkbackd died"
stop_backend
exit 0
