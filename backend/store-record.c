/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-record.c: the blkcrash "record" store wrapper (see store.h).
 *
 * Passes every I/O to the store below unchanged and, when a completion
 * is reaped, appends a record of it to the crash log (include/crashlog.h)
 * before handing it back: every WRITE (with its data), FLUSH and DISCARD,
 * successful or not, in completion order.  READs are not logged.
 *
 * A FLUSH covers what completed before it was submitted (fdatasync
 * semantics), so the wrapper notes the log's next seq when a FLUSH is
 * submitted and stores it in the FLUSH record as "covers".  A write that
 * completes while the flush runs is logged after that point and is not
 * covered, even though the host may in fact have made it durable: the
 * log never claims more durability than the backend could rely on.
 *
 * The store below (cfg->lower) is called only through store.h's
 * bk_store_* functions, and not owned: the caller closes it after this
 * one.  A power cut (bk_stack_power_cut(), top first) marks the log.
 * Several queues may log at once; one mutex per store orders the records
 * and numbers them.  If the log cannot be appended to (ENOSPC, EIO), the
 * first failure is logged once and every later I/O completes with -EIO:
 * a recording with a hole in it would prove nothing.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "crashlog.h"
#include "log.h"
#include "store.h"

struct record_store {
	struct bk_store *lower;
	bool writeback;			/* lower needs FLUSH for durability */
	char *path;

	pthread_mutex_t lock;		/* protects everything below */
	int fd;				/* the log, O_APPEND */
	uint64_t next_seq;
	int error;			/* first append failure, sticky */
	bool cut;			/* the CUT record is written */
};

struct record_flush {
	struct bk_io *io;
	uint64_t covers;
};

struct record_queue {
	struct record_store *s;
	struct bk_store_queue *lower;	/* a queue of the store below */
	unsigned int depth;
	struct record_flush *flushes;	/* FLUSHes in flight, depth slots */
	unsigned int nflush;
	/* per-reap scratch: encoded headers and the iovec for writev */
	unsigned char (*hdrs)[CRASHLOG_REC_SIZE];
	struct iovec *iov;
	unsigned int iov_cap;
};

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Write all of iov[0..n) at the end of the log.  0 or -errno. */
static int
record_append(int fd, struct iovec *iov, unsigned int n)
{
	while (n > 0) {
		unsigned int chunk = n < IOV_MAX ? n : IOV_MAX;
		ssize_t r = writev(fd, iov, (int)chunk);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		/* skip what was written; a short write continues mid-iovec */
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0 && r > 0) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static int
record_open(const struct bk_store_config *cfg, void **priv,
	    struct bk_store_features *features)
{
	const struct bk_store_features *lf;
	struct record_store *rs;
	struct crashlog_hdr h = { .version = CRASHLOG_VERSION };
	unsigned char hbuf[CRASHLOG_HDR_SIZE];
	struct iovec iov = { hbuf, sizeof(hbuf) };
	int r;

	if (!cfg->lower) {
		log_error("store \"record\": no lower store to record");
		return -EINVAL;
	}
	if (!cfg->record_path || !*cfg->record_path) {
		log_error("store \"record\": no log file given (--record=FILE)");
		return -EINVAL;
	}
	rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	rs->path = strdup(cfg->record_path);
	if (!rs->path) {
		free(rs);
		return -ENOMEM;
	}
	lf = bk_store_features(cfg->lower);
	rs->lower = cfg->lower;
	rs->writeback = lf->writeback;
	rs->next_seq = 1;
	pthread_mutex_init(&rs->lock, NULL);
	rs->fd = open(rs->path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
		      0644);
	if (rs->fd < 0) {
		r = -errno;
		log_error("record log %s: open: %m", rs->path);
		goto err;
	}
	h.dev_size = lf->size;
	h.sector = lf->sector_size;
	h.flags = rs->writeback ? CRASHLOG_F_WRITEBACK : 0;
	h.start_ns = now_ns();
	crashlog_encode_hdr(hbuf, &h);
	r = record_append(rs->fd, &iov, 1);
	if (r < 0) {
		errno = -r;
		log_error("record log %s: write: %m", rs->path);
		close(rs->fd);
		goto err;
	}
	*features = *lf;	/* what is below, as it is */
	features->read_only = cfg->read_only;
	*priv = rs;
	return 0;
err:
	pthread_mutex_destroy(&rs->lock);
	free(rs->path);
	free(rs);
	return r;
}

static void
record_close(void *priv)
{
	struct record_store *rs = priv;

	if (close(rs->fd) < 0)
		log_error("record log %s: close: %m", rs->path);
	pthread_mutex_destroy(&rs->lock);
	free(rs->path);
	free(rs);
}

static void
record_queue_free(struct record_queue *rq)
{
	free(rq->flushes);
	free(rq->hdrs);
	free(rq->iov);
	free(rq);
}

static int
record_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct record_store *rs = priv;
	struct record_queue *rq;
	int r;

	if (depth == 0)
		return -EINVAL;
	rq = calloc(1, sizeof(*rq));
	if (!rq)
		return -ENOMEM;
	rq->s = rs;
	rq->depth = depth;
	rq->flushes = calloc(depth, sizeof(*rq->flushes));
	rq->hdrs = calloc(depth, sizeof(*rq->hdrs));
	rq->iov_cap = 2 * depth;
	rq->iov = calloc(rq->iov_cap, sizeof(*rq->iov));
	if (!rq->flushes || !rq->hdrs || !rq->iov) {
		record_queue_free(rq);
		return -ENOMEM;
	}
	r = bk_store_queue_open(rs->lower, depth, &rq->lower);
	if (r < 0) {
		record_queue_free(rq);
		return r;
	}
	*qpriv = rq;
	return 0;
}

