. /tmp/attack32-repro/env.sh "$@"
truncate -s 8M $W/d.img
echo "base $(res)"
for s in $(seq ${S0:-1} ${S1:-40}); do
  case $((s%3)) in 0) p=memory:1M; n=2048;; 1) p=$W/d.img; n=16384;; 2) p=$W/d.img; n=16384;; esac
  python3 /tmp/attack32-repro/${GEN:-fuzzgen.py} $s 300 $n > $W/fz.$s
  newguest; adddisk $DOM $p
  opts="--max-indirect 256 --ring-order $((s%3))"; [ $((s%2)) = 0 ] && opts="$opts --no-persistent"
  out=$(timeout 120 blkfront-test script --domid $DOM $opts $W/fz.$s 2>&1); rc=$?
  [ $rc = 0 ] || { echo "seed $s ($p $opts) rc=$rc: $(echo "$out" | grep -v 'ring slots' | tail -2)"; }
  kill -0 $BKPID || { echo "BLKBACKD DIED at seed $s"; break; }
  blkfront-test xl-remove --domid $DOM >/dev/null 2>&1; xensim-ctl destroy-domain $DOM
done
sleep 3; echo "end $(res)"; alive; grep -a 'error' $W/blkbackd.log | sed 's/^[^ ]* //' | sort | uniq -c | sort -rn | head
teardown
