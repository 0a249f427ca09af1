#!/bin/bash
# Rough edges of blkbackd-ctl (no data at stake):
#  a) a malformed vbd name is exit 1 ("blkbackd answered an error") not 2 (usage error)
#  b) upgrade + shutdown sent together: the upgrade completes ("taken over ... after an upgrade"
#     in the log), then the shutdown, queued meanwhile, stops the NEW program; blkbackd-ctl
#     upgrade reports "exited during the upgrade" (exit 3) rather than the upgrade's success
#     followed by somebody's shutdown.
source /work/s30/attack/lib.sh
setup; D=$(newdom g1); truncate -s 16M $W/a.img; addvbd $D $W/a.img; waitkey $B/state 2
for a in "stats 1" "stats 1/" "resize 1/x"; do $S/backend/blkbackd-ctl $a; echo "[$a] exit $?"; done
( $S/backend/blkbackd-ctl upgrade > $W/u1 2>&1; echo "upgrade exit $?" >> $W/u1 ) &
( sleep 0.02; $S/backend/blkbackd-ctl shutdown > $W/s1 2>&1; echo "shutdown exit $?" >> $W/s1 ) &
wait %3 %4 2>/dev/null; sleep 3
cat $W/u1 $W/s1
grep -E 'upgrade|shutdown|after an upgrade' $W/blkbackd.log | cut -d' ' -f2-
teardown; rm -rf $W