static void
record_queue_close(void *qpriv)
{
	struct record_queue *rq = qpriv;

	bk_store_queue_close(rq->lower);
	record_queue_free(rq);
}

static int
record_queue_fd(void *qpriv)
{
	struct record_queue *rq = qpriv;

	return bk_store_queue_fd(rq->lower);
}

static int
record_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct record_queue *rq = qpriv;
	struct record_store *rs = rq->s;
	unsigned int i, first = rq->nflush;
	int accepted;

	pthread_mutex_lock(&rs->lock);
	if (rs->error) {
		pthread_mutex_unlock(&rs->lock);
		return -EIO;
	}
	for (i = 0; i < n; i++) {
		if (ios[i]->op != BK_IO_FLUSH)
			continue;
		if (rq->nflush == rq->depth)
			break;	/* more than depth in flight: refuse the rest */
		rq->flushes[rq->nflush].io = ios[i];
		rq->flushes[rq->nflush].covers = rs->next_seq;
		rq->nflush++;
	}
	pthread_mutex_unlock(&rs->lock);
	if (i == 0)
		return -EAGAIN;
	n = i;

	accepted = bk_store_submit(rq->lower, ios, n);
	/* forget the flushes the lower store did not take */
	for (i = (accepted > 0 ? (unsigned int)accepted : 0); i < n; i++) {
		unsigned int k;

		if (ios[i]->op != BK_IO_FLUSH)
			continue;
		for (k = first; k < rq->nflush; k++) {
			if (rq->flushes[k].io == ios[i]) {
				rq->flushes[k] = rq->flushes[--rq->nflush];
				break;
			}
		}
	}
	return accepted;
}

/* Remove io from the in-flight flush list; returns its covers value. */
static uint64_t
record_take_flush(struct record_queue *rq, struct bk_io *io)
{
	unsigned int k;
	uint64_t covers;

	for (k = 0; k < rq->nflush; k++) {
		if (rq->flushes[k].io == io) {
			covers = rq->flushes[k].covers;
			rq->flushes[k] = rq->flushes[--rq->nflush];
			return covers;
		}
	}
	return 0;	/* cannot happen: covers nothing, never overclaims */
}

/* Hash the data of a completed write (its iovec, len bytes). */
static uint64_t
record_hash_iov(const struct bk_io *io)
{
	uint64_t h = CRASHLOG_HASH_INIT;
	int i;

	for (i = 0; i < io->iovcnt; i++)
		h = crashlog_hash_update(h, io->iov[i].iov_base, io->iov[i].iov_len);
	return h;
}

