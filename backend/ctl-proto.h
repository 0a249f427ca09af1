/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl-proto.h: the protocol of blkbackd's control socket (blkbackd-ctl.8
 * "PROTOCOL"), shared by the daemon (ctl.c) and blkbackd-ctl.
 *
 * A client sends one request line, "COMMAND [ARG]...\n" (words
 * separated by spaces, at most BK_CTL_MAX_LINE bytes with the newline).
 * The daemon answers with zero or more record lines, "KIND KEY=VALUE
 * ...\n", and one last line: "ok\n", or "error ERRNO-NAME MESSAGE\n"
 * (e.g. "error ENOENT no vbd 3/51712").  Values are escaped: every byte
 * that is not printable ASCII, and ' ', '%' and '=', is %XX (two
 * uppercase hex digits), so a record is always one line of words.
 *
 * Nothing here does I/O or logs; every function is thread-agnostic.
 */
#ifndef BK_CTL_PROTO_H
#define BK_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "compiler.h"

#define BK_CTL_MAX_LINE		4096	/* a request, newline included */
#define BK_CTL_MAX_KEYS		64	/* in one record */

/* A growing reply buffer.  On out of memory it keeps what it had and
 * sets oom (the daemon then answers ENOMEM). */
struct bk_ctl_buf {
	char *p;			/* NUL-terminated, malloc'd; may be NULL */
	size_t len, cap;
	bool oom;
};

void bk_ctl_buf_printf(struct bk_ctl_buf *b, const char *fmt, ...)
	ATTRIBUTE_FORMAT_PRINTF(2, 3);
/* Append " key=VALUE", value escaped (NULL: nothing is appended). */
void bk_ctl_buf_kv(struct bk_ctl_buf *b, const char *key, const char *value);
/* Append " key=N". */
void bk_ctl_buf_kvu(struct bk_ctl_buf *b, const char *key, uint64_t v);
void bk_ctl_buf_free(struct bk_ctl_buf *b);

/* One record line, split in place. */
struct bk_ctl_record {
	const char *kind;
	unsigned int n;
	const char *key[BK_CTL_MAX_KEYS];
	const char *val[BK_CTL_MAX_KEYS];	/* unescaped */
};

/*
 * Split line (one record, without its newline; modified in place) into
 * r.  0, or -EINVAL for a word that is not KEY=VALUE, a bad escape or
 * more than BK_CTL_MAX_KEYS pairs.
 */
int bk_ctl_parse_record(char *line, struct bk_ctl_record *r);
/* The value of key in r, or NULL. */
const char *bk_ctl_get(const struct bk_ctl_record *r, const char *key);

/*
 * Split a request line (no newline; modified in place) into at most max
 * words.  The number of words, or -E2BIG when there are more.
 */
int bk_ctl_split(char *line, char **words, unsigned int max);

/*
 * The q-quantile (0 < q <= 1) of a latency histogram whose bucket b
 * counts samples in [2^b, 2^(b+1)) microseconds (b = 0: [0, 2)), in
 * microseconds: the first bucket whose cumulative count reaches the rank
 * q * total, interpolated linearly inside it, as Prometheus's
 * histogram_quantile computes it from the same buckets.
 * -1 when the histogram is empty.
 */
double bk_lat_quantile(const uint64_t *buckets, unsigned int nbuckets, double q);

#endif /* BK_CTL_PROTO_H */
