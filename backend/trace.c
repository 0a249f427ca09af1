/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.c: --trace=FILE, one line per protocol event, so that tests can
 * grep and diff what blkbackd did, e.g. that a barrier drained three
 * writes and then flushed.  The line format is documented in blkbackd.8
 * "TRACE FORMAT".  Each line is one write(2) on an O_APPEND fd, so the
 * lines of several queue threads never mix.  The fd keeps its number for
 * the trace's life: a reopen (SIGHUP) dup3()s the new file onto it, so a
 * queue thread writing meanwhile writes to the old file or the new one.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "dataplane.h"

struct bk_trace {
	int fd;
	char *path;
	int write_failed;	/* reported; cleared by a good write */
};

static int
trace_open_fd(const char *path, bool truncate)
{
	return open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0),
		    0644);
}

struct bk_trace *
bk_trace_open(const char *path, bool truncate)
{
	struct bk_trace *t = calloc(1, sizeof(*t));

	if (!t || !(t->path = strdup(path))) {
		free(t);
		log_error("trace file %s: out of memory", path);
		errno = ENOMEM;
		return NULL;
	}
	t->fd = trace_open_fd(path, truncate);
	if (t->fd < 0) {
		int err = errno;

		log_error("open trace file %s: %m", path);
		free(t->path);
		free(t);
		errno = err;
		return NULL;
	}
	return t;
}

int
bk_trace_reopen(struct bk_trace *t)
{
	int fd, err;

	if (!t)
		return 0;
	fd = trace_open_fd(t->path, false);
	if (fd < 0) {
		err = errno;
		log_error("cannot reopen the trace file %s: %m; still writing to the old one",
			  t->path);
		return -err;
	}
	if (dup3(fd, t->fd, O_CLOEXEC) < 0) {
		err = errno;
		log_error("cannot reopen the trace file %s: dup3: %m", t->path);
		close(fd);
		return -err;
	}
	close(fd);
	return 0;
}

void
bk_trace_close(struct bk_trace *t)
{
	if (!t)
		return;
	close(t->fd);
	free(t->path);
	free(t);
}

void
bk_trace(struct bk_trace *t, const char *vbd, unsigned int ring, const char *fmt, ...)
{
	char line[512];
	struct timespec ts;
	va_list ap;
	ssize_t w;
	int n, m;

	if (!t)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	n = snprintf(line, sizeof(line), "t=%" PRIu64 " vbd=%s ring=%u ",
		     (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000, vbd, ring);
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
	/* best effort: the I/O path never stops for the trace, but a lost
	 * line is said once (until a write succeeds again) */
	w = write(t->fd, line, n);
	if (w == n) {
		if (unlikely(__atomic_load_n(&t->write_failed, __ATOMIC_RELAXED)))
			__atomic_store_n(&t->write_failed, 0, __ATOMIC_RELAXED);
	} else if (!__atomic_exchange_n(&t->write_failed, 1, __ATOMIC_RELAXED)) {
		errno = w < 0 ? errno : ENOSPC;
		log_error("cannot write the trace file %s: %m (trace lines are lost until "
			  "a write succeeds again)", t->path);
	}
}
