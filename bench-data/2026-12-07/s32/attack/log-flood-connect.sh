#!/bin/bash
# A guest that reconnects in a loop writes one unthrottled "InitWait -> Connected"
# line per cycle into blkbackd's log (blkbackd(8): "a guest flapping its state
# node cannot flood the log").
. /tmp/attack32-repro/env.sh
newguest; adddisk $DOM memory:1M
{ for i in $(seq 1 ${N:-300}); do echo "xs-write fe state 1"; echo "xs-expect be state 2 timeout=5000"; echo "xs-write fe state 3"; echo "xs-expect be state 4 timeout=5000"; done; } > $W/flap
l0=$(wc -l < $W/blkbackd.log); t0=$(date +%s.%N)
blkfront-test script --domid $DOM $W/flap 2>&1 | tail -1
t1=$(date +%s.%N); n=$(( $(wc -l < $W/blkbackd.log) - l0 )); b=$(tail -n $n $W/blkbackd.log | wc -c)
echo "log lines added: $n ($b bytes) in $(echo "$t1 - $t0" | bc) s; 'Connected (' lines: $(grep -c 'Connected (' $W/blkbackd.log)"
grep -c 'logging fewer' $W/blkbackd.log
teardown; rm -rf $W
