# SPDX-License-Identifier: GPL-2.0-or-later
# tests/backend.mk: backend tests (included by tests/Makefile.am).

# Storage driver unit tests (no Xen, no simulator).
check_PROGRAMS += test-backend-store
test_backend_store_SOURCES = test-backend-store.c
test_backend_store_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend
test_backend_store_LDADD = $(top_builddir)/backend/libbkstore.la
TESTS += test-backend-store

# The checked dispatch, stacks and claims (store.c, store-stack.c), over
# fake drivers and the real ones (no Xen, no simulator).
check_PROGRAMS += test-store-contract store-conformance
store_conformance_SOURCES = store-conformance.c
store_conformance_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend
store_conformance_LDADD = $(top_builddir)/backend/libbkstore.la
store_conformance_LDFLAGS = -export-dynamic
test_store_contract_SOURCES = test-store-contract.c
test_store_contract_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend
test_store_contract_LDADD = $(top_builddir)/backend/libbkstore.la
TESTS += test-store-contract

# The 2008 disk's timing model (deterministic) and its store.
check_PROGRAMS += test-disk2008
test_disk2008_SOURCES = test-disk2008.c
test_disk2008_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend
test_disk2008_LDADD = $(top_builddir)/backend/libbkstore.la
TESTS += test-disk2008

# Integration over xensim (shell; lib-backend.sh: start_backend).
BACKEND_SH_TESTS = \
	test-backend-synopsis.sh \
	test-backend-initwait.sh \
	test-backend-remove-initwait.sh \
	test-backend-config-errors.sh \
	test-backend-handshake.sh \
	test-backend-journal.sh \
	test-backend-bad-ring-keys.sh \
	test-backend-rw.sh \
	test-case-C01.sh \
	test-case-C02.sh \
	test-case-C03.sh \
	test-case-C04.sh \
	test-case-C05.sh \
	test-case-C06.sh \
	test-case-C07.sh \
	test-case-C08.sh \
	test-case-C09.sh \
	test-case-C10.sh \
	test-case-C11.sh \
	test-case-C12.sh \
	test-case-C13.sh \
	test-case-C14.sh \
	test-case-C15.sh \
	test-case-copy.sh \
	test-backend-sigterm.sh \
	test-backend-cycles.sh \
	test-backend-drain.sh \
	test-backend-sigterm-drain.sh \
	test-backend-reconnect-drain.sh \
	test-backend-remove-drain.sh \
	test-backend-fuse-drain.sh \
	test-backend-fe-restart.sh \
	test-backend-stats.sh \
	test-backend-domain-gone.sh \
	test-backend-hotplug.sh \
	test-backend-restart.sh \
	test-backend-abi.sh \
	test-backend-withdraw.sh \
	test-backend-takeover.sh \
	test-backend-crash-soak.sh \
	test-backend-crash-bonnie.sh \
	test-backend-crash-slow.sh \
	test-backend-ioerr-log.sh \
	test-backend-writethrough.sh \
	test-backend-stop-keep.sh \
	test-backend-stop-stalled.sh \
	test-backend-stale-records.sh \
	test-backend-restart-resume.sh \
	test-backend-startup.sh \
	test-backend-resize.sh \
	test-ctl.sh \
	test-ctl-idle.sh \
	test-ctl-stop-race.sh \
	test-ctl-group.sh \
	test-ctl-scriptable.sh \
	test-ctl-no-xenstore.sh \
	test-store-conformance.sh \
	test-backend-store-module.sh \
	test-backend-upgrade.sh \
	test-backend-fe-empty-state.sh \
	test-backend-restart-offline.sh \
	test-backend-restart-detach.sh \
	test-backend-restart-memory.sh \
	test-backend-readd.sh \
	test-backend-dir-chmod.sh \
	test-backend-takeover-no-hotplug.sh \
	test-backend-fe-initwait-state.sh \
	test-backend-takeover-junk-state.sh \
	test-backend-restart-closing.sh \
	test-backend-fe-junk-gone.sh \
	test-backend-first-scan.sh \
	test-backend-foreign-vbd.sh \
	test-backend-kernel-blkback.sh \
	test-backend-io-engine.sh \
	test-case-libaio.sh \
	test-case-uring-wait.sh \
	$(NULL)
TESTS += $(BACKEND_SH_TESTS)
EXTRA_DIST += $(BACKEND_SH_TESTS) lib-backend.sh

# The nbd store against real NBD servers on unix sockets (nbdkit,
# qemu-nbd; lib-nbd.sh).  Each skips without libnbd or the servers.
NBD_SH_TESTS = \
	test-nbd-conformance.sh \
	test-nbd-rw.sh \
	test-nbd-qcow2.sh \
	$(NULL)
TESTS += $(NBD_SH_TESTS)
EXTRA_DIST += $(NBD_SH_TESTS) lib-nbd.sh

# Disk images (params qcow2:PATH...) served by block-blkbackd's
# qemu-storage-daemon, attached libxl's way (lib-image.sh).  Each skips
# without libnbd, qemu-utils or qemu-storage-daemon.
IMAGE_SH_TESTS = \
	test-image-qcow2.sh \
	test-image-errors.sh \
	test-image-early-frontend.sh \
	test-image-restart.sh \
	test-image-formats.sh \
	$(NULL)
TESTS += $(IMAGE_SH_TESTS)
EXTRA_DIST += $(IMAGE_SH_TESTS) lib-image.sh

# The control socket's protocol helpers (backend/ctl-proto.c).
check_PROGRAMS += test-ctl-proto
test_ctl_proto_SOURCES = test-ctl-proto.c $(top_srcdir)/backend/ctl-proto.c
test_ctl_proto_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend
test_ctl_proto_LDADD = -lm
TESTS += test-ctl-proto

# Persistent grants (backend/pgrant.c) over xensim.
check_PROGRAMS += test-pgrant
test_pgrant_SOURCES = test-pgrant.c \
	$(top_srcdir)/backend/pgrant.c \
	$(top_srcdir)/xenops/t-common.c \
	$(NULL)
test_pgrant_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/backend -I$(top_srcdir)/xenops
test_pgrant_LDADD = \
	$(top_builddir)/xenops/libxenops.la \
	$(top_builddir)/common/libcommon.la \
	$(NULL)
TESTS += test-pgrant.sh
EXTRA_DIST += test-pgrant.sh
