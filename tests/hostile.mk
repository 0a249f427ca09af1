# SPDX-License-Identifier: GPL-2.0-or-later
# tests/hostile.mk: hostile guests, round 2 (cases C16-C31), the vbd
# state machine cell by cell, and many vbds at once (included by
# tests/Makefile.am).  The cases C01-C15 are in backend.mk.

HOSTILE_SH_TESTS = \
	test-case-C16.sh \
	test-case-C17.sh \
	test-case-C18.sh \
	test-case-C19.sh \
	test-case-C20.sh \
	test-case-C21.sh \
	test-case-C22.sh \
	test-case-C22-persistent.sh \
	test-case-C23.sh \
	test-case-C24.sh \
	test-case-C25.sh \
	test-case-C26.sh \
	test-case-C27.sh \
	test-case-C28.sh \
	test-case-C29.sh \
	test-case-C30.sh \
	test-case-C31.sh \
	test-backend-state-cells.sh \
	test-backend-scale.sh \
	$(NULL)
TESTS += $(HOSTILE_SH_TESTS)
EXTRA_DIST += $(HOSTILE_SH_TESTS)

# A guest that writes xenstore keys as fast as it can (C18, C24).
check_PROGRAMS += xs-flood
xs_flood_SOURCES = xs-flood.c
xs_flood_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
xs_flood_LDADD = $(XENSTORE_LIBS)

# The control plane under random interleavings of toolstack, frontend
# and daemon steps (fuzz-control.c; DESIGN-NOTES.md "Stateful
# control-plane fuzzing").  FUZZ_CONTROL_SECONDS (default 120, 30 under
# valgrind) and FUZZ_CONTROL_SEED pick the run.
check_PROGRAMS += fuzz-control
fuzz_control_SOURCES = fuzz-control.c
fuzz_control_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
fuzz_control_LDADD = \
	$(top_builddir)/ring/libblkring.la \
	$(top_builddir)/xenops/libxenops.la \
	$(top_builddir)/common/libxbus.la \
	$(top_builddir)/common/libcommon.la \
	$(XENSTORE_LIBS) \
	$(NULL)
TESTS += test-fuzz-control.sh
EXTRA_DIST += test-fuzz-control.sh
