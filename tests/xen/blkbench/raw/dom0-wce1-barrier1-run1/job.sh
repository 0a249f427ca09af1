# blkbench job: dom0-wce1-barrier1 run 1 (--platform xen-nested), bonnie
# environment: XT_GNU (the tools), XT_DISK, XT_MNT, XT_OUT; XT_CGROUP=none:
# the caller has put this script in the memory cgroup already
set -u
G=${XT_GNU:?} D=${XT_DISK:?} M=${XT_MNT:?} O=${XT_OUT:?}
echo "blkbench job dom0-wce1-barrier1 run 1 on $D: $(uname -r)"
"$G"/mke2fs -t ext4 -F -q -E nodiscard -N 17408 "$D" || { echo 'blkbench job: mkfs failed'; exit 3; }
mkdir -p "$M"
mount -t ext4 -o barrier=1 "$D" "$M" || { echo 'blkbench job: mount -t ext4 -o barrier=1 $D refused by the kernel'; exit 4; }
mkdir -p "$M"/bonnie
CG=
if [ "${XT_CGROUP:-}" != none ]; then
	grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts ||
		{ mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control; }
	CG=/sys/fs/cgroup/blkbench-job
	mkdir -p "$CG" && echo 16777216 > "$CG/memory.max" || exit 6
fi
echo "+ '$G'/bonnie++ -d '$M'/bonnie -s 32 -r 16 -n 1 -u root -q -m dom0-wce1-barri -f"
t0=$(cut -d' ' -f1 /proc/uptime)
if [ -n "$CG" ]; then
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG" "$G"/bonnie++ -d "$M"/bonnie -s 32 -r 16 -n 1 -u root -q -m dom0-wce1-barri -f > "$O"/bonnie.csv 2> "$O"/bonnie.csv.err
else
	"$G"/bonnie++ -d "$M"/bonnie -s 32 -r 16 -n 1 -u root -q -m dom0-wce1-barri -f > "$O"/bonnie.csv 2> "$O"/bonnie.csv.err
fi
rc=$?
echo "exit $rc after $(echo "$(cut -d' ' -f1 /proc/uptime) $t0" | awk '{ print $1 - $2 }') s"
[ -z "$CG" ] || { cat "$CG/memory.peak" > "$O/memory.peak" 2>/dev/null; rmdir "$CG"; }
[ $rc = 0 ] || tail -n 5 "$O"/bonnie.csv.err
umount "$M" || { echo "blkbench job: umount failed"; [ $rc != 0 ] || rc=5; }
exit $rc
