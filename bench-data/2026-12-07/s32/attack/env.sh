# source me: sets up xensim + blkbackd in $W. Usage: . env.sh [blkbackd args...]
A=${A:-/work/attack32}
export PATH=$A/sim:$A/backend:$A/frontend-test:$PATH
W=$(mktemp -d /tmp/attack32-w.XXXXXX)
export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock
$A/sim/xensim --dir $W --pidfile $W/xensim.pid 2>$W/xensim.log &
until [ -s $W/xensim.pid ]; do sleep 0.1; done
$A/backend/blkbackd -f --transport=sim --trace=$W/trace --pidfile=$W/blkbackd.pid "$@" 2>$W/blkbackd.log &
until [ -s $W/blkbackd.pid ]; do sleep 0.1; done
BKPID=$(cat $W/blkbackd.pid)
newguest() { DOM=$(xensim-ctl create-domain g$RANDOM$RANDOM); }
adddisk() { blkfront-test xl-add --domid $1 --params "$2" "${@:3}" >/dev/null; }
be() { echo /local/domain/0/backend/vbd/$1/${2:-51712}; }
fe() { echo /local/domain/$1/device/vbd/${2:-51712}; }
res() { echo "fds=$(ls /proc/$BKPID/fd | wc -l) thr=$(cat /proc/$BKPID/task/*/comm | grep -vc '^iou-wrk-') rss=$(awk '/^VmRSS:/{print $2}' /proc/$BKPID/status)"; }
alive() { kill -0 $BKPID 2>/dev/null && echo "blkbackd alive" || echo "BLKBACKD DEAD"; }
teardown() { kill $BKPID 2>/dev/null; sleep 0.5; kill $(cat $W/xensim.pid) 2>/dev/null; wait 2>/dev/null; }
# runs SCRIPTTEXT (stdin) on a fresh guest with disk PARAMS; extra args to blkfront-test
runon() { local params=$1; shift; newguest; adddisk $DOM "$params"; cat > $W/s.$DOM; timeout 60 blkfront-test script --domid $DOM "$@" $W/s.$DOM; echo "script rc=$?"; }