static int
record_grow_iov(struct record_queue *rq, unsigned int need)
{
	struct iovec *n;
	unsigned int cap = rq->iov_cap;

	while (cap < need)
		cap *= 2;
	if (cap == rq->iov_cap)
		return 0;
	n = realloc(rq->iov, cap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	rq->iov = n;
	rq->iov_cap = cap;
	return 0;
}

static int
record_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct record_queue *rq = qpriv;
	struct record_store *rs = rq->s;
	unsigned int i, niov = 0, nhdr = 0;
	uint64_t t;
	int n, r = 0;

	if (max > rq->depth)
		max = rq->depth;	/* hdrs[] has depth slots */
	n = bk_store_reap(rq->lower, done, max);
	if (n <= 0)
		return n;
	t = now_ns();

	pthread_mutex_lock(&rs->lock);
	for (i = 0; i < (unsigned int)n; i++) {
		struct bk_io *io = done[i];
		struct crashlog_rec rec = { .time_ns = t };
		uint64_t covers = 0;

		if (io->op == BK_IO_FLUSH)
			covers = record_take_flush(rq, io);
		if (io->op == BK_IO_READ || rs->error)
			continue;
		rec.result = io->result < 0 ? (int32_t)io->result : 0;
		if (rec.result < 0)
			rec.flags |= CRASHLOG_R_FAILED;
		switch (io->op) {
		case BK_IO_WRITE:
			rec.type = CRASHLOG_WRITE;
			rec.offset = io->offset;
			rec.len = io->len;
			if (io->flags & BK_IO_FUA)
				rec.flags |= CRASHLOG_R_FUA;
			if ((io->flags & BK_IO_FUA) || !rs->writeback)
				rec.flags |= CRASHLOG_R_DURABLE;
			if (!(rec.flags & CRASHLOG_R_FAILED))
				rec.hash = record_hash_iov(io);
			break;
		case BK_IO_FLUSH:
			rec.type = CRASHLOG_FLUSH;
			rec.covers = covers;
			break;
		case BK_IO_DISCARD:
			rec.type = CRASHLOG_DISCARD;
			rec.offset = io->offset;
			rec.len = io->len;
			if (io->flags & BK_IO_SECURE)
				rec.flags |= CRASHLOG_R_SECURE;
			if (!rs->writeback)
				rec.flags |= CRASHLOG_R_DURABLE;
			break;
		default:
			continue;
		}
		rec.seq = rs->next_seq++;
		r = record_grow_iov(rq, niov + 1 + (unsigned int)io->iovcnt);
		if (r < 0)
			break;
		crashlog_encode_rec(rq->hdrs[nhdr], &rec);
		rq->iov[niov].iov_base = rq->hdrs[nhdr];
		rq->iov[niov].iov_len = CRASHLOG_REC_SIZE;
		niov++;
		nhdr++;
		if (crashlog_data_len(&rec)) {
			memcpy(&rq->iov[niov], io->iov, (size_t)io->iovcnt * sizeof(*io->iov));
			niov += (unsigned int)io->iovcnt;
		}
	}
	if (r == 0 && niov > 0)
		r = record_append(rs->fd, rq->iov, niov);
	if (r < 0 && !rs->error) {
		rs->error = r;
		errno = -r;
		log_error("record log %s: append failed, failing all I/O from now: %m",
			  rs->path);
	}
	if (rs->error) {
		/* not (fully) on the log: the caller must not see success */
		for (i = 0; i < (unsigned int)n; i++)
			done[i]->result = -EIO;
	}
	pthread_mutex_unlock(&rs->lock);
	return n;
}

/*
 * Mark the log with a CUT record, once (a caller may cut a stack more
 * than once).  bk_stack_power_cut() cuts the layers top first, so what
 * a volatile cache above writes back during its cut is on the log
 * before the CUT; if this layer is cut first, it is logged after it
 * (it did reach the store).  The layers below are cut by the stack.
 */
static void
record_power_cut(void *priv)
{
	struct record_store *rs = priv;
	struct crashlog_rec rec = { .type = CRASHLOG_CUT };
	unsigned char hbuf[CRASHLOG_REC_SIZE];
	struct iovec iov = { hbuf, sizeof(hbuf) };

	pthread_mutex_lock(&rs->lock);
	if (!rs->error && !rs->cut) {
		rec.seq = rs->next_seq++;
		rec.time_ns = now_ns();
		crashlog_encode_rec(hbuf, &rec);
		rs->error = record_append(rs->fd, &iov, 1);
		rs->cut = true;
	}
	pthread_mutex_unlock(&rs->lock);
}

const struct bk_store_driver bk_store_record_driver = {
	.name = "record",
	.wrapper = true,
	.open = record_open,
	.close = record_close,
	.queue_open = record_queue_open,
	.queue_close = record_queue_close,
	.queue_fd = record_queue_fd,
	.submit = record_submit,
	.reap = record_reap,
	.power_cut = record_power_cut,
};
