/*
 * log.c: see include/log.h.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

unsigned int log_debug_mask;
bool log_verbose;

static const char *log_progname = "blk";
static bool log_to_syslog;

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

/* One write(2) per message so lines from several threads never mix. */
static void
log_emit(int prio, const char *tag, const char *fmt, va_list ap)
{
	char msg[1024];
	char line[1200];
	int n;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_to_syslog) {
		syslog(prio, "%s", msg);
		return;
	}
	n = snprintf(line, sizeof(line), "%s: %s%s\n", log_progname, tag, msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (write(STDERR_FILENO, line, n) < 0) {
		/* nowhere left to report it */
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
