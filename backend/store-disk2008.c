/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-disk2008.c: the "disk2008" storage driver: a file served at the
 * speed of a 7200 rpm SATA disk of 2008 (blkbench's barrier table).
 *
 * Its arg is the path of a regular file, which holds the data.  The
 * data is read and written at once, buffered (the file belongs in RAM,
 * e.g. on /dev/shm: the host's disk must not be the bottleneck), and
 * the completion is handed back when the host's CLOCK_MONOTONIC reaches
 * the time the model of disk2008.h computed for it: the disk's speed is
 * the model's, whatever the host's load or its disk.  cfg->writethrough
 * (the vbd's cache=writethrough, export --cache writethrough) is the
 * disk's write cache off (hdparm -W0): writes complete when on the
 * media, the store reports no volatile cache; otherwise the cache is on
 * (writeback), and a FLUSH completes when the modelled cache has drained.
 *
 * What the model's cache holds is timing only: the data is in the file
 * from the moment the request arrives, and the file is never fsynced
 * (the host's durability is not what is measured).  A power cut of the
 * model therefore loses nothing; blkcrash stacks its "volatile" wrapper
 * on top to lose what a cache may lose, and this store costs that
 * wrapper's flushes and writes back as the disk would.
 *
 * An asynchronous driver: each queue keeps its requests sorted by due
 * time and a timerfd armed (absolute) at the first; the fd polls
 * readable once a completion is due.  The model is shared by the
 * store's queues under one mutex.  No discard (a 2008 disk has no TRIM).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/timerfd.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "disk2008.h"
#include "log.h"
#include "store.h"

/* ---------------------------------------------------------------- */
/* The model (disk2008.h).                                           */
/* ---------------------------------------------------------------- */

void
bk_d8_default_params(struct bk_d8_params *p)
{
	memset(p, 0, sizeof(*p));
	p->media_bps = 75000000;	/* 75 MB/s sustained, outer to inner mean */
	p->iface_bps = 300000000;	/* SATA 3 Gb/s (8b/10b): 300 MB/s */
	p->t2t_ns = 800000;		/* 0.8 ms track to track */
	/* 8.5 ms mean seek over uniform random pairs: E[sqrt(d/stroke)] =
	 * 8/15, so full = t2t + (8.5 - t2t) * 15/8 = 15.24 ms */
	p->full_ns = 15237500;
	p->rot_ns = 8333333;		/* 7200 rpm: half a turn 4.17 ms */
	p->cmd_ns = 50000;		/* 0.05 ms per command */
	p->cache_bytes = 16u << 20;	/* 16 MiB */
}

int
bk_d8_init(struct bk_d8_model *m, const struct bk_d8_params *p, bool wce)
{
	memset(m, 0, sizeof(*m));
	if (!p->stroke || !p->media_bps || !p->iface_bps || !p->cache_bytes ||
	    p->full_ns < p->t2t_ns || !p->rot_ns)
		return -EINVAL;
	m->p = *p;
	m->wce = wce;
	m->ring_cap = 1024;
	m->ring = calloc(m->ring_cap, sizeof(*m->ring));
	return m->ring ? 0 : -ENOMEM;
}

void
bk_d8_fini(struct bk_d8_model *m)
{
	free(m->ring);
	m->ring = NULL;
}

/* Integer square root (floor). */
static uint64_t
d8_isqrt(uint64_t x)
{
	uint64_t r = 0, bit = 1ull << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

uint64_t
bk_d8_seek_ns(const struct bk_d8_params *p, uint64_t d)
{
	uint64_t frac;

	if (d == 0)
		return 0;
	if (d >= p->stroke)
		return p->full_ns;
	/* sqrt(d / stroke) in units of 2^-16 */
	frac = d8_isqrt((uint64_t)(((unsigned __int128)d << 32) / p->stroke));
	return p->t2t_ns + (((p->full_ns - p->t2t_ns) * frac) >> 16);
}

static uint64_t
d8_xfer_ns(uint64_t len, uint64_t bps)
{
	return (uint64_t)(((unsigned __int128)len * 1000000000u + bps - 1) / bps);
}

/* A media access ready to start at ready: queue it on the mechanism,
 * return when it ends. */
static uint64_t
d8_media(struct bk_d8_model *m, uint64_t ready, uint64_t off, uint64_t len, bool read)
{
	uint64_t start = ready > m->media_free ? ready : m->media_free;
	uint64_t pos;

	if (off == m->head && (start == m->media_free || (read && m->last_read))) {
		pos = 0;	/* streaming, or read look-ahead */
	} else if (off == m->head) {
		/* the sector passed under the head during the idle gap */
		uint64_t g = start - m->media_free;

		pos = g < m->p.rot_ns ? m->p.rot_ns - g : m->p.rot_ns / 2;
		m->n_rot_waits++;
	} else {
		pos = bk_d8_seek_ns(&m->p, off > m->head ? off - m->head : m->head - off) +
		      m->p.rot_ns / 2;
		m->n_seeks++;
	}
	m->busy_ns += pos + d8_xfer_ns(len, m->p.media_bps);
	m->media_free = start + pos + d8_xfer_ns(len, m->p.media_bps);
	m->head = off + len;
	m->last_read = read;
	return m->media_free;
}

/* Forget the cached writes on the media by t. */
static void
d8_gc(struct bk_d8_model *m, uint64_t t)
{
	while (m->ring_n && m->ring[m->ring_first].end_ns <= t) {
		m->cached -= m->ring[m->ring_first].len;
		m->ring_first = (m->ring_first + 1) % m->ring_cap;
		m->ring_n--;
	}
}

static int
d8_push(struct bk_d8_model *m, uint64_t end, uint64_t len)
{
	if (m->ring_n == m->ring_cap) {
		uint64_t cap = 2 * m->ring_cap, i;
		struct bk_d8_extent *r = calloc(cap, sizeof(*r));

		if (!r)
			return -ENOMEM;
		for (i = 0; i < m->ring_n; i++)
			r[i] = m->ring[(m->ring_first + i) % m->ring_cap];
		free(m->ring);
		m->ring = r;
		m->ring_cap = cap;
		m->ring_first = 0;
	}
	m->ring[(m->ring_first + m->ring_n) % m->ring_cap] =
		(struct bk_d8_extent){ .end_ns = end, .len = len };
	m->ring_n++;
	m->cached += len;
	return 0;
}

uint64_t
bk_d8_dirty_at(const struct bk_d8_model *m, uint64_t t)
{
	uint64_t i, n = 0;

	for (i = 0; i < m->ring_n; i++) {
		const struct bk_d8_extent *e = &m->ring[(m->ring_first + i) % m->ring_cap];

		if (e->end_ns > t)
			n += e->len;
	}
	return n;
}

/* When the cache has room for len more bytes, at t or later. */
static uint64_t
d8_room_at(struct bk_d8_model *m, uint64_t t, uint64_t len)
{
	uint64_t need = len < m->p.cache_bytes ? len : m->p.cache_bytes;
	uint64_t held = m->cached, i;

	if (held + need <= m->p.cache_bytes)
		return t;
	m->n_cache_waits++;
	for (i = 0; i < m->ring_n; i++) {
		const struct bk_d8_extent *e = &m->ring[(m->ring_first + i) % m->ring_cap];

		held -= e->len;
		if (held + need <= m->p.cache_bytes)
			return e->end_ns > t ? e->end_ns : t;
	}
	return t;	/* not reached: an empty cache has room */
}

uint64_t
bk_d8_submit(struct bk_d8_model *m, uint64_t t, enum bk_d8_op op, uint64_t off,
	     uint64_t len)
{
	uint64_t done;

	if (t < m->last_t)
		t = m->last_t;
	m->last_t = t;
	d8_gc(m, t);
	m->n_ios++;
	switch (op) {
	case BK_D8_READ:
		done = d8_media(m, t, off, len, true) + d8_xfer_ns(len, m->p.iface_bps);
		break;
	case BK_D8_WRITE:
	case BK_D8_FUA_WRITE:
		if (op == BK_D8_WRITE && m->wce) {
			uint64_t admit = d8_room_at(m, t, len);
			uint64_t in = admit + d8_xfer_ns(len, m->p.iface_bps);
			struct bk_d8_model save = *m;
			uint64_t end = d8_media(m, in, off, len, false);

			if (d8_push(m, end, len) < 0) {
				*m = save;
				return 0;
			}
			done = in;
			break;
		}
		/* the cache is off, or FUA: on the media */
		done = d8_media(m, t + d8_xfer_ns(len, m->p.iface_bps), off, len, false);
		break;
	case BK_D8_FLUSH:
	default:
		done = t;
		if (m->ring_n) {
			uint64_t last = m->ring[(m->ring_first + m->ring_n - 1) % m->ring_cap].end_ns;

			if (last > done)
				done = last;
		}
		break;
	}
	return done + m->p.cmd_ns;
}

/* ---------------------------------------------------------------- */
/* The driver.                                                        */
/* ---------------------------------------------------------------- */

struct d8_store {
	int fd;
	char *path;
	pthread_mutex_t lock;		/* the model */
	struct bk_d8_model m;
};

struct d8_pending {
	uint64_t due;			/* CLOCK_MONOTONIC ns */
	struct bk_io *io;
};

struct d8_queue {
	struct d8_store *s;
	int tfd;			/* timerfd, armed at pend[0].due */
	unsigned int depth, n;
	struct d8_pending *pend;	/* sorted by due, n of depth */
};

static uint64_t
d8_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int
d8_identify(const char *arg, char *id, size_t len)
{
	struct stat st;
	int n;

	if (stat(arg, &st) < 0)
		return -errno;
	/* the file driver's form: the same file through either is one backing */
	n = snprintf(id, len, "file:%ju:%ju", (uintmax_t)st.st_dev, (uintmax_t)st.st_ino);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int
d8_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	struct bk_d8_params p;
	struct d8_store *s;
	struct stat st;
	int rc;

	if (!cfg->arg || !*cfg->arg)
		return bk_store_fail(cfg, -EINVAL, "disk2008 store", "no path");
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->path = strdup(cfg->arg);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	s->fd = open(cfg->arg, (cfg->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
	if (s->fd < 0) {
		rc = bk_store_fail(cfg, -errno, "disk2008 store", "open %s: %m", cfg->arg);
		goto fail;
	}
	if (fstat(s->fd, &st) < 0) {
		rc = bk_store_fail(cfg, -errno, "disk2008 store", "fstat %s: %m", cfg->arg);
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = bk_store_fail(cfg, -EINVAL, "disk2008 store",
				   "%s is not a regular file", cfg->arg);
		goto fail;
	}
	bk_d8_default_params(&p);
	/* the filesystem fills the modelled disk: a full stroke crosses it */
	p.stroke = (uint64_t)st.st_size & ~511ull;
	if (p.stroke == 0)
		p.stroke = 512;	/* the stack refuses an empty store */
	rc = bk_d8_init(&s->m, &p, !cfg->writethrough);
	if (rc < 0)
		goto fail;
	pthread_mutex_init(&s->lock, NULL);
	memset(f, 0, sizeof(*f));
	f->size = (uint64_t)st.st_size & ~511ull;
	f->sector_size = 512;
	f->physical_sector_size = 512;
	f->read_only = cfg->read_only;
	f->can_flush = true;
	f->writeback = !cfg->writethrough;
	f->fua = BK_FUA_NATIVE;
	log_info("disk2008 store %s: a 2008 SATA disk, %" PRIu64 " MB/s, %s, %" PRIu64
		 " bytes, the write cache %s", cfg->arg, p.media_bps / 1000000,
		 "7200 rpm", f->size, cfg->writethrough ? "off" : "on (16 MiB)");
	*priv = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
	return rc;
}

static void
d8_close(void *priv)
{
	struct d8_store *s = priv;

	log_info("disk2008 store %s: %" PRIu64 " requests, %" PRIu64 " seeks, %" PRIu64
		 " rotation waits, %" PRIu64 " waits for cache room, mechanism busy %.1f s",
		 s->path, s->m.n_ios, s->m.n_seeks, s->m.n_rot_waits, s->m.n_cache_waits,
		 (double)s->m.busy_ns / 1e9);
	bk_d8_fini(&s->m);
	pthread_mutex_destroy(&s->lock);
	close(s->fd);
	free(s->path);
	free(s);
}

/* The whole transfer now, or -EIO (a short count). */
static int64_t
d8_data(struct d8_store *s, struct bk_io *io)
{
	struct iovec iov[IOV_MAX], *v = iov;
	int cnt = io->iovcnt;
	uint64_t done = 0;

	if (cnt > IOV_MAX)
		return -EINVAL;
	memcpy(iov, io->iov, (size_t)cnt * sizeof(*iov));
	while (done < io->len) {
		ssize_t n = io->op == BK_IO_READ ?
			    preadv(s->fd, v, cnt, (off_t)(io->offset + done)) :
			    pwritev(s->fd, v, cnt, (off_t)(io->offset + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (uint64_t)n;
		while (n > 0 && cnt > 0) {
			if ((size_t)n >= v->iov_len) {
				n -= (ssize_t)v->iov_len;
				v++;
				cnt--;
			} else {
				v->iov_base = (char *)v->iov_base + n;
				v->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	return (int64_t)io->len;
}

static void
d8_arm(struct d8_queue *q)
{
	struct itimerspec its = { 0 };

	if (q->n) {
		uint64_t due = q->pend[0].due ? q->pend[0].due : 1;

		its.it_value.tv_sec = (time_t)(due / 1000000000u);
		its.it_value.tv_nsec = (long)(due % 1000000000u);
	}
	/* cannot fail on a valid timerfd and a valid time */
	(void)timerfd_settime(q->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

static int
d8_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct d8_queue *q;
	int r;

	if (depth == 0)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->s = priv;
	q->depth = depth;
	q->pend = calloc(depth, sizeof(*q->pend));
	q->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!q->pend || q->tfd < 0) {
		r = q->tfd < 0 ? -errno : -ENOMEM;
		if (q->tfd >= 0)
			close(q->tfd);
		free(q->pend);
		free(q);
		return r;
	}
	*qpriv = q;
	return 0;
}

static void
d8_queue_close(void *qpriv)
{
	struct d8_queue *q = qpriv;

	/* what is in flight is done with the file; it ends at its time */
	if (q->n) {
		uint64_t last = q->pend[q->n - 1].due;
		struct timespec ts = { .tv_sec = (time_t)(last / 1000000000u),
				       .tv_nsec = (long)(last % 1000000000u) };

		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
	close(q->tfd);
	free(q->pend);
	free(q);
}

static int
d8_queue_fd(void *qpriv)
{
	return ((struct d8_queue *)qpriv)->tfd;
}

static enum bk_d8_op
d8_op(const struct bk_io *io)
{
	if (io->op == BK_IO_READ)
		return BK_D8_READ;
	if (io->op == BK_IO_FLUSH)
		return BK_D8_FLUSH;
	return io->flags & BK_IO_FUA ? BK_D8_FUA_WRITE : BK_D8_WRITE;
}

static int
d8_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct d8_queue *q = qpriv;
	struct d8_store *s = q->s;
	unsigned int i, first = q->n ? 1 : 0;
	uint64_t old_first = q->n ? q->pend[0].due : 0;

	if (n > q->depth - q->n)
		n = q->depth - q->n;
	if (n == 0)
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		struct bk_io *io = ios[i];
		uint64_t due = 0;
		unsigned int j;

		io->host_action = io->op == BK_IO_READ ? "disk2008-read" :
				  io->op == BK_IO_FLUSH ? "disk2008-flush" :
				  "disk2008-write";
		if (io->op == BK_IO_READ || io->op == BK_IO_WRITE)
			io->result = d8_data(s, io);
		else if (io->op == BK_IO_FLUSH)
			io->result = 0;
		else
			io->result = -EOPNOTSUPP;	/* no discard: refused above */
		pthread_mutex_lock(&s->lock);
		if (io->result >= 0)
			due = bk_d8_submit(&s->m, d8_now(), d8_op(io), io->offset,
					   io->op == BK_IO_FLUSH ? 0 : io->len);
		pthread_mutex_unlock(&s->lock);
		if (io->result >= 0 && due == 0)
			io->result = -ENOMEM;
		if (due == 0)
			due = d8_now();
		/* insert, after the equal ones */
		for (j = q->n; j > 0 && q->pend[j - 1].due > due; j--)
			q->pend[j] = q->pend[j - 1];
		q->pend[j] = (struct d8_pending){ .due = due, .io = io };
		q->n++;
	}
	if (!first || q->pend[0].due != old_first)
		d8_arm(q);
	return (int)n;
}

static int
d8_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct d8_queue *q = qpriv;
	uint64_t now = d8_now(), v;
	unsigned int k = 0, j;

	if (read(q->tfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	while (k < max && k < q->n && q->pend[k].due <= now) {
		done[k] = q->pend[k].io;
		k++;
	}
	if (k) {
		for (j = k; j < q->n; j++)
			q->pend[j - k] = q->pend[j];
		q->n -= k;
	}
	/* re-armed every time: the read above disarmed a timer that fired */
	d8_arm(q);
	return (int)k;
}

static bool
d8_poll(void *qpriv)
{
	struct d8_queue *q = qpriv;

	return q->n && q->pend[0].due <= d8_now();
}

const struct bk_store_driver bk_store_disk2008_driver = {
	.name = "disk2008",
	.open = d8_open,
	.close = d8_close,
	.identify = d8_identify,
	.queue_open = d8_queue_open,
	.queue_close = d8_queue_close,
	.queue_fd = d8_queue_fd,
	.submit = d8_submit,
	.reap = d8_reap,
	.poll = d8_poll,
};
