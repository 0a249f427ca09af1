/*
 * store.c: the driver registry (bk_store_lookup) and helpers for
 * synchronous drivers (store-util.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "store.h"
#include "store-util.h"

static const struct bk_store_ops *const drivers[] = {
	&bk_store_file_ops,
	&bk_store_memory_ops,
	&bk_store_null_ops,
	&bk_store_record_ops,
	&bk_store_volatile_ops,
};

const struct bk_store_ops *
bk_store_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(drivers); i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

int
bk_store_open(const struct bk_store_ops *ops, const struct bk_store_config *cfg,
	      struct bk_store **out, struct bk_store_features *features,
	      char *why, size_t why_len)
{
	struct bk_store_config c = *cfg;
	int rc;

	why[0] = '\0';
	c.why = why;
	c.why_len = why_len;
	rc = ops->open(&c, out, features);
	if (rc < 0 && !why[0])
		snprintf(why, why_len, "%s", strerror(-rc));
	return rc;
}

int
bk_store_fail(const struct bk_store_config *cfg, int err, const char *who,
	      const char *fmt, ...)
{
	int saved = errno;
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("%s: %s", who, msg);
	if (cfg->why && cfg->why_len)
		snprintf(cfg->why, cfg->why_len, "%s", msg);
	errno = saved;
	return err;
}

int
bk_syncq_init(struct bk_syncq *sq, unsigned int depth)
{
	memset(sq, 0, sizeof(*sq));
	sq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (sq->efd < 0)
		return -errno;
	sq->cap = depth ? depth : 1;
	sq->done = calloc(sq->cap, sizeof(*sq->done));
	if (!sq->done) {
		close(sq->efd);
		return -ENOMEM;
	}
	return 0;
}

void
bk_syncq_fini(struct bk_syncq *sq)
{
	if (sq->efd >= 0)
		close(sq->efd);
	free(sq->done);
	sq->done = NULL;
	sq->efd = -1;
}

int
bk_syncq_complete(struct bk_syncq *sq, struct bk_io *io)
{
	uint64_t one = 1;

	if (sq->count == sq->cap)
		return -ENOSPC;
	sq->done[(sq->head + sq->count) % sq->cap] = io;
	sq->count++;
	if (sq->count == 1 && write(sq->efd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

int
bk_syncq_reap(struct bk_syncq *sq, struct bk_io **done, unsigned int max)
{
	uint64_t v;
	unsigned int n = 0;

	while (n < max && sq->count) {
		done[n++] = sq->done[sq->head];
		sq->head = (sq->head + 1) % sq->cap;
		sq->count--;
	}
	/* Readable exactly while completions are queued. */
	if (sq->count == 0 && read(sq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return n;
}

int
bk_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static const char *
opt_find(const char *opts, const char *key, size_t klen)
{
	const char *p = opts;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 &&
		    (p[klen] == '\0' || p[klen] == ',' || p[klen] == '='))
			return p;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return NULL;
}

bool
bk_opt_has(const char *opts, const char *word)
{
	const char *p = opt_find(opts, word, strlen(word));

	return p && (p[strlen(word)] == '\0' || p[strlen(word)] == ',');
}

const char *
bk_opt_get(const char *opts, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n;
	const char *p = opt_find(opts, key, klen), *e;

	if (!p || p[klen] != '=')
		return NULL;
	p += klen + 1;
	e = strchr(p, ',');
	n = e ? (size_t)(e - p) : strlen(p);
	if (n >= len)
		n = 0;		/* too long: "", which no caller accepts */
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}
