/*
 * store-memory.c: the "memory" storage driver: a RAM disk for tests.
 *
 * params "memory:SIZE[,OPTIONS]" (see store.h bk_store_config.options).
 * Every I/O completes inside submit(); data lives in an anonymous
 * MAP_NORESERVE mapping (untouched parts cost nothing and read as
 * zeroes).  Nothing is volatile, so a FLUSH has nothing to do and a
 * write is durable on completion (FUA native), unless options model
 * another device for tests:
 *   fail-flush     every FLUSH completes with -EIO (case C15)
 *   no-flush       report flush unsupported (FLUSH: -EOPNOTSUPP)
 *   refuse-flush   report flush supported, then answer every FLUSH with
 *                  -EOPNOTSUPP (a device that changes its mind)
 *   refuse-discard the same for DISCARD
 *   fua=MODE       report FUA as none|emulated|native
 *   no-discard     report discard unsupported
 *   delay-ms=N     every I/O takes N ms, 0..MEMORY_MAX_DELAY_MS (blocks
 *                  the queue thread), so a test can stop the daemon with
 *                  requests in flight
 * A value that is not one of these is refused (-EINVAL, logged).
 * Several queues may run at once; a mutex serialises the copies.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "compiler.h"
#include "log.h"
#include "store.h"
#include "store-util.h"

/* A store slower than this is a test that hangs: draining a queue waits
 * for every request in flight (delay x queue depth). */
#define MEMORY_MAX_DELAY_MS 10000u

struct bk_store {
	unsigned char *data;
	uint64_t size;
	pthread_mutex_t lock;
	bool fail_flush, no_flush, no_fua, refuse_flush, refuse_discard;
	unsigned int delay_ms;
};

struct bk_store_queue {
	struct bk_store *s;
	struct bk_syncq sq;
};

static int
memory_open(const struct bk_store_config *cfg, struct bk_store **out,
	    struct bk_store_features *f)
{
	struct bk_store *s;
	char buf[16], fbuf[16];
	const char *fua, *delay;
	unsigned long delay_ms = 0;
	char *end;

	if (cfg->size == 0 || cfg->size % 512) {
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "size %llu is not a positive multiple of 512",
				     (unsigned long long)cfg->size);
	}
	delay = bk_opt_get(cfg->options, "delay-ms", buf, sizeof(buf));
	if (delay) {
		errno = 0;
		delay_ms = strtoul(delay, &end, 10);
		/* digits only: strtoul would take " 5", "+5" and "-5" */
		if (!isdigit((unsigned char)delay[0]) || *end || errno ||
		    delay_ms > MEMORY_MAX_DELAY_MS) {
			return bk_store_fail(cfg, -EINVAL, "memory store",
					     "delay-ms=\"%s\" is not a number of milliseconds "
					     "in 0..%u", delay, MEMORY_MAX_DELAY_MS);
		}
	}
	fua = bk_opt_get(cfg->options, "fua", fbuf, sizeof(fbuf));
	if (fua && strcmp(fua, "none") && strcmp(fua, "emulated") && strcmp(fua, "native")) {
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "fua=\"%s\" is not one of none, emulated, native", fua);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->size = cfg->size;
	s->data = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->data == MAP_FAILED) {
		int err = -errno;

		bk_store_fail(cfg, err, "memory store", "mmap %llu bytes: %m",
			      (unsigned long long)s->size);
		free(s);
		return err;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->fail_flush = bk_opt_has(cfg->options, "fail-flush");
	s->no_flush = bk_opt_has(cfg->options, "no-flush");
	s->refuse_flush = bk_opt_has(cfg->options, "refuse-flush");
	s->refuse_discard = bk_opt_has(cfg->options, "refuse-discard");
	s->delay_ms = (unsigned int)delay_ms;

	memset(f, 0, sizeof(*f));
	f->size = s->size;
	f->sector_size = 512;
	f->physical_sector_size = 4096;
	f->can_flush = !s->no_flush;
	f->writeback = !cfg->writethrough;
	f->fua = BK_FUA_NATIVE;
	if (fua && strcmp(fua, "none") == 0)
		f->fua = BK_FUA_NONE;
	else if (fua && strcmp(fua, "emulated") == 0)
		f->fua = BK_FUA_EMULATED;
	s->no_fua = f->fua != BK_FUA_NATIVE;
	f->can_discard = !bk_opt_has(cfg->options, "no-discard") && !cfg->read_only;
	f->can_secure_discard = f->can_discard;
	f->direct = false;
	*out = s;
	return 0;
}

