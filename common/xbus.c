/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xbus.c: xenbus helpers over libxenstore (include/xbus.h).
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xbus.h"

#define XBUS_PATH_MAX	256
#define XBUS_VALUE_MAX	256
#define XBUS_TRIES	100

static int
xbus_path(char *buf, const char *dir, const char *key)
{
	int n = key ? snprintf(buf, XBUS_PATH_MAX, "%s/%s", dir, key)
		    : snprintf(buf, XBUS_PATH_MAX, "%s", dir);

	return n < 0 || n >= XBUS_PATH_MAX ? -ENAMETOOLONG : 0;
}

struct xs_handle *
xbus_open(const char *sock)
{
	if (sock && setenv("XENSTORED_PATH", sock, 1) < 0)
		return NULL;
	return xs_open(0);
}

char *
xbus_read(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key)
{
	char path[XBUS_PATH_MAX];
	unsigned int len;
	int r = xbus_path(path, dir, key);

	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return xs_read(xs, t, path, &len);
}

/* Digits only, base 10, no overflow. */
static int
parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d = (unsigned char)*s - '0';

		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int
xbus_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
	      uint64_t max, uint64_t def, uint64_t *out)
{
	char *s = xbus_read(xs, t, dir, key);
	uint64_t v;
	int r;

	*out = def;
	if (!s)
		return -errno;
	r = parse_u64(s, &v);
	free(s);
	if (r < 0 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int
xbus_read_uint(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
	       unsigned int def, unsigned int *out)
{
	uint64_t v;
	int r = xbus_read_u64(xs, t, dir, key, UINT_MAX, def, &v);

	*out = (unsigned int)v;
	return r;
}

int
xbus_printf(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key,
	    const char *fmt, ...)
{
	char path[XBUS_PATH_MAX], val[XBUS_VALUE_MAX];
	va_list ap;
	int n, r = xbus_path(path, dir, key);

	if (r < 0)
		return r;
	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(val))
		return -EOVERFLOW;
	return xs_write(xs, t, path, val, (unsigned int)n) ? 0 : -errno;
}

int
xbus_rm(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key)
{
	char path[XBUS_PATH_MAX];
	int r = xbus_path(path, dir, key);

	if (r < 0)
		return r;
	if (!xs_rm(xs, t, path) && errno != ENOENT)
		return -errno;
	return 0;
}

int
xbus_transact(struct xs_handle *xs,
	      int (*fn)(struct xs_handle *xs, xs_transaction_t t, void *arg), void *arg)
{
	int tries;

	for (tries = 0; tries < XBUS_TRIES; tries++) {
		xs_transaction_t t = xs_transaction_start(xs);
		int r;

		if (t == XBT_NULL)
			return -errno;
		r = fn(xs, t, arg);
		if (r < 0) {
			xs_transaction_end(xs, t, true);
			return r;
		}
		if (xs_transaction_end(xs, t, false))
			return 0;
		if (errno != EAGAIN)
			return -errno;
	}
	return -EAGAIN;
}

struct switch_arg {
	const char *dir;
	enum xenbus_state state;
};

static int
switch_state(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct switch_arg *a = arg;
	char *cur = xbus_read(xs, t, a->dir, "state");

	if (!cur)
		return errno == ENOENT ? -ENOENT : -errno;
	free(cur);
	return xbus_printf(xs, t, a->dir, "state", "%d", (int)a->state);
}

int
xbus_switch_state(struct xs_handle *xs, const char *dir, enum xenbus_state state)
{
	struct switch_arg a = { .dir = dir, .state = state };

	return xbus_transact(xs, switch_state, &a);
}

const char *
xbus_state_name(unsigned int state)
{
	static const char *const names[] = {
		[XenbusStateUnknown] = "Unknown",
		[XenbusStateInitialising] = "Initialising",
		[XenbusStateInitWait] = "InitWait",
		[XenbusStateInitialised] = "Initialised",
		[XenbusStateConnected] = "Connected",
		[XenbusStateClosing] = "Closing",
		[XenbusStateClosed] = "Closed",
		[XenbusStateReconfiguring] = "Reconfiguring",
		[XenbusStateReconfigured] = "Reconfigured",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

char *
xbus_printable(char *buf, size_t size, const char *s)
{
	size_t i;

	for (i = 0; i + 1 < size && s[i]; i++)
		buf[i] = s[i] >= 0x20 && s[i] <= 0x7e ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

bool
xbus_eq(unsigned int state, unsigned int want)
{
	return state == want;
}

bool
xbus_ge(unsigned int state, unsigned int want)
{
	return state >= want;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* dir reads as absent: ENOENT, or EACCES once its parent went too
 * (xenstored checks the nearest existing ancestor's permissions) */
static bool
xbus_dir_gone(struct xs_handle *xs, const char *dir)
{
	unsigned int len;
	void *v = xs_read(xs, XBT_NULL, dir, &len);

	if (v) {
		free(v);
		return false;
	}
	return errno == ENOENT || errno == EACCES;
}

int
xbus_wait(struct xs_handle *xs, const char *dir, const char *key, xbus_pred pred,
	  unsigned int arg, unsigned int timeout_ms, unsigned int *state)
{
	char path[XBUS_PATH_MAX], token[64];
	uint64_t deadline = now_ms() + timeout_ms;
	int r = xbus_path(path, dir, key);

	if (r < 0)
		return r;
	snprintf(token, sizeof(token), "xbus-wait-%p", (void *)&deadline);
	if (!xs_watch(xs, path, token))
		return -errno;
	r = -ETIMEDOUT;
	for (;;) {
		struct pollfd pfd = { .fd = xs_fileno(xs), .events = POLLIN };
		unsigned int v;
		uint64_t now;
		char **ev;
		int rr;

		rr = xbus_read_uint(xs, XBT_NULL, dir, key, 0, &v);
		*state = v;
		if (pred(v, arg)) {
			r = 0;
			break;
		}
		/* the directory itself went (the toolstack removed the
		 * device): nothing will ever write the key again */
		if ((rr == -ENOENT || rr == -EACCES) && xbus_dir_gone(xs, dir)) {
			r = -ENOENT;
			break;
		}
		now = now_ms();
		if (now >= deadline)
			break;
		if (poll(&pfd, 1, (int)(deadline - now) + 1) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
		while ((ev = xs_check_watch(xs)) != NULL)
			free(ev);
	}
	xs_unwatch(xs, path, token);
	return r;
}
