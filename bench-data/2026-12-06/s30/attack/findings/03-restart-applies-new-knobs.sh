#!/bin/bash
# A restart (SIGTERM + new blkbackd) re-reads mode / flush-mode / cache from xenstore and
# applies them to a connection negotiated with the old values (xenstore still shows the
# old feature-flush-cache/info, nothing is renegotiated):
#  A. cache=writethrough -> writeback: the guest was told feature-flush-cache=0 (never
#     flushes), but after the takeover its writes are acknowledged from the page cache
#     (pwritev instead of pwritev+O_DSYNC): acknowledged writes are no longer durable.
#  B. flush-mode=none: the guest's FLUSH (feature-flush-cache=1) gets EOPNOTSUPP.
#  C. mode=r: the guest's writes (info=0, writable) get ERROR.
source /work/s30/attack/lib.sh
run() { # $1 = initial extra key (or ""), $2 = key value written while connected
  setup; D=$(newdom g1); truncate -s 16M $W/a.img
  addvbd $D $W/a.img $( [ -n "$1" ] && echo /local/domain/0/backend/vbd/$D/51712/$1 ); waitkey $B/state 2
  cat > $W/m.script <<'EOS'
fill p0 seed:1
send op=write sector=0 seg=p0 expect=OKAY
sleep 4000
xs-read be feature-flush-cache
xs-read be info
send op=write sector=8 seg=p0 expect=OKAY
send op=flush nr_segments=0
wait-all
EOS
  echo "=== initial: ${1:-defaults}; toolstack writes '$2' while connected; blkbackd restarted (SIGTERM, start)"
  $BFT script --domid $D $W/m.script & SP=$!
  sleep 1.5; cp $W/trace $W/trace.old; xenstore-write $B/$2
  kill $BBPID; wait $BBPID; start_bb
  wait $SP; echo "script rc=$?"
  echo "old blkbackd:"; grep -v issue= $W/trace.old | grep 'op=' | cut -d' ' -f4-
  echo "new blkbackd:"; grep -v issue= $W/trace | grep 'op=' | cut -d' ' -f4-
  teardown; rm -rf $W
}
run "cache writethrough" "cache writeback"
run "" "flush-mode none"
run "" "mode r"
