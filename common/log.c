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
static int log_fd = -1;			/* the log file, or -1 */
static char *log_path;
static int log_write_failed;		/* reported; cleared by a good write */

void
log_init(const char *progname)
{
	const char *slash = strrchr(progname, '/');

	log_progname = slash ? slash + 1 : progname;
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
	n = snprintf(line, sizeof(line), "%s: error: %s\n", log_progname, msg);
	if (n > 0 && write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0) {
		/* nowhere left to report it */
	}
}

/* One write(2) per message so lines from several threads never mix. */
static void
log_emit(int prio, const char *tag, const char *fmt, va_list ap)
{
	char msg[1024];
	char line[1200];
	char stamp[48] = "";
	int n, fd = log_fd;
	ssize_t w;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (fd < 0 && log_to_syslog) {
		syslog(prio, "%s", msg);
		if (prio == LOG_ERR && log_errors_to_stderr)
			fd = STDERR_FILENO;
		else
			return;
	}
	if (log_timestamps)
		log_stamp(stamp, sizeof(stamp));
	n = snprintf(line, sizeof(line), "%s%s: %s%s\n", stamp, log_progname, tag, msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (fd < 0) {
		if (write(STDERR_FILENO, line, n) < 0) {
			/* nowhere left to report it */
		}
		return;
	}
	w = write(fd, line, n);
	if (fd == log_fd) {
		if (w != n)
			log_write_error(w < 0 ? errno : ENOSPC);
		else if (__atomic_load_n(&log_write_failed, __ATOMIC_RELAXED))
			__atomic_store_n(&log_write_failed, 0, __ATOMIC_RELAXED);
		if (prio == LOG_ERR && log_errors_to_stderr && write(STDERR_FILENO, line, n) < 0) {
			/* nowhere left to report it */
		}
	}
}

void
log_error(const char *fmt, ...)
{
	int saved_errno = errno;
	va_list ap;

	va_start(ap, fmt);
	errno = saved_errno;	/* for %m */
	log_emit(LOG_ERR, "error: ", fmt, ap);
	va_end(ap);
	errno = saved_errno;
}

void
log_info(const char *fmt, ...)
{
	int saved_errno = errno;
	va_list ap;

	va_start(ap, fmt);
	errno = saved_errno;
	log_emit(LOG_INFO, "", fmt, ap);
	va_end(ap);
	errno = saved_errno;
}

void
log_debug_(const char *fmt, ...)
{
	int saved_errno = errno;
	va_list ap;

	va_start(ap, fmt);
	errno = saved_errno;
	log_emit(LOG_DEBUG, "debug: ", fmt, ap);
	va_end(ap);
	errno = saved_errno;
}
