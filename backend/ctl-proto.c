/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl-proto.c: the control socket's protocol helpers (ctl-proto.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-proto.h"

static bool
buf_reserve(struct bk_ctl_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->oom)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 1024;
	while (cap < b->len + more + 1)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	return true;
}

void
bk_ctl_buf_printf(struct bk_ctl_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

static bool
needs_escape(unsigned char c)
{
	return c <= ' ' || c >= 0x7f || c == '%' || c == '=';
}

void
bk_ctl_buf_kv(struct bk_ctl_buf *b, const char *key, const char *value)
{
	const unsigned char *v = (const unsigned char *)value;
	size_t i, n = 0;

	if (!value)
		return;
	for (i = 0; v[i]; i++)
		n += needs_escape(v[i]) ? 3 : 1;
	if (!buf_reserve(b, strlen(key) + 2 + n))
		return;
	b->len += sprintf(b->p + b->len, " %s=", key);
	for (i = 0; v[i]; i++) {
		if (needs_escape(v[i]))
			b->len += sprintf(b->p + b->len, "%%%02X", v[i]);
		else
			b->p[b->len++] = (char)v[i];
	}
	b->p[b->len] = '\0';
}

void
bk_ctl_buf_kvu(struct bk_ctl_buf *b, const char *key, uint64_t v)
{
	bk_ctl_buf_printf(b, " %s=%" PRIu64, key, v);
}

void
bk_ctl_buf_free(struct bk_ctl_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Unescape s in place.  0 or -EINVAL. */
static int
unescape(char *s)
{
	char *w = s;

	while (*s) {
		if (*s == '%') {
			int hi = hexval(s[1]), lo = hi < 0 ? -1 : hexval(s[2]);

			if (hi < 0 || lo < 0 || (hi == 0 && lo == 0))
				return -EINVAL;
			*w++ = (char)(hi << 4 | lo);
			s += 3;
		} else {
			*w++ = *s++;
		}
	}
	*w = '\0';
	return 0;
}

int
bk_ctl_split(char *line, char **words, unsigned int max)
{
	unsigned int n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(line, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return -E2BIG;
		words[n++] = w;
	}
	return (int)n;
}

int
bk_ctl_parse_record(char *line, struct bk_ctl_record *r)
{
	char *words[BK_CTL_MAX_KEYS + 1];
	int n = bk_ctl_split(line, words, BK_CTL_MAX_KEYS + 1), i;

	memset(r, 0, sizeof(*r));
	if (n < 1)
		return -EINVAL;
	r->kind = words[0];
	for (i = 1; i < n; i++) {
		char *eq = strchr(words[i], '=');

		if (!eq || eq == words[i])
			return -EINVAL;
		*eq = '\0';
		if (unescape(eq + 1) < 0)
			return -EINVAL;
		r->key[r->n] = words[i];
		r->val[r->n] = eq + 1;
		r->n++;
	}
	return 0;
}

const char *
bk_ctl_get(const struct bk_ctl_record *r, const char *key)
{
	unsigned int i;

	for (i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NULL;
}

double
bk_lat_quantile(const uint64_t *buckets, unsigned int nbuckets, double q)
{
	uint64_t total = 0, cum = 0;
	double rank;
	unsigned int b;

	for (b = 0; b < nbuckets; b++)
		total += buckets[b];
	if (!total || q <= 0)
		return -1;
	if (q > 1)
		q = 1;
	/* as Prometheus: the rank is q * total, not rounded to a sample */
	rank = q * (double)total;
	for (b = 0; b < nbuckets; b++) {
		double lo, hi;

		if (!buckets[b] || (double)(cum + buckets[b]) < rank) {
			cum += buckets[b];
			continue;
		}
		lo = b ? ldexp(1.0, (int)b) : 0.0;
		hi = ldexp(1.0, (int)b + 1);
		return lo + (hi - lo) * (rank - (double)cum) / (double)buckets[b];
	}
	return ldexp(1.0, (int)nbuckets);	/* not reached */
}
