# tests/front.mk: front integration tests (included by tests/Makefile.am).
# blkfront-test (frontend-test/) against xensim + blkbackd.

TESTS += \
	test-front-synopsis.sh \
	$(NULL)
EXTRA_DIST += \
	test-front-synopsis.sh \
	$(NULL)
