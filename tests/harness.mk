# tests/harness.mk: harness integration tests (included by tests/Makefile.am).
