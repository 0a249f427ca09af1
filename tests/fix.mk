# SPDX-License-Identifier: GPL-2.0-or-later
# tests/fix.mk: regression tests for defects found by testing
# (included by tests/Makefile.am).  One test-fix-*.sh per defect.

FIX_TESTS = \
	test-fix-second-daemon.sh \
	test-fix-export-eio.sh \
	test-fix-probe-backing.sh \
	test-fix-xenstore-gone.sh \
	test-fix-stale-fe-keys.sh \
	test-fix-state-flood.sh \
	test-fix-trace-opnum.sh \
	test-fix-front-messages.sh \
	test-fix-bad-names.sh \
	test-fix-online-zero.sh \
	test-fix-records-failed-connect.sh \
	test-fix-failed-reconnect.sh \
	test-fix-failed-nbd-restart.sh \
	test-fix-upgrade-not-blkbackd.sh \
	test-fix-state-dir-full.sh \
	test-fix-ro-blockdev.sh \
	test-fix-backing-swapped.sh \
	test-fix-nbd-flush-idle.sh \
	test-fix-nbd-shared-queues.sh \
	test-fix-nbd-server-shutdown.sh \
	test-fix-watch-quota.sh \
	test-fix-fuse-size-check.sh \
	test-fix-mute-nbd-open.sh \
	test-fix-list-escapes.sh \
	test-fix-fuse-open.sh \
	test-fix-takeover-knobs.sh \
	test-fix-reconnect-while-down.sh \
	test-fix-takeover-limits.sh \
	test-fix-state-node-removed.sh \
	test-fix-fuse-close.sh \
	test-fix-removed-draining-stop.sh \
	test-fix-guest-log-lines.sh \
	test-fix-memory-reconnect.sh \
	test-fix-connect-log-flood.sh \
	test-fix-upgrade-stuck-probe.sh \
	test-fix-volatile-reconnect.sh \
	test-fix-close-holds-claim.sh \
	$(NULL)
TESTS += $(FIX_TESTS)
EXTRA_DIST += $(FIX_TESTS)

# One file through FUSE, to stop like a dead NFS server
# (test-fix-fuse-size-check.sh).
check_PROGRAMS += fuse-file
fuse_file_SOURCES = fuse-file.c
fuse_file_CFLAGS = $(AM_CFLAGS) $(FUSE3_CFLAGS)
fuse_file_LDADD = $(FUSE3_LIBS)
