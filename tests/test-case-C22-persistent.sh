#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# C22 with persistent grants: blkbackd maps persistent data pages
# writable, so a WRITE from a read-only grant cannot be mapped; it is
# grant-copied instead and is OKAY, byte for byte, as without them.
C22_MODES=--feature-persistent=1 exec "$(dirname "$0")/test-case-C22.sh"
