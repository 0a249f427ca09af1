#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# crash-host.sh: the power-cut check below each Xen backend on a real
# dom0 (blkbench crash --platform xen-host runs it after its checks; see
# blkbench(1) "POWER-CUT CAMPAIGN").  The rounds are lw-rounds.sh's, as in
# the nested dom0's phase lw; here the data and log devices are two spare
# block devices (LVs) the administrator names, whose contents are
# destroyed, and the guests are this host's PV guests of the test
# initramfs (build-initramfs.sh DOMU_ONLY=1, with blkfront-test).
#
# For each backend named in BACKENDS, three rounds: blkfront-test verify
# and ext4 mounted with barriers (flushes honoured: must show no
# violation), and ext4 mounted nobarrier (the guest drops its flushes:
# must be caught).  blkbackd is the daemon already running on this host
# (its --unsafe-ignore-flush round needs a daemon of its own: only the
# nested campaign has it); kernel-blkback needs xen-blkback loaded (and
# so no blkbackd); qdisk needs QEMU.
#
# Environment (all required; blkbench sets them):
#   LW_DATA, LW_LOG    the data and log devices
#   LW_TMP             a scratch directory (holds a copy of LW_LOG and two
#                      of LW_DATA at an ext4 round's peak)
#   GUEST_KERNEL, GUEST_RAMDISK   the guests' kernel and initramfs
#   BACKENDS           comma list of blkbackd, kernel-blkback, qdisk
#   LW_FSCK_POINTS     crash points per ext4 round
#   BLKCRASH           blkcrash
# Output: the step protocol (@@S, @@T) and one @@LW line per round, on
# stdout.  Exit 0 when it ran (the verdicts are in the @@LW lines), 2 when
# it could not set up.
set -u
here=$(cd "$(dirname "$0")" && pwd)
for v in LW_DATA LW_LOG LW_TMP GUEST_KERNEL GUEST_RAMDISK BACKENDS LW_FSCK_POINTS BLKCRASH; do
	[ -n "${!v:-}" ] || { echo "crash-host: $v is not set" >&2; exit 2; }
done
export PATH=$(dirname "$BLKCRASH"):$PATH

LW_DM=blkbench-lw-$$
LW_DEV=/dev/mapper/$LW_DM
LW_LOGDEV=$LW_LOG
LW_GNU=
LW_GUEST=blkbench-$$-lw
GUESTLOG=$LW_TMP/console
mkdir -p "$GUESTLOG"

mark() { echo "@@M $(now) $*"; }
start() { echo "@@S $1"; }
result() { local n=$1 r=$2; shift 2; echo "@@T $n $r $*"; }
check() {
	local n=$1 rc
	shift
	start "$n"
	"$@" 2>&1; rc=$?
	if [ $rc = 0 ]; then result "$n" PASS; else result "$n" FAIL "rc=$rc"; fi
	return $rc
}
say() { echo "  $*"; }
now() { cut -d' ' -f1 /proc/uptime; }

# lw_setup [BASE]: see lw-rounds.sh
lw_setup() {
	dmsetup remove $LW_DM 2>/dev/null
	if [ -n "${1:-}" ]; then
		mke2fs -q -F -t ext4 -E lazy_itable_init=0,lazy_journal_init=0 "$LW_DATA" || return 1
		dd if="$LW_DATA" of="$1" bs=1M status=none || return 1
	fi
	dmsetup create $LW_DM --table "0 $(blockdev --getsz "$LW_DATA") log-writes $LW_DATA $LW_LOG" ||
		return 1
	udevadm settle 2>/dev/null
	[ -b $LW_DEV ] || { say "no $LW_DEV"; return 1; }
}
# mkcfg NAME RUN SIZES DISK: a PV guest of the test initramfs
mkcfg() {
	cat > "$LW_TMP/$1.cfg" <<EOF
name = "$1"
type = "pv"
kernel = "$GUEST_KERNEL"
ramdisk = "$GUEST_RAMDISK"
extra = "console=hvc0 rdinit=/init loglevel=4 xt.tag=$1 xt.run=$2 xt.sz=$3 ${XT_EXTRA:-}"
memory = 256
vcpus = ${GUEST_VCPUS:-1}
disk = [ '$4' ]
on_crash = "destroy"
EOF
}
# xl_create NAME [VAR=VALUE...]: created paused, its console captured
# (xl console on a pseudo-terminal: it wants one) before it runs
CONSOLES=
xl_create() {
	local n=$1
	shift
	env "$@" xl create -p "$LW_TMP/$n.cfg" || return 1
	python3 -c 'import pty, sys; pty.spawn(sys.argv[1:])' xl console "$n" \
		< /dev/null > "$GUESTLOG/guest-$n.log" 2>&1 &
	CONSOLES="$CONSOLES $!"
	sleep 1
	xl unpause "$n"
}
wait_guest() {
	local i=0
	while [ $i -lt $(($3 * 2)) ]; do
		grep -qE "$2" "$GUESTLOG/guest-$1.log" 2>/dev/null && return 0
		xl domid "$1" >/dev/null 2>&1 || { say "guest $1 is gone"; return 1; }
		sleep 0.5
		i=$((i + 1))
	done
	say "timeout: guest $1 did not print /$2/ in $3 s"
	return 1
}
cleanup() {
	local d
	for d in $(xl list 2>/dev/null | awk -v p="$LW_GUEST" 'index($1, p) == 1 { print $1 }'); do
		xl destroy "$d"
	done
	# shellcheck disable=SC2086 # one pid per word
	[ -z "$CONSOLES" ] || kill $CONSOLES 2>/dev/null
	dmsetup remove $LW_DM 2>/dev/null
}
trap cleanup EXIT

# shellcheck source=lw-rounds.sh
. "$here/lw-rounds.sh"

mark PHASE-lw-host
for b in $(echo "$BACKENDS" | tr ',' ' '); do
	LW_BACKEND=$b LW_CONFIG=honoured
	case $b in
	blkbackd)	disk="vdev=xvda, format=raw, access=rw, script=block-blkbackd, target=$LW_DEV"
			r=bbd f=fs ;;
	kernel-blkback)	disk="phy:$LW_DEV,xvda,w" r=kb f=kf ;;
	qdisk)		disk="format=raw, vdev=xvda, access=rw, backendtype=qdisk, target=$LW_DEV"
			r=qd f=qf ;;
	*) echo "crash-host: unknown backend $b" >&2; exit 2 ;;
	esac
	lw_round $r 0 "$disk"
	lw_fs_round ${f}b barrier 0 "$disk"
	LW_CONFIG=guest-nobarrier lw_fs_round ${f}n nobarrier 1 "$disk"
done
mark ALL-DONE
