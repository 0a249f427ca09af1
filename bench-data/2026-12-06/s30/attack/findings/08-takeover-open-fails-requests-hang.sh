#!/bin/bash
# blkbackd restarted while a guest is connected, and the new blkbackd cannot open the backing
# again (here: the file was renamed meanwhile; likewise a block device made read-only). It writes
# error + Closing but never maps the ring: the guest's requests in the ring are never answered
# (neither OKAY nor ERROR). A Linux guest with the disk mounted refuses to close ("Device in
# use") and its I/O hangs for ever. For a RAM disk found Connected, blkbackd(8) says it "answers
# ERROR to every request and writes error and Closing", and for a failed vbd "no request hangs".
source /work/s30/attack/lib.sh
setup; D=$(newdom g1); truncate -s 16M $W/a.img; addvbd $D $W/a.img; waitkey $B/state 2
cat > $W/m.script <<'EOS'
fill p0 seed:1
send op=write sector=0 seg=p0 expect=OKAY
echo restart now
sleep 2500
xs-read be state
xs-read be error
send op=write sector=8 seg=p0 timeout=5000
send op=read sector=0 seg=p1 timeout=5000
wait-all timeout=8000
EOS
$BFT script --domid $D --no-close $W/m.script > $W/m.out 2>&1 & SP=$!
until grep -q 'restart now' $W/m.out; do sleep 0.1; done
kill $BBPID; wait $BBPID; mv $W/a.img $W/renamed.img; start_bb
wait $SP; echo "script rc=$?"; cat $W/m.out
echo "trace of the new blkbackd (responses):"; grep -c 'op=' $W/trace
grep 'vbd 1/51712' $W/blkbackd.log | tail -2 | cut -d' ' -f2-
echo "backend state=$(xenstore-read $B/state) frontend state=$(xenstore-read $F/state)"
teardown; rm -rf $W
