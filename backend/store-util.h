/*
 * store-util.h: helpers for storage drivers that complete I/O
 * synchronously inside submit() ("memory", "null"): a per-queue list of
 * completed bk_io and an eventfd that polls readable while it is not
 * empty.  Used by one queue thread only (store.h "Threads").
 */
#ifndef BK_STORE_UTIL_H
#define BK_STORE_UTIL_H

#include "compiler.h"
#include "store.h"

struct bk_syncq {
	int efd;		/* eventfd, non-blocking */
	struct bk_io **done;	/* ring of completed I/Os */
	unsigned int cap, head, count;
};

/* Allocate room for depth completions.  0/-errno. */
int bk_syncq_init(struct bk_syncq *sq, unsigned int depth);
void bk_syncq_fini(struct bk_syncq *sq);
/* Queue io as complete (io->result set by the caller) and signal.
 * -ENOSPC when more than depth I/Os are outstanding. */
int bk_syncq_complete(struct bk_syncq *sq, struct bk_io *io);
/* store.h reap() semantics. */
int bk_syncq_reap(struct bk_syncq *sq, struct bk_io **done, unsigned int max);

/*
 * Parse a size with an optional K/M/G/T suffix (powers of 1024) into
 * bytes.  0 or -EINVAL.
 */
int bk_parse_size(const char *s, uint64_t *out);
/* True if the comma-separated list opts contains exactly word. */
bool bk_opt_has(const char *opts, const char *word);
/* Value of "key=value" in the comma-separated list, copied into buf;
 * NULL if absent; "" when empty or longer than len - 1 bytes (never a
 * silently truncated value: callers refuse "" as invalid). */
const char *bk_opt_get(const char *opts, const char *key, char *buf, size_t len);

/*
 * For a driver's open() that fails: log "who: reason" as an error and
 * copy the reason (without who) into cfg->why when the caller wants one
 * (store.h).  Returns err (a -errno) so that the caller can
 * "return bk_store_fail(...)".  Preserves errno.
 */
int bk_store_fail(const struct bk_store_config *cfg, int err, const char *who,
		  const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(4, 5);

#endif /* BK_STORE_UTIL_H */
