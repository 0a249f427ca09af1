#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkfront-test io through blkbackd: the JSON report adds up, --flush-every,
# --flush-at-start and --fua send exactly the requests they promise (counted in blkbackd's
# trace: FLUSH_DISKCACHE with flush-mode=flush, WRITE_BARRIER with data
# with flush-mode=barrier), --in-place moves no data between the job and
# the grants, and --bonnie runs its four phases.
. ./functions.sh
. "$abs_top_srcdir/tests/front-lib.sh"
front_sim
start_backend

blkfront-test xl-add --domid $DOM --params memory:64M >/dev/null || fail "xl-add"
blkfront-test io --domid $DOM --rw randread --bs 4k --iodepth 32 --runtime 1 \
	--output-format json >"$FT/j" || fail "io randread"
cat "$FT/j"
python3 - "$FT/j" <<'PY' || fail "randread JSON does not add up"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["rw"] == "randread" and j["bs"] == 4096 and j["iodepth"] == 32, j
assert j["ios"] > 0 and j["errors"] == 0, j
assert j["bytes"] == j["ios"] * 4096, j
assert abs(j["iops"] - j["ios"] / j["runtime_s"]) <= 0.005 * j["iops"] + 1, j
l = j["lat_us"]
assert 0 < l["min"] <= l["p50"] <= l["p99"] <= l["max"], l
PY

# sequential writes over exactly 2 MiB, a flush after every 8 writes
n0=$(grep -c ' op=flush .* status=0$' "$BACKEND_TRACE" || true)
blkfront-test io --domid $DOM --rw write --bs 64k --iodepth 4 --size 2M \
	--flush-every 8 --output-format json >"$FT/j" || fail "io write --flush-every"
n1=$(grep -c ' op=flush .* status=0$' "$BACKEND_TRACE" || true)
grep -q '"ios":32,' "$FT/j" || fail "2 MiB / 64 KiB is 32 writes: $(cat "$FT/j")"
grep -q '"flushes":4,' "$FT/j" || fail "32 writes, a flush every 8: $(cat "$FT/j")"
[ $((n1 - n0)) = 4 ] || fail "blkbackd saw $((n1 - n0)) flushes, expected 4"

# --flush-at-start: one flush before the job, outside it (the job's own
# count stays 0)
n0=$(grep -c ' op=flush .* status=0$' "$BACKEND_TRACE" || true)
blkfront-test io --domid $DOM --rw write --bs 4k --iodepth 2 --size 64k \
	--flush-at-start --output-format json >"$FT/j" || fail "io --flush-at-start"
n1=$(grep -c ' op=flush .* status=0$' "$BACKEND_TRACE" || true)
grep -q '"ios":16,' "$FT/j" || fail "64 KiB / 4 KiB is 16 writes: $(cat "$FT/j")"
grep -q '"flushes":0,' "$FT/j" || fail "the flush at start is not the job's: $(cat "$FT/j")"
[ $((n1 - n0)) = 1 ] || fail "--flush-at-start: blkbackd saw $((n1 - n0)) flushes, expected 1"

# --in-place: the job's data is never copied into the granted pages, so
# a write job sends what the pages hold (zeros on a new connection), not
# its pattern; over a file of 0xff bytes: 64 KiB of zeros where the
# in-place job wrote, the job's pattern where a normal one did (one unit
# at --iodepth 1, so every block is ft_pattern_fill's seed 1: xorshift64
# from seed * 0x9e3779b97f4a7c15 + 0x632be59bd9b4e019, little-endian)
img=$FT/inplace.img
head -c 1M /dev/zero | tr '\000' '\377' > "$img"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add $img"
blkfront-test io --domid $DOM --rw write --bs 4k --iodepth 2 --size 64k --in-place \
	--output-format json >"$FT/j" || fail "io write --in-place"
grep -q '"ios":16,"bytes":65536,' "$FT/j" || fail "io --in-place: 16 writes of 4 KiB: $(cat "$FT/j")"
blkfront-test io --domid $DOM --rw write --bs 4k --iodepth 1 --offset 64k --size 64k \
	--output-format json >"$FT/j" || fail "io write"
blkfront-test io --domid $DOM --rw read --bs 64k --iodepth 2 --size 128k --in-place \
	--output-format json >"$FT/j" || fail "io read --in-place"
