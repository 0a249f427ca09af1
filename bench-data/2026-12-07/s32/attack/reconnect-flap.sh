# one vbd on a slow store; 30 frontend instances in a row, each leaving writes in flight and vanishing (--no-close);
# the next one resets the backend with another queue count / ring order / persistent setting.
. /tmp/attack32-repro/env.sh "$@"
newguest; G=$DOM; adddisk $G "${P:-memory:4M,delay-ms=20}"
blkfront-test attach --domid $G >/dev/null; sleep 1; echo "base $(res)"
{ for i in $(seq 0 15); do echo "fill p$i seed:$i"; echo "send op=write sector=$((i*8)) seg=p$i nopush"; done; echo push; echo "usleep 30000"; } > $W/inflight
for i in $(seq 1 ${N:-30}); do
  [ $((i%10)) = 0 ] && echo "cycle $i $(res)"
  timeout 60 blkfront-test script --domid $G --grant-budget 64 --no-close $([ $((i%2)) = 0 ] && echo --no-persistent) --queues $((i%4+1)) --ring-order $((i%5)) $W/inflight > $W/o.$i 2>&1 || { echo "cycle $i rc=$?"; grep -v 'ring slots\|resetting' $W/o.$i | tail -2; }
done
sleep 2
cat > $W/v <<'EOS'
send op=read sector=0 seg=p20 expect=OKAY
check p20 seed:0
send op=read sector=120 seg=p21 expect=OKAY
check p21 seed:15
EOS
timeout 60 blkfront-test script --domid $G --grant-budget 64 $W/v 2>&1 | grep -v 'ring slots\|resetting'
sleep 3; echo "after $(res)"; xensim-ctl maps $G | wc -l; alive; teardown
