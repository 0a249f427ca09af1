#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# blkbench's Python is clean under pyflakes (unused imports, undefined
# names, redefinitions); .ci/install-deps installs pyflakes3.
. ./functions.sh
requires pyflakes3 --version
pyflakes3 "$top_srcdir"/harness/blkbenchlib/*.py "$top_builddir/harness/blkbench" ||
	fail "pyflakes3 found problems (above)"
echo ok
