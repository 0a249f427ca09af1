# tests/xen.mk: xen integration tests (included by tests/Makefile.am).
# Placeholder until tests/xen/ exists: make check-xen skips.
check-xen:
	@echo "check-xen: skipped: tests/xen not built yet"
.PHONY: check-xen
