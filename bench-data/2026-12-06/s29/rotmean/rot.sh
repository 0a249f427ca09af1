#!/bin/bash
# Does the platter's phase make the wce0 block output spread?  The demo's
# parameters, dom0, wce0, barrier 0 and 1, 3 runs a cell, a warm-up; the
# hack build (rotmean.diff: BK_D8_ROT_MEAN set -> a seek waits half a
# turn, whatever the phase) with and without the variable, alternating.
cd /work/s29/rot || exit 1
bb=/work/s29/hack-build/harness/blkbench
args=(run --disk-model 2008 --where dom0 --wce 0 --barrier 0,1 --runs 3 --warmup 1 --mem 32 --size 64
      --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3
      --bonnie-seed 1 --bonnie-dirs 16)
for i in 1 2; do
  for v in phase rotmean; do
    echo "=== $i $v $(date -u +%T)" >> rot.txt
    if [ $v = rotmean ]; then export BK_D8_ROT_MEAN=1; else unset BK_D8_ROT_MEAN; fi
    "$bb" "${args[@]}" >> rot.txt 2>&1
    ls -dt results/* | head -1 >> rot.txt
  done
done
echo DONE >> rot.txt
