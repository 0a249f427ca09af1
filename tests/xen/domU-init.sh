#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
# /init of the PV domU initramfs used by check-xen.
#
# The guest runs the unmodified Debian kernel and its xen-blkfront; whoever
# serves the disk (blkbackd, kernel blkback, QEMU qdisk) is invisible here.
# What to do comes from the kernel command line (xl's extra=):
#   xt.tag=T            prefix of every test name (one guest = one tag)
#   xt.run=ITEM,...     steps, in order; ITEM is STEP:DISK[:LABEL]:
#     size:D            /sys/block/D/size equals the xt.sz value for D
#     pattern:D         8 MiB random pattern, O_DIRECT write + read-back
#     ext4:D / xfs:D    mkfs, mount, bonnie++, fsync'd file, umount, fsck -n
#     discard:D         fill 16 MiB, blkdiscard it, read back zeros
#     attach:D          wait for D to be hot-plugged, size + pattern check,
#                       print its md5 for dom0, wait for it to be unplugged
#     bench:D:LABEL     dd O_DIRECT seq write/read + bonnie++ on ext4
#     cmd:D             run-in-domu.sh: sh /xt-cmd with XT_DISK=/dev/D, its
#                       output between @@CMD-BEGIN and @@CMD-END rc=N
#     job:D:SCRIPT:O    a job of run-in-domu.sh -J (blkbench's xen rows):
#                       sh /xt/SCRIPT with XT_DISK=/dev/D, XT_OUT=/tmp/xt-out,
#                       XT_GNU=/gnu
#                       (the files the job writes there), XT_MNT=/mnt; its
#                       stdout+stderr becomes XT_OUT/stdout, its status
#                       XT_OUT/rc; then XT_OUT is written as a tar archive
#                       to the raw disk O and synced (dom0 reads it back)
#     fslog:D:OPTS      phase lw: the ext4 dom0 made on D mounted -o OPTS
#                       (barrier or nobarrier), files written and fsync'd (then their
#                       directory); each file whose fsyncs returned is
#                       printed with its md5 between @@FSLOG-BEGIN and
#                       @@FSLOG-END, for dom0 to look for on the disk
#     hostile:D:C01+C02 blkfront-test (a userspace frontend over gntalloc,
#                       evtchn and xenbus) runs /xt-hostile/C01.script, ...
#                       against D's backend, one test per script, in order
#     queues:D          D has one blk-mq hardware queue per vCPU (2), and a
#                       pattern written and read back from each vCPU in turn
#                       (taskset) is byte-exact: each vCPU's I/O goes through
#                       its own ring (queue-N/), which dom0 checks in the trace
#     persist:D:0|1     blkfront's own word on D (its kernel log line
#                       "persistent grants: enabled;|disabled;") is the one
#                       expected: what it negotiated with the backend
#     survive:D:F       while dom0 kills, restarts and upgrades blkbackd:
#                       4 MiB random patterns written O_DIRECT + fsync to D
#                       and read back, and bonnie++ plus fsync'd,
#                       md5-checked files on ext4 on F, until D grows
#                       (dom0's online resize, to the xt.sz value for
#                       "Dgrown"); then no I/O error in the kernel log,
#                       e2fsck -fn clean on F, the rounds each loop made
#     rpc               bench-xen: run the commands dom0 writes to this
#                       guest's console, one a line (do_rpc below)
#     idle              stay up (dom0 destroys the guest)
#   xt.sz=D:SECTORS,... expected sizes in 512-byte sectors
#   xt.noblkfront=1     do not load xen-blkfront (the disks are left to
#                       blkfront-test)
#   xen_blkfront.P=V    parameters for xen-blkfront (max_ring_page_order,
#                       feature_persistent, ...): passed to its insmod, as
#                       modprobe would take them from the command line
# Output (hvc0; dom0 relays it from xenconsoled's log to the serial line):
#   @@S NAME            a step starts       @@T NAME RESULT DETAIL  its result
#   @@U WORD ...        progress dom0 waits for
#   @@B LABEL METRIC V  one benchmark number
#   @@R ID KEY=VALUE... one bench-xen workload's numbers (do_rpc)
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /mnt
ln -sf /proc/mounts /etc/mtab
G=/gnu

arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
TAG=$(arg xt.tag)
RUN=$(arg xt.run)
SZ=$(arg xt.sz)
mark() { echo "@@U $*"; }
start() { echo "@@S $TAG-$1"; }
result() { local n=$1 r=$2; shift 2; echo "@@T $TAG-$n $r $*"; }
# step NAME CMD...: run CMD in a subshell as the test NAME (PASS when it
# exits 0; die exits that subshell)
step() {
	local n=$1 rc
	shift
	start "$n"
	umount /mnt 2>/dev/null
	( "$@" ) 2>&1; rc=$?
	if [ $rc = 0 ]; then result "$n" PASS; else result "$n" FAIL "rc=$rc"; fi
	return $rc
}
say() { echo "$*"; }
die() { echo "$*"; exit 1; }	# steps run in a subshell

expected_size() { echo "$SZ" | tr ',' '\n' | sed -n "s/^$1://p"; }

wait_dev() { # DISK SECONDS
	local i=0
	while [ ! -b /dev/$1 ] && [ $i -lt $(($2 * 2)) ]; do sleep 0.5; i=$((i + 1)); done
	[ -b /dev/$1 ]
}

do_size() {
	local want have
	want=$(expected_size $1)
	wait_dev $1 30 || die "/dev/$1 did not appear in 30 s"
	have=$(cat /sys/block/$1/size)
	say "/dev/$1: $have sectors, expected $want; logical $(cat /sys/block/$1/queue/logical_block_size) B"
	[ -n "$want" ] && [ "$have" = "$want" ]
}

# pattern DISK OFFSET_MIB: 8 MiB of random data, O_DIRECT, read back
# (PIN: a command prefix for both dd, e.g. "taskset -c 1")
do_pattern() {
	$G/dd if=/dev/urandom of=/tmp/pat bs=1M count=8 2>/dev/null || return 1
	${PIN:-} $G/dd if=/tmp/pat of=/dev/$1 bs=1M seek=${2:-1} oflag=direct conv=fsync 2>&1 | tail -1 || return 1
	echo 3 > /proc/sys/vm/drop_caches
	${PIN:-} $G/dd if=/dev/$1 of=/tmp/back bs=1M skip=${2:-1} count=8 iflag=direct 2>&1 | tail -1 || return 1
	$G/cmp /tmp/pat /tmp/back || die "read-back differs from the pattern written"
	say "pattern md5 $($G/md5sum < /tmp/pat | cut -d' ' -f1)"
}

bonnie() { # DIR [MiB [OPT...]]: small bonnie++ (default 16 MiB; 1024 files), CSV on stdout
	local d=$1 s=${2:-16}
	shift 2
	$G/bonnie++ -d "$d" -s $s -r $((${s%%:*} / 2)) -n 1 -u 0:0 -m "$TAG" -q -f "$@" > /tmp/bonnie.csv 2> /tmp/bonnie.err ||
		{ cat /tmp/bonnie.err; return 1; }
	tail -1 /tmp/bonnie.csv
}

fsync_file() { # DIR: 4 MiB file written and fsync'd (dd conv=fsync = fsync(2))
	$G/dd if=/dev/urandom of="$1/fsynced" bs=64k count=64 conv=fsync 2>/dev/null &&
		$G/sync "$1/fsynced"
}

