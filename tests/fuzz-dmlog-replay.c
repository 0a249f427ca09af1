/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-dmlog-replay: the dm-log-writes fuzz target (harness/crash/
 * fuzz-dmlog.c) built by the normal compiler with a main() that feeds it
 * the files named on the command line; test-crash-dmlog.sh replays the
 * committed seeds (harness/crash/fuzz-corpus/) and its own logs with it.
 */
#define DML_REPLAY_MAIN 1
#include "fuzz-dmlog.c"
