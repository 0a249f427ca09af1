#!/usr/bin/env bash
# No FUSE: A on memory:4M,delay-ms=1000 with 8 writes in flight; toolstack removes A's backend dir
# (A drains, ~8 s); SIGTERM during that drain.  What does blkbackd say it left behind?
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
new_guest; A=$DOM; beA=$(bk_be $A)
add_disk $A memory:4M,delay-ms=1000
xs_wait $beA/state 2 30
writes_in_flight $A 8
xenstore-rm $beA; sleep 0.5
blkbackd-ctl list --json | python3 -c 'import json,sys; [print("== json:", v["vbd"], v["state_name"], v["phase"]) for v in json.load(sys.stdin)["vbds"]]'
pid=$(bk_pid); kill -TERM $pid
wait_for 30 eval '! kill -0 $pid 2>/dev/null'; rc=0; wait $pid 2>/dev/null || rc=$?; note "blkbackd rc=$rc"; _backend_running=
sed -E 's/^[0-9T:.+-]+ //' $BACKEND_LOG | grep -v '^xensim' | tail -3 | tee -a $OUT/notes
note "state dir: $(ls $XENSTORED_PATH.blkbackd-0.state 2>&1 | tr '\n' ' ')"
note "status: $(blkbackd-ctl status 2>&1 | tr '\n' '|')"
