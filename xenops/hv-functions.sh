# hv-functions.sh: for the xenops tests; source after tests/functions.sh.
#
#   start_hv           a fresh simulated Xen: the real xensim when it is
#                      built, else t-hvd (the hv module alone).  Exports
#                      XENSIM_DIR.
#   hv_create_domain   prints the new domain's id
#   hv_destroy_domain ID
#   hv_destroy_cmd ID  prints the command that hv_destroy_domain runs
#                      (for C tests that destroy a domain mid-test)

start_hv() {
	if [ -x "$abs_top_builddir/sim/xensim" ] && [ -x "$abs_top_builddir/sim/xensim-ctl" ]; then
		_hv_kind=xensim
		start_xensim
	else
		_hv_kind=t-hvd
		XENSIM_DIR=$(mktemp -d /tmp/xenops.XXXXXX)
		export XENSIM_DIR
		cleanup_fn rm -rf "$XENSIM_DIR"
		start_daemon -P "$XENSIM_DIR/hvd.pid" "$abs_top_builddir/xenops/t-hvd" "$XENSIM_DIR" "$XENSIM_DIR/hvd.pid"
		cleanup_fn kill_daemon "$XENSIM_DIR/hvd.pid"
	fi
}

# The command (words) that destroys domain ID.
hv_destroy_cmd() {
	if [ "$_hv_kind" = xensim ]; then
		echo xensim-ctl --dir "$XENSIM_DIR" destroy-domain "$1"
	else
		echo "$abs_top_builddir/xenops/t-hvd" --ctl "$XENSIM_DIR" destroy "$1"
	fi
}

hv_create_domain() {
	if [ "$_hv_kind" = xensim ]; then
		create_domain "${1:-guest$RANDOM}"
	else
		local id
		id=$(( $(cat "$XENSIM_DIR/hvd.next" 2>/dev/null || echo 0) + 1 ))
		echo "$id" > "$XENSIM_DIR/hvd.next"
		"$abs_top_builddir/xenops/t-hvd" --ctl "$XENSIM_DIR" create "$id" >&2 || return 1
		echo "$id"
	fi
}

hv_destroy_domain() {
	$(hv_destroy_cmd "$1")
}
