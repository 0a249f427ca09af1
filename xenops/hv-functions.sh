# SPDX-License-Identifier: GPL-2.0-or-later
# hv-functions.sh: for the xenops tests; source after tests/functions.sh.
#
#   start_hv           a fresh xensim (start_xensim); exports XENSIM_DIR
#   hv_create_domain   prints the new domain's id
#   hv_destroy_cmd ID  prints the command that destroys domain ID (for C
#                      tests that destroy a domain mid-test)

start_hv() {
	requires test -x "$abs_top_builddir/sim/xensim"
	start_xensim
}

hv_create_domain() {
	create_domain "${1:-guest$RANDOM}"
}

hv_destroy_cmd() {
	echo xensim-ctl --dir "$XENSIM_DIR" destroy-domain "$1"
}
