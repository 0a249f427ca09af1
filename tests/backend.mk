# tests/backend.mk: backend integration tests (included by tests/Makefile.am).
