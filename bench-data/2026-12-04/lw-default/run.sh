#!/bin/bash
# run.sh NAME [ENV=VAL...]: one make check-xen under the locks, output and serial kept
name=$1; shift
out=/work/b-lwdef/runs/$name
mkdir -p $out
{
echo "start $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) rev $(git -C /work/wt-lwdef rev-parse --short HEAD) dirty=$(git -C /work/wt-lwdef status --porcelain -uno | wc -l)"
s=$(date +%s)
flock -s /work/heavy.lock flock -x /work/xen.lock bash -c '
 echo "locked $(date -u +%FT%TZ) load $(cut -d" " -f1-3 /proc/loadavg)"; t=$(date +%s)
 env "$@" make -C /work/b-lwdef/tests check-xen; rc=$?
 echo "make-rc $rc make_wall_s $(( $(date +%s) - t )) end $(date -u +%FT%TZ) load $(cut -d" " -f1-3 /proc/loadavg)"' _ "$@"
echo "total_incl_wait_s $(( $(date +%s) - s ))"
} > $out/output.txt 2>&1
cp /work/b-lwdef/tests/xen/serial.log $out/serial.txt
grep -h '^:test-result' -H /work/b-lwdef/tests/xen/*.trs | sed 's,.*/,,; s/.trs:.test-result: / /' > $out/results.txt
grep '@@LW\|@@M' $out/serial.txt > $out/marks.txt
