#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C24: multi-queue inconsistency.
#  1. 2 queues, queue-1's ring-ref invalid: no Connected; the error node
#     names the key and its directory; queue 0's ring is unmapped and its
#     port closed (fds and the guest's mappings back to the baseline);
#     a clean handshake afterwards connects.
#  2. multi-queue-num-queues=2 with only the top-level keys: the error
#     names queue-0's ring-ref.
#  3. The guest flips ring-page-order between 1 and 0 (every 1 ms:
#     faster, its own handshake transaction never commits) while it
#     handshakes with 2 queues of 2 pages, 10 times: whatever
#     each connection becomes, blkbackd lives, reads one order for all
#     queues, and frees everything at each disconnect; once the flipping
#     stops a clean handshake connects with 2-page rings.
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
start_sim_backend --max-ring-page-order=1
new_guest
fe=/local/domain/$DOM/device/vbd/51712 be=$(bk_be $DOM)
add_disk $DOM memory:4M
cat > "$BK_TMP/io" <<'EOS'
fill p0 seed:24
send op=write sector=8 seg=p0 expect=OKAY
send op=read sector=8 seg=p1 expect=OKAY
check p1 seed:24
close
EOS
run_script $DOM "$BK_TMP/io" --queues 2
xs_wait $be/state 6
read -r fd0 thr0 rss0 <<< "$(bk_res)"
maps0=$(dom_maps $DOM)

# 1.
blkfront-test script --domid $DOM --queues 2 --timeout 5000 --expect-no-connect \
	--fe-key queue-1/ring-ref=4294967295 /dev/null > "$BK_TMP/1.out" 2>&1 ||
	{ cat "$BK_TMP/1.out"; fail "1: the device connected"; }
case "$(xenstore-read $be/error)" in
"ring-ref: queue 1: cannot map the ring pages in $fe/queue-1: "*) ;;
*) fail "1: error node \"$(xenstore-read $be/error)\"" ;;
esac
grep -q "vbd $DOM/51712: .*Connected (" <(tail -n 3 "$BACKEND_LOG") && fail "1: Connected"
res_back $fd0 $thr0 $rss0 4096
[ "$(dom_maps $DOM)" = "$maps0" ] || fail "1: the guest's mappings $(dom_maps $DOM), baseline $maps0"
run_script $DOM "$BK_TMP/io" --queues 2
xs_absent $be/error

# 2.
blkfront-test script --domid $DOM --timeout 5000 --expect-no-connect \
	--fe-key multi-queue-num-queues=2 /dev/null > "$BK_TMP/2.out" 2>&1 ||
	{ cat "$BK_TMP/2.out"; fail "2: the device connected"; }
xs_is $be/error "ring-ref: missing in $fe/queue-0"
res_back $fd0 $thr0 $rss0 4096
run_script $DOM "$BK_TMP/io" --queues 2

# 3.
as_domain $DOM exec "$abs_top_builddir/tests/xs-flood" -i 1000 0 "$fe/ring-page-order=%2" \
	> "$BK_TMP/flood.out" 2>&1 &
flood=$!
cleanup_fn kill $flood
ok=0
for i in $(seq 1 10); do
	if timeout 60 blkfront-test script --domid $DOM --queues 2 --ring-order 1 \
		--timeout 3000 "$BK_TMP/io" > "$BK_TMP/3.out" 2>&1; then
		ok=$((ok + 1))
	fi
	kill -0 "$(bk_pid)" || fail "3: blkbackd died"
done
kill $flood; wait $flood 2>/dev/null || true
echo "3: $ok of 10 handshakes under the flip worked"
# InitWait (a frontend that gave up before publishing), Closing after an
# error, or Closed: anything but Connected with nobody behind it
_not4() { case "$(xenstore-read $be/state)" in 2|5|6) return 0 ;; esac; return 1; }
wait_for 10 _not4 || fail "3: the vbd is $(xenstore-read $be/state) after the flip"
res_back $fd0 $thr0 $rss0 4096 10
[ "$(dom_maps $DOM)" = "$maps0" ] || fail "3: the guest's mappings $(dom_maps $DOM), baseline $maps0"
# what that connection got, from blkbackd-ctl while it lasts (the log's
# connect lines are rate-limited, and the flip filled this window)
grep -v '^close$' "$BK_TMP/io" > "$BK_TMP/io-open"
run_script $DOM "$BK_TMP/io-open" --queues 2 --ring-order 1 --no-close
blkbackd-ctl list --json > "$BK_TMP/list.json" || fail "3: list --json"
python3 - "$BK_TMP/list.json" "$DOM/51712" <<'PY' || { cat "$BK_TMP/list.json"; fail "3: the last connection is not 2 queues of 2 pages"; }
import json, sys
v = {r["vbd"]: r for r in json.load(open(sys.argv[1]))["vbds"]}[sys.argv[2]]
assert v["phase"] == "connected" and v["queues"] == 2 and v["ring_pages"] == 2, v
PY
stop_backend
exit 0
