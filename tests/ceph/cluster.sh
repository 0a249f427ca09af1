# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ceph/cluster.sh: a throw-away single-node Ceph cluster for the rbd
# tests, from Debian 12's Ceph 16.2 packages only (ceph-mon, ceph-mgr,
# ceph-osd, ceph-common): one mon, one mgr and one OSD on 127.0.0.1 with
# cephx, as the manual deployment of Ceph's documentation does it, with
# every path (data, keyrings, sockets, logs, crash dumps) inside one
# temporary directory.  Source it from bash, then:
#
#   ceph_start [DIR]   make DIR (default: a new mktemp -d), bootstrap the
#                      cluster there, wait until pool $CEPH_POOL is
#                      usable.  Exports CEPH_DIR, CEPH_CONF (pass it as
#                      conf= in rbd: params, or -c to ceph/rbd) and
#                      CEPH_POOL ("rbd").  0, or 1 with the reason on
#                      stderr (the logs are in $CEPH_DIR/log).
#   ceph_stop          stop every daemon it started (SIGTERM, then
#                      SIGKILL after 10 s) and remove CEPH_DIR.  Safe to
#                      call twice; the caller arranges for it at exit.
#   cephc ARGS...      the ceph CLI on this cluster (ceph -c $CEPH_CONF)
#   rbdc ARGS...       the rbd CLI on this cluster
#   ceph_daemon_pids   the pids of the daemons it started, one a line, as
#                      "NAME PID" (mon.a, mgr.x, osd.0)
#
# CEPH_OBJECTSTORE=memstore (default: objects in the OSD's RAM, 1 GiB) or
# bluestore (on a 4 GiB sparse file in CEPH_DIR).
CEPH_POOL=${CEPH_POOL:-rbd}
_ceph_pids=()
_ceph_names=()

cephc() { timeout 60 ceph -c "$CEPH_CONF" "$@"; }
rbdc() { timeout 120 rbd -c "$CEPH_CONF" "$@"; }

# A free TCP port on 127.0.0.1 for the mon (other sessions on this
# machine may run clusters of their own).
_ceph_port() {
	local p i
	for (( i=0; i<50; i++ )); do
		p=$(( 20000 + RANDOM % 20000 ))
		if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then
			echo $p
			return 0
		fi
	done
	return 1
}

_ceph_fail() {
	echo "ceph_start: $*" >&2
	return 1
}

_ceph_daemon() { # NAME CMD...: start a daemon in the foreground, in the background
	local name=$1
	shift
	"$@" -f -c "$CEPH_CONF" >"$CEPH_DIR/log/$name.out" 2>&1 &
	_ceph_pids+=($!)
	_ceph_names+=("$name")
}

ceph_daemon_pids() {
	local i
	for i in "${!_ceph_pids[@]}"; do
		echo "${_ceph_names[$i]} ${_ceph_pids[$i]}"
	done
}

