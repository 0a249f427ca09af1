/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * log.c: see include/log.h.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

unsigned int log_debug_mask;
bool log_verbose;

static const char *log_progname = "blk";
static bool log_to_syslog;
static bool log_timestamps;
static bool log_errors_to_stderr;
static bool log_stderr_journal;		/* stderr is systemd's journal stream */
static int log_fd = -1;			/* the log file, or -1 */
static char *log_path;
static int log_write_failed;		/* reported; cleared by a good write */

/*
 * Is stderr the journal?  systemd puts "DEV:INODE" of the stream it
 * connects to stdout/stderr in $JOURNAL_STREAM; it is the journal only if
 * fd 2 is still that very stream (not redirected by a shell or a test),
 * the check sd_journal_stream_fd(3) and systemd.exec(5) document.
 */
static bool
log_detect_journal(void)
{
	const char *e = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char c;

	if (!e || sscanf(e, "%llu:%llu%c", &dev, &ino, &c) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st) < 0)
		return false;
	return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void
log_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');

	log_progname = slash ? slash + 1 : progname;
	log_stderr_journal = log_detect_journal();
}

/*
 * The syslog priority as the journal reads it at the start of a stream
 * line (sd-daemon.h's SD_ERR "<3>", SD_INFO "<6>", SD_DEBUG "<7>").
 */
static int
log_journal_prefix(char *buf, size_t len, int prio)
{
	return snprintf(buf, len, "<%d>", prio & LOG_PRIMASK);
}

void
log_open_syslog(void)
{
	openlog(log_progname, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_to_syslog = true;
}

void
log_set_timestamps(bool on)
{
	log_timestamps = on;
}

void
log_set_errors_to_stderr(bool on)
{
	log_errors_to_stderr = on;
}

static int
log_open_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0640);

	return fd < 0 ? -errno : fd;
}

int
log_open_file(const char *path)
{
	char *p = strdup(path);
	int fd;

	if (!p)
		return -ENOMEM;
	fd = log_open_path(path);
	if (fd < 0) {
		free(p);
		return fd;
	}
	if (log_fd >= 0)
		close(log_fd);
	free(log_path);
	log_fd = fd;
	log_path = p;
	return 0;
}

int
log_reopen(void)
{
	int fd;

	if (log_fd < 0)
		return 0;
	fd = log_open_path(log_path);
	if (fd < 0) {
		errno = -fd;
		log_error("cannot reopen the log file %s: %m; still writing to the old one",
			  log_path);
		return fd;
	}
	/* atomic: a thread logging meanwhile writes to one file or the other */
	if (dup3(fd, log_fd, O_CLOEXEC) < 0) {
		int e = errno;

		close(fd);
		log_error("cannot reopen the log file %s: dup3: %m", log_path);
		return -e;
	}
	close(fd);
	return 0;
}

static const struct {
	const char *name;
	unsigned int bit;
} debug_names[] = {
	{ "ring", BK_DBG_RING }, { "xenbus", BK_DBG_XENBUS },
	{ "io", BK_DBG_IO }, { "grant", BK_DBG_GRANT },
	{ "evtchn", BK_DBG_EVTCHN }, { "sim", BK_DBG_SIM },
	{ "front", BK_DBG_FRONT }, { "all", BK_DBG_ALL },
};

int
log_parse_debug_mask(const char *s, unsigned int *mask)
{
	char buf[256], *tok, *save = NULL;
	unsigned int m = 0;
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (*s && *end == '\0' && errno == 0 && v <= ~0u) {
		*mask = v;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(debug_names); i++)
			if (strcasecmp(tok, debug_names[i].name) == 0)
				break;
		if (i == ARRAY_SIZE(debug_names))
			return -EINVAL;
		m |= debug_names[i].bit;
	}
	*mask = m;
	return 0;
}

/* "2026-01-31T12:00:00.123456+01:00 " into buf (at least 40 bytes). */
static void
log_stamp(char *buf, size_t len)
{
	struct timespec ts;
	struct tm tm;
	char zone[8];
	size_t n;

	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	if (strftime(zone, sizeof(zone), "%z", &tm) != 5)
		snprintf(zone, sizeof(zone), "+0000");
	/* +0100 -> +01:00 (ISO-8601 extended, as the date and time) */
	snprintf(buf + n, len - n, ".%06ld%.3s:%.2s ", ts.tv_nsec / 1000, zone, zone + 3);
}

