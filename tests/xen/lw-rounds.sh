# SPDX-License-Identifier: GPL-2.0-or-later
# lw-rounds.sh: the rounds of the power-cut check below any Xen backend,
# sourced by the nested dom0's /init (dom0-init.sh phase lw, the quick
# round of make check-xen and blkbench crash --platform xen-nested) and
# by crash-host.sh (blkbench crash --platform xen-host, a real dom0).
#
# A backend's disk is the kernel's dm-log-writes target $LW_DEV over a
# data device, logging every write, flush and FUA that reaches the data
# device, in order, on the log device $LW_LOGDEV, whatever backend
# produced them.  Each round is one guest on it: blkfront-test verify as
# its frontend (lw_round; its guest log says what each acknowledged
# flush promised) or ext4 with files fsync'd (lw_fs_round); then
# blkcrash judges the log from outside the backend.
#
# The includer provides:
#   LW_DM, LW_DEV      the dm device's name and node (/dev/mapper/$LW_DM)
#   LW_LOGDEV          its log device, copied to a file after each round
#   LW_TMP             a directory for logs and images (the peak of an
#                      ext4 round: the log, the base and the durable image)
#   LW_GNU             a directory put first in PATH for blkcrash fsck
#                      (GNU cp and e2fsck), or empty
#   LW_GUEST           the guests' name prefix (the round's name follows)
#   LW_FSCK_POINTS     crash points of each ext4 round
#   lw_setup [BASE]    fresh data and log devices and $LW_DEV over them;
#                      with BASE, an ext4 made on the data device first
#                      (mke2fs -E lazy_itable_init=0,lazy_journal_init=0:
#                      ext4's lazy-init thread in the guest would issue
#                      flushes of its own whatever the mount options),
#                      copied to the file BASE, the image the log starts from
#   mkcfg NAME RUN SIZES DISK, xl_create NAME [VAR=VALUE...],
#   wait_guest NAME REGEX SECONDS, $GUESTLOG/guest-NAME.log (the guest's
#   console), check/start/result/say/now (the "@@S/@@T" step protocol)
#   and the caller's LW_BACKEND and LW_CONFIG, which label each round.
#
# Every round ends with one line
#   @@LW name=N backend=B config=C workload=W want=pass|caught \
#        verdict=pass|caught|FAIL secs=S records=R flushes=F ...
# with the round's own counts after (the verify rounds: guest_flushes,
# promised, lost; the ext4 rounds: points, fsck_failed, fsync_lost=L/T),
# which blkbench crash turns into its table.

lw_tmp_used() { df -k "$LW_TMP" | awk 'NR == 2 { print int($3 / 1024) }'; }