do_ext4() {
	local csv
	$G/mke2fs -q -F -t ext4 /dev/$1 || die "mke2fs failed"
	mount -t ext4 /dev/$1 /mnt || die "mount ext4 failed"
	csv=$(bonnie /mnt 16) || die "bonnie++ failed"
	say "bonnie++ $csv"
	fsync_file /mnt || die "fsync'd write failed"
	if [ "$(cat /sys/block/$1/queue/discard_max_bytes)" != 0 ]; then
		$G/fstrim -v /mnt || die "fstrim failed"
	fi
	umount /mnt || die "umount failed"
	$G/e2fsck -fn /dev/$1 || die "e2fsck -n found problems"
}

do_xfs() {
	local csv
	$G/mkfs.xfs -f -q /dev/$1 || die "mkfs.xfs failed"
	mount -t xfs /dev/$1 /mnt || die "mount xfs failed"
	csv=$(bonnie /mnt 16) || die "bonnie++ failed"
	say "bonnie++ $csv"
	fsync_file /mnt || die "fsync'd write failed"
	umount /mnt || die "umount failed"
	$G/xfs_repair -n /dev/$1 || die "xfs_repair -n found problems"
}

# fill 16 MiB at offset 0 with random data, discard it, expect zeros back
do_discard() {
	local max
	max=$(cat /sys/block/$1/queue/discard_max_bytes)
	say "discard_max_bytes=$max granularity=$(cat /sys/block/$1/queue/discard_granularity)"
	[ "$max" != 0 ] || die "/dev/$1 has no discard support (feature-discard not advertised)"
	$G/dd if=/dev/urandom of=/dev/$1 bs=1M count=16 oflag=direct conv=fsync 2>/dev/null || return 1
	echo 3 > /proc/sys/vm/drop_caches
	$G/cmp -s -n 16777216 /dev/$1 /dev/zero && die "the fill did not reach the disk"
	$G/blkdiscard -v -o 0 -l 16777216 /dev/$1 || die "blkdiscard failed"
	echo 3 > /proc/sys/vm/drop_caches
	$G/dd if=/dev/$1 of=/tmp/back bs=1M count=16 iflag=direct 2>/dev/null || return 1
	$G/cmp -n 16777216 /tmp/back /dev/zero || die "discarded range does not read back as zeros"
	mark DISCARDED $1 0 16777216
}

do_attach() {
	mark WAIT-ATTACH $1
	wait_dev $1 90 || die "/dev/$1 was not attached within 90 s"
	do_size $1 || return 1
	do_pattern $1 4 || return 1
	mark ATTACHED-MD5 $1 4194304 8388608 "$($G/md5sum < /tmp/pat | cut -d' ' -f1)"
	mark WAIT-DETACH $1
	local i=0
	while [ -b /dev/$1 ] && [ $i -lt 180 ]; do sleep 0.5; i=$((i + 1)); done
	[ ! -b /dev/$1 ] || die "/dev/$1 still present 90 s after the detach request"
	say "/dev/$1 gone after $((i / 2)) s"
}