ceph_start() {
	local d=${1:-} port fsid osd_uuid store=${CEPH_OBJECTSTORE:-memstore} t0 i
	for c in ceph-mon ceph-mgr ceph-osd ceph-authtool monmaptool ceph rbd uuidgen ss; do
		command -v $c >/dev/null || _ceph_fail "$c not found (tests/ceph/install-deps)" || return 1
	done
	[ -n "$d" ] || d=$(mktemp -d /tmp/ceph-test.XXXXXX) || return 1
	mkdir -p "$d"/{mon/a,mgr/x,osd/0,run,log,crash,keyring} || return 1
	CEPH_DIR=$d
	CEPH_CONF=$d/ceph.conf
	export CEPH_DIR CEPH_CONF CEPH_POOL
	port=$(_ceph_port) || _ceph_fail "no free port" || return 1
	fsid=$(uuidgen)
	osd_uuid=$(uuidgen)
	t0=$(date +%s%N)
	cat > "$CEPH_CONF" <<EOC
[global]
fsid = $fsid
mon initial members = a
mon host = v2:127.0.0.1:$port
public network = 127.0.0.0/8
ms bind ipv4 = true
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $d/keyring/\$name.keyring
run dir = $d/run
crash dir = $d/crash
log file = $d/log/\$name.log
admin socket = $d/run/\$name.\$pid.asok
mon data = $d/mon/\$id
mgr data = $d/mgr/\$id
osd data = $d/osd/\$id
osd objectstore = $store
memstore device bytes = 1073741824
bluestore block path = $d/osd/\$id.block
bluestore block create = true
bluestore block size = 4294967296
osd memory target = 939524096
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mgr initial modules =
EOC
	# keys: the mon's, the admin's (the tests' client), the OSD's
	_ceph_key mon. --cap mon 'allow *' || return 1
	_ceph_key client.admin --cap mon 'allow *' --cap osd 'allow *' \
		--cap mgr 'allow *' --cap mds 'allow *' || return 1
	_ceph_key mgr.x --cap mon 'allow profile mgr' --cap osd 'allow *' \
		--cap mds 'allow *' || return 1
	_ceph_key osd.0 --cap mon 'allow profile osd' --cap mgr 'allow profile osd' \
		--cap osd 'allow *' || return 1
	for k in client.admin mgr.x osd.0; do
		ceph-authtool "$d/keyring/mon..keyring" \
			--import-keyring "$d/keyring/$k.keyring" >/dev/null || return 1
	done
	monmaptool --create --clobber --fsid "$fsid" --addv a "[v2:127.0.0.1:$port]" \
		"$d/monmap" >/dev/null || return 1
	ceph-mon -c "$CEPH_CONF" --mkfs -i a --monmap "$d/monmap" \
		--keyring "$d/keyring/mon..keyring" >"$d/log/mon-mkfs.out" 2>&1 ||
		_ceph_fail "ceph-mon --mkfs failed: $(tail -n 3 "$d/log/mon-mkfs.out")" || return 1
	_ceph_daemon mon.a ceph-mon -i a
	wait_for 30 cephc -s >/dev/null 2>&1 ||
		_ceph_fail "the mon does not answer on 127.0.0.1:$port" || return 1
	_ceph_daemon mgr.x ceph-mgr -i x
	# the OSD: registered (its id comes back 0), formatted, started
	i=$(cephc osd new "$osd_uuid") && [ "$i" = 0 ] ||
		_ceph_fail "ceph osd new: \"$i\"" || return 1
	ceph-osd -c "$CEPH_CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" \
		>"$d/log/osd-mkfs.out" 2>&1 ||
		_ceph_fail "ceph-osd --mkfs failed: $(tail -n 3 "$d/log/osd-mkfs.out")" || return 1
	_ceph_daemon osd.0 ceph-osd -i 0
	wait_for 60 _ceph_osd_up || _ceph_fail "osd.0 did not come up" || return 1
	cephc osd pool create "$CEPH_POOL" 8 8 >/dev/null 2>&1 ||
		_ceph_fail "cannot create pool $CEPH_POOL" || return 1
	rbdc pool init "$CEPH_POOL" ||
		_ceph_fail "rbd pool init $CEPH_POOL failed" || return 1
	echo "ceph: mon, mgr, osd.0 ($store) and pool $CEPH_POOL ready in" \
		"$(( ($(date +%s%N) - t0) / 1000000 )) ms ($d)"
}

_ceph_key() { # NAME CAPS...: a new keyring $CEPH_DIR/keyring/NAME.keyring
	local n=$1
	shift
	ceph-authtool "$CEPH_DIR/keyring/$n.keyring" --create-keyring --gen-key -n "$n" "$@" \
		>/dev/null
}

_ceph_osd_up() {
	cephc osd dump 2>/dev/null | grep -q '^osd\.0 up'
}

ceph_stop() {
	local p i
	for p in "${_ceph_pids[@]}"; do
		kill -TERM "$p" 2>/dev/null || true
	done
	for p in "${_ceph_pids[@]}"; do
		for (( i=0; i<100; i++ )); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	_ceph_pids=()
	_ceph_names=()
	if [ -n "${CEPH_DIR:-}" ] && [ -d "$CEPH_DIR" ]; then
		rm -rf "$CEPH_DIR"
	fi
	CEPH_DIR=
}
