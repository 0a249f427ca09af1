# tests/package.mk: the Debian packages (debian/) and the systemd unit
# (service/): built with dpkg-buildpackage, file lists, lintian,
# systemd-analyze verify (included by tests/Makefile.am).
TESTS += \
	test-package-deb.sh \
	$(NULL)
EXTRA_DIST += \
	test-package-deb.sh \
	$(NULL)
