# tests/crash.mk: crash integration tests (included by tests/Makefile.am).
