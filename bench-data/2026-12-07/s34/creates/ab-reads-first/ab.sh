#!/bin/bash
# $1 outdir  $2 rounds  $3 runs  $4 wce  $5 barrier  $6 where
out=$1; mkdir -p $out
for r in $(seq 1 $2); do
  if [ $((r % 2)) = 1 ]; then order="base exp"; else order="exp base"; fi
  for v in $order; do
    case $v in base) b=/work/b-plain;; exp) b=/work/b-exp31;; esac
    cd $b
    flock -x /work/heavy.lock harness/blkbench run --where ${6:-dom0} --wce $4 --barrier $5 --fs ext3:data=journal --workload bonnie --runs $3 --warmup 0 \
      --mem 32 --size 64 --bonnie-seeks 0 --files 4 --file-size 4096:2048 --disk 256 --timeout 120 --journal 3 --bonnie-seed 1 --bonnie-dirs 16 --disk-model 2008 --out $out/$v-r$r > $out/$v-r$r.log 2>&1
    echo "$v r$r rc=$? $(date +%T)"
  done
done
