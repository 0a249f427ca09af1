#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# "make dist" carries everything the README runs or points to: every path
# of the source tree named in the README (scripts like .ci/install-deps
# and tests/xen/install-deps, pages, tests, the packaging) is in the
# distribution directory that make dist archives.
. ./functions.sh
# distdir must be relative to the build tree's top (automake's rule)
tmp=$(cd "$top_builddir" && mktemp -d test-dist.XXXXXX)
cleanup_fn rm -rf "$top_builddir/$tmp"
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$top_builddir" distdir distdir="$tmp/d" \
	>"$top_builddir/$tmp/log" 2>&1 || { tail -n 20 "$top_builddir/$tmp/log"; fail "make distdir"; }
tmp=$top_builddir/$tmp
missing=0 n=0
for f in $(grep -oE '(\.ci|tests|harness|frontend-test|backend|sim|service|debian)/[A-Za-z0-9_./-]*[A-Za-z0-9_]' \
	"$top_srcdir/README" | sort -u); do
	# only what the source tree has (not built programs, not xenstore
	# paths); built in the source tree (README's ./configure && make), a
	# program is there too, and is an ELF file no source is
	[ -e "$top_srcdir/$f" ] || continue
	case /$f/ in */.libs/*|*/.deps/*) continue ;; esac	# libtool's, automake's build output
	[ -e "$top_srcdir/$f.in" ] && continue
	[ "$(head -c 4 "$top_srcdir/$f" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ] && continue
	n=$((n + 1))
	[ -e "$tmp/d/$f" ] || { echo "README names $f, which make dist leaves out"; missing=1; }
done
for f in README DESIGN-NOTES.md BENCHMARKS.md .ci/install-deps debian/rules; do
	[ -e "$tmp/d/$f" ] || { echo "make dist leaves out $f"; missing=1; }
done
[ "$n" -ge 5 ] || fail "found only $n source paths in README: is the pattern right?"
[ "$missing" = 0 ] || fail "files missing from the distribution (above)"
echo "ok: $n paths named by README are in the distribution"