# survive_raw DISK: patterns written and read back until /tmp/stop;
# a mismatch leaves /tmp/fail-raw
survive_raw() {
	local k=0 off
	while [ ! -e /tmp/stop ]; do
		off=$((k % 8 * 4))
		$G/dd if=/dev/urandom of=/tmp/sp bs=1M count=4 2>/dev/null || { echo "urandom" > /tmp/fail-raw; return; }
		$G/dd if=/tmp/sp of=/dev/$1 bs=1M seek=$off oflag=direct conv=fsync 2>/tmp/sr.err ||
			{ cat /tmp/sr.err > /tmp/fail-raw; return; }
		$G/dd if=/dev/$1 of=/tmp/sb bs=1M skip=$off count=4 iflag=direct 2>/tmp/sr.err ||
			{ cat /tmp/sr.err > /tmp/fail-raw; return; }
		$G/cmp /tmp/sp /tmp/sb > /tmp/sr.err 2>&1 || { cat /tmp/sr.err > /tmp/fail-raw; return; }
		k=$((k + 1))
		echo $k > /tmp/rounds-raw
	done
}
# survive_fs DIR: bonnie++, then 2 MiB files written with fsync and all
# of them read back by md5 (caches dropped), until /tmp/stop; a failure
# leaves /tmp/fail-fs
survive_fs() {
	local k=0 f
	bonnie "$1" 16 > /tmp/sf.out 2>&1 || { cat /tmp/sf.out > /tmp/fail-fs; return; }
	mkdir -p "$1/data" "$1/sum"
	while [ ! -e /tmp/stop ]; do
		f=$((k % 16))
		$G/dd if=/dev/urandom of="$1/data/$f" bs=64k count=32 conv=fsync 2>/dev/null ||
			{ echo "write $1/data/$f" > /tmp/fail-fs; return; }
		$G/md5sum "$1/data/$f" > "$1/sum/$f"
		$G/sync "$1/sum/$f"
		echo 3 > /proc/sys/vm/drop_caches
		for f in "$1"/sum/*; do
			$G/md5sum -c --quiet "$f" > /tmp/sf.out 2>&1 || { cat /tmp/sf.out > /tmp/fail-fs; return; }
		done
		k=$((k + 1))
		echo $k > /tmp/rounds-fs
	done
}
do_survive() {
	local d=$1 f=$2 size0 size want i=0 fail=
	want=$(expected_size ${d}grown)
	wait_dev $d 30 && wait_dev $f 30 || die "/dev/$d or /dev/$f did not appear"
	size0=$(cat /sys/block/$d/size)
	$G/mke2fs -q -F -t ext4 /dev/$f || die "mke2fs failed"
	mount -t ext4 /dev/$f /mnt || die "mount ext4 failed"
	rm -f /tmp/stop /tmp/fail-raw /tmp/fail-fs /tmp/rounds-raw /tmp/rounds-fs
	survive_raw $d & local raw=$!
	survive_fs /mnt & local fs=$!
	mark SURVIVE-RUNNING $d $size0
	# until dom0's resize reaches the guest (at most 15 minutes)
	while [ "$(cat /sys/block/$d/size)" = "$size0" ] && [ $i -lt 1800 ]; do
		[ -e /tmp/fail-raw ] || [ -e /tmp/fail-fs ] && break
		sleep 0.5; i=$((i + 1))
	done
	touch /tmp/stop
	wait $raw $fs
	size=$(cat /sys/block/$d/size)
	say "rounds: raw $(cat /tmp/rounds-raw 2>/dev/null || echo 0), fs $(cat /tmp/rounds-fs 2>/dev/null || echo 0); size $size0 -> $size (expected $want)"
	[ -e /tmp/fail-raw ] && { say "raw loop failed: $(cat /tmp/fail-raw)"; fail=1; }
	[ -e /tmp/fail-fs ] && { say "fs loop failed: $(cat /tmp/fail-fs)"; fail=1; }
	[ -s /tmp/rounds-raw ] && [ -s /tmp/rounds-fs ] || { say "a loop made no round"; fail=1; }
	[ "$size" = "$want" ] || { say "/dev/$d did not grow to $want sectors"; fail=1; }
	umount /mnt || { say "umount failed"; fail=1; }
	$G/e2fsck -fn /dev/$f > /tmp/fsck.out 2>&1 || { cat /tmp/fsck.out; say "e2fsck -n found problems"; fail=1; }
	if dmesg | grep -iE 'I/O error|blk_update_request|Buffer I/O|EXT4-fs error|blkfront.*(error|bad)'; then
		say "the kernel logged I/O errors"; fail=1
	fi
	dmesg | grep -iE 'xvd|blkfront' | tail -n 5
	mark SURVIVE-DONE
	[ -z "$fail" ]
}

# dd_rate DD-ARGS...: run GNU dd, print MB/s (decimal) from its summary line
dd_rate() {
	$G/dd "$@" 2>&1 | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i ~ /^copied/) s = $(i + 1);
		if (s > 0) printf "%.1f\n", $1 / s / 1e6 }'
}

do_bench() {
	local d=$1 l=$2 w r csv
	w=$(dd_rate if=/dev/zero of=/dev/$d bs=1M count=32 oflag=direct)
	[ -n "$w" ] || die "dd write failed"
	echo 3 > /proc/sys/vm/drop_caches
	r=$(dd_rate if=/dev/$d of=/dev/null bs=1M count=32 iflag=direct)
	[ -n "$r" ] || die "dd read failed"
	echo "@@B $l dd-write-MBps $w"
	echo "@@B $l dd-read-MBps $r"
	$G/mke2fs -q -F -t ext4 /dev/$d || die "mke2fs failed"
	mount -t ext4 /dev/$d /mnt || die "mount failed"
	# -D: O_DIRECT bulk I/O (the file is smaller than RAM), in 64 KiB chunks
	csv=$(bonnie /mnt 32:65536 -D)
	umount /mnt
	say "bonnie++ $csv"
	# bonnie++ 1.98 CSV: 12 put_block, 14 rewrite, 18 get_block (K/s), 27 seq_create (/s)
	echo "$csv" | awk -F, -v l="$l" 'NF > 27 { printf "@@B %s bonnie-blkout-KBps %s\n@@B %s bonnie-rewrite-KBps %s\n@@B %s bonnie-blkin-KBps %s\n@@B %s bonnie-create-ps %s\n", l, $12, l, $14, l, $18, l, $27 }'
	[ -n "$csv" ] || die "bonnie++ failed"
}

# one pattern through each vCPU's queue: blk-mq maps vCPU N to hardware
# queue N, which blkfront serves with ring N (queue-N/ in xenstore)
do_queues() {
	local n c
	n=$(ls /sys/block/$1/mq | wc -l)
	say "/dev/$1: $n blk-mq hardware queues, $(nproc) vCPUs"
	for c in /sys/block/$1/mq/*; do say "  queue ${c##*/}: cpus $(cat $c/cpu_list)"; done
	[ "$n" = 2 ] || die "expected 2 hardware queues, one per vCPU"
	for c in 0 1; do
		say "vCPU $c:"
		PIN="taskset -c $c" do_pattern $1 $((16 + 8 * c)) || return 1
	done
}