# lw_line NAME WANT(0|1) OK(0|1) T0 COUNTS...: the round's @@LW line;
# LW_BACKEND, LW_CONFIG and LW_WORKLOAD (set by the caller) label it.
# The host log's records and flushes come from $LW_TMP/lw-NAME.dump.
lw_line() {
	local n=$1 want=$2 ok=$3 t0=$4 v rec fl
	shift 4
	if [ "$ok" != 1 ]; then v=FAIL; elif [ "$want" = 1 ]; then v=caught; else v=pass; fi
	rec=$(sed -n 's/^# \([0-9]*\) records, \([0-9]*\) flushes.*/\1/p' $LW_TMP/lw-$n.dump 2>/dev/null)
	fl=$(sed -n 's/^# \([0-9]*\) records, \([0-9]*\) flushes.*/\2/p' $LW_TMP/lw-$n.dump 2>/dev/null)
	echo "@@LW name=$n backend=$LW_BACKEND config=$LW_CONFIG workload=$LW_WORKLOAD" \
		"want=$([ "$want" = 1 ] && echo caught || echo pass) verdict=$v" \
		"secs=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')" \
		"records=${rec:--} flushes=${fl:--} $*"
	rm -f $LW_TMP/lw-$n.dump
}
# lw_guest NAME SECTION OUT [XL-ENV...]: a round's guest (mkcfg made
# $LW_GUEST$NAME) on $LW_DEV, from xl create to xl destroy; then the log
# is closed (dmsetup remove logs what no flush covered and updates the
# super block), copied to $LW_TMP/lw-NAME.dmlog (blkcrash reads files;
# the next round's lw_setup starts a new log) and its last records shown,
# and the guest's
# console lines between @@SECTION-BEGIN and @@SECTION-END go to OUT.
# Step lw-NAME-check has started when it returns 0; 1: xl create failed
# or (lw-NAME-check FAILed) the log could not be copied.
lw_guest() {
	local n=$1 sec=$2 out=$3
	shift 3
	check lw-$n-xl-create xl_create $LW_GUEST$n "$@" || return 1
	wait_guest $LW_GUEST$n '@@U IDLE' 600
	xl destroy $LW_GUEST$n
	sleep 1
	start lw-$n-check
	dmsetup remove $LW_DM || say "dmsetup remove $LW_DM failed"
	if ! dd if=$LW_LOGDEV of=$LW_TMP/lw-$n.dmlog bs=1M status=none; then
		rm -f $LW_TMP/lw-$n.dmlog
		result lw-$n-check FAIL "the log could not be copied to $LW_TMP ($(lw_tmp_used) MiB used there)"
		return 1
	fi
	sed -n "/@@$sec-BEGIN/,/@@$sec-END/p" $GUESTLOG/guest-$LW_GUEST$n.log |
		tr -d '\r' | sed '1d;$d' > "$out"
	blkcrash dump $LW_TMP/lw-$n.dmlog | tail -n 2 | tee $LW_TMP/lw-$n.dump | sed 's/^/  /'
}
# lw_round NAME WANT DISK [XL-ENV...]: one guest on $LW_DEV; blkcrash
# check must exit WANT (0 no violation, 1 violations)
lw_round() {
	local n=$1 want=$2 disk=$3 rc t0 LW_WORKLOAD="blkfront-verify"
	shift 3
	t0=$(now)
	check lw-$n-setup lw_setup || return
	XT_EXTRA=xt.noblkfront=1 GUEST_VCPUS=1 mkcfg $LW_GUEST$n "crashlog:xvda,idle" \
		"xvda:$(blockdev --getsz $LW_DEV)" "$disk"
	lw_guest $n GUESTLOG $LW_TMP/lw-$n.guest "$@" || return
	say "guest log: $(wc -l < $LW_TMP/lw-$n.guest) lines"
	blkcrash check --max-report 5 $LW_TMP/lw-$n.dmlog $LW_TMP/lw-$n.guest > $LW_TMP/lw-$n.check 2>&1
	rc=$?
	sed 's/^/  /' $LW_TMP/lw-$n.check
	# the table's counts: flushes the guest saw acknowledged, the writes
	# they promised, those not durable in time
	lw_line $n "$want" "$([ "$rc" = "$want" ] && echo 1 || echo 0)" "$t0" \
		"$(sed -n 's/^check: \([0-9]*\) guest flushes, \([0-9]*\) writes promised durable, \([0-9]*\) lost.*/guest_flushes=\1 promised=\2 lost=\3/p' \
			$LW_TMP/lw-$n.check)"
	rm -f $LW_TMP/lw-$n.dmlog
	if [ "$rc" = "$want" ]; then
		result lw-$n-check PASS "blkcrash check exit $rc"
	else
		result lw-$n-check FAIL "blkcrash check exit $rc, expected $want"
	fi
}
# lw_fs_round NAME MOUNT-OPTIONS WANT DISK: on the ext4 lw_setup made,
# a guest with xen-blkfront mounts it -o MOUNT-OPTIONS and writes files,
# fsync'ing each and the directory (domU-init.sh do_fslog); its console
# lists every file whose fsyncs returned, with its md5.  Judged from
# the dm-log-writes log alone:
#   blkcrash fsck: e2fsck (journal replay, then -fn) at LW_FSCK_POINTS
#     crash points, flush points and random subsets of unflushed writes
#   the fsync check: the image of what the log holds durable at its end
#     (blkcrash replay --durable), mounted here so that the kernel
#     replays its journal, must hold every acknowledged file byte-exact.
# WANT 0: both clean; WANT 1: caught by at least one of them.
lw_fs_round() {
	local n=$1 opts=$2 want=$3 disk=$4 frc lost=0 total=0 f sum got caught ok t0
	local base=$LW_TMP/lw-base.img img=$LW_TMP/lw-durable.img mnt=$LW_TMP/lw-mnt
	local LW_WORKLOAD="ext4-$opts"
	t0=$(now)
	check lw-$n-setup lw_setup $base || { rm -f $base; return; }
	GUEST_VCPUS=1 mkcfg $LW_GUEST$n "fslog:xvda:$opts,idle" \
		"xvda:$(blockdev --getsz $LW_DEV)" "$disk"
	lw_guest $n FSLOG $LW_TMP/lw-$n.fs || { rm -f $base; return; }
	say "guest: $(wc -l < $LW_TMP/lw-$n.fs) files fsync'd (ext4 -o $opts)"
	PATH=${LW_GNU:+$LW_GNU:}$PATH blkcrash fsck --fs ext4 --points "$LW_FSCK_POINTS" --seed 1 \
		--max-report 3 $LW_TMP/lw-$n.dmlog $base > $LW_TMP/lw-$n.fsck 2>&1
	frc=$?
	sed 's/^/  /' $LW_TMP/lw-$n.fsck
	cp $base $img
	say "$LW_TMP: $(lw_tmp_used) MiB used (the log, the base and the durable image: the phase's peak)"
	mkdir -p $mnt
	if blkcrash replay --durable $LW_TMP/lw-$n.dmlog $img >/dev/null &&
	   mount -t ext4 -o loop $img $mnt; then
		while read -r f sum; do
			total=$((total + 1))
			got=
			[ ! -f $mnt/$f ] || got=$(md5sum < $mnt/$f | cut -d' ' -f1)
			[ "$got" = "$sum" ] || lost=$((lost + 1))
		done < $LW_TMP/lw-$n.fs
		umount $mnt
	else
		say "the durable image did not replay or mount"
		total=$(wc -l < $LW_TMP/lw-$n.fs)
		lost=$total
	fi
	say "fsync check: $lost of $total acknowledged files missing or different in the durable image"
	rm -f $LW_TMP/lw-$n.dmlog $base $img
	caught=0
	if [ $frc = 1 ] || [ $lost != 0 ]; then caught=1; fi
	ok=0
	if [ $frc != 2 ] && [ "$total" != 0 ] && [ $caught = "$want" ]; then ok=1; fi
	lw_line $n "$want" $ok "$t0" \
		"points=$(sed -n 's/^fsck: \([0-9]*\) crash points.*/\1/p' $LW_TMP/lw-$n.fsck)" \
		"fsck_failed=$(sed -n 's/.*clean, \([0-9]*\) not clean.*/\1/p' $LW_TMP/lw-$n.fsck)" \
		"fsync_lost=$lost/$total"
	if [ $frc = 2 ] || [ "$total" = 0 ]; then
		result lw-$n-check FAIL "blkcrash fsck exit $frc, $total files in the guest's log"
	elif [ $caught = "$want" ]; then
		result lw-$n-check PASS "fsck exit $frc, $lost/$total fsync'd files lost"
	else
		result lw-$n-check FAIL "fsck exit $frc, $lost/$total fsync'd files lost, expected caught=$want"
	fi
}
