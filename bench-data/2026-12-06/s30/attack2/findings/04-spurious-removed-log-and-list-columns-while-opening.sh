#!/bin/bash
# Adding a vbd the way README "Serving a disk by hand" does logs "vbd D/N: removed"
# for a vbd that was just added (never removed), and while its backing opens
# blkbackd-ctl list shows STATE "none,OPENING" and FE "-" though the frontend's
# state node says 1.
cd "$(dirname "$0")"; DL=0; . ./lib.sh
trap 'cleanup' EXIT
start_sim; start_bbd
D=$(xensim-ctl create-domain g1); truncate -s 32M $W/plain.img
add_vbd $D $W/plain.img; sleep 1
start_hang_nbd $W/hang.sock
add_vbd $D "nbd:nbd+unix:///?socket=$W/hang.sock" 51728; sleep 1
echo "frontend 51728 state node: $(rd $(FE $D 51728)/state)"
blkbackd-ctl list
blkbackd-ctl list --json | python3 -c 'import json,sys; [print(v["vbd"], "state=",v["state"], "frontend_state=",v["frontend_state"], "phase=",v["phase"]) for v in json.load(sys.stdin)["vbds"]]'
grep -e removed -e InitWait $W/blkbackd.err | cut -c12-
