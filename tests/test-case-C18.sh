#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C18: a watch flood.  While Connected, guest A writes its state node
# (the same value, 4) and a junk key 100 000 times each (BK_C18_WRITES)
# from its own xenstore connection.  Meanwhile I/O on A's vbd and on
# another guest's is answered every time within 1 s (each request's
# timeout: a queue starved by the flood would wait it out, about 9 s;
# the case's 100 ms is a latency goal, not asserted here on a shared
# machine); blkbackd's RSS grows by less than 8 MiB; A stays Connected
# with no error node; and an xl-remove right after the flood is acted on
# (Closing) within 2 s.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
asan_no_quarantine	# RSS compared below (rss_meaningful)
start_sim_backend
N=${BK_C18_WRITES:-100000}
new_guest; A=$DOM
new_guest; B=$DOM
add_disk $A memory:4M
add_disk $B memory:4M
feA=/local/domain/$A/device/vbd/51712 beA=$(bk_be $A)

answer_ms=$(( $(case_bound 1) * 1000 ))	# (under valgrind 6 s: case_bound)
gen() { # file dom: I/O for as long as the flood runs, each answer < 1 s
	local i
	{
		echo "xs-expect fe go 1 timeout=30000"
		for i in $(seq 1 600); do
			echo "fill p1 seed:$i"
			echo "send op=write sector=$(( (i % 100) * 8 )) seg=p1 expect=OKAY timeout=$answer_ms"
			echo "send op=read sector=$(( (i % 100) * 8 )) seg=p2 expect=OKAY timeout=$answer_ms"
			echo "check p2 seed:$i"
			echo "sleep 10"
		done
		echo "xs-write fe io-done 1"
		# (A's then waits for the test's xl-remove after the flood,
		# however long the flood takes: under valgrind over a minute)
		if [ "$2" = "$A" ]; then echo "xs-expect be state 5 timeout=600000"; fi
	} > "$1"
}
gen "$BK_TMP/a" $A
gen "$BK_TMP/b" $B
blkfront-test script --domid $A --max-indirect 16 "$BK_TMP/a" > "$BK_TMP/a.out" 2>&1 &
fa=$!
blkfront-test script --domid $B --max-indirect 16 "$BK_TMP/b" > "$BK_TMP/b.out" 2>&1 &
fb=$!
cleanup_fn kill $fa $fb
xs_wait $beA/state 4
xs_wait "$(bk_be $B)/state" 4
read -r fd0 thr0 rss0 <<< "$(bk_res)"

as_domain $A exec "$abs_top_builddir/tests/xs-flood" $N "$feA/state=4" "$feA/junk=%u" \
	> "$BK_TMP/flood.out" 2>&1 &
flood=$!
cleanup_fn kill $flood
xenstore-write $feA/go 1 /local/domain/$B/device/vbd/51712/go 1
wait $flood || { cat "$BK_TMP/flood.out"; fail "the flood failed"; }
cat "$BK_TMP/flood.out"
read -r fd1 thr1 rss1 <<< "$(bk_res)"
echo "blkbackd: fds $fd0 -> $fd1, threads $thr0 -> $thr1, RSS $rss0 -> $rss1 KiB"
if rss_meaningful; then
	[ $(( rss1 - rss0 )) -lt 8192 ] || fail "RSS grew by $(( rss1 - rss0 )) KiB during the flood"
else
	echo "RSS not compared: sanitizer or valgrind build (leaks are checked at exit)"
fi
xs_is $beA/state 4
xs_absent $beA/error
# the I/O went on during the flood (not all of it after)
if _xs_eq $feA/io-done 1; then echo "note: A's I/O ended before the flood did"; fi

# xl-remove right after the flood: acted on within 2 s
t0=$EPOCHREALTIME
blkfront-test xl-remove --domid $A > "$BK_TMP/rm.out" 2>&1 &
rm=$!
# Closing, or already past it (Closed, or the directory removed)
acted() { case "$(xenstore-read $beA/state 2>/dev/null || echo gone)" in 5|6|gone) true ;; *) false ;; esac; }
wait_for 2 acted || fail "xl-remove: the backend still says $(xenstore-read $beA/state) after 2 s"
echo "xl-remove: Closing after $(awk -v a=$t0 -v b=$EPOCHREALTIME 'BEGIN { printf "%.3f", b - a }') s"
wait $fa || { cat "$BK_TMP/a.out"; fail "A's I/O failed (an answer took 1 s or more?)"; }
wait $fb || { cat "$BK_TMP/b.out"; fail "B's I/O failed (an answer took 1 s or more?)"; }
wait $rm || { cat "$BK_TMP/rm.out"; fail "xl-remove failed"; }
xs_absent $beA
kill -0 "$(bk_pid)" || fail "blkbackd died"
stop_backend
exit 0
