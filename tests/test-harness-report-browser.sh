#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench's report as a person sees it: index.html of a small run opened
# in headless Chromium.  A copy of the page (beside it, so the same
# relative links) gets a script that, once the page has loaded, writes
# into the document what the browser made of it: every <img> (each plot)
# decoded with a size, the summary table and the ratios present, nothing
# wider than a 1000-pixel window; the DOM
# Chromium dumps then says so.  A screenshot is kept in the log directory
# (test-harness-report-browser.png).  Skips when chromium is not installed
# (tests/install-browser installs it).
. ./functions.sh
. "$top_srcdir/tests/harness-common.sh"
requires_root
requires python3 --version
requires command -v gnuplot
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	echo "$0: skipped: chromium is not installed (run tests/install-browser as root)"
	exit 77
fi
tmp=$(mktemp -d /tmp/harness-browser.XXXXXX)
cleanup_fn rm -rf "$tmp"
cleanup_fn force_clean "$tmp"
res=$tmp/res

# raw rows and fs_mark: quick, and every cell timed, so every metric has a plot
blkbench run --out "$res" --workdir "$tmp" --runs 2 --where raw --wce 1 --barrier 1,0 \
	--fs ext4 --workload fsmark --fsmark-files 200 --fsmark-size 4096 --loops 1 \
	--mem 32 --disk 300 --timeout 120 > "$tmp/out" 2> "$tmp/err" ||
	{ cat "$tmp/err"; fail "blkbench run failed"; }
assert_clean "$tmp"
[ -f "$res/index.html" ] || fail "no index.html"
nplots=$(grep -o "<img " "$res/index.html" | wc -l)
[ "$nplots" -ge 2 ] || fail "index.html has $nplots plots, want one per fs_mark metric (2)"

# the probe: runs at load, after every image has loaded or failed
sed 's|</body></html>|<script>\
window.addEventListener("load", function () {\
  var imgs = document.images, bad = [], ok = 0;\
  for (var i = 0; i < imgs.length; i++) {\
    if (imgs[i].complete \&\& imgs[i].naturalWidth > 0 \&\& imgs[i].naturalHeight > 0) ok++;\
    else bad.push(imgs[i].getAttribute("src"));\
  }\
  var pre = document.querySelector("pre"), t = pre ? pre.textContent : "";\
  var p = document.createElement("p");\
  p.id = "browser-check";\
  p.textContent = "images=" + imgs.length + " loaded=" + ok + " broken=" + bad.join(",") +\
    " table=" + (t.indexOf("files_per_sec") >= 0 \&\& t.indexOf("raw-wce1-barrier1") >= 0) +\
    " ratios=" + (t.indexOf("barrier1/barrier0") >= 0) +\
    " wide=" + (document.documentElement.scrollWidth > window.innerWidth);\
  document.body.appendChild(p);\
});\
</script></body></html>|' "$res/index.html" > "$res/browser-check.html"

chrome() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage \
		--user-data-dir="$tmp/profile-$1" --virtual-time-budget=10000 "${@:2}" 2>>"$tmp/chromium.log"
}
chrome dom --window-size=1000,1400 --dump-dom "file://$res/browser-check.html" > "$tmp/dom.html" ||
	{ tail -n 20 "$tmp/chromium.log"; fail "chromium --dump-dom failed"; }
check=$(grep -o '<p id="browser-check">[^<]*' "$tmp/dom.html" | sed 's/.*>//')
echo "chromium: $check"
[ -n "$check" ] || { tail -n 20 "$tmp/chromium.log"; fail "the page's check did not run in chromium"; }
[ "$check" = "images=$nplots loaded=$nplots broken= table=true ratios=true wide=false" ] ||
	fail "index.html in chromium: $check"
# a picture of it, for a person to look at
chrome shot --window-size=1000,1400 --screenshot="$tmp/page.png" "file://$res/index.html" >/dev/null ||
	{ tail -n 20 "$tmp/chromium.log"; fail "chromium --screenshot failed"; }
[ -s "$tmp/page.png" ] || fail "no screenshot"
cp "$tmp/page.png" "$(pwd)/test-harness-report-browser.png"
echo ok