# what blkfront negotiated, in its own words (xen-blkfront's kernel log)
do_persist() { # DISK 0|1
	local l want
	l=$(dmesg | grep "blkfront: $1: " | tail -1)
	say "${l:-no blkfront line for $1 in the kernel log}"
	say "xen_blkfront.feature_persistent=$(cat /sys/module/xen_blkfront/parameters/feature_persistent)"
	if [ "$2" = 1 ]; then want="persistent grants: enabled;"; else want="persistent grants: disabled;"; fi
	case $l in *"$want"*) ;; *) die "expected \"$want\"" ;; esac
}

# ---------------- bench-xen: dom0 drives, one console line a command ----
#   wait ID DISK      until /dev/DISK exists (it was just hot-plugged)
#   gone ID DISK      until /dev/DISK is gone (after xl block-detach)
#   run ID DISK WL    workload WL on /dev/DISK, its numbers as
#                     "@@R ID KEY=VALUE..."
#   end               leave the loop
# Each is answered "@@U BX-DONE ID rc=N": dom0 reads its own CPU counters
# just before it writes a command and again when the answer comes, so
# its busy time covers the workload and little else.
BX_MIB=$(arg xt.bx_mib)	# the region dd and fio work on
BX_FIO=$(arg xt.bx_fio)	# seconds each fio job measures (after BX_RAMP)
BX_RAMP=$(arg xt.bx_ramp)
: ${BX_MIB:=64} ${BX_FIO:=10} ${BX_RAMP:=2}

