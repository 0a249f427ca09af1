#!/bin/bash
# fresh-clone demo: README command 1, alone under the heavy lock
# usage: demo.sh TAG
set -u
tag=$1; d=/work/demo-$tag; out=/work/s35/fresh
rm -rf $d; git clone -q /work/main $d; cd $d
rev=$(git rev-parse --short HEAD)
cat /proc/stat | head -1 > $out/demo-$rev-$tag-proc-stat.txt
s=$(date +%s)
( .ci/install-deps && autoreconf -fi && ./configure && make -j2 && harness/blkbench demo --out $d/results ) > $out/demo-$rev-$tag-output.txt 2>&1
rc=$?
e=$(date +%s)
cat /proc/stat | head -1 >> $out/demo-$rev-$tag-proc-stat.txt
echo "exit $rc in $((e-s)) s" >> $out/demo-$rev-$tag-output.txt
cp $d/results/results.json $out/demo-$rev-$tag-results.json 2>/dev/null
python3 /work/main/bench-data/2026-12-06/s25/demo/ranges.py $d/results/results.json > $out/demo-$rev-$tag-ranges.txt 2>&1
