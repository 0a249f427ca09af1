# SPDX-License-Identifier: GPL-2.0-or-later
# tests/front.mk: front integration tests (included by tests/Makefile.am).
# blkfront-test (frontend-test/) against xensim + blkbackd.

FRONT_TESTS = \
	test-front-synopsis.sh \
	test-front-handshake.sh \
	test-front-badbackend.sh \
	test-front-verify.sh \
	test-front-verify-lost.sh \
	test-front-fuse.sh \
	test-front-bonnie.sh \
	test-front-death.sh \
	test-front-removed.sh \
	test-front-direct.sh \
	test-front-io.sh \
	test-front-eopnotsupp.sh \
	test-front-discard.sh \
	test-readme.sh \
	test-front-ringfull.sh \
	test-front-cli-args.sh \
	$(NULL)
TESTS += $(FRONT_TESTS)
EXTRA_DIST += front-lib.sh $(FRONT_TESTS)

# The backend test double: serves one vbd from RAM, misbehaves on demand.
check_PROGRAMS += front-bad-backend
front_bad_backend_SOURCES = front-bad-backend.c
front_bad_backend_CFLAGS = $(AM_CFLAGS) $(XENSTORE_CFLAGS)
front_bad_backend_LDADD = \
	$(top_builddir)/ring/libblkring.la \
	$(top_builddir)/xenops/libxenops.la \
	$(top_builddir)/common/libcommon.la \
	$(XENSTORE_LIBS) \
	$(NULL)
