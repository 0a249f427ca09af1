#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C21: grant lifetime.
#  1. Persistent grants only when both sides wrote feature-persistent=1,
#     decided again at every reconnect: blkbackd offering 1 or 0, one
#     frontend reconnecting with 1, 0 and nothing.
#  2. Without persistent grants, every grant of a request (data and
#     indirect pages) is unmapped before its response is visible:
#     blkfront-test (--no-persistent) ends access to each request's
#     pages at its response, as Linux blkfront does, and fails loudly
#     when that is refused -- mixed traffic (4 KiB copies, 128 KiB
#     indirect requests) in copy mode and in map mode never fails.
#  3. When blkbackd writes Closed no page of the guest's is mapped, ring
#     included: a script closes right after its last completions, with
#     and without persistent grants (its "close" step checks).
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
requires test -x "$abs_top_builddir/sim/xensim"
need_frontend
start_xensim

# rw_script yes|no: a write and a read, after which the backend still
# holds the pages mapped (persistent grants in use) or not -- seen from
# the guest's side of the grants, not from blkbackd's log
rw_script() {
	cat > "$BK_TMP/rw" <<EOS
fill p0 seed:21
send op=write sector=8 seg=p0 expect=OKAY
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:21
mapped p0 $1
mapped p1 $1
close
EOS
}

# 1.
for offer in 1 0; do
	start_backend --feature-persistent=$offer
	new_guest
	add_disk $DOM memory:4M
	for fe in 1 0 - 1 - 0 1; do
		case $fe in
		1) opt= want=$offer ;;
		0) opt=--no-persistent want=0 ;;
		-) opt=--fe-key=feature-persistent=- want=0 ;;
		esac
		if [ $want = 1 ]; then rw_script yes; else rw_script no; fi
		# shellcheck disable=SC2086
		echo "blkbackd offers $offer, frontend writes \"$fe\": persistent grants used: $want"
		run_script $DOM "$BK_TMP/rw" $opt
	done
	xs_is "$(bk_be $DOM)/feature-persistent" $offer
	stop_backend
done

# 2. and 3.
{
	for i in $(seq 0 40); do echo "fill p$i seed:$((i + 100))"; done
	for r in 1 2 3; do
		echo "send op=write sector=$((r * 64)) seg=p$r nopush"
		echo "send op=indirect indirect_op=write sector=$((r * 512))$(for i in $(seq 0 31); do printf ' seg=p%d' $i; done) nopush"
		echo "push"
		echo "wait-all status=OKAY"
	done
	echo "send op=read sector=128 seg=p50 expect=OKAY"
	echo "check p50 seed:102"
	echo "send op=indirect indirect_op=read sector=1024$(for i in $(seq 0 31); do printf ' seg=p%d' $((i + 60)); done) expect=OKAY"
	echo "check p60 seed:100"
	echo "check p91 seed:131"
	echo "close"
} > "$BK_TMP/mixed"
for mode in "--feature-persistent=0" "--feature-persistent=0 --map-threshold=512" \
	    "--feature-persistent=1"; do
	# shellcheck disable=SC2086
	start_backend $mode
	guest_with_disk 8M
	for p in --no-persistent ""; do
		# shellcheck disable=SC2086
		timeout 120 blkfront-test verify --domid $DOM $p --max-indirect 32 --bs 4k \
			--size 2M --count 1500 --iodepth 16 > "$BK_TMP/v4k" 2>&1 ||
			{ cat "$BK_TMP/v4k"; fail "$mode $p: verify 4k failed"; }
		verify_read_all "$BK_TMP/v4k" 512 "$mode $p: verify 4k"
		# shellcheck disable=SC2086
		timeout 120 blkfront-test verify --domid $DOM $p --max-indirect 32 --bs 128k \
			--size 4M --count 200 --iodepth 8 > "$BK_TMP/v128k" 2>&1 ||
			{ cat "$BK_TMP/v128k"; fail "$mode $p: verify 128k failed"; }
		verify_read_all "$BK_TMP/v128k" 32 "$mode $p: verify 128k"
		! grep -h "still maps" "$BK_TMP/v4k" "$BK_TMP/v128k" ||
			fail "$mode $p: blkbackd was Closed while it mapped a page"
		# shellcheck disable=SC2086
		run_script $DOM "$BK_TMP/mixed" $p
	done
	stop_backend
done
exit 0