static void
memory_close(struct bk_store *s)
{
	munmap(s->data, s->size);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static int
memory_queue_open(struct bk_store *s, unsigned int depth, struct bk_store_queue **out)
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
memory_queue_close(struct bk_store_queue *q)
{
	bk_syncq_fini(&q->sq);
	free(q);
}

static int
memory_queue_fd(struct bk_store_queue *q)
{
	return q->sq.efd;
}

static void
memory_do(struct bk_store *s, struct bk_io *io)
{
	uint64_t off = io->offset;
	int i;

	if (io->op != BK_IO_FLUSH &&
	    (io->offset > s->size || io->len > s->size - io->offset)) {
		io->result = -EINVAL;
		return;
	}
	switch (io->op) {
	case BK_IO_READ:
		io->host_action = "mem-read";
		for (i = 0; i < io->iovcnt; i++) {
			memcpy(io->iov[i].iov_base, s->data + off, io->iov[i].iov_len);
			off += io->iov[i].iov_len;
		}
		io->result = io->len;
		break;
	case BK_IO_WRITE:
		io->host_action = (io->flags & BK_IO_FUA) ? "mem-write+fua" : "mem-write";
		if ((io->flags & BK_IO_FUA) && s->no_fua) {
			io->result = -EOPNOTSUPP;
			break;
		}
		for (i = 0; i < io->iovcnt; i++) {
			memcpy(s->data + off, io->iov[i].iov_base, io->iov[i].iov_len);
			off += io->iov[i].iov_len;
		}
		io->result = io->len;
		break;
	case BK_IO_FLUSH:
		io->host_action = "mem-flush";
		io->result = s->fail_flush ? -EIO :
			     s->no_flush || s->refuse_flush ? -EOPNOTSUPP : 0;
		break;
	case BK_IO_DISCARD:
		io->host_action = (io->flags & BK_IO_SECURE) ? "mem-secure-discard" : "mem-discard";
		if (s->refuse_discard) {
			io->result = -EOPNOTSUPP;
			break;
		}
		memset(s->data + off, 0, io->len);
		io->result = 0;
		break;
	default:
		io->result = -EOPNOTSUPP;
	}
}

static int
memory_submit(struct bk_store_queue *q, struct bk_io **ios, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (q->sq.count == q->sq.cap)
			break;
		if (q->s->delay_ms) {
			struct timespec ts = {
				.tv_sec = q->s->delay_ms / 1000,
				.tv_nsec = (long)(q->s->delay_ms % 1000) * 1000000,
			};

			nanosleep(&ts, NULL);
		}
		pthread_mutex_lock(&q->s->lock);
		memory_do(q->s, ios[i]);
		pthread_mutex_unlock(&q->s->lock);
		bk_syncq_complete(&q->sq, ios[i]);
	}
	return i ? (int)i : (n ? -EAGAIN : 0);
}

static int
memory_reap(struct bk_store_queue *q, struct bk_io **done, unsigned int max)
{
	return bk_syncq_reap(&q->sq, done, max);
}

const struct bk_store_ops bk_store_memory_ops = {
	.name = "memory",
	.open = memory_open,
	.close = memory_close,
	.queue_open = memory_queue_open,
	.queue_close = memory_queue_close,
	.queue_fd = memory_queue_fd,
	.submit = memory_submit,
	.reap = memory_reap,
};
