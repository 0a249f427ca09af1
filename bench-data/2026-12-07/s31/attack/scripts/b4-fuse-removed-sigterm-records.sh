#!/usr/bin/env bash
# A on a FUSE file with guest I/O; FUSE stopped; toolstack removes A's backend dir (A drains, hung);
# list --json; SIGTERM (SIG env); FUSE continued; after exit: state-dir records, blkbackd-ctl status,
# and a new blkbackd started: what does it do with A?
. /tmp/attack31-scripts/prelude.sh
start_sim_backend
fuse_file_start
new_guest; A=$DOM; beA=$(bk_be $A)
add_disk $A "$FUSE_DISK"
xs_wait $beA/state 2 30
blkfront-test verify --domid $A --count 100000000 --timeout 120000 > $BK_TMP/a.out 2>&1 &
VA=$!; cleanup_fn kill $VA
xs_wait $beA/state 4 30
sleep 1
fuse_file_stop; sleep 0.5
xenstore-rm $beA; sleep 1
note "A dir removed: exists? $(xenstore-read $beA/state 2>&1)"
blkbackd-ctl list --json | python3 -c 'import json,sys; [print("== json:", v["vbd"], v["state_name"], v["phase"], v["frontend_state"]) for v in json.load(sys.stdin)["vbds"]]' | tee -a $OUT/notes
pid=$(bk_pid); kill -${SIG:-TERM} $pid; sleep 2
note "alive after SIG: $(kill -0 $pid 2>/dev/null && echo yes || echo no)"
fuse_file_cont
wait_for 30 eval '! kill -0 $pid 2>/dev/null' && note "exited" || note "still running"
rc=0; wait $pid 2>/dev/null || rc=$?; note "blkbackd rc=$rc"; _backend_running=
tail -2 $BACKEND_LOG | sed -E 's/^[0-9T:.+-]+ //' | tee -a $OUT/notes
note "state dir: $(ls $XENSTORED_PATH.blkbackd-0.state 2>&1 | tr '\n' ' ')"
note "status: $(blkbackd-ctl status 2>&1 | tr '\n' '|')"
note "xenstore A backend: $(xenstore-ls $beA 2>&1 | head -3 | tr '\n' '|')"
kill $VA 2>/dev/null || true
start_backend
sleep 2
note "new blkbackd list: $(blkbackd-ctl list | tr '\n' '|')"
note "state dir: $(ls $XENSTORED_PATH.blkbackd-0.state 2>&1 | tr '\n' ' ')"
stop_backend; note "stopped ok"
tail -3 $BACKEND_LOG | sed -E 's/^[0-9T:.+-]+ //' | tee -a $OUT/notes
