#!/bin/bash
# fresh-clone README command 2
set -u
tag=$1; d=/work/fresh-$tag; out=/work/s35/fresh
rm -rf $d; git clone -q /work/main $d; cd $d
rev=$(git rev-parse --short HEAD)
s=$(date +%s)
( .ci/install-deps && autoreconf -fi && ./configure --enable-sanitizers && make -j2 check ) > $out/test-$rev-$tag-output.txt 2>&1
rc=$?
e=$(date +%s)
echo "exit $rc in $((e-s)) s" >> $out/test-$rev-$tag-output.txt
grep -E "^# (TOTAL|PASS|FAIL|SKIP|XFAIL|ERROR)" $out/test-$rev-$tag-output.txt | tail -8 > $out/test-$rev-$tag-summary.txt
(cd $d && git status --short) >> $out/test-$rev-$tag-summary.txt
