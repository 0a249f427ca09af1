#!/bin/bash
# The frontend directory is removed while the vbd's backing is being opened
# (probe-time open of a FUSE file whose daemon is stopped).  When the open
# completes the vbd goes InitWait and stays there for good, with no frontend.
# The same removal a moment after InitWait closes the vbd (state 6).
# blkbackd(8) CLOSING: "A device closes when its frontend goes Closing (5) or
# Closed (6) or disappears".
cd "$(dirname "$0")"; DL=0; . ./lib.sh
trap 'fuse_cleanup; cleanup' EXIT
start_sim; start_bbd; start_fuse
D=$(xensim-ctl create-domain g1); truncate -s 32M $W/plain.img
echo "--- control: plain file, frontend removed after InitWait"
add_vbd $D $W/plain.img 51728; sleep 1; echo "before: $(bstate $D 51728)"
xenstore-rm $(FE $D 51728); sleep 2; echo "after frontend rm: backend=$(bstate $D 51728)"
echo "--- frontend removed while the backing is opening"
stop_fuse; add_vbd $D $FUSEFILE; sleep 1
echo "opening: $(blkbackd-ctl list | grep "^$D/51712" | awk '{print $3}')"
xenstore-rm $(FE $D); sleep 1
cont_fuse
for i in 2 5 15; do sleep $i; echo "+${i}s: backend=$(bstate $D) frontend=$(rd $(FE $D)/state) list: $(blkbackd-ctl list | grep "^$D/51712" | awk '{print $3, $4}')"; done
grep "vbd $D/" $W/blkbackd.err | cut -c12-
