/*
 * direct.c: the disk without a ring, for "export --direct" (blkbench's
 * dom0 row).
 *
 * The point of the dom0 row is to be what the guest's row would be if
 * the ring cost nothing: the same host I/O on the same backing.  So the
 * backing is opened and driven by blkbackd's own store code (libbkstore:
 * the file store's O_DIRECT, libaio, IOCB_CMD_FDSYNC flushes, O_DSYNC
 * for writethrough, hole punching for discards, with the same probes and
 * fallbacks), and requests are shaped as libblkfront shapes them for the
 * ring: a FUSE request is split into requests of at most
 * FT_DIRECT_MAX_REQ bytes (blkfront-test's 32 indirect segments of 4 KiB)
 * that run in parallel, at most FT_DIRECT_DEPTH in flight in all (one
 * ring of 32 slots), each through a buffer of its own that stays mapped
 * (the persistent grant pages).  What is left out is exactly the ring:
 * grant copies or mappings, event channels, the backend's thread.
 *
 * Threads: any thread calls the I/O functions.  Each call takes a lane
 * (a store queue of its own with its buffers; a queue is used by one
 * thread at a time), submits its requests on it and waits for them on
 * the queue itself, so no other thread is woken on the way: first
 * looking at the store's completions for an adaptive window
 * (include/pollwin.h, capped at FT_DIRECT_POLL_US, blkbackd's default
 * --poll-max-us), then sleeping on the queue's fd, as blkbackd's queue
 * threads wait for the same completions.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "compiler.h"
#include "log.h"
#include "pollwin.h"
#include "store.h"
#include "ft.h"

/* blkbackd's default --poll-max-us */
#define FT_DIRECT_POLL_US	50

struct lane {
	struct bk_store_queue *q;
	char *buf;			/* FT_DIRECT_LANE_SLOTS x FT_DIRECT_MAX_REQ */
	struct bk_io io[FT_DIRECT_LANE_SLOTS];
	struct iovec iov[FT_DIRECT_LANE_SLOTS];
	struct pollwin pw;		/* waiting for completions */
	bool can_poll;			/* the store can be looked at cheaply */
	struct lane *next_free;
};

struct ft_direct {
	struct bk_store *store;
	const struct bk_store_features *f;
	struct lane lanes[FT_DIRECT_DEPTH];
	char *bufs;			/* every lane's buffers, one mapping */
	size_t bufs_len;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct lane *free_lanes;
	unsigned int slots_free;	/* requests that may still go in flight */
};

int
ft_direct_open(const char *path, bool writethrough, struct ft_direct **out)
{
	struct bk_stack_config sc = { .writethrough = writethrough };
	struct bk_store_why why;
	struct bk_params p;
	struct ft_direct *d;
	unsigned int i;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	r = bk_params_parse(path, &p, &why);
	if (r) {
		log_error("export --direct %s: %s", path, why.msg);
		goto fail;
	}
	r = bk_stack_open(&p, &sc, false, &d->store, &why);
	bk_params_free(&p);
	if (r) {
		log_error("export --direct %s: %s", path, why.msg);
		goto fail;
	}
	d->f = bk_store_features(d->store);
	d->bufs_len = (size_t)FT_DIRECT_DEPTH * FT_DIRECT_LANE_SLOTS * FT_DIRECT_MAX_REQ;
	d->bufs = mmap(NULL, d->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (d->bufs == MAP_FAILED) {
		d->bufs = NULL;
		r = -errno;
		log_error("export --direct: buffers: %s", strerror(-r));
		goto fail;
	}
	for (i = 0; i < FT_DIRECT_DEPTH; i++) {
		struct lane *l = &d->lanes[i];

		r = bk_store_queue_open(d->store, FT_DIRECT_LANE_SLOTS, &l->q);
		if (r) {
			log_error("export --direct %s: queue: %s", path, strerror(-r));
			goto fail;
		}
		l->buf = d->bufs + (size_t)i * FT_DIRECT_LANE_SLOTS * FT_DIRECT_MAX_REQ;
		l->can_poll = bk_store_can_poll(d->store);
		pollwin_init(&l->pw, l->can_poll ? FT_DIRECT_POLL_US : 0);
		l->next_free = d->free_lanes;
		d->free_lanes = l;
	}
	d->slots_free = FT_DIRECT_DEPTH;
	log_info("export --direct %s: %s store, O_DIRECT %s, %s, flush %s, discard %s", path,
		 bk_store_name(d->store), d->f->direct ? "on" : "off",
		 d->f->writeback ? "write back" : "write through",
		 d->f->can_flush ? "yes" : "no", d->f->can_discard ? "yes" : "no");
	*out = d;
	return 0;
fail:
	ft_direct_close(d);
	return r;
}

void
ft_direct_close(struct ft_direct *d)
{
	unsigned int i;

	if (!d)
		return;
	for (i = 0; i < FT_DIRECT_DEPTH; i++)
		bk_store_queue_close(d->lanes[i].q);
	bk_stack_close(d->store);
	if (d->bufs)
		munmap(d->bufs, d->bufs_len);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->cond);
	free(d);
}

uint64_t
ft_direct_size(const struct ft_direct *d)
{
	return d->f->size;
}

bool
ft_direct_can_discard(const struct ft_direct *d)
{
	return d->f->can_discard;
}

/* A lane and n request slots (n <= FT_DIRECT_LANE_SLOTS), waiting for
 * them as a guest waits for free ring slots. */
