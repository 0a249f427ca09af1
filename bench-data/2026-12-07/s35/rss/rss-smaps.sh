#!/bin/bash
# RSS of blkbackd across N reconnects of ONE vbd (file store).  MODE:
#  noclose-inflight: each frontend instance leaves 16 writes in flight and vanishes; the next resets the vbd
#  noclose-idle:     each instance vanishes with nothing in flight
#  clean-inflight:   writes in flight, then a clean close
. /tmp/attack32-repro/env.sh
truncate -s 4M $W/d.img; newguest; G=$DOM; adddisk $G $W/d.img
blkfront-test attach --domid $G >/dev/null; sleep 1; echo "base $(res)"
case $MODE in
 *inflight) { for i in $(seq 0 15); do echo "fill p$i seed:$i"; echo "send op=write sector=$((i*8)) seg=p$i nopush"; done; echo push; } > $W/s;;
 *idle) echo "fill p0 seed:1" > $W/s;;
esac
case $MODE in noclose*) NC=--no-close;; *) NC=;; esac
for i in $(seq 1 ${N:-40}); do
  timeout 60 blkfront-test script --domid $G --grant-budget 64 $NC $( [ -n "$VARY" ] && echo "--queues $((i%4+1)) --ring-order $((i%5)) $([ $((i%2)) = 0 ] && echo --no-persistent)" || echo "${FOPTS:---queues 2}") $W/s >/dev/null 2>&1 || echo "cycle $i failed"
  [ $((i%10)) = 0 ] && { echo "cycle $i $(res)"; cp /proc/$BKPID/smaps /tmp/smaps.$i; }
done
blkfront-test script --domid $G --grant-budget 64 ${FOPTS:---queues 2} /dev/null >/dev/null 2>&1; sleep 2; echo "after clean close $(res)"
blkfront-test xl-remove --domid $G >/dev/null; sleep 1; echo "after vbd removed $(res)"
echo "maps lines: $(wc -l < /proc/$BKPID/maps)"; grep -E "heap|^[0-9a-f]+-[0-9a-f]+ rw-p 00000000 00:00 0 *$" /proc/$BKPID/maps | wc -l; teardown; [ -n "$KEEP" ] || rm -rf $W
