#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Runs one unit test of ring/ or sim/, a test program under valgrind when
# BLK_VALGRIND is set ("make check-valgrind"); valgrind errors and leaks
# fail the test.  Shell tests (*.sh) run as they are: they put the
# programs they start under valgrind themselves (tests/functions.sh).
case $1 in
*.sh) exec "$@" ;;
esac
if [ -n "${BLK_VALGRIND:-}" ]; then
	if [ -z "${VALGRIND:-}" ] || [ "$VALGRIND" = no ]; then
		echo "$1: BLK_VALGRIND set but valgrind not found"
		exit 1
	fi
	exec "$VALGRIND" --quiet --error-exitcode=119 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect "$@"
fi
exec "$@"