static struct lane *
lane_get(struct ft_direct *d, unsigned int n)
{
	struct lane *l;

	pthread_mutex_lock(&d->lock);
	while (!d->free_lanes || d->slots_free < n)
		pthread_cond_wait(&d->cond, &d->lock);
	l = d->free_lanes;
	d->free_lanes = l->next_free;
	d->slots_free -= n;
	pthread_mutex_unlock(&d->lock);
	return l;
}

static void
lane_put(struct ft_direct *d, struct lane *l, unsigned int n)
{
	pthread_mutex_lock(&d->lock);
	l->next_free = d->free_lanes;
	d->free_lanes = l;
	d->slots_free += n;
	pthread_cond_broadcast(&d->cond);
	pthread_mutex_unlock(&d->lock);
}

static bool
lane_ready(void *arg)
{
	struct lane *l = arg;

	return bk_store_poll(l->q);
}

/* Submit l->io[0..n) and wait for all of them.  0 or the first -errno. */
static int
lane_run(struct lane *l, unsigned int n)
{
	struct bk_io *ios[FT_DIRECT_LANE_SLOTS], *done[FT_DIRECT_LANE_SLOTS];
	unsigned int i, sent = 0, left = n;
	int r, err = 0;

	for (i = 0; i < n; i++)
		ios[i] = &l->io[i];
	while (left) {
		if (sent < n) {
			r = bk_store_submit(l->q, ios + sent, n - sent);
			if (r < 0) {
				/* the rest is never sent */
				err = err ? err : r;
				left -= n - sent;
				n = sent;
				continue;
			}
			sent += (unsigned int)r;
		}
		r = bk_store_reap(l->q, done, FT_DIRECT_LANE_SLOTS);
		if (r < 0)
			return r;
		for (i = 0; i < (unsigned int)r; i++) {
			if (done[i]->result < 0 && !err)
				err = (int)done[i]->result;
			left--;
		}
		if (r == 0 && left) {
			struct pollfd pfd = { .fd = bk_store_queue_fd(l->q), .events = POLLIN };
			uint64_t start = pollwin_now_ns();

			if (pollwin_spin(&l->pw, start, lane_ready, l))
				continue;
			if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
				return -errno;
			pollwin_adapt(&l->pw, start);
		}
	}
	return err;
}

/* len bytes at off, split into requests of at most FT_DIRECT_MAX_REQ. */
static int
direct_rw(struct ft_direct *d, enum bk_io_op op, char *buf, size_t len, uint64_t off)
{
	while (len) {
		size_t chunk = len < FT_DIRECT_LANE_SLOTS * FT_DIRECT_MAX_REQ ?
			len : FT_DIRECT_LANE_SLOTS * FT_DIRECT_MAX_REQ;
		unsigned int n = (unsigned int)((chunk + FT_DIRECT_MAX_REQ - 1) / FT_DIRECT_MAX_REQ);
		struct lane *l = lane_get(d, n);
		unsigned int i;
		int r;

		for (i = 0; i < n; i++) {
			size_t o = (size_t)i * FT_DIRECT_MAX_REQ;
			size_t ln = chunk - o < FT_DIRECT_MAX_REQ ? chunk - o : FT_DIRECT_MAX_REQ;
			char *b = l->buf + (size_t)i * FT_DIRECT_MAX_REQ;

			/* the guest's copy into its granted pages */
			if (op == BK_IO_WRITE)
				memcpy(b, buf + o, ln);
			l->iov[i] = (struct iovec){ .iov_base = b, .iov_len = ln };
			l->io[i] = (struct bk_io){ .op = op, .offset = off + o, .len = ln,
						   .iov = &l->iov[i], .iovcnt = 1 };
		}
		r = lane_run(l, n);
		if (!r && op == BK_IO_READ)
			for (i = 0; i < n; i++)
				memcpy(buf + (size_t)i * FT_DIRECT_MAX_REQ, l->iov[i].iov_base,
				       l->iov[i].iov_len);
		lane_put(d, l, n);
		if (r)
			return r;
		buf += chunk;
		len -= chunk;
		off += chunk;
	}
	return 0;
}

int
ft_direct_pread(struct ft_direct *d, void *buf, size_t len, uint64_t off)
{
	return direct_rw(d, BK_IO_READ, buf, len, off);
}

int
ft_direct_pwrite(struct ft_direct *d, const void *buf, size_t len, uint64_t off)
{
	return direct_rw(d, BK_IO_WRITE, (char *)buf, len, off);
}

/* One request without data (FLUSH, DISCARD). */
static int
direct_op(struct ft_direct *d, enum bk_io_op op, uint64_t off, uint64_t len)
{
	struct lane *l = lane_get(d, 1);
	int r;

	l->io[0] = (struct bk_io){ .op = op, .offset = off, .len = len };
	r = lane_run(l, 1);
	lane_put(d, l, 1);
	return r;
}

int
ft_direct_flush(struct ft_direct *d)
{
	/* blkbackd's plan for a store without a volatile cache: nothing to
	 * commit (writethrough: every write was durable on completion) */
	if (!d->f->writeback)
		return 0;
	if (!d->f->can_flush)
		return -EOPNOTSUPP;
	return direct_op(d, BK_IO_FLUSH, 0, 0);
}

int
ft_direct_discard(struct ft_direct *d, uint64_t off, uint64_t len)
{
	if (!d->f->can_discard)
		return -EOPNOTSUPP;
	return direct_op(d, BK_IO_DISCARD, off, len);
}
