# common helpers: source me
S=/work/s30/attack2/src
export PATH=$S/backend:$S/sim:$S/frontend-test:$PATH
W=$(mktemp -d /tmp/s30a2.XXXXXX)
export XENSIM_DIR=$W XENSTORED_PATH=$W/xenstore.sock
export BLKBACKD_STORE_DIR=$S/backend/.libs
export ASAN_OPTIONS=detect_leaks=${DL:-1}:abort_on_error=0
PIDS=()
start_sim() {
  $S/sim/xensim --dir $W --pidfile $W/xensim.pid 2>$W/xensim.err &
  until [ -s $W/xensim.pid ]; do sleep 0.1; done
}
start_bbd() {  # extra args
  rm -f $W/blkbackd.pid
  $S/backend/blkbackd -f --transport=sim --trace=$W/trace --pidfile=$W/blkbackd.pid "$@" 2>>$W/blkbackd.err &
  BBD=$!
  for i in $(seq 100); do [ -s $W/blkbackd.pid ] && break; sleep 0.1; done
}
# hang nbd server: accepts, never speaks
start_hang_nbd() { # path
  python3 - "$1" <<'PY' &
import socket,sys,os,time
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(100)
conns=[]
while True:
    c,_=s.accept(); conns.append(c)
PY
  HANGPID=$!
  until [ -S "$1" ]; do sleep 0.05; done
}
BE() { echo /local/domain/0/backend/vbd/$1/${2:-51712}; }
FE() { echo /local/domain/$1/device/vbd/${2:-51712}; }
add_vbd() { # domid params [devid] [mode] [extra be keys...]
  local D=$1 P=$2 V=${3:-51712} M=${4:-w}; shift 4 2>/dev/null || shift $#
  local B=$(BE $D $V) F=$(FE $D $V)
  xenstore-write $F/backend $B $F/backend-id 0 $F/virtual-device $V \
      $F/device-type disk $F/state 1 \
      $B/frontend $F $B/frontend-id $D $B/params "$P" $B/mode $M \
      $B/online 1 $B/device-type disk $B/state 1 "$@"
  xenstore-chmod -r $F n$D r0
  xenstore-chmod -r $B n0 r$D
}
rd() { xenstore-read "$@" 2>/dev/null || echo "<none>"; }
bstate() { rd $(BE $1 ${2:-51712})/state; }
cleanup() {
  [ -n "$BBD" ] && kill $BBD 2>/dev/null; sleep 0.5; [ -n "$BBD" ] && kill -9 $BBD 2>/dev/null
  [ -n "$HANGPID" ] && kill $HANGPID 2>/dev/null
  for p in "${PIDS[@]}"; do kill $p 2>/dev/null; done
  [ -s $W/xensim.pid ] && kill $(cat $W/xensim.pid) 2>/dev/null
  sleep 0.5
  for p in "${PIDS[@]}" $HANGPID $BBD $(cat $W/xensim.pid 2>/dev/null); do kill -9 $p 2>/dev/null; done
}
san() { grep -E 'ERROR: (Address|Leak|Thread)Sanitizer|runtime error:|SUMMARY:' $W/blkbackd.err | head -20; }
# FUSE file whose daemon can be stopped: sets FUSEFILE, EXPORT (pid)
start_fuse() {
  truncate -s 64M $W/fusebk.img
  mkdir -p $W/mnt
  blkfront-test export --direct $W/fusebk.img $W/mnt 2>$W/export.err & EXPORT=$!
  PIDS+=($EXPORT)
  until [ -e $W/mnt/disk ]; do sleep 0.1; done
  FUSEFILE=$W/mnt/disk
}
stop_fuse() { kill -STOP $EXPORT; }
cont_fuse() { kill -CONT $EXPORT; }
fuse_cleanup() { kill -CONT $EXPORT 2>/dev/null; kill $EXPORT 2>/dev/null; sleep 0.5; fusermount -u $W/mnt 2>/dev/null; kill -9 $EXPORT 2>/dev/null; umount -l $W/mnt 2>/dev/null; true; }
