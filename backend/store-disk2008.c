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
 * The environment variable BK_D8_WT_BUF (bytes; 0: no limit), read at
 * open, replaces the model's wt_buf (what the cache-off disk holds of
 * queued writes' data): for measuring the model, blkbench(1).
 * BK_D8_TRACE (a path prefix) makes each open write PREFIX.PID.NS: a line
 * "R arrive ready done op off len" (ns on CLOCK_MONOTONIC, bytes; op as
 * enum bk_d8_op; ready: when a write's data is in the disk, else the
 * arrival) for each request once its completion time is known, and
 * every 20 ms at most "S now busy_ns seeks rotation_waits requests
 * wt_held", the model's counters.
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
	p->stroke = 250000000000ull;	/* a 250 GB disk */
	/* cache off: the data of two 128 KiB writes, the one on the media
	 * and the next (chosen by measurement against the published
	 * wce1/wce0 of block output: BENCHMARKS "The 2008 disk") */
	p->wt_buf = 256u << 10;
	/* The longest an access waits while others are taken before it
	 * (the starvation bound of the drive's queue).  200 ms was too
	 * short: at queue depth 32 in a small region SPTF leaves a few
	 * accesses that long behind, and taking them oldest first undid all
	 * of SPTF's gain (test-disk2008 "sptf": 7.6 ms per write against
	 * 2.9).  1 s was too short with the cache on and no flushes: 16 MiB
	 * of destages waiting, SPTF leaves far ones behind past 1 s, and
	 * serving those oldest first costs seeks that leave more behind
	 * (bonnie++ block output, wce1 barrier0: 145-398 taken oldest first a
	 * run and 13 200-24 747 K/s; with 3 s none, and 31 626-32 046 K/s:
	 * BENCHMARKS "The 2008 disk"). */
	p->max_wait_ns = 3000000000ull;
	/* The cache holds at most 256 writes, and a read that has waited
	 * 25 ms goes before the destage.  Both chosen by measurement, for
	 * bonnie++'s creates with the cache on and no barriers: the host
	 * waits there on a handful of metadata reads, which SPTF left
	 * behind a cache full of scattered destages for 3 to 115 ms each,
	 * and on room in the cache, which the checkpoint's thousands of
	 * 4 KiB writes filled by entries long before its 16 MiB.  Without
	 * either, one phase made 3 665 to 4 756 creates/s; with a 25 ms
	 * read bound and 128, 256, 512 entries 4 348-4 901, 4 771-5 178,
	 * 4 583-5 148 (8 runs each: BENCHMARKS "The 2008 disk: reads
	 * before the destage").  Neither changes the cache-off disk. */
	p->cache_writes = 256;
	p->read_wait_ns = 25000000;
}

int
bk_d8_init(struct bk_d8_model *m, const struct bk_d8_params *p, bool wce)
{
	memset(m, 0, sizeof(*m));
	if (!p->stroke || !p->media_bps || !p->iface_bps || !p->cache_bytes ||
	    p->full_ns < p->t2t_ns || !p->rot_ns || !p->max_wait_ns)
		return -EINVAL;
	m->p = *p;
	m->wce = wce;
	m->room_tail = &m->room;
	m->known_tail = &m->known;
	m->wt_tail = &m->wt_wait;
	return 0;
}