grep -q '"ios":2,"bytes":131072,' "$FT/j" || fail "io read --in-place: $(cat "$FT/j")"
blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove $img"
cmp -n 65536 "$img" /dev/zero || fail "--in-place wrote other data than the grant pages' zeros"
python3 - "$img" <<'PY' || fail "the normal write job did not write its pattern"
import sys
M = (1 << 64) - 1
x = (1 * 0x9e3779b97f4a7c15 + 0x632be59bd9b4e019) & M
block = bytearray()
for _ in range(4096 // 8):
    x ^= (x << 13) & M
    x ^= x >> 7
    x ^= (x << 17) & M
    block += x.to_bytes(8, "little")
data = open(sys.argv[1], "rb").read()[65536:131072]
assert data == bytes(block) * 16, "blocks differ from seed 1's pattern"
PY
cmp -i 131072:131072 "$img" <(head -c 1M /dev/zero | tr '\000' '\377') ||
	fail "writes outside the two jobs' 128 KiB"
blkfront-test xl-add --domid $DOM --params "$img" >/dev/null || fail "xl-add $img again"

# --fua with barriers only: each write is a WRITE_BARRIER with data
blkfront-test xl-remove --domid $DOM >/dev/null
blkfront-test xl-add --domid $DOM --params memory:64M --be-key flush-mode=barrier >/dev/null
b0=$(grep -c ' op=barrier .* segs=[1-9].* status=0$' "$BACKEND_TRACE" || true)
blkfront-test io --domid $DOM --rw write --bs 4k --iodepth 2 --size 64k --fua \
	--output-format json >"$FT/j" || fail "io --fua"
b1=$(grep -c ' op=barrier .* segs=[1-9].* status=0$' "$BACKEND_TRACE" || true)
[ $((b1 - b0)) = 16 ] || fail "--fua with barriers: $((b1 - b0)) barrier writes, expected 16"

# bonnie-style phases
blkfront-test io --domid $DOM --bonnie --bs 8k --size 4M >"$FT/b" || fail "io --bonnie"
cat "$FT/b"
for p in seq-output-block seq-rewrite seq-input-block random-seeks; do
	grep -q "^$p .*(.* 0 errors)" "$FT/b" || fail "bonnie phase $p missing or failed"
done
# a backend that stops answering mid-run: io's submitting thread (it
# reaps for itself, asleep on the event channel) must be woken when the
# request timeout breaks the device, and fail exactly what was in flight
bk=$(cat "$BACKEND_PIDFILE")
cleanup_fn kill -CONT $bk
n0=$(grep -c ' op=read ' "$BACKEND_TRACE" || true)
blkfront-test io --domid $DOM --rw randread --bs 4k --iodepth 8 --runtime 60 \
	--timeout 2000 --output-format json >"$FT/j" 2>"$FT/e" &
io=$!
wait_for 10 eval '[ "$(grep -c " op=read " "$BACKEND_TRACE")" -gt $((n0 + 100)) ]' ||
	fail "io did not get going"
kill -STOP $bk
t0=$EPOCHREALTIME
wait $io && fail "io succeeded though blkbackd stopped answering"
t1=$EPOCHREALTIME
kill -CONT $bk
cat "$FT/j" "$FT/e"
awk -v a=$t0 -v b=$t1 'BEGIN { exit !(b - a < 15) }' ||
	fail "io took $(awk -v a=$t0 -v b=$t1 'BEGIN { print b - a }') s to give up (timeout 2 s)"
grep -q '"errors":8,' "$FT/j" || fail "expected the 8 requests in flight to fail"
grep -q "no response to read .* within 2000 ms" "$FT/e" || fail "io did not say why"

blkfront-test xl-remove --domid $DOM >/dev/null || fail "xl-remove failed"
xs_absent "$(be_dir)"
# removing it again is an error, as xl block-detach's "not connected"
rc=0
blkfront-test xl-remove --domid $DOM --force 2>"$FT/rm2" || rc=$?
[ "$rc" = 1 ] || fail "xl-remove of a removed vbd: exit $rc, expected 1"
grep -qF "xl-remove: no vbd $DOM/51712: neither $(fe_dir) nor $(be_dir) exists" "$FT/rm2" ||
	{ cat "$FT/rm2"; fail "xl-remove of a removed vbd: no message saying so"; }
# numbers are whole numbers or refused (exit 2), never read up to the junk
for bad in "--domid abc" "--domid 1x" "--domid -1" "--devid 99999999999999" \
	   "--backend-domid abc" "--timeout 0"; do
	rc=0
	blkfront-test xl-add $bad --domid $DOM --params memory:1M 2>"$FT/bad" || rc=$?
	[ "$rc" = 2 ] || fail "xl-add $bad: exit $rc, expected 2"
	grep -qF -- "${bad% *} ${bad#* }: expected " "$FT/bad" || { cat "$FT/bad"; fail "xl-add $bad: no message"; }
done
xs_absent "$(be_dir)"
# xl-remove finds the backend where xl-add's record says (another
# backend domain here), and refuses a --backend-domid that disagrees
blkfront-test xl-add --domid $DOM --backend-domid 7 --params memory:1M --no-hotplug >/dev/null ||
	fail "xl-add --backend-domid 7 failed"
be7=/local/domain/7/backend/vbd/$DOM/51712
xs_is $be7/state 1
rc=0
blkfront-test xl-remove --domid $DOM --backend-domid 5 2>"$FT/rm5" || rc=$?
[ "$rc" = 1 ] || fail "xl-remove --backend-domid 5: exit $rc, expected 1"
grep -qF "the vbd's backend is $be7" "$FT/rm5" || { cat "$FT/rm5"; fail "no message naming $be7"; }
xs_is $be7/state 1
blkfront-test xl-remove --domid $DOM --force || fail "xl-remove of the domain-7 vbd failed"
xs_absent $be7
xs_absent "$(fe_dir)"
stop_backend
exit 0
