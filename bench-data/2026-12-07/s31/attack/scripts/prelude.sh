# sourced by attack scripts, from /work/attack31/tests
. ./functions.sh
. "$abs_top_srcdir/tests/lib-backend.sh"
rm -rf "$BK_TMP"
NAME=$(basename "$0" .sh)${TAG:+-$TAG}
BK_TMP=$(mktemp -d /tmp/attack31-$NAME.XXXXXX)
export BLKBACKD_DISKS=$BK_TMP/no-disks-file
BACKEND_PIDFILE=$BK_TMP/blkbackd.pid
BACKEND_LOG=$BK_TMP/blkbackd.log
BACKEND_TRACE=$BK_TMP/trace
: > "$BK_TMP/bk-pids"
OUT=/tmp/attack31-out/$NAME; rm -rf "$OUT"; mkdir -p "$OUT"
_save() { cp -r "$BK_TMP"/blkbackd.log "$BK_TMP"/*.out "$BK_TMP"/list* "$OUT"/ 2>/dev/null; cp "$XENSIM_DIR/xs-changes" "$OUT"/ 2>/dev/null; grep -v ' op=\(read\|write\)\| issue=\| host=p' "$BACKEND_TRACE" > "$OUT"/trace.short 2>/dev/null; true; }
cleanup_fn rm -rf "$BK_TMP"
cleanup_fn _save
start_xensim() {
	XENSIM_DIR=$(mktemp -d /tmp/attack31-xensim.XXXXXX)
	export XENSIM_DIR
	export XENSTORED_PATH="$XENSIM_DIR/xenstore.sock"
	cleanup_fn rm -rf "$XENSIM_DIR"
	export XS_CHANGES="$XENSIM_DIR/xs-changes"
	start_daemon -P "$XENSIM_DIR/xensim.pid" xensim --dir "$XENSIM_DIR" --pidfile "$XENSIM_DIR/xensim.pid" \
		--xs-changes "$XS_CHANGES"
	cleanup_fn kill_daemon "$XENSIM_DIR/xensim.pid"
}
note() { echo "== $*" >> "$OUT/notes"; echo "== $*"; }
lst() { blkbackd-ctl list 2>&1 | tee -a "$OUT/notes"; }
