/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.h: logging for every program of the project.
 *
 * Three functions and a debug macro, as nbdkit's debug() and ublksrv's
 * UBLK_DBG_* are used:
 *   log_error("fdatasync %s: %m", path);   always printed
 *   log_warning("%u guests left stalled", n);  always printed: nothing
 *                                          failed, but an admin must act
 *   log_info("vbd %u/%u connected", ...);  printed unless quiet
 *   bk_dbg(BK_DBG_RING, "%s: req_prod=%u", __func__, prod);
 *
 * bk_dbg() costs one predictable branch when its category is off and
 * nothing at all when configured with --disable-debug.  No logging on the
 * per-request path unless debug is on.
 *
 * Output goes to stderr (with the program name and, for errors, "error:"),
 * after log_open_syslog() to syslog, or after log_open_file() to a file
 * (which wins over syslog).  With log_set_timestamps(), each line on
 * stderr or in the file starts with the local time, ISO-8601 with
 * microseconds ("2026-01-31T12:00:00.123456+01:00 blkbackd: ...").
 * When stderr is systemd's journal stream (log_init() compares
 * $JOURNAL_STREAM with fd 2), stderr lines instead start with the syslog
 * priority the journal files them under, and carry neither the time nor
 * the name (the journal records both): "<3>error: ...", "<4>warning:
 * ...", "<6>..." (info), "<7>debug: ...".  An error that also went to syslog is then not
 * copied to stderr.  The log file keeps its format.
 * Thread-safe: each message is written with a single write(2).  %m works
 * (errno is preserved across the call).  The settings are process-wide
 * and set once at start-up, before any thread is created; only
 * log_reopen() and log_set_errors_to_stderr() may be called later, from
 * one thread.  A failed write to the log file is reported once (to
 * syslog, or stderr) until a write succeeds again.
 */
#ifndef BLK_LOG_H
#define BLK_LOG_H

#include <stdbool.h>
#include "compiler.h"

/* Debug categories for bk_dbg(); selected by -D / --debug-mask. */
enum {
	BK_DBG_RING	= 1u << 0,	/* ring indexes, request copy/validate */
	BK_DBG_XENBUS	= 1u << 1,	/* xenstore state machine */
	BK_DBG_IO	= 1u << 2,	/* iocb submit/complete */
	BK_DBG_GRANT	= 1u << 3,	/* grant map/unmap/copy */
	BK_DBG_EVTCHN	= 1u << 4,	/* event channel notify/pending */
	BK_DBG_SIM	= 1u << 5,	/* simulator internals */
	BK_DBG_FRONT	= 1u << 6,	/* frontend-test */
	BK_DBG_ALL	= ~0u,
};

/* Process-wide settings; set from main() before threads start. */
extern unsigned int log_debug_mask;
extern bool log_verbose;

/* Name the lines after progname's last component; see whether stderr is
 * the journal (call it with stderr where it will stay). */
void log_init(const char *progname);
void log_open_syslog(void);
/* Prefix stderr and file lines with the local time (see above). */
void log_set_timestamps(bool on);
/*
 * Log to path from now on (opened O_APPEND|O_CREAT, mode 0640; the path
 * is kept for log_reopen(), so give an absolute one if the process
 * changes directory).  0, or -errno with nothing changed.
 */
int log_open_file(const char *path);
/*
 * Open the log file's path again, for logrotate (SIGHUP): lines written
 * meanwhile go to the old file or the new one, never nowhere.  0 (also
 * without a log file), or -errno with the old file kept (and logged).
 */
int log_reopen(void);
/* While on, log_error() and log_warning() lines also go to stderr when the log goes to
 * syslog or a file (a daemon's start-up, before it detaches). */
void log_set_errors_to_stderr(bool on);
/* Parse "ring,io,grant" / "all" / a number into a mask: 0 or -EINVAL. */
int log_parse_debug_mask(const char *s, unsigned int *mask);

void log_error(const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(1, 2);
void log_warning(const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(1, 2);
void log_info(const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(1, 2);
void log_debug_(const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(1, 2);

#ifdef ENABLE_DEBUG
#define bk_dbg(cat, fmt, ...)						\
	do {								\
		if (unlikely(log_debug_mask & (cat)))			\
			log_debug_(fmt, ##__VA_ARGS__);			\
	} while (0)
#else
#define bk_dbg(cat, fmt, ...)						\
	do {								\
		if (0)							\
			log_debug_(fmt, ##__VA_ARGS__);			\
	} while (0)
#endif

#endif /* BLK_LOG_H */