# fio_pick: the numbers kept from fio's JSON (stdin; fio writes one key a
# line), on one line: SECTION_iops, SECTION_total_ios, SECTION_io_bytes
# (read, write), SECTION_pNNus (read and write completion latency, sync:
# the fdatasync calls' latency, in microseconds) and error
fio_pick() {
	awk '
	function key(l) { sub(/^[ \t]*"/, "", l); sub(/".*/, "", l); return l }
	/"[^"]*" : [[{][ \t]*$/ { st[++n] = key($0); next }
	/^[ \t]*[[{][ \t]*$/ { st[++n] = "-"; next }
	/^[ \t]*[]}],?[ \t]*$/ { n--; next }
	/"[^"]*" : / {
		k = key($0); v = $0; sub(/^[^:]*: /, "", v); sub(/,[ \t]*$/, "", v)
		if (st[2] != "jobs") next
		s = st[4]
		if (n == 3 && k == "error")
			printf "error=%s ", v
		else if (n == 4 && (s == "read" || s == "write") &&
			 (k == "iops" || k == "total_ios" || k == "io_bytes"))
			printf "%s_%s=%s ", s, k, v
		else if (n == 6 && st[6] == "percentile" &&
			 ((s == "read" || s == "write") && st[5] == "clat_ns" || s == "sync" && st[5] == "lat_ns")) {
			sub(/\..*/, "", k)
			printf "%s_p%sus=%.1f ", s, k, v / 1000
		}
	}'
}
bx_fio() { # DISK FIO-ARG...
	local d=$1
	shift
	/usr/bin/fio --name=bx --filename=/dev/$d --size=${BX_MIB}M --time_based \
		--runtime=$BX_FIO --ramp_time=$BX_RAMP --percentile_list=${BX_PCT:-50:99} \
		--output-format=json "$@" > /tmp/fio.json 2> /tmp/fio.err ||
		{ cat /tmp/fio.err; return 1; }
	fio_pick < /tmp/fio.json
}
bx_wl_ddw() {
	local v
	v=$(dd_rate if=/dev/zero of=/dev/$1 bs=1M count=$BX_MIB oflag=direct)
	[ -n "$v" ] || die "dd write failed"
	echo "mbps=$v"
}
bx_wl_ddr() {
	local v
	echo 3 > /proc/sys/vm/drop_caches
	v=$(dd_rate if=/dev/$1 of=/dev/null bs=1M count=$BX_MIB iflag=direct)
	[ -n "$v" ] || die "dd read failed"
	echo "mbps=$v"
}
bx_wl_rr1() { bx_fio $1 --rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=1; }
# rr1 for make bench-xen BX_TRACE (the traced passes): p90 as well
bx_wl_rr1t() { BX_PCT=50:90:99 bx_fio $1 --rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=1; }
bx_wl_rr32() { bx_fio $1 --rw=randread --bs=4k --ioengine=libaio --direct=1 --iodepth=32; }
bx_wl_rw1() { bx_fio $1 --rw=randwrite --bs=4k --ioengine=libaio --direct=1 --iodepth=1; }
bx_wl_rw32() { bx_fio $1 --rw=randwrite --bs=4k --ioengine=libaio --direct=1 --iodepth=32; }
# a database's commit loop: a buffered 4 KiB write, then fdatasync (the
# write goes out, then a flush request), again and again
bx_wl_fsync() { bx_fio $1 --rw=write --bs=4k --ioengine=psync --direct=0 --fdatasync=1; }
# the ext4 workload of the comparison above (do_bench): bonnie++ -D, with
# 4096 files (-n 4) so that the create phase lasts long enough to be timed
# (with -n 1, 1024 creates, a fast machine gets bonnie++'s "+++++")
bx_wl_bonnie() {
	local csv
	$G/mke2fs -q -F -t ext4 /dev/$1 || die "mke2fs failed"
	mount -t ext4 /dev/$1 /mnt || die "mount failed"
	csv=$(bonnie /mnt 32:65536 -D -n 4)
	umount /mnt || die "umount failed"
	[ -n "$csv" ] || die "bonnie++ failed"
	echo "$csv" | awk -F, 'NF > 27 { printf "blkout_kps=%s rewrite_kps=%s create_ps=%s\n", $12, $14, $27 }'
}
# bx_counters DISK: its requests and sectors so far (/proc/diskstats:
# reads, sectors read, writes, sectors written, discards, flushes), this
# guest's busy and total CPU time (USER_HZ ticks) and its uptime
bx_counters() {
	awk -v d=$1 '$3 == d { printf "%s %s %s %s %s %s ", $4, $6, $8, $10, $15, $19 }' /proc/diskstats
	awk '$1 == "cpu" { printf "%d %d ", $2 + $3 + $4 + $7 + $8, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat
	cut -d' ' -f1 /proc/uptime
}
bx_run() { # ID DISK WORKLOAD
	local c0 c1 out
	type bx_wl_$3 >/dev/null 2>&1 || die "unknown workload $3"
	c0=$(bx_counters $2)
	out=$(bx_wl_$3 $2) || die "$3 failed: $out"
	c1=$(bx_counters $2)
	# the guest's block layer counts what went to blkfront: all of it,
	# ramp and fio's own setup included, as dom0's CPU time does
	echo "@@R $1 $(echo $out) $(echo "$c0 $c1" | awk '{
		printf "reqs=%d bytes=%d guest_busy=%d guest_total=%d secs=%.2f",
			($10 - $1) + ($12 - $3) + ($14 - $5) + ($15 - $6),
			(($11 - $2) + ($13 - $4)) * 512, $16 - $7, $17 - $8, $18 - $9 }')"
}
do_rpc() {
	local cmd id d wl rc i
	stty -echo 2>/dev/null	# dom0's commands need not come back
	mark BX-READY
	while read -r cmd id d wl; do
		[ -n "$cmd" ] || continue	# a CR LF's second half
		case $cmd in
		wait) wait_dev $d 90; rc=$? ;;
		gone)
			i=0
			while [ -b /dev/$d ] && [ $i -lt 180 ]; do sleep 0.5; i=$((i + 1)); done
			[ ! -b /dev/$d ]; rc=$?
			;;
		run) ( bx_run $id $d $wl ) 2>&1; rc=$? ;;
		end) mark BX-END; return 0 ;;
		*) echo "unknown command: $cmd $id $d $wl"; rc=2 ;;
		esac
		echo "@@U BX-DONE $id rc=$rc"
	done
	mark BX-EOF
}

