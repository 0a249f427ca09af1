#!/bin/bash
# blkbackd is stopped (SIGTERM: "a guest sees a pause in its I/O, not an error"). While it is
# down, the guest's frontend reconnects (Closing, Closed, Initialising, new ring, Initialised:
# a driver reload, a kexec). The next blkbackd finds backend state 4 with a ring other than its
# record's and "leaves it alone" as if kernel xen-blkback served it (xen-blkback is not loaded:
# blkbackd would refuse to start otherwise). Backend stays Connected (4), nobody serves the
# ring: the guest's I/O hangs for good; only a detach/re-attach by the toolstack clears it.
source /work/s30/attack/lib.sh
setup; D=$(newdom g1); truncate -s 16M $W/a.img; addvbd $D $W/a.img; waitkey $B/state 2
cat > $W/r.script <<'EOS'
fill p0 seed:1
send op=write sector=0 seg=p0 expect=OKAY
echo blkbackd down now
sleep 1500
xs-write fe state 5
xs-write fe state 6
xs-write fe state 1
ring-new wait=5000
xs-write fe state 3
echo guest reconnected
xs-expect be state 4 timeout=15000
send op=read sector=0 seg=p1 expect=OKAY timeout=10000
check p1 seed:1
EOS
$BFT script --domid $D --no-close $W/r.script > $W/r.out 2>&1 & SP=$!
until grep -q 'blkbackd down' $W/r.out; do sleep 0.1; done
kill $BBPID; wait $BBPID; echo "blkbackd stopped, exit $?"
until grep -q 'guest reconnected' $W/r.out; do sleep 0.1; done
start_bb; echo "blkbackd started again"
wait $SP; echo "script rc=$?"; cat $W/r.out
echo "backend state=$(xenstore-read $B/state) frontend state=$(xenstore-read $F/state)"
$S/backend/blkbackd-ctl list
grep 'vbd 1/51712' $W/blkbackd.log | tail -1 | cut -d' ' -f2-
ls /sys/module/xen_blkback 2>&1
teardown; rm -rf $W
