# SPDX-License-Identifier: GPL-2.0-or-later
# Included by every Makefile.am (nbdkit pattern).
NULL =
AM_CPPFLAGS = -I$(top_srcdir)/include -I$(top_builddir)
AM_CFLAGS = $(WARNINGS_CFLAGS) -pthread
CLEANFILES =
EXTRA_DIST =
