# SPDX-License-Identifier: GPL-2.0-or-later
# tests/package.mk: make dist has what the README uses; the Debian packages (debian/) and the systemd unit
# (service/): built with dpkg-buildpackage, file lists, lintian,
# systemd-analyze verify; then installed into a fresh debootstrap chroot
# (included by tests/Makefile.am).  "make check-systemd" (never part of
# "make check": minutes, a mirror, root) boots systemd in namespaces and
# runs the installed unit for real: test-package-systemd.sh.trs/.log,
# summed up in check-systemd.log; it installs the .deb files a previous
# make check's test-package-deb left in package-debs/.
TESTS += \
	test-package-deb.sh \
	test-package-chroot.sh \
	test-dist-readme.sh \
	$(NULL)
EXTRA_DIST += \
	test-package-deb.sh \
	test-package-chroot.sh \
	test-dist-readme.sh \
	test-package-systemd.sh \
	package-lib.sh \
	$(NULL)
# test-package-chroot installs the .deb files test-package-deb leaves in
# package-debs/ (through a variable: automake owns the .log rules).
package_chroot_log = test-package-chroot.sh.log
$(package_chroot_log): test-package-deb.sh.log
clean-local: clean-package-debs
clean-package-debs:
	rm -rf package-debs
.PHONY: clean-package-debs

# (the rule automake writes for a test in TESTS, which this one is not)
check-systemd: functions.sh
	@rm -f test-package-systemd.sh.log test-package-systemd.sh.trs
	@$(MAKE) $(AM_MAKEFLAGS) test-package-systemd.sh.log
	@grep -Eq '^:test-result: (PASS|SKIP)$$' test-package-systemd.sh.trs
test-package-systemd.sh.log: test-package-systemd.sh
	@p='test-package-systemd.sh'; \
	b='test-package-systemd.sh'; \
	$(am__check_pre) $(LOG_DRIVER) --test-name "$$f" \
	--log-file $$b.log --trs-file $$b.trs \
	$(am__common_driver_flags) $(AM_LOG_DRIVER_FLAGS) $(LOG_DRIVER_FLAGS) -- $(LOG_COMPILE) \
	"$$tst" $(AM_TESTS_FD_REDIRECT)
clean-local: clean-check-systemd
clean-check-systemd:
	rm -f test-package-systemd.sh.log test-package-systemd.sh.trs
.PHONY: check-systemd clean-check-systemd
