/*
 * store-null.c: the "null" storage driver (ring benchmarks, tests).
 *
 * params "null:SIZE".  Writes are dropped, reads return zeroes, FLUSH
 * and DISCARD succeed at once: what is left is the cost of the ring,
 * the grant copies and the daemon (nbdkit null, ublk null).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "log.h"
#include "store.h"
#include "store-util.h"

struct bk_store {
	uint64_t size;
};

struct bk_store_queue {
	struct bk_store *s;
	struct bk_syncq sq;
};

static int
null_open(const struct bk_store_config *cfg, struct bk_store **out,
	  struct bk_store_features *f)
{
	struct bk_store *s;

	if (cfg->size == 0 || cfg->size % 512) {
		return bk_store_fail(cfg, -EINVAL, "null store",
				     "size %llu is not a positive multiple of 512",
				     (unsigned long long)cfg->size);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->size = cfg->size;
	memset(f, 0, sizeof(*f));
	f->size = s->size;
	f->sector_size = 512;
	f->physical_sector_size = 512;
	f->can_flush = true;
	f->writeback = false;
	f->fua = BK_FUA_NATIVE;
	f->can_discard = !cfg->read_only;
	*out = s;
	return 0;
}

static void
null_close(struct bk_store *s)
{
	free(s);
}

static int
null_queue_open(struct bk_store *s, unsigned int depth, struct bk_store_queue **out)
{
	struct bk_store_queue *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	q->s = s;
	rc = bk_syncq_init(&q->sq, depth);
	if (rc < 0) {
		free(q);
		return rc;
	}
	*out = q;
	return 0;
}

static void
null_queue_close(struct bk_store_queue *q)
{
	bk_syncq_fini(&q->sq);
	free(q);
}

static int
null_queue_fd(struct bk_store_queue *q)
{
	return q->sq.efd;
}

static int
null_submit(struct bk_store_queue *q, struct bk_io **ios, unsigned int n)
{
	unsigned int i;
	int j;

	for (i = 0; i < n && q->sq.count < q->sq.cap; i++) {
		struct bk_io *io = ios[i];

		io->host_action = "null";
		io->result = 0;
		if (io->op == BK_IO_READ) {
			for (j = 0; j < io->iovcnt; j++)
				memset(io->iov[j].iov_base, 0, io->iov[j].iov_len);
		}
		if (io->op == BK_IO_READ || io->op == BK_IO_WRITE)
			io->result = io->len;
		bk_syncq_complete(&q->sq, io);
	}
	return i ? (int)i : (n ? -EAGAIN : 0);
}

static int
null_reap(struct bk_store_queue *q, struct bk_io **done, unsigned int max)
{
	return bk_syncq_reap(&q->sq, done, max);
}

const struct bk_store_ops bk_store_null_ops = {
	.name = "null",
	.open = null_open,
	.close = null_close,
	.queue_open = null_queue_open,
	.queue_close = null_queue_close,
	.queue_fd = null_queue_fd,
	.submit = null_submit,
	.reap = null_reap,
};
