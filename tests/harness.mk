# SPDX-License-Identifier: GPL-2.0-or-later
# tests/harness.mk: harness integration tests (included by tests/Makefile.am).
# blkbench's parsers on recorded outputs, fsmark and fsync-tester, bad
# input and interruption (nothing left mounted/attached), a tiny matrix on
# the host baseline, and the tiny matrix through the real stack (skips
# with 77 while the stack is not functional).
TESTS += \
	test-harness-parsers.sh \
	test-harness-crash.sh \
	test-harness-published.sh \
	test-harness-fsmark.sh \
	test-harness-fsync-tester.sh \
	test-harness-badinput.sh \
	test-harness-interrupt.sh \
	test-harness-raw.sh \
	test-harness-e2e.sh \
	test-harness-e2e-axes.sh \
	test-harness-e2e-xfs.sh \
	test-harness-report-browser.sh \
	test-harness-oom.sh \
	test-harness-manpages.sh \
	test-harness-pyflakes.sh \
	$(NULL)
EXTRA_DIST += \
	test-harness-parsers.sh \
	test-harness-crash.sh \
	test-harness-published.sh \
	test-harness-fsmark.sh \
	test-harness-fsync-tester.sh \
	test-harness-badinput.sh \
	test-harness-interrupt.sh \
	test-harness-raw.sh \
	test-harness-e2e.sh \
	test-harness-e2e-axes.sh \
	test-harness-e2e-xfs.sh \
	test-harness-report-browser.sh \
	install-browser \
	test-harness-oom.sh \
	test-harness-manpages.sh \
	test-harness-pyflakes.sh \
	harness-common.sh \
	harness-data/bonnie-1.93c.csv \
	harness-data/bonnie-2.00a.csv \
	harness-data/fsmark.out \
	harness-data/fsync.out \
	harness-data/time.txt \
	harness-data/xen-nested-campaign.console \
	$(NULL)
