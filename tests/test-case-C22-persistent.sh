#!/usr/bin/env bash
# C22 with persistent grants (expected to fail, XFAIL_TESTS): blkbackd
# maps persistent data pages writable, so a WRITE from a read-only grant
# is refused (ERROR) instead of falling back to a grant copy.
C22_MODES=--feature-persistent=1 exec "$(dirname "$0")/test-case-C22.sh"
