# SPDX-License-Identifier: GPL-2.0-or-later
# tests/crash.mk: crash integration tests (included by tests/Makefile.am).
#
# test-crash-store     the record/volatile store wrappers, through the
#                      checked dispatch over an in-test RAM store driver
# test-crash-replay.sh blkcrash replay of hand-built logs -> exact images
# test-crash-check.sh  blkcrash check: honest logs pass, a flush
#                      acknowledged before its fdatasync is caught
# test-crash-fsck.sh   blkcrash fsck on an ext4 image built by hand
# test-crash-cut.sh   case C12: blkbackd --cache=volatile power-cut by
#                      blkcrash cut; nothing acknowledged-and-flushed lost
# test-crash-campaign.sh  blkcrash run --quick end to end (ext4, >= 50
#                      crash points): 0 violations with honest flushes,
#                      >= 1 with blkbackd --unsafe-ignore-flush
# test-crash-run-args.sh  blkcrash run refuses bad --size/--seed/--points
#                      up front (exit 2, a message naming the option)
check_PROGRAMS += test-crash-store mkcrashlog
TESTS += \
	test-crash-store \
	test-crash-replay.sh \
	test-crash-check.sh \
	test-crash-fsck.sh \
	test-crash-campaign.sh \
	test-crash-synopsis.sh \
	test-crash-cut.sh \
	test-crash-run-args.sh \
	$(NULL)
EXTRA_DIST += \
	test-crash-replay.sh \
	test-crash-check.sh \
	test-crash-fsck.sh \
	test-crash-campaign.sh \
	test-crash-synopsis.sh \
	test-crash-cut.sh \
	test-crash-run-args.sh \
	$(NULL)

# The wrappers come with the dispatch they call the store below through
# (backend/libbkstore.la, the storage drivers of blkbackd).
test_crash_store_SOURCES = test-crash-store.c
test_crash_store_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend \
	-I$(top_srcdir)/harness/crash
test_crash_store_LDADD = \
	$(top_builddir)/backend/libbkstore.la \
	$(top_builddir)/harness/crash/libblkcrash.la \
	$(top_builddir)/common/libcommon.la \
	$(NULL)

# mkcrashlog: writes crash logs from a text script (hand-built logs for
# the replay/check tests, torn tails included).
mkcrashlog_SOURCES = mkcrashlog.c
mkcrashlog_CPPFLAGS = $(AM_CPPFLAGS)

# dm-log-writes logs (harness/crash/dmlog.c), built by tests/mkdmlog.py
# since no device-mapper is needed to test the reader:
# test-crash-dmlog.sh  dump/replay/check/fsck of generated logs, a torn
#                      tail and hostile headers; a flush logged before an
#                      acknowledged write's data is a violation; the
#                      committed fuzz seeds through fuzz-dmlog-replay
TESTS += test-crash-dmlog.sh
EXTRA_DIST += test-crash-dmlog.sh mkdmlog.py
check_PROGRAMS += fuzz-dmlog-replay
fuzz_dmlog_replay_SOURCES = fuzz-dmlog-replay.c
fuzz_dmlog_replay_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/harness/crash
fuzz_dmlog_replay_LDADD = \
	$(top_builddir)/harness/crash/libblkcrash.la \
	$(top_builddir)/common/libcommon.la \
	$(NULL)
