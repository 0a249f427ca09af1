# SPDX-License-Identifier: GPL-2.0-or-later
# tests/ceph.mk: the rbd store against a real Ceph cluster (included by
# tests/Makefile.am).  "make check-ceph" is never part of "make check":
# tests/ceph/check-ceph.sh starts one throw-away cluster (a mon, a mgr
# and an OSD on 127.0.0.1, tests/ceph/cluster.sh), runs every rbd test
# on it and tears it down; each test becomes tests/ceph/NAME.trs +
# NAME.log.  It skips (77, check-ceph.trs SKIP) when blkbackd was built
# without librbd or tests/ceph/install-deps has not been run.
# A subset: make check-ceph CEPH_TESTS="test-rbd-resize C01"
CEPH_TEST_FILES = \
	ceph/cluster.sh \
	ceph/check-ceph.sh \
	ceph/install-deps \
	ceph/test-rbd-rw.sh \
	ceph/test-rbd-cache.sh \
	ceph/test-rbd-resize.sh \
	ceph/test-rbd-move.sh \
	ceph/test-rbd-fence.sh \
	ceph/lib-hosts.sh \
	ceph/test-rbd-bonnie.sh \
	ceph/test-rbd-blkbench.sh \
	ceph/test-rbd-hotplug.sh \
	ceph/test-rbd-outage.sh \
	ceph/test-rbd-errors.sh \
	ceph/test-rbd-durability.sh \
	ceph/test-rbd-conformance.sh \
	ceph/test-rbd-zerocopy.sh \
	$(NULL)
EXTRA_DIST += $(CEPH_TEST_FILES)

check-ceph:
	cd $(top_builddir) && $(MAKE) $(AM_MAKEFLAGS) all
	cd $(builddir) && $(MAKE) $(AM_MAKEFLAGS) $(check_PROGRAMS) functions.sh
	$(MKDIR_P) ceph
	@rc=0; srcdir=$(abs_srcdir)/ceph CDIR=$(abs_builddir)/ceph \
	top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) \
	TESTS="$(CEPH_TESTS)" \
		$(SHELL) $(srcdir)/ceph/check-ceph.sh || rc=$$?; \
	test $$rc = 0 || test $$rc = 77

clean-local: clean-ceph
clean-ceph:
	rm -f ceph/*.trs ceph/*.log

.PHONY: check-ceph clean-ceph
