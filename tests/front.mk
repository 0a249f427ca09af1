# tests/front.mk: front integration tests (included by tests/Makefile.am).
# blkfront-test (frontend-test/) against xensim + blkbackd.

TESTS += \
	test-front-synopsis.sh \
	$(NULL)
EXTRA_DIST += \
	test-front-synopsis.sh \
	$(NULL)

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