void
bk_d8_fini(struct bk_d8_model *m)
{
	struct bk_d8_job *j, *n;

	for (j = m->queue; j; j = n) {
		n = j->next;
		if (j->destage)
			free(j);
	}
	if (m->cur && m->cur != &m->busy_mark)
		free(m->cur);
	m->queue = m->cur = NULL;
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

static void
d8_known(struct bk_d8_model *m, struct bk_d8_job *j, uint64_t done)
{
	j->done_ns = done + m->p.cmd_ns;
	j->next = NULL;
	*m->known_tail = j;
	m->known_tail = &j->next;
}

struct bk_d8_job *
bk_d8_take(struct bk_d8_model *m)
{
	struct bk_d8_job *j = m->known;

	if (j) {
		m->known = j->next;
		if (!m->known)
			m->known_tail = &m->known;
		j->next = NULL;
	}
	return j;
}

/* Bytes under the head in one turn. */
static uint64_t
d8_track(const struct bk_d8_params *p)
{
	return (uint64_t)((unsigned __int128)p->media_bps * p->rot_ns / 1000000000u);
}

/* Does a read at off continue one of the last 8 reads (look-ahead)? */
static bool
d8_ahead(const struct bk_d8_model *m, const struct bk_d8_job *j)
{
	unsigned int k;

	if (j->op != BK_D8_READ || j->off == 0)
		return false;
	for (k = 0; k < 8; k++)
		if (m->stream_end[k] == j->off)
			return true;
	return false;
}

/*
 * Positioning before j if the mechanism takes it at start: the seek,
 * then the wait for its sector to come round.  The platter's phase at
 * time t is t mod rot; the sector at byte x passes under the head at
 * phase (x mod track) / track of a turn, so an access that follows the
 * last one without a gap finds its sector under the head, and one after
 * an idle gap g waits rot - g.  *seek: whether the head moves.
 */
static uint64_t
d8_pos(const struct bk_d8_model *m, uint64_t start, const struct bk_d8_job *j, bool *seek)
{
	uint64_t tr = d8_track(&m->p), s, target, phase;

	*seek = false;
	if (d8_ahead(m, j) ||
	    (j->off == m->head && (start == m->media_free ||
				   (j->op == BK_D8_READ && m->last_read))))
		return 0;	/* streaming, or read look-ahead */
	s = bk_d8_seek_ns(&m->p, j->off > m->head ? j->off - m->head : m->head - j->off);
	*seek = s > 0;
	target = (j->off % tr) * m->p.rot_ns / tr;
	phase = (start + s) % m->p.rot_ns;
	return s + (target + m->p.rot_ns - phase) % m->p.rot_ns;
}

/* The access j starts at start on a free mechanism: when it ends. */
static uint64_t
d8_access(struct bk_d8_model *m, uint64_t start, const struct bk_d8_job *j)
{
	bool read = j->op == BK_D8_READ, seek;
	uint64_t pos = d8_pos(m, start, j, &seek), x = d8_xfer_ns(j->len, m->p.media_bps);

	if (seek)
		m->n_seeks++;
	else if (pos)
		m->n_rot_waits++;
	if (read) {
		m->stream_end[m->stream_next] = j->off + j->len;
		m->stream_next = (m->stream_next + 1) % 8;
	}
	m->busy_ns += pos + x;
	m->head = j->off + j->len;
	m->last_read = read;
	return start + pos + x;
}

/* Is there no room in the cache for a write of need bytes? */
static bool
d8_cache_full(const struct bk_d8_model *m, uint64_t need)
{
	return m->cached + need > m->p.cache_bytes ||
	       (m->p.cache_writes && m->ndestage >= m->p.cache_writes);
}

/* Admit cache writes waiting for room, at time t (room was made then). */
static int
d8_admit(struct bk_d8_model *m, uint64_t t)
{
	while (m->room) {
		struct bk_d8_job *j = m->room, *d;
		uint64_t need = j->len < m->p.cache_bytes ? j->len : m->p.cache_bytes;
		uint64_t at = j->arrive > t ? j->arrive : t, in;

		if (d8_cache_full(m, need))
			return 0;
		d = calloc(1, sizeof(*d));
		if (!d)
			return -ENOMEM;
		m->room = j->next;
		if (!m->room)
			m->room_tail = &m->room;
		in = at + d8_xfer_ns(j->len, m->p.iface_bps);
		d->op = BK_D8_WRITE;
		d->off = j->off;
		d->len = j->len;
		d->arrive = at;
		d->ready = in;
		d->seq = m->next_seq++;
		d->destage = true;
		d->next = m->queue;
		m->queue = d;
		j->ready = in;
		m->cached += need;
		d->nwait = need;	/* a destage's share of the cache */
		m->ndestage++;
		d8_known(m, j, in);
	}
	return 0;
}

/* Cache off with wt_buf: take the data of waiting writes while the
 * disk has room for it, at time t; each joins the disk's queue once its
 * data has crossed the interface.  Of the writes waiting, the one that
 * continues the last write taken goes first (the drive streams on);
 * else, or once the oldest has waited p.max_wait_ns, the oldest. */
static void
d8_wt_admit(struct bk_d8_model *m, uint64_t t)
{
	while (m->wt_wait) {
		struct bk_d8_job **pp = &m->wt_wait, **jp, *j;
		uint64_t at;

		if (t <= m->wt_wait->arrive || t - m->wt_wait->arrive <= m->p.max_wait_ns)
			for (jp = &m->wt_wait; *jp; jp = &(*jp)->next)
				if ((*jp)->off == m->wt_end) {
					pp = jp;
					break;
				}
		j = *pp;
		if (m->wt_held && m->wt_held + j->len > m->p.wt_buf)
			return;
		*pp = j->next;
		if (!j->next)
			m->wt_tail = pp;
		at = j->arrive > t ? j->arrive : t;
		m->wt_held += j->len;
		m->wt_end = j->off + j->len;
		j->ready = at + d8_xfer_ns(j->len, m->p.iface_bps);
		j->next = m->queue;
		m->queue = j;
	}
}

/* A destage d ended at t: room in the cache, flushes perhaps done. */
static int
d8_destaged(struct bk_d8_model *m, struct bk_d8_job *d, uint64_t t)
{
	struct bk_d8_job **pp = &m->flushes, *f;

	m->cached -= d->nwait;
	m->ndestage--;
	while ((f = *pp) != NULL) {
		if (d->seq < f->seq && --f->nwait == 0) {
			*pp = f->next;
			d8_known(m, f, t > f->arrive ? t : f->arrive);
		} else {
			pp = &f->next;
		}
	}
	free(d);
	return d8_admit(m, t);
}

uint64_t
bk_d8_next_event(const struct bk_d8_model *m)
{
	const struct bk_d8_job *j;
	uint64_t first = UINT64_MAX;

	if (m->cur)
		return m->media_free;
	for (j = m->queue; j; j = j->next)
		if (j->ready < first)
			first = j->ready;
	if (first == UINT64_MAX)
		return first;
	return first > m->media_free ? first : m->media_free;
}

int
bk_d8_advance(struct bk_d8_model *m, uint64_t t)
{
	for (;;) {
		uint64_t at = bk_d8_next_event(m);
		struct bk_d8_job **pp, **best = NULL, **oldest = NULL, **oldest_read = NULL;
		uint64_t best_pos = 0;

		if (at == UINT64_MAX || at > t)
			break;
		if (m->cur) {
			/* the access under way ends */
			struct bk_d8_job *c = m->cur;

			m->cur = NULL;
			if (m->cur_wt_len) {
				/* a cache-off write is on the media: room
				 * for the data of the next */
				m->wt_held -= m->cur_wt_len;
				m->cur_wt_len = 0;
				d8_wt_admit(m, at);
			}
			if (c != &m->busy_mark) {
				int r = d8_destaged(m, c, at);

				if (r < 0)
					return r;
			}
			continue;
		}
		/* the mechanism is free at 'at': of what has arrived, the
		 * access it can start soonest (SPTF), unless one has waited
		 * longer than p.max_wait_ns: then the oldest; and instead of
		 * a destage, a read that has waited p.read_wait_ns */
		for (pp = &m->queue; *pp; pp = &(*pp)->next) {
			bool seek;
			uint64_t pos;

			if ((*pp)->ready > at)
				continue;
			pos = d8_pos(m, at, *pp, &seek);
			if (!best || pos < best_pos ||
			    (pos == best_pos && (*pp)->off < (*best)->off)) {
				best = pp;
				best_pos = pos;
			}
			if (!oldest || (*pp)->arrive < (*oldest)->arrive)
				oldest = pp;
			if ((*pp)->op == BK_D8_READ &&
			    (!oldest_read || (*pp)->arrive < (*oldest_read)->arrive))
				oldest_read = pp;
		}
		if (at - (*oldest)->arrive > m->p.max_wait_ns) {
			if (best != oldest)
				m->n_starved++;
			best = oldest;
		} else if ((*best)->destage && oldest_read && m->p.read_wait_ns &&
			   at - (*oldest_read)->arrive > m->p.read_wait_ns) {
			m->n_reads_first++;
			best = oldest_read;
		}
		{
			struct bk_d8_job *j = *best;
			uint64_t end;

			*best = j->next;
			end = d8_access(m, at, j);
			m->media_free = end;
			m->cur = j;
			if (!j->destage) {
				/* the caller's: done at the end (a read's data
				 * then crosses the interface) */
				if (j->op == BK_D8_READ)
					end += d8_xfer_ns(j->len, m->p.iface_bps);
				d8_known(m, j, end);
				if (!m->wce && j->op == BK_D8_WRITE && m->p.wt_buf)
					m->cur_wt_len = j->len;
				/* cur keeps only the mechanism busy: not the caller's job */
				m->cur = &m->busy_mark;
			}
		}
	}
	if (t > m->now)
		m->now = t;
	return 0;
}

int
bk_d8_submit(struct bk_d8_model *m, uint64_t t, struct bk_d8_job *j)
{
	int r;

	if (t < m->now)
		t = m->now;
	r = bk_d8_advance(m, t);
	if (r < 0)
		return r;
	m->n_ios++;
	j->arrive = t;
	j->ready = t;	/* a write's: when its data is in the disk (set below) */
	j->destage = false;
	j->next = NULL;
	switch (j->op) {
	case BK_D8_FLUSH:
		j->seq = m->next_seq;
		j->nwait = m->ndestage;
		if (!m->wce || j->nwait == 0) {
			d8_known(m, j, t);
			return 0;
		}
		j->next = m->flushes;
		m->flushes = j;
		return 0;
	case BK_D8_WRITE:
		if (m->wce) {
			if (m->room || d8_cache_full(m, j->len < m->p.cache_bytes ? j->len :
						     m->p.cache_bytes))
				m->n_cache_waits++;
			*m->room_tail = j;
			m->room_tail = &j->next;
			r = d8_admit(m, t);
			break;
		}
		/* the cache is off: to the media */
		if (m->p.wt_buf) {
			*m->wt_tail = j;
			m->wt_tail = &j->next;
			d8_wt_admit(m, t);
			break;
		}
		j->ready = t + d8_xfer_ns(j->len, m->p.iface_bps);
		j->next = m->queue;
		m->queue = j;
		break;
	case BK_D8_FUA_WRITE:
		j->ready = t + d8_xfer_ns(j->len, m->p.iface_bps);
		j->next = m->queue;
		m->queue = j;
		break;
	case BK_D8_READ:
	default:
		j->ready = t;
		j->next = m->queue;
		m->queue = j;
		break;
	}
	if (r < 0)
		return r;
	return bk_d8_advance(m, t);
}

/* ---------------------------------------------------------------- */
/* The driver.                                                        */
/* ---------------------------------------------------------------- */

struct d8_queue;

/* BK_D8_TRACE: the model's counters at most this often */
#define D8_TRACE_EVERY_NS 20000000ull	/* 20 ms */

struct d8_store {
	int fd;
	char *path;
	pthread_mutex_t lock;		/* the model, every queue's lists */
	struct bk_d8_model m;
	struct d8_queue *queues;	/* open queues, for re-arming */
	FILE *trace;		/* BK_D8_TRACE's file, or NULL */
	uint64_t trace_last;	/* when the model's counters were last traced */
};

struct d8_req {
	struct bk_d8_job job;
	struct bk_io *io;
	struct d8_queue *q;
	struct d8_req *free_next;
};

struct d8_queue {
	struct d8_store *s;
	struct d8_queue *next;		/* the store's list */
	int tfd;			/* timerfd: the first due, or the model's next event */
	unsigned int depth;
	unsigned int inflight;		/* submitted, not reaped */
	struct d8_req *reqs, *free;
	unsigned int n;			/* due[0..n): completion time known, sorted */
	struct d8_req **due;
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
	{
		const char *e = getenv("BK_D8_TRACE");	/* experiments: a path prefix */

		if (e && *e) {
			char *tp;

			if (asprintf(&tp, "%s.%d.%" PRIu64, e, (int)getpid(), d8_now()) < 0) {
				rc = bk_store_fail(cfg, -ENOMEM, "disk2008 store", "BK_D8_TRACE: no memory");
				goto fail;
			}
			s->trace = fopen(tp, "we");
			if (!s->trace) {
				rc = bk_store_fail(cfg, -errno, "disk2008 store", "BK_D8_TRACE: %s: %m", tp);
				free(tp);
				goto fail;
			}
			free(tp);
		}
	}
	{
		const char *e = getenv("BK_D8_WT_BUF");	/* experiments: bytes */

		if (e && *e)
			p.wt_buf = strtoull(e, NULL, 0);
	}
	/* the backing is the start of a 250 GB disk (or all of a bigger one) */
	if ((uint64_t)st.st_size > p.stroke)
		p.stroke = (uint64_t)st.st_size;
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
	log_info("disk2008 store %s: a 2008 SATA disk, %" PRIu64 " MB/s, 7200 rpm, %" PRIu64
		 " bytes, the write cache %s", cfg->arg, p.media_bps / 1000000, f->size,
		 cfg->writethrough ? "off" : "on (16 MiB, 256 writes)");
	*priv = s;
	return 0;
fail:
	if (s->trace)
		fclose(s->trace);
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
		 " rotation waits, %" PRIu64 " waits for cache room, %" PRIu64
		 " taken oldest first (waited too long), %" PRIu64 " reads taken before"
		 " a destage, mechanism busy %.1f s",
		 s->path, s->m.n_ios, s->m.n_seeks, s->m.n_rot_waits, s->m.n_cache_waits,
		 s->m.n_starved, s->m.n_reads_first, (double)s->m.busy_ns / 1e9);
	bk_d8_fini(&s->m);
	if (s->trace)
		fclose(s->trace);
	pthread_mutex_destroy(&s->lock);
	close(s->fd);
	free(s->path);
	free(s);
}

