# SPDX-License-Identifier: GPL-2.0-or-later
# tests/xen.mk: real Xen 4.17 nested under QEMU/TCG (included by
# tests/Makefile.am).  "make check-xen" is root-only and never part of
# "make check": one boot runs every phase (tests/xen/README), and each step
# becomes tests/xen/NAME.trs + NAME.log; it skips (77, check-xen.trs SKIP)
# when not root or when tests/xen/install-deps has not been run.
XEN_TEST_FILES = \
	xen/README \
	xen/install-deps \
	xen/check-xen.sh \
	xen/build-initramfs.sh \
	xen/boot.sh \
	xen/dom0-init.sh \
	xen/lw-rounds.sh \
	xen/crash-host.sh \
	xen/domU-init.sh \
	xen/run-in-domu.sh \
	xen/bench-xen.sh \
	xen/bench-xen-report.py \
	xen/bench-xen-lat.py \
	xen/xt-holes.c \
	xen/hostile/C01.script \
	xen/hostile/C02.script \
	xen/hostile/C03.script \
	xen/hostile/C04.script \
	xen/hostile/C05.script \
	xen/hostile/C06.script \
	xen/hostile/C09.script \
	xen/hostile/C13.script \
	$(NULL)
EXTRA_DIST += $(XEN_TEST_FILES)

# part of "make check" (xensim, no Xen): the hotplug script's own checks
TESTS += test-xen-hotplug-knobs.sh test-xen-blkbench-refusal.sh test-xen-host-dom0.sh
EXTRA_DIST += test-xen-hotplug-knobs.sh test-xen-blkbench-refusal.sh test-xen-host-dom0.sh

# blkbackd in the dom0 image: the package, BLKBACKD_DEB=FILE or else the
# blkbackd_*.deb test-package-deb.sh left in package-debs/ (make check);
# with neither, the build tree's binaries (check-xen says which).
BLKBACKD_DEB =
deb_or_default = deb="$(BLKBACKD_DEB)"; test -n "$$deb" || \
	deb=$$(ls $(abs_builddir)/package-debs/blkbackd_*.deb 2>/dev/null | head -n 1)
check-xen:
	cd $(top_builddir) && $(MAKE) $(AM_MAKEFLAGS) all
	$(MKDIR_P) xen
	@rc=0; $(deb_or_default); srcdir=$(abs_srcdir)/xen XDIR=$(abs_builddir)/xen \
	top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) CC="$(CC)" \
	BLKBACKD_DEB="$$deb" \
		$(SHELL) $(srcdir)/xen/check-xen.sh || rc=$$?; \
	test $$rc = 0 || test $$rc = 77

# "make bench-xen [ROUNDS=N] [BX_TABLES="block file"]": root-only, never
# part of any check: one boot, blkbackd vs kernel xen-blkback vs QEMU
# qdisk on the same kind of backing (RAM disks, then files), in rotating
# order for ROUNDS rounds (default 5); the tables of medians are printed
# and written to tests/xen/bench-xen.txt, every number to
# tests/xen/bench-xen.json (tests/xen/README, BENCHMARKS.md).  Fails when
# it cannot run.  BX_TRACE=N adds N pairs of ftrace'd QD1 passes and the
# per-request breakdown (tests/xen/bench-xen-lat.py, xen/bench-xen-lat.txt).
bench-xen:
	cd $(top_builddir) && $(MAKE) $(AM_MAKEFLAGS) all
	$(MKDIR_P) xen
	$(deb_or_default); srcdir=$(abs_srcdir)/xen XDIR=$(abs_builddir)/xen \
	top_srcdir=$(abs_top_srcdir) top_builddir=$(abs_top_builddir) CC="$(CC)" \
	BLKBACKD_DEB="$$deb" ROUNDS="$(ROUNDS)" BX_MIB="$(BX_MIB)" BX_FIO="$(BX_FIO)" BX_RAMP="$(BX_RAMP)" BX_BLKFRONT="$(BX_BLKFRONT)" BX_WL="$(BX_WL)" BX_TABLES="$(BX_TABLES)" BX_STRACE="$(BX_STRACE)" \
	BX_TRACE="$(BX_TRACE)" BX_TRACE_SECS="$(BX_TRACE_SECS)" \
		$(SHELL) $(srcdir)/xen/bench-xen.sh

clean-local: clean-xen
clean-xen:
	rm -rf xen/build xen/*.trs xen/*.log xen/bench.txt xen/blkbench xen/bench-xen.txt xen/bench-xen.json \
		xen/bench-xen-console.txt xen/bench-xen-lat.txt xen/lat

.PHONY: check-xen bench-xen clean-xen
