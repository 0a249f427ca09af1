# tests/front.mk: front integration tests (included by tests/Makefile.am).