/* The whole transfer now, or -errno (-EIO for a short count: a regular
 * file transfers less only at its end). */
static int64_t
d8_data(struct d8_store *s, struct bk_io *io)
{
	bool rd = io->op == BK_IO_READ;
	uint64_t done = 0, skip;
	ssize_t n;
	int i;

	do
		n = rd ? preadv(s->fd, io->iov, io->iovcnt, (off_t)io->offset) :
			 pwritev(s->fd, io->iov, io->iovcnt, (off_t)io->offset);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((uint64_t)n == io->len)
		return (int64_t)io->len;
	/* short: the rest, one segment at a time */
	done = (uint64_t)n;
	skip = done;
	for (i = 0; i < io->iovcnt && done < io->len; i++) {
		char *b = io->iov[i].iov_base;
		uint64_t l = io->iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		b += skip;
		l -= skip;
		skip = 0;
		while (l > 0) {
			n = rd ? pread(s->fd, b, l, (off_t)(io->offset + done)) :
				 pwrite(s->fd, b, l, (off_t)(io->offset + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return -errno;
			if (n == 0)
				return -EIO;
			b += n;
			l -= (uint64_t)n;
			done += (uint64_t)n;
		}
	}
	return done == io->len ? (int64_t)io->len : -EIO;
}

/* A request whose completion time is known: into its queue's sorted list. */
static void
d8_due(struct d8_req *r)
{
	struct d8_queue *q = r->q;
	unsigned int j;

	for (j = q->n; j > 0 && q->due[j - 1]->job.done_ns > r->job.done_ns; j--)
		q->due[j] = q->due[j - 1];
	q->due[j] = r;
	q->n++;
}

/* Arm q's timer: its first due completion, or the model's next event
 * while it has requests the model has not decided yet.  Under s->lock. */
static void
d8_arm(struct d8_queue *q)
{
	struct itimerspec its = { 0 };
	uint64_t at = UINT64_MAX;

	if (q->n)
		at = q->due[0]->job.done_ns;
	if (q->inflight > q->n) {
		uint64_t ev = bk_d8_next_event(&q->s->m);

		if (ev < at)
			at = ev;
	}
	if (at != UINT64_MAX) {
		if (at == 0)
			at = 1;	/* 0 would disarm */
		its.it_value.tv_sec = (time_t)(at / 1000000000u);
		its.it_value.tv_nsec = (long)(at % 1000000000u);
	}
	/* cannot fail on a valid timerfd and a valid time */
	(void)timerfd_settime(q->tfd, TFD_TIMER_ABSTIME, &its, NULL);
}

/* Run the model to now, hand what it decided to the queues, re-arm
 * them.  Under s->lock.  0 or -ENOMEM. */
static int
d8_run(struct d8_store *s, uint64_t now)
{
	struct bk_d8_job *j;
	struct d8_queue *q;
	int r = bk_d8_advance(&s->m, now);

	while ((j = bk_d8_take(&s->m)) != NULL) {
		if (s->trace)
			fprintf(s->trace, "R %" PRIu64 " %" PRIu64 " %" PRIu64 " %d %" PRIu64
				" %" PRIu64 "\n", j->arrive, j->ready, j->done_ns, (int)j->op,
				j->off, j->len);
		d8_due(j->opaque);
	}
	/* the model's clock, not now: a queue thread may come here with a
	 * time read before another advanced the model past it */
	if (s->trace && s->m.now >= s->trace_last + D8_TRACE_EVERY_NS) {
		s->trace_last = s->m.now;
		fprintf(s->trace, "S %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			" %" PRIu64 "\n", s->m.now, s->m.busy_ns, s->m.n_seeks,
			s->m.n_rot_waits, s->m.n_ios, s->m.wt_held);
	}
	for (q = s->queues; q; q = q->next)
		d8_arm(q);
	return r;
}

static void
d8_queue_free(struct d8_queue *q)
{
	if (q->tfd >= 0)
		close(q->tfd);
	free(q->reqs);
	free(q->due);
	free(q);
}

static int
d8_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct d8_store *s = priv;
	struct d8_queue *q;
	unsigned int i;
	int r;

	if (depth == 0)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->s = s;
	q->depth = depth;
	q->reqs = calloc(depth, sizeof(*q->reqs));
	q->due = calloc(depth, sizeof(*q->due));
	q->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (!q->reqs || !q->due || q->tfd < 0) {
		r = q->tfd < 0 ? -errno : -ENOMEM;
		d8_queue_free(q);
		return r;
	}
	for (i = 0; i < depth; i++) {
		q->reqs[i].q = q;
		q->reqs[i].job.opaque = &q->reqs[i];
		q->reqs[i].free_next = q->free;
		q->free = &q->reqs[i];
	}
	pthread_mutex_lock(&s->lock);
	q->next = s->queues;
	s->queues = q;
	pthread_mutex_unlock(&s->lock);
	*qpriv = q;
	return 0;
}

static void
d8_queue_close(void *qpriv)
{
	struct d8_queue *q = qpriv;
	struct d8_store *s = q->s;
	struct d8_queue **pp;

	/* what is in flight is done with the file; it ends at its time,
	 * as the model decides it */
	pthread_mutex_lock(&s->lock);
	for (;;) {
		uint64_t at = UINT64_MAX, now = d8_now();
		struct timespec ts;

		(void)d8_run(s, now);
		while (q->n && q->due[0]->job.done_ns <= now) {
			memmove(q->due, q->due + 1, (q->n - 1) * sizeof(*q->due));
			q->n--;
			q->inflight--;
		}
		if (!q->inflight)
			break;
		if (q->n)
			at = q->due[0]->job.done_ns;
		if (bk_d8_next_event(&s->m) < at)
			at = bk_d8_next_event(&s->m);
		if (at == UINT64_MAX)
			break;	/* not reached: a request in flight is decided or waits for an event */
		ts.tv_sec = (time_t)(at / 1000000000u);
		ts.tv_nsec = (long)(at % 1000000000u);
		pthread_mutex_unlock(&s->lock);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		pthread_mutex_lock(&s->lock);
	}
	for (pp = &s->queues; *pp; pp = &(*pp)->next) {
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	d8_queue_free(q);
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
	unsigned int i;

	if (n > q->depth - q->inflight)
		n = q->depth - q->inflight;
	if (n == 0)
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		struct bk_io *io = ios[i];
		struct d8_req *r = q->free;
		int rc = 0;

		q->free = r->free_next;
		r->io = io;
		io->host_action = io->op == BK_IO_READ ? "disk2008-read" :
				  io->op == BK_IO_FLUSH ? "disk2008-flush" :
				  "disk2008-write";
		if (io->op == BK_IO_READ || io->op == BK_IO_WRITE)
			io->result = d8_data(s, io);
		else if (io->op == BK_IO_FLUSH)
			io->result = 0;
		else
			io->result = -EOPNOTSUPP;	/* no discard: refused above */
		r->job.op = d8_op(io);
		r->job.off = io->op == BK_IO_FLUSH ? 0 : io->offset;
		r->job.len = io->op == BK_IO_FLUSH ? 0 : io->len;
		pthread_mutex_lock(&s->lock);
		q->inflight++;
		if (io->result >= 0)
			rc = bk_d8_submit(&s->m, d8_now(), &r->job);
		if (io->result < 0 || rc < 0) {
			/* failed: handed back at once, the disk untouched */
			if (rc < 0)
				io->result = rc;
			r->job.done_ns = d8_now();
			d8_due(r);
		}
		(void)d8_run(s, d8_now());
		pthread_mutex_unlock(&s->lock);
	}
	return (int)n;
}

static int
d8_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct d8_queue *q = qpriv;
	struct d8_store *s = q->s;
	uint64_t now = d8_now(), v;
	unsigned int k = 0, j;

	if (read(q->tfd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&s->lock);
	(void)d8_run(s, now);	/* -ENOMEM: what was decided is handed back */
	while (k < max && k < q->n && q->due[k]->job.done_ns <= now) {
		struct d8_req *r = q->due[k];

		done[k] = r->io;
		r->free_next = q->free;
		q->free = r;
		k++;
	}
	if (k) {
		for (j = k; j < q->n; j++)
			q->due[j - k] = q->due[j];
		q->n -= k;
		q->inflight -= k;
	}
	d8_arm(q);
	pthread_mutex_unlock(&s->lock);
	return (int)k;
}

static bool
d8_poll(void *qpriv)
{
	struct d8_queue *q = qpriv;
	uint64_t now = d8_now();
	bool ready;

	pthread_mutex_lock(&q->s->lock);
	ready = (q->n && q->due[0]->job.done_ns <= now) ||
		(q->inflight > q->n && bk_d8_next_event(&q->s->m) <= now);
	pthread_mutex_unlock(&q->s->lock);
	return ready;
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