/* A write to the log file failed: say so once, where it can be seen. */
static void
log_write_error(int err)
{
	char msg[600], line[700];
	int n;

	if (__atomic_exchange_n(&log_write_failed, 1, __ATOMIC_RELAXED))
		return;
	snprintf(msg, sizeof(msg), "cannot write the log file %s: %s (lines are lost "
		 "until a write succeeds again)", log_path ? log_path : "?", strerror(err));
	if (log_to_syslog) {
		syslog(LOG_ERR, "%s", msg);
		return;
	}
	if (log_stderr_journal)
		n = snprintf(line, sizeof(line), "<%d>error: %s\n", LOG_ERR, msg);
	else
		n = snprintf(line, sizeof(line), "%s: error: %s\n", log_progname, msg);
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
		/* nowhere left to report it */
	}
}

/*
 * One line into line[sizeof line], newline-terminated (truncated if need
 * be): its length, or -1.  For the journal: "<PRIO>TAGMSG", no time (the
 * journal has its own) and no name (it has that too); else
 * "[TIME ]NAME: TAGMSG".
 */
static int
log_format(char *line, size_t len, bool journal, int prio, const char *tag,
	   const char *msg)
{
	char pre[48] = "";
	int n;

	if (journal) {
		log_journal_prefix(pre, sizeof(pre), prio);
		n = snprintf(line, len, "%s%s%s\n", pre, tag, msg);
	} else {
		if (log_timestamps)
			log_stamp(pre, sizeof(pre));
		n = snprintf(line, len, "%s%s: %s%s\n", pre, log_progname, tag, msg);
	}
	if (n < 0)
		return -1;
	if ((size_t)n >= len) {
		n = len - 1;
		line[n - 1] = '\n';
	}
	return n;
}

static void
log_stderr(const char *line, int n)
{
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to report it */
	}
}

/* One write(2) per message so lines from several threads never mix. */
static void
log_emit(int prio, const char *tag, const char *fmt, va_list ap)
{
	char msg[1024];
	char line[1200];
	int n, fd = log_fd;
	ssize_t w;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (fd < 0 && log_to_syslog) {
		syslog(prio, "%s", msg);
		/* the start-up copy, unless syslog already reached the journal
		 * that stderr is */
		if (prio <= LOG_WARNING && log_errors_to_stderr && !log_stderr_journal) {
			n = log_format(line, sizeof(line), false, prio, tag, msg);
			if (n > 0)
				log_stderr(line, n);
		}
		return;
	}
	if (fd < 0) {
		n = log_format(line, sizeof(line), log_stderr_journal, prio, tag, msg);
		if (n > 0)
			log_stderr(line, n);
		return;
	}
	n = log_format(line, sizeof(line), false, prio, tag, msg);
	if (n < 0)
		return;
	w = write(fd, line, n);
	if (w != n)
		log_write_error(w < 0 ? errno : ENOSPC);
	else if (__atomic_load_n(&log_write_failed, __ATOMIC_RELAXED))
		__atomic_store_n(&log_write_failed, 0, __ATOMIC_RELAXED);
	if (prio <= LOG_WARNING && log_errors_to_stderr) {
		if (log_stderr_journal)
			n = log_format(line, sizeof(line), true, prio, tag, msg);
		if (n > 0)
			log_stderr(line, n);
	}
}

/* One public function per level: errno kept across the call (for %m in
 * fmt, and for the caller after it). */
#define LOG_LEVEL_FN(name, prio, tag)					\
	void								\
	name(const char *fmt, ...)					\
	{								\
		int saved_errno = errno;				\
		va_list ap;						\
									\
		va_start(ap, fmt);					\
		errno = saved_errno;					\
		log_emit(prio, tag, fmt, ap);				\
		va_end(ap);						\
		errno = saved_errno;					\
	}

LOG_LEVEL_FN(log_error, LOG_ERR, "error: ")
LOG_LEVEL_FN(log_warning, LOG_WARNING, "warning: ")
LOG_LEVEL_FN(log_info, LOG_INFO, "")
LOG_LEVEL_FN(log_debug_, LOG_DEBUG, "debug: ")