# a hostile frontend: blkfront-test sends the script's requests as written
do_hostile() { # DISK CASE
	/usr/local/bin/blkfront-test script --transport xen --vdev $1 --max-indirect 16 \
		--timeout 20000 /xt-hostile/$2.script
}

# phase lw: blkfront-test verify as this guest's disk frontend (no
# xen-blkfront; no indirect segments: gntalloc shares at most 1024
# pages), with its guest log (include/guestlog.h), which is then
# printed between @@GUESTLOG-BEGIN and @@GUESTLOG-END for dom0's
# "blkcrash check" against the dm-log-writes log of the disk
do_crashlog() { # DISK
	/usr/local/bin/blkfront-test verify --transport xen --vdev $1 --max-indirect 0 --bs 4096 \
		--size 8M --count 400 --iodepth 4 --flush-every 25 --seed 7 \
		--timeout 20000 --log /tmp/guest.log || return
	echo "@@GUESTLOG-BEGIN"
	cat /tmp/guest.log
	echo "@@GUESTLOG-END"
}

# phase lw: what the guest's fsync acknowledged, for dom0 to find in what
# the disk holds durably.  dom0 made the filesystem before its log began
# (a crash point inside mke2fs is no filesystem at all).
do_fslog() { # DISK MOUNT-OPTIONS
	local i=0
	wait_dev $1 30 || die "/dev/$1 did not appear"
	mount -t ext4 -o "$2" /dev/$1 /mnt || die "mount -o $2 failed"
	: > /tmp/fs.log
	while [ $i -lt 12 ]; do
		$G/dd if=/dev/urandom of=/mnt/f$i bs=4k count=$((1 + i % 4)) conv=fsync \
			2>/dev/null || die "dd conv=fsync f$i failed"
		$G/sync /mnt || die "fsync of the directory failed"
		echo "f$i $($G/md5sum < /mnt/f$i | cut -d' ' -f1)" >> /tmp/fs.log
		i=$((i + 1))
	done
	echo "@@FSLOG-BEGIN"
	cat /tmp/fs.log
	echo "@@FSLOG-END"
}

