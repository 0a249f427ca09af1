#!/bin/bash
# A disk image vbd (params=qcow2:PATH) opens its backing at connect, through
# image-socket.  If the frontend goes Closing (5) while that open is slow (an NBD
# server that accepts and never speaks), the backend stays InitWait until the open
# gives up (10 s here), instead of Closing "at once".
# blkbackd(8) CLOSING: "state 5 (Closing, meanwhile: at once when the frontend
# goes Closing or Closed)".
cd "$(dirname "$0")"; DL=0; . ./lib.sh
trap 'cleanup' EXIT
start_sim; start_bbd
D=$(xensim-ctl create-domain g1); B=$(BE $D); F=$(FE $D)
start_hang_nbd $W/hang.sock
qemu-img create -q -f qcow2 $W/img.qcow2 64M
add_vbd $D qcow2:$W/img.qcow2
sleep 1; echo "probe: backend=$(bstate $D)"
xenstore-write $B/image-socket $W/hang.sock          # what the hotplug script writes
timeout 40 blkfront-test attach --domid $D --hold >/dev/null 2>&1 & AP=$!
sleep 2; echo "frontend Initialised: backend=$(bstate $D) fe=$(rd $F/state) list: $(blkbackd-ctl list | grep "^$D/" | awk '{print $3}')"
T0=$(date +%s.%N); el() { printf %.1f $(echo "$(date +%s.%N) - $T0" | bc); }
xenstore-write $F/state 5      # the guest closes its side
echo "t=$(el)s frontend wrote Closing (5)"
for i in $(seq 1 12); do sleep 1; echo "t=$(el)s backend=$(bstate $D) fe=$(rd $F/state) list: $(blkbackd-ctl list | grep "^$D/" | awk '{print $3}')"; done
kill $AP 2>/dev/null; grep "vbd $D/" $W/blkbackd.err | cut -c12-
