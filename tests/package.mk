# SPDX-License-Identifier: GPL-2.0-or-later
# tests/package.mk: make dist has what the README uses; the Debian packages (debian/) and the systemd unit
# (service/): built with dpkg-buildpackage, file lists, lintian,
# systemd-analyze verify; then installed into a fresh debootstrap chroot
# (included by tests/Makefile.am).
TESTS += \
	test-package-deb.sh \
	test-package-chroot.sh \
	test-dist-readme.sh \
	$(NULL)
EXTRA_DIST += \
	test-package-deb.sh \
	test-package-chroot.sh \
	test-dist-readme.sh \
	$(NULL)
# test-package-chroot installs the .deb files test-package-deb leaves in
# package-debs/ (through a variable: automake owns the .log rules).
package_chroot_log = test-package-chroot.sh.log
$(package_chroot_log): test-package-deb.sh.log
clean-local: clean-package-debs
clean-package-debs:
	rm -rf package-debs
.PHONY: clean-package-debs
