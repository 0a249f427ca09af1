# many guests: connect with various features, leave I/O in flight (--no-close), destroy domain & remove vbd
. /tmp/attack32-repro/env.sh "$@"
truncate -s 64M $W/d.img
{ for i in $(seq 0 20); do echo "fill p$i seed:$i"; echo "send op=write sector=$((i*8)) seg=p$i nopush"; done; echo push; echo "send op=flush nopush"; echo push; } > $W/inflight
newguest; adddisk $DOM memory:1M; blkfront-test attach --domid $DOM >/dev/null; blkfront-test xl-remove --domid $DOM >/dev/null; xensim-ctl destroy-domain $DOM; sleep 2
echo "base $(res)"
for i in $(seq 1 ${N:-30}); do
  newguest; case $((i%3)) in 0) p=$W/d.img;; 1) p="memory:1M,delay-ms=50";; 2) p=null:1M;; esac
  adddisk $DOM "$p"
  timeout 30 blkfront-test script --domid $DOM --no-close $([ $((i%2)) = 0 ] && echo --no-persistent) --queues $((i%4+1)) --ring-order $((i%3)) --max-indirect $(( (i%2)*32 )) $W/inflight > $W/o.$i 2>&1 || { echo "cycle $i rc=$?"; tail -3 $W/o.$i; }
  case $((i%3)) in 0) xensim-ctl destroy-domain $DOM; sleep 0.2; blkfront-test xl-remove --domid $DOM >/dev/null 2>&1;;
                   1) xenstore-rm $(be $DOM); xenstore-rm $(fe $DOM); xensim-ctl destroy-domain $DOM ;;
                   2) xenstore-write $(fe $DOM)/state 1; sleep 0.3; blkfront-test xl-remove --domid $DOM >/dev/null 2>&1; xensim-ctl destroy-domain $DOM;; esac
done
sleep 5; echo "after $(res)"; xensim-ctl evtchn 0 | wc -l; ls /proc/$BKPID/fd -l | grep -c xensim-dom; xenstore-ls /local/domain/0/backend 2>/dev/null | head; alive
blkbackd-ctl list 2>&1 | head
teardown