echo "@@U DOMU-INIT-START tag=$TAG kernel=$(uname -r) run=$RUN"
NOBLKFRONT=$(arg xt.noblkfront)
# busybox insmod does not read /proc/cmdline: hand xen_blkfront.P=V over
BLKFRONT_ARGS=$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^xen_blkfront\.//p' | tr '\n' ' ')
while read -r m; do
	case $m in
	*/xen-blkfront.ko)
		[ "$NOBLKFRONT" = 1 ] && continue
		# shellcheck disable=SC2086 # one word per parameter
		insmod "$m" $BLKFRONT_ARGS || echo "insmod $m $BLKFRONT_ARGS failed"
		[ -z "$BLKFRONT_ARGS" ] || echo "xen-blkfront $BLKFRONT_ARGS"
		;;
	*) insmod "$m" 2>/dev/null ;;
	esac
done < /modules.list
for item in $(echo "$RUN" | tr ',' ' '); do
	s=${item%%:*}; rest=${item#*:}; d=${rest%%:*}; l=${rest#*:}
	case $s in
	size) step $d-size do_size $d ;;
	pattern) step $d-pattern do_pattern $d 1 ;;
	ext4) step $d-ext4 do_ext4 $d ;;
	xfs) step $d-xfs do_xfs $d ;;
	discard) step $d-discard do_discard $d ;;
	attach) step $d-attach do_attach $d ;;
	bench) step bench-$l do_bench $d $l ;;
	cmd)	# run-in-domu.sh: /xt-cmd was appended to the initramfs
		echo "@@CMD-BEGIN"
		XT_DISK=/dev/$d sh /xt-cmd 2>&1
		echo "@@CMD-END rc=$?"
		;;
	job)	# run-in-domu.sh -J: the output comes back on disk ${l#*:}
		o=/tmp/xt-out
		mkdir -p $o
		echo "@@U JOB-BEGIN ${l%%:*}"
		wait_dev $d 30 || echo "/dev/$d did not appear in 30 s"
		XT_GNU=$G XT_DISK=/dev/$d XT_OUT=$o XT_MNT=/mnt \
			sh /xt/${l%%:*} > $o/stdout 2>&1
		echo $? > $o/rc
		cat $o/stdout
		wait_dev ${l#*:} 30 && tar -cf /dev/${l#*:} -C $o . && $G/sync ||
			echo "@@U JOB-OUTPUT-FAILED /dev/${l#*:}"
		echo "@@U JOB-END ${l%%:*} rc=$(cat $o/rc)"
		;;
	crashlog) step $d-crashlog do_crashlog $d ;;
	fslog) step $d-fslog do_fslog $d $l ;;
	hostile) for c in $(echo "$l" | tr + ' '); do step hostile-$c do_hostile $d $c; done ;;
	queues) step $d-queues do_queues $d ;;
	persist) step $d-persistent do_persist $d $l ;;
	survive) step $d-survive do_survive $d $l ;;
	rpc) do_rpc ;;
	idle) mark IDLE; while :; do sleep 3600; done ;;
	*) echo "@@U unknown step $item" ;;
	esac
done
mark DOMU-DONE
poweroff -f
