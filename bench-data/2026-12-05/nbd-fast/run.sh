#!/bin/bash
# Under one exclusive lock: after, before, after (like with like), then syscall counts.
d=/work/wt-nbdfast/bench-data/2026-12-05/nbd-fast
run() { # out builddir srcdir
	{
	date -u
	echo "# build: $2 (plain -O2); script and git rev: $3"
	echo "# load before: $(cat /proc/loadavg)"
	top_builddir=$2 BLKBACKD_STORE_DIR=$2/backend/.libs $3/backend/bench-nbd.sh 2>&1
	echo "# load after: $(cat /proc/loadavg)"
	date -u
	} > "$1" 2>&1
}
run $d/after-1.txt /work/b-nbdfast /work/wt-nbdfast
run $d/before-2.txt /work/b-nbdfast-base /work/wt-nbdfast-base
run $d/after-2.txt /work/b-nbdfast /work/wt-nbdfast
rm -rf /tmp/nbdfast-prof-final-new /tmp/nbdfast-prof-final-base
/tmp/nbdfast-prof.sh /work/b-nbdfast /tmp/nbdfast-prof-final-new > /tmp/nbdfast-prof-final-new.log 2>&1
/tmp/nbdfast-prof.sh /work/b-nbdfast-base /tmp/nbdfast-prof-final-base > /tmp/nbdfast-prof-final-base.log 2>&1
echo done
