#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench --platform xen-host's dom0 row needs no Xen: its code path (the
# generated job script on a loop device over --backing with the cell's
# write_cache, in a memory cgroup, then sim mode's bonnie++ parser) runs
# here against a file, one cell of real bonnie++; nothing is left mounted
# or attached.  (The domU row needs a real Xen dom0: blkbench(1).)
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
requires command -v bonnie++
tmp=$(mktemp -d /tmp/xen-host-dom0.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
SRC=$abs_top_srcdir BLD=$abs_top_builddir python3 - "$tmp" > "$tmp/out" 2>&1 <<'PY' || { cat "$tmp/out"; fail "the xen-host dom0 row failed"; }
import os, sys
sys.path.insert(0, os.environ["SRC"] + "/harness")
from blkbenchlib import cli, xen
from blkbenchlib.system import Cleanup
tmp = sys.argv[1]
paths = {"srcdir": os.environ["SRC"], "version": "test",
         "search": [os.path.join(os.environ["BLD"], d) for d in ("harness", "backend")]}
class NS:
    config = None
ns = NS()
for k in cli.RUN_DEFAULTS:
    setattr(ns, k.replace("-", "_"), None)
ns.platform, ns.where, ns.wce, ns.barrier, ns.fs = "xen-host", "dom0", "0", "1", "ext4"
ns.mem, ns.size, ns.files, ns.runs, ns.disk, ns.timeout = "16", "32", "1", "1", "256", "120"
ns.backing = os.path.join(tmp, "backing.img")
o = cli._resolve_options(ns, cli.RUN_DEFAULTS)
b = cli.Bench(o, paths, ["test"])
with open(o.backing, "w") as f:
    f.truncate(256 << 20)
jd, gnu, rundir = (os.path.join(tmp, d) for d in ("jobs", "gnu", "run"))
for d in (jd, gnu, rundir):
    os.makedirs(d)
for n in ("mke2fs", "mkfs.xfs", "bonnie++"):
    os.symlink(b.tools.path(n), os.path.join(gnu, n))
cell = b.cells[0]
text, _ = xen.job_script(b, cell, 1, jd)
script = os.path.join(jd, "job-1.sh")
with open(script, "w") as f:
    f.write(text)
res = os.path.join(jd, "out-1")
os.makedirs(res)
with open(os.path.join(rundir, "commands.log"), "w") as log, Cleanup() as cl:
    b.platform._dom0(cell, 1, script, res, gnu, cl, log)
row, text, csvline = xen._finish_job(b, 1, cell, 1, res, rundir, 1.0, "xen-host")
assert row["cell"] == "dom0-wce0-barrier1" and row["platform"] == "xen-host", row
assert csvline and csvline.split(",")[5] == "32M", csvline
assert "blkout" in row and "create" in row, row
with open(os.path.join(rundir, "job.log")) as f:
    log = f.read()
assert "barrier=1" in open(script).read(), "mount option"
print(log)
print("row", row["cell"], "blkout", row["blkout"], "create", row["create"])
PY
cat "$tmp/out"
grep -q '^exit 0 after ' "$tmp/out" || fail "the job script did not report bonnie++'s exit"
# wce 0 set "write through" on the loop device; the kernel keeps that mode
# for its next user unless blkbench gives it back
loop=$(sed -n 's|^blkbench job .* on /dev/\(loop[0-9]*\): .*|\1|p' "$tmp/out")
[ -n "$loop" ] || fail "no loop device in the job's output"
[ "$(cat /sys/block/$loop/queue/write_cache)" = "write back" ] ||
	fail "/dev/$loop left in write_cache mode '$(cat /sys/block/$loop/queue/write_cache)'"
assert_clean "$tmp"
echo ok
