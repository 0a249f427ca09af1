/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * direct.c: the disk without a ring, for "export --direct" (blkbench's
 * dom0 row).
 *
 * The point of the dom0 row is to be what the guest's row would be if
 * the ring cost nothing: the same host I/O on the same backing, done the
 * same way.  So the backing is opened and driven by blkbackd's own store
 * code (libbkstore: the file store's O_DIRECT, libaio, IOCB_CMD_FDSYNC
 * flushes, O_DSYNC for writethrough, hole punching for discards, with the
 * same probes and fallbacks), by one thread that works as a blkbackd
 * queue thread does (submits each request as soon as it has it, reaps
 * its completions, looks at them for an adaptive window before sleeping:
 * include/pollwin.h, capped at blkbackd's default --poll-max-us), and
 * requests are shaped as libblkfront shapes them for the ring: a FUSE
 * request is split into requests of at most FT_DIRECT_MAX_REQ bytes
 * (blkfront-test's 32 indirect segments of 4 KiB), at most
 * FT_DIRECT_DEPTH in flight (one ring of 32 slots), each through a slot
 * buffer that stays mapped (the persistent grant pages), the caller
 * sleeping until all of its requests are answered (libblkfront's
 * run_sync).  What is left out is exactly the ring: the shared ring and
 * its notifications, grant copies or mappings, and the frontend's
 * completion thread between the backend and the caller.
 *
 * The engine does no more per request than a blkbackd queue thread
 * does (submit, reap, answer): the copy of a read's data out of its slot
 * is the caller's, made once it is woken, as the ring's is made by
 * blkfront's thread and not by blkbackd's.  An engine that copied too
 * was one thread doing the work of two, and 128 KiB reads at QD32 went
 * faster through the ring than without it.
 *
 * Threads: any thread calls the I/O functions; the engine thread owns
 * the store queue.  One mutex covers the slots, the queue of new
 * requests and every caller's struct dwait.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "pollwin.h"
#include "store.h"
#include "ft.h"

/* blkbackd's default --poll-max-us */
#define FT_DIRECT_POLL_US	50

/* A caller waiting for its requests (libblkfront's struct ft_wait);
 * under ft_direct.lock.  A read's slot stays the caller's from its
 * answer until the caller has copied the data out (ready[]). */
struct dwait {
	pthread_cond_t cond;
	unsigned int pending;			/* queued, not answered */
	unsigned int ready[FT_DIRECT_DEPTH], nready;	/* answered reads */
	int err;				/* the first -errno */
};

struct slot {
	struct bk_io io;
	struct iovec iov;
	char *buf;			/* FT_DIRECT_MAX_REQ bytes, mapped once */
	char *user;			/* READ: where the data goes */
	struct dwait *w;
};

struct ft_direct {
	struct bk_store *store;
	const struct bk_store_features *f;
	struct bk_store_queue *q;	/* the engine thread's */
	struct slot slots[FT_DIRECT_DEPTH];
	char *bufs;
	size_t bufs_len;

	pthread_mutex_t lock;
	pthread_cond_t slot_freed;
	unsigned int slot_waiters;		/* callers waiting on slot_freed */
	unsigned int free[FT_DIRECT_DEPTH], nfree;
	unsigned int newq[FT_DIRECT_DEPTH], nnew;	/* to submit, in order */
	bool stop;

	/* the engine */
	pthread_t thread;
	bool started;
	int kick;			/* eventfd: new requests, or stop */
	bool sleeping;			/* atomic: the engine waits on its fds */
	struct pollwin pw;
};

/* Free slot i; d->lock held. */
static void
slot_free_locked(struct ft_direct *d, unsigned int i)
{
	d->free[d->nfree++] = i;
	pthread_cond_signal(&d->slot_freed);
}

/*
 * Hand a finished slot's result to its caller.  A read that succeeded
 * keeps its slot until the caller copies the data out; anything else
 * frees it here.
 */
static void
slot_done(struct ft_direct *d, unsigned int i)
{
	struct slot *s = &d->slots[i];
	struct dwait *w = s->w;
	int err = s->io.result < 0 ? (int)s->io.result : 0;

	pthread_mutex_lock(&d->lock);
	if (err && !w->err)
		w->err = err;
	w->pending--;
	if (!w->pending)
		pthread_cond_signal(&w->cond);	/* one wake-up per caller */
	if (!err && s->user) {
		w->ready[w->nready++] = i;
		/* a caller waiting for a slot may hold this one: let it copy */
		if (d->slot_waiters)
			pthread_cond_broadcast(&d->slot_freed);
	} else {
		slot_free_locked(d, i);
	}
	pthread_mutex_unlock(&d->lock);
}

/* Copy w's answered reads out of their slots and free the slots; called
 * and returns with d->lock held, which it drops for the copies. */
static void
take_ready(struct ft_direct *d, struct dwait *w)
{
	unsigned int ids[FT_DIRECT_DEPTH], n = w->nready, k;

	memcpy(ids, w->ready, n * sizeof(ids[0]));
	w->nready = 0;
	pthread_mutex_unlock(&d->lock);
	for (k = 0; k < n; k++) {
		struct slot *s = &d->slots[ids[k]];

		memcpy(s->user, s->buf, s->iov.iov_len);
	}
	pthread_mutex_lock(&d->lock);
	for (k = 0; k < n; k++)
		slot_free_locked(d, ids[k]);
}

/* Reap what has completed.  True when something had. */
static bool
engine_reap(struct ft_direct *d)
{
	struct bk_io *done[FT_DIRECT_DEPTH];
	bool any = false;
	int n, i;

	do {
		n = bk_store_reap(d->q, done, FT_DIRECT_DEPTH);
		if (n < 0) {
			log_error("export --direct: reap: %s", strerror(-n));
			return any;
		}
		for (i = 0; i < n; i++)
			slot_done(d, (unsigned int)(uintptr_t)done[i]->opaque);
		any |= n > 0;
	} while (n == FT_DIRECT_DEPTH);
	return any;
}

/* Submit every new request, in order.  True when there were any. */
static bool
engine_submit(struct ft_direct *d)
{
	unsigned int ids[FT_DIRECT_DEPTH], n, i, sent = 0;
	struct bk_io *ios[FT_DIRECT_DEPTH];

	pthread_mutex_lock(&d->lock);
	n = d->nnew;
	memcpy(ids, d->newq, n * sizeof(ids[0]));
	d->nnew = 0;
	pthread_mutex_unlock(&d->lock);
	for (i = 0; i < n; i++)
		ios[i] = &d->slots[ids[i]].io;
	while (sent < n) {
		int r = bk_store_submit(d->q, ios + sent, n - sent);

		if (r < 0) {
			/* refused (logged by the dispatch): that request fails */
			d->slots[ids[sent]].io.result = r;
			slot_done(d, ids[sent]);
			sent++;
		} else if (r == 0) {
			/* the queue is full (cannot happen: one slot per entry) */
			engine_reap(d);
		} else {
			sent += (unsigned int)r;
		}
	}
	return n > 0;
}

static bool
engine_ready(void *arg)
{
	struct ft_direct *d = arg;

	return READ_ONCE(d->nnew) || (bk_store_inflight(d->q) && bk_store_poll(d->q));
}

static void *
engine(void *arg)
{
	struct ft_direct *d = arg;
	struct pollfd pfd[2] = {
		{ .fd = d->kick, .events = POLLIN },
		{ .fd = bk_store_queue_fd(d->q), .events = POLLIN },
	};

	for (;;) {
		uint64_t start, v;
		bool busy;

		busy = engine_submit(d);
		busy |= engine_reap(d);
		if (busy)
			continue;
		if (READ_ONCE(d->stop) && !bk_store_inflight(d->q))
			break;
		start = pollwin_now_ns();
		if (pollwin_spin(&d->pw, start, engine_ready, d))
			continue;
		/* Dekker with direct_queue(): sleeping, then a last look */
		__atomic_store_n(&d->sleeping, true, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (READ_ONCE(d->nnew) || READ_ONCE(d->stop) || bk_store_poll(d->q)) {
			__atomic_store_n(&d->sleeping, false, __ATOMIC_RELAXED);
			continue;
		}
		if (poll(pfd, 2, -1) < 0 && errno != EINTR)
			log_error("export --direct: poll: %m");
		__atomic_store_n(&d->sleeping, false, __ATOMIC_RELAXED);
		if ((pfd[0].revents & POLLIN) && read(d->kick, &v, sizeof(v)) < 0 &&
		    errno != EAGAIN)
			log_error("export --direct: eventfd read: %m");
		pollwin_adapt(&d->pw, start);
	}
	return NULL;
}

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
	d->kick = -1;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->slot_freed, NULL);
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
	r = bk_store_queue_open(d->store, FT_DIRECT_DEPTH, &d->q);
	if (r) {
		log_error("export --direct %s: queue: %s", path, strerror(-r));
		goto fail;
	}
	d->bufs_len = (size_t)FT_DIRECT_DEPTH * FT_DIRECT_MAX_REQ;
	d->bufs = mmap(NULL, d->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (d->bufs == MAP_FAILED) {
		d->bufs = NULL;
		r = -errno;
		log_error("export --direct: buffers: %s", strerror(-r));
		goto fail;
	}
	for (i = 0; i < FT_DIRECT_DEPTH; i++) {
		d->slots[i].buf = d->bufs + (size_t)i * FT_DIRECT_MAX_REQ;
		d->free[d->nfree++] = FT_DIRECT_DEPTH - 1 - i;
	}
	d->kick = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (d->kick < 0) {
		r = -errno;
		log_error("export --direct: eventfd: %s", strerror(-r));
		goto fail;
	}
	pollwin_init(&d->pw, bk_store_can_poll(d->store) ? FT_DIRECT_POLL_US : 0);
	r = -pthread_create(&d->thread, NULL, engine, d);
	if (r) {
		log_error("export --direct: thread: %s", strerror(-r));
		goto fail;
	}
	d->started = true;
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
	uint64_t one = 1;

	if (!d)
		return;
	if (d->started) {
		WRITE_ONCE(d->stop, true);
		if (write(d->kick, &one, sizeof(one)) != sizeof(one))
			log_error("export --direct: eventfd write: %m");
		pthread_join(d->thread, NULL);
	}
	bk_store_queue_close(d->q);
	bk_stack_close(d->store);
	if (d->bufs)
		munmap(d->bufs, d->bufs_len);
	if (d->kick >= 0)
		close(d->kick);
	pthread_mutex_destroy(&d->lock);
	pthread_cond_destroy(&d->slot_freed);
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

/*
 * Queue one request for the engine: a free slot (waiting for one, as a
 * guest waits for a free ring slot, and meanwhile copying out this
 * caller's own answered reads, whose slots may be the ones missing), the
 * data copied in for a write (the guest's copy into its granted pages),
 * the engine woken only if it sleeps.
 */
static void
direct_queue(struct ft_direct *d, struct dwait *w, enum bk_io_op op, char *buf,
	     size_t len, uint64_t off)
{
	struct slot *s;
	unsigned int i;
	uint64_t one = 1;

	pthread_mutex_lock(&d->lock);
	while (!d->nfree) {
		if (w->nready) {
			take_ready(d, w);
			continue;
		}
		d->slot_waiters++;
		pthread_cond_wait(&d->slot_freed, &d->lock);
		d->slot_waiters--;
	}
	i = d->free[--d->nfree];
	w->pending++;
	pthread_mutex_unlock(&d->lock);

	s = &d->slots[i];
	s->w = w;
	s->user = op == BK_IO_READ ? buf : NULL;
	if (op == BK_IO_WRITE)
		memcpy(s->buf, buf, len);
	s->iov = (struct iovec){ .iov_base = s->buf, .iov_len = len };
	s->io = (struct bk_io){ .op = op, .offset = off, .len = len,
				.opaque = (void *)(uintptr_t)i };
	if (op == BK_IO_READ || op == BK_IO_WRITE) {
		s->io.iov = &s->iov;
		s->io.iovcnt = 1;
	}

	pthread_mutex_lock(&d->lock);
	d->newq[d->nnew++] = i;
	pthread_mutex_unlock(&d->lock);
	/* Dekker with the engine: the request is visible before we look */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&d->sleeping, __ATOMIC_SEQ_CST) &&
	    write(d->kick, &one, sizeof(one)) != sizeof(one))
		log_error("export --direct: eventfd write: %m");
}

/* Wait for every request queued with w to be answered, then copy the
 * reads out.  0 or the first -errno. */
static int
direct_wait(struct ft_direct *d, struct dwait *w)
{
	int err;

	pthread_mutex_lock(&d->lock);
	for (;;) {
		if (w->nready)
			take_ready(d, w);
		else if (w->pending)
			pthread_cond_wait(&w->cond, &d->lock);
		else
			break;
	}
	err = w->err;
	pthread_mutex_unlock(&d->lock);
	pthread_cond_destroy(&w->cond);
	return err;
}

static void
dwait_init(struct dwait *w)
{
	pthread_cond_init(&w->cond, NULL);
	w->pending = 0;
	w->nready = 0;
	w->err = 0;
}

/* len bytes at off as requests of at most FT_DIRECT_MAX_REQ, all in
 * flight together (libblkfront's rw_sync). */
static int
direct_rw(struct ft_direct *d, enum bk_io_op op, char *buf, size_t len, uint64_t off)
{
	struct dwait w;
	size_t o;

	dwait_init(&w);
	for (o = 0; o < len; o += FT_DIRECT_MAX_REQ)
		direct_queue(d, &w, op, buf + o,
			     len - o < FT_DIRECT_MAX_REQ ? len - o : FT_DIRECT_MAX_REQ, off + o);
	return direct_wait(d, &w);
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
	struct dwait w;

	dwait_init(&w);
	direct_queue(d, &w, op, NULL, len, off);
	return direct_wait(d, &w);
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
