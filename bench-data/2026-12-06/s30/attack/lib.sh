# helper: source me. Sets up xensim + blkbackd in a fresh mktemp dir.
S=/work/s30/attack/src
setup() {
  W=$(mktemp -d /tmp/s30.XXXXXX)
  export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock
  $S/sim/xensim --dir $W --pidfile $W/xensim.pid >$W/xensim.log 2>&1 &
  until [ -s $W/xensim.pid ]; do sleep 0.1; done
  start_bb "$@"
}
start_bb() {
  rm -f $W/blkbackd.pid
  $S/backend/blkbackd -f --transport=sim --trace=$W/trace --pidfile=$W/blkbackd.pid "$@" >>$W/blkbackd.log 2>&1 &
  BBPID=$!
  for i in $(seq 100); do [ -s $W/blkbackd.pid ] && break; kill -0 $BBPID 2>/dev/null || break; sleep 0.1; done
}
newdom() { $S/sim/xensim-ctl create-domain ${1:-guest$RANDOM}; }
# addvbd DOMID PARAMS [extra backend keys...]
addvbd() {
  local D=$1 P=$2; shift 2
  local DEV=${DEV:-51712}
  B=/local/domain/0/backend/vbd/$D/$DEV; F=/local/domain/$D/device/vbd/$DEV
  xenstore-write $F/backend $B $F/backend-id 0 $F/virtual-device $DEV \
      $F/device-type disk $F/state 1 \
      $B/frontend $F $B/frontend-id $D $B/params "$P" $B/mode ${MODE:-w} \
      $B/online 1 $B/device-type disk $B/state 1 "$@"
  xenstore-chmod -r $F n$D r0
  xenstore-chmod -r $B n0 r$D
}
waitkey() { # waitkey PATH VALUE [tenths]
  for i in $(seq ${3:-50}); do [ "$(xenstore-read $1 2>/dev/null)" = "$2" ] && return 0; sleep 0.1; done; return 1; }
BFT=$S/frontend-test/blkfront-test; bft() { $BFT "$@"; }
ctl() { $S/backend/blkbackd-ctl "$@"; }
teardown() {
  [ -n "$BBPID" ] && kill $BBPID 2>/dev/null; sleep 0.5
  [ -s $W/xensim.pid ] && kill $(cat $W/xensim.pid) 2>/dev/null
  wait 2>/dev/null
}
