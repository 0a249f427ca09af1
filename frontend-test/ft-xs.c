/*
 * ft-xs.c: see ft-xs.h.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ft-xs.h"

uint64_t
ft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct xs_handle *
ft_xs_open(const char *sock)
{
	if (sock && setenv("XENSTORED_PATH", sock, 1) < 0)
		return NULL;
	return xs_open(0);
}

char *
ft_xs_read(struct xs_handle *xs, xs_transaction_t t, const char *dir,
	   const char *key)
{
	char path[256];
	unsigned int len;
	char *v;

	if (snprintf(path, sizeof(path), "%s/%s", dir, key) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	v = xs_read(xs, t, path, &len);
	return v;
}

int
ft_xs_read_u64(struct xs_handle *xs, const char *dir, const char *key,
	       uint64_t def, uint64_t *out)
{
	char *v = ft_xs_read(xs, XBT_NULL, dir, key);
	char *end;
	unsigned long long n;

	*out = def;
	if (!v)
		return errno == ENOENT ? -ENOENT : -errno;
	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || end == v || *end != '\0' || v[0] == '-') {
		free(v);
		return -EPROTO;
	}
	free(v);
	*out = n;
	return 0;
}

int
ft_xs_read_uint(struct xs_handle *xs, const char *dir, const char *key,
		unsigned int def, unsigned int *out)
{
	uint64_t v;
	int r = ft_xs_read_u64(xs, dir, key, def, &v);

	if (r < 0) {
		*out = def;
		return r;
	}
	if (v > 0xffffffffu) {
		*out = def;
		return -EPROTO;
	}
	*out = (unsigned int)v;
	return 0;
}

int
ft_xs_printf(struct xs_handle *xs, xs_transaction_t t, const char *dir,
	     const char *key, const char *fmt, ...)
{
	char path[256], val[256];
	va_list ap;
	int n;

	if (snprintf(path, sizeof(path), "%s/%s", dir, key) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	va_start(ap, fmt);
	n = vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(val))
		return -EOVERFLOW;
	if (!xs_write(xs, t, path, val, (unsigned int)n))
		return -errno;
	return 0;
}

bool
ft_state_eq(unsigned int state, unsigned int want)
{
	return state == want;
}

bool
ft_state_ge(unsigned int state, unsigned int want)
{
	return state >= want;
}

int
ft_xs_wait_state(struct xs_handle *xs, const char *dir, const char *key,
		 ft_xs_pred pred, unsigned int arg, unsigned int timeout_ms,
		 unsigned int *state)
{
	char path[256], token[64];
	uint64_t deadline = ft_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int r = -ETIMEDOUT;

	if (snprintf(path, sizeof(path), "%s/%s", dir, key) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	snprintf(token, sizeof(token), "ft-wait-%p", (void *)&deadline);
	if (!xs_watch(xs, path, token))
		return -errno;
	for (;;) {
		unsigned int v = 0;
		uint64_t now;
		struct pollfd pfd;
		char **ev;

		ft_xs_read_uint(xs, dir, key, 0, &v);
		*state = v;
		if (pred(v, arg)) {
			r = 0;
			break;
		}
		now = ft_now_ns();
		if (now >= deadline)
			break;
		pfd.fd = xs_fileno(xs);
		pfd.events = POLLIN;
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000ull) + 1) < 0 &&
		    errno != EINTR) {
			r = -errno;
			break;
		}
		while ((ev = xs_check_watch(xs)) != NULL)
			free(ev);
	}
	xs_unwatch(xs, path, token);
	return r;
}
