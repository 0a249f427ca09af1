/*
 * trace.c: --trace=FILE, one line per protocol event, so that tests can
 * grep and diff what blkbackd did, e.g. that a barrier drained three
 * writes and then flushed.  The line format is documented in blkbackd.8
 * "TRACE FORMAT".  Each line is one write(2) on an O_APPEND fd, so the
 * lines of several queue threads never mix.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "dataplane.h"

struct bk_trace {
	int fd;
};

struct bk_trace *
bk_trace_open(const char *path)
{
	struct bk_trace *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (t->fd < 0) {
		int err = errno;

		log_error("open trace file %s: %m", path);
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}

void
bk_trace_close(struct bk_trace *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t);
}

void
bk_trace(struct bk_trace *t, const char *vbd, unsigned int ring, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, m;

	if (!t)
		return;
	n = snprintf(line, sizeof(line), "vbd=%s ring=%u ", vbd, ring);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	if (write(t->fd, line, n) < 0) {
		/* the trace is best effort; the I/O path must not stop for it */
	}
}
