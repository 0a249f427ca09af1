/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-volatile.c: the blkcrash "volatile" store wrapper (see store.h):
 * a disk with a volatile write cache, and a power cut that loses it.
 *
 * Model (the seed's wce=1; wce=0 is the writethrough file store):
 *  - WRITE completes into an in-memory cache: nothing reaches the store
 *    below.  Each cached write is kept whole, in completion order, with a
 *    cache sequence number.
 *  - READ reads the store below, then lays every cached write that
 *    overlaps it on top, oldest first: reads see the cache.
 *  - FLUSH writes every cached write to the store below, whole and in
 *    order (writes that overlap an earlier one wait for it), flushes the
 *    store below, empties the cache and only then completes.
 *  - WRITE with BK_IO_FUA goes to the store below durably (RWF_DSYNC if
 *    the store below has native FUA, else write + flush); the parts of
 *    older cached writes it overwrites are dropped from the cache, so a
 *    power cut can never bring stale data back over it.
 *  - DISCARD drops the overlapped parts of cached writes and is passed
 *    down (durable at once; discarded content is unspecified anyway).
 *  - When the cache holds more than cache-max bytes, its oldest half is
 *    written back to the store below (not flushed): a real cache writes
 *    back on its own, and what it wrote back survives a power cut.
 *  - cfg->writethrough (the vbd's cache=writethrough, wce=0: like
 *    hdparm -W0 on the modelled disk): the cache is off.  Every WRITE
 *    goes straight to the store below (which is O_DSYNC then, durable on
 *    completion), nothing is ever cached, the features report no
 *    volatile cache (writeback = false), and a power cut loses nothing.
 *  - power_cut (blkbackd SIGUSR2): every cached write survives or is lost
 *    independently with probability 1/2 from a seeded generator -- any
 *    subset, so a later write can survive an earlier one that is lost,
 *    which is exactly the reordering a cache may do; the survivors are
 *    written in order (newest wins where they overlap) and the store
 *    below is flushed (bk_stack_power_cut() then cuts the layers below).
 *    The seed and the lost writes are logged.  After it every I/O fails
 *    with -EIO; the caller exits.  Calling it again does nothing.
 *  - close (a guest's disconnect, blkbackd's stop) is no power cut: the
 *    cached writes go to the store below, in order, not flushed.
 *
 * Options (cfg->arg, comma-separated, or NULL): "seed=N" (power-cut
 * seed, default time and pid, always logged), "cache-max=BYTES"
 * (default 64 MiB).  Any other word is refused.
 *
 * This is a crash-test model, not a fast cache: all I/O of one store is
 * serialised by one mutex and done synchronously on a private queue of
 * the store below; completions are handed back through an eventfd.
 * The store below (cfg->lower) is called only through store.h's
 * bk_store_* functions, and not owned: the caller closes it after this
 * one.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "store.h"

#define VC_DEFAULT_MAX	(64ull << 20)
#define VC_LOWER_DEPTH	64u

/* One cached write: [off, off + len), immutable data. */
struct vc_entry {
	struct vc_entry *next;
	uint64_t seq;		/* cache order, from 1 */
	uint64_t off;
	uint64_t len;
	unsigned char *data;
};

struct volatile_store {
	struct bk_store *lower;
	struct bk_store_features lower_features;
	uint64_t cache_max;
	uint64_t seed;
	bool off;			/* cache=writethrough: nothing is cached */

	pthread_mutex_t lock;		/* protects everything below */
	struct bk_store_queue *lq;	/* private queue of the store below */
	struct vc_entry *head, *tail;	/* oldest first */
	uint64_t nentries;
	uint64_t bytes;
	uint64_t next_seq;
	bool dead;			/* power was cut */
};

struct volatile_queue {
	struct volatile_store *s;
	unsigned int depth;
	int efd;			/* readable while done[] is not empty */
	struct bk_io **done;		/* FIFO of completed I/Os, depth slots */
	unsigned int head, count;
};

/* A set of disjoint byte ranges, sorted by start. */
struct vc_ranges {
	struct { uint64_t a, b; } *r;
	size_t n, cap;
};

/*
 * Cached data goes to the store below as is: the file driver uses
 * O_DIRECT, so buffers are 4096-byte aligned (store.h).  NULL on failure.
 */
static unsigned char *
vc_alloc_data(uint64_t len)
{
	void *p;

	if (posix_memalign(&p, 4096, len ? len : 1) != 0)
		return NULL;
	return p;
}

/* splitmix64: the power cut's generator; state in the caller. */
static uint64_t
vc_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- the store below, driven synchronously on the private queue ---- */

/* Run ios[0..n) on the store below and wait for all.  0 or first -errno. */
static int
vc_lower_run(struct volatile_store *vs, struct bk_io **ios, unsigned int n)
{
	struct bk_io *done[VC_LOWER_DEPTH];
	unsigned int submitted = 0, completed = 0;
	int fd = bk_store_queue_fd(vs->lq);
	int err = 0;

	while (completed < n) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r;

		if (submitted < n && submitted - completed < VC_LOWER_DEPTH) {
			unsigned int want = n - submitted;

			if (want > VC_LOWER_DEPTH - (submitted - completed))
				want = VC_LOWER_DEPTH - (submitted - completed);
			r = bk_store_submit(vs->lq, ios + submitted, want);
			if (r < 0 && submitted == completed)
				return r;	/* nothing in flight to wait for */
			if (r > 0)
				submitted += (unsigned int)r;
		}
		r = bk_store_reap(vs->lq, done, VC_LOWER_DEPTH);
		if (r < 0)
			return r;
		if (r > 0) {
			int i;

			for (i = 0; i < r; i++)
				if (done[i]->result < 0 && !err)
					err = (int)done[i]->result;
			completed += (unsigned int)r;
			continue;
		}
		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return -errno;
	}
	return err;
}

static int
vc_lower_flush(struct volatile_store *vs)
{
	struct bk_io io = { .op = BK_IO_FLUSH };
	struct bk_io *p = &io;

	if (!vs->lower_features.can_flush)
		return 0;	/* nothing volatile below (null, memory) */
	return vc_lower_run(vs, &p, 1);
}

/* ---- range set ---- */

static void
vc_ranges_free(struct vc_ranges *rs)
{
	free(rs->r);
	rs->r = NULL;
	rs->n = rs->cap = 0;
}

/*
 * Emit the parts of [a, b) not yet in *rs (via emit), then add [a, b).
 * 0 or -ENOMEM.
 */
static int
vc_ranges_claim(struct vc_ranges *rs, uint64_t a, uint64_t b,
		int (*emit)(void *ctx, uint64_t a, uint64_t b), void *ctx)
{
	size_t i = 0, j;
	uint64_t pos = a, na = a, nb = b;
	int r;

	/* first range that ends after a */
	while (i < rs->n && rs->r[i].b < a)
		i++;
	for (j = i; j < rs->n && rs->r[j].a <= b; j++) {
		if (rs->r[j].a > pos) {
			r = emit(ctx, pos, rs->r[j].a);
			if (r < 0)
				return r;
		}
		if (rs->r[j].b > pos)
			pos = rs->r[j].b;
		if (rs->r[j].a < na)
			na = rs->r[j].a;
		if (rs->r[j].b > nb)
			nb = rs->r[j].b;
	}
	if (pos < b) {
		r = emit(ctx, pos, b);
		if (r < 0)
			return r;
	}
	/* ranges i..j-1 merge into [na, nb) */
	if (j == i) {
		if (rs->n == rs->cap) {
			size_t cap = rs->cap ? 2 * rs->cap : 16;
			void *p = realloc(rs->r, cap * sizeof(*rs->r));

			if (!p)
				return -ENOMEM;
			rs->r = p;
			rs->cap = cap;
		}
		memmove(&rs->r[i + 1], &rs->r[i], (rs->n - i) * sizeof(*rs->r));
		rs->n++;
	} else if (j - i > 1) {
		memmove(&rs->r[i + 1], &rs->r[j], (rs->n - j) * sizeof(*rs->r));
		rs->n -= j - i - 1;
	}
	rs->r[i].a = na;
	rs->r[i].b = nb;
	return 0;
}

/* ---- writing a list of cached writes to the store below ---- */

static bool
vc_ranges_overlap(const struct vc_ranges *rs, uint64_t a, uint64_t b)
{
	size_t i = 0;

	while (i < rs->n && rs->r[i].b <= a)
		i++;
	return i < rs->n && rs->r[i].a < b;
}

static int
vc_emit_nothing(void *ctx, uint64_t a, uint64_t b)
{
	return 0;
}

/* Write ents[0..n) to the store below at once; they do not overlap. */
static int
vc_write_batch(struct volatile_store *vs, struct vc_entry **ents, size_t n)
{
	struct bk_io *ios, **iop;
	struct iovec *iov;
	size_t i;
	int r;

	ios = calloc(n, sizeof(*ios));
	iop = calloc(n, sizeof(*iop));
	iov = calloc(n, sizeof(*iov));
	if (!ios || !iop || !iov) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		iov[i].iov_base = ents[i]->data;
		iov[i].iov_len = ents[i]->len;
		ios[i].op = BK_IO_WRITE;
		ios[i].offset = ents[i]->off;
		ios[i].len = ents[i]->len;
		ios[i].iov = &iov[i];
		ios[i].iovcnt = 1;
		iop[i] = &ios[i];
	}
	r = vc_lower_run(vs, iop, (unsigned int)n);
out:
	free(ios);
	free(iop);
	free(iov);
	return r;
}

/*
 * Write ents[0..n) (oldest first) to the store below, each one whole, as
 * the guest wrote it (so a recorder below sees the guest's writes):
 * runs of writes that do not overlap go down together, and a write that
 * overlaps one of its run waits for the run to complete, so the newest
 * data always lands last.  Not flushed.  0 or -errno.
 */
static int
vc_write_entries(struct volatile_store *vs, struct vc_entry **ents, size_t n)
{
	size_t start = 0;
	int r = 0;

	while (start < n && r == 0) {
		struct vc_ranges run = { 0 };
		size_t end = start;

		while (end < n && r == 0 &&
		       !vc_ranges_overlap(&run, ents[end]->off,
					  ents[end]->off + ents[end]->len)) {
			r = vc_ranges_claim(&run, ents[end]->off,
					    ents[end]->off + ents[end]->len,
					    vc_emit_nothing, NULL);
			end++;
		}
		vc_ranges_free(&run);
		if (r == 0)
			r = vc_write_batch(vs, ents + start, end - start);
		start = end;
	}
	return r;
}

static void
vc_entry_free(struct vc_entry *e)
{
	free(e->data);
	free(e);
}

/* Unlink and free the first n entries of the cache. */
static void
vc_drop_oldest(struct volatile_store *vs, uint64_t n)
{
	while (n-- > 0 && vs->head) {
		struct vc_entry *e = vs->head;

		vs->head = e->next;
		if (!vs->head)
			vs->tail = NULL;
		vs->nentries--;
		vs->bytes -= e->len;
		vc_entry_free(e);
	}
}

/* Write back the oldest n entries (not flushed) and drop them. */
static int
vc_writeback_oldest(struct volatile_store *vs, uint64_t n)
{
	struct vc_entry **ents, *e;
	uint64_t i;
	int r;

	if (n == 0)
		return 0;
	ents = calloc(n, sizeof(*ents));
	if (!ents)
		return -ENOMEM;
	for (i = 0, e = vs->head; i < n && e; i++, e = e->next)
		ents[i] = e;
	r = vc_write_entries(vs, ents, (size_t)i);
	free(ents);
	if (r == 0)
		vc_drop_oldest(vs, i);
	return r;
}

/*
 * Remove [a, b) from every cached write: what is left of each one stays,
 * split in two if needed, with its seq.  0 or -ENOMEM (cache unchanged
 * for the entry that failed; the caller fails the I/O).
 */
static int
vc_punch(struct volatile_store *vs, uint64_t a, uint64_t b)
{
	struct vc_entry **pp = &vs->head, *e, *prev = NULL;

	while ((e = *pp) != NULL) {
		uint64_t ea = e->off, eb = e->off + e->len;
		struct vc_entry *l = NULL, *rgt = NULL;

		if (eb <= a || ea >= b) {
			prev = e;
			pp = &e->next;
			continue;
		}
		if (ea < a) {
			l = calloc(1, sizeof(*l));
			if (!l || !(l->data = vc_alloc_data(a - ea))) {
				free(l);
				return -ENOMEM;
			}
			l->seq = e->seq;
			l->off = ea;
			l->len = a - ea;
			memcpy(l->data, e->data, l->len);
		}
		if (eb > b) {
			rgt = calloc(1, sizeof(*rgt));
			if (!rgt || !(rgt->data = vc_alloc_data(eb - b))) {
				free(rgt);
				if (l)
					vc_entry_free(l);
				return -ENOMEM;
			}
			rgt->seq = e->seq;
			rgt->off = b;
			rgt->len = eb - b;
			memcpy(rgt->data, e->data + (b - ea), rgt->len);
		}
		/* replace e by l, rgt (either may be absent), in place */
		vs->bytes -= e->len;
		vs->nentries--;
		if (l) {
			*pp = l;
			pp = &l->next;
			prev = l;
			vs->bytes += l->len;
			vs->nentries++;
		}
		if (rgt) {
			*pp = rgt;
			pp = &rgt->next;
			prev = rgt;
			vs->bytes += rgt->len;
			vs->nentries++;
		}
		*pp = e->next;
		vc_entry_free(e);
	}
	vs->tail = prev;
	return 0;
}

/* ---- the operations, each run under vs->lock ---- */

/* Copy n bytes of src into the iovec at byte position pos. */
static void
vc_copy_to_iov(const struct iovec *iov, int iovcnt, uint64_t pos,
	       const unsigned char *src, uint64_t n)
{
	int i;

	for (i = 0; i < iovcnt && n > 0; i++) {
		uint64_t l = iov[i].iov_len, c;

		if (pos >= l) {
			pos -= l;
			continue;
		}
		c = l - pos < n ? l - pos : n;
		memcpy((unsigned char *)iov[i].iov_base + pos, src, c);
		src += c;
		n -= c;
		pos = 0;
	}
}

static int64_t
vc_do_read(struct volatile_store *vs, struct bk_io *io)
{
	struct bk_io low = *io;
	struct bk_io *p = &low;
	const struct vc_entry *e;
	int r;

	low.opaque = NULL;
	r = vc_lower_run(vs, &p, 1);
	if (r < 0)
		return r;
	for (e = vs->head; e; e = e->next) {
		uint64_t a = e->off > io->offset ? e->off : io->offset;
		uint64_t b = e->off + e->len < io->offset + io->len ?
			     e->off + e->len : io->offset + io->len;

		if (a < b)
			vc_copy_to_iov(io->iov, io->iovcnt, a - io->offset,
				       e->data + (a - e->off), b - a);
	}
	return (int64_t)io->len;
}

static int64_t
vc_do_write(struct volatile_store *vs, struct bk_io *io)
{
	struct vc_entry *e;
	uint64_t pos = 0;
	int i, r;

	e = calloc(1, sizeof(*e));
	if (!e || !(e->data = vc_alloc_data(io->len))) {
		free(e);
		return -ENOMEM;
	}
	for (i = 0; i < io->iovcnt && pos < io->len; i++) {
		uint64_t c = io->iov[i].iov_len;

		if (c > io->len - pos)
			c = io->len - pos;
		memcpy(e->data + pos, io->iov[i].iov_base, c);
		pos += c;
	}
	e->seq = vs->next_seq++;
	e->off = io->offset;
	e->len = io->len;
	if (vs->tail)
		vs->tail->next = e;
	else
		vs->head = e;
	vs->tail = e;
	vs->nentries++;
	vs->bytes += e->len;
	if (vs->bytes > vs->cache_max) {
		r = vc_writeback_oldest(vs, (vs->nentries + 1) / 2);
		if (r < 0)
			return r;	/* the new write stays cached */
	}
	return (int64_t)io->len;
}

static int64_t
vc_do_fua_write(struct volatile_store *vs, struct bk_io *io)
{
	struct bk_io low = *io;
	struct bk_io *p = &low;
	int r;

	r = vc_punch(vs, io->offset, io->offset + io->len);
	if (r < 0)
		return r;
	if (vs->lower_features.fua != BK_FUA_NATIVE)
		low.flags &= ~BK_IO_FUA;
	low.opaque = NULL;
	r = vc_lower_run(vs, &p, 1);
	if (r == 0 && vs->lower_features.fua != BK_FUA_NATIVE)
		r = vc_lower_flush(vs);
	return r < 0 ? r : (int64_t)io->len;
}

/* The cache is off (writethrough): the write goes down as it is. */
static int64_t
vc_do_write_through(struct volatile_store *vs, struct bk_io *io)
{
	struct bk_io low = *io;
	struct bk_io *p = &low;
	int r;

	low.opaque = NULL;
	r = vc_lower_run(vs, &p, 1);
	return r < 0 ? r : (int64_t)io->len;
}

static int64_t
vc_do_flush(struct volatile_store *vs)
{
	int r = vc_writeback_oldest(vs, vs->nentries);

	if (r < 0)
		return r;
	r = vc_lower_flush(vs);
	return r < 0 ? r : 0;
}

static int64_t
vc_do_discard(struct volatile_store *vs, struct bk_io *io)
{
	struct bk_io low = *io;
	struct bk_io *p = &low;
	int r;

	r = vc_punch(vs, io->offset, io->offset + io->len);
	if (r < 0)
		return r;
	low.opaque = NULL;
	r = vc_lower_run(vs, &p, 1);
	return r < 0 ? r : (int64_t)io->len;
}

/* ---- the ops table ---- */

static int
vc_parse_options(const struct bk_store_config *cfg, uint64_t *seed, bool *have_seed,
		 uint64_t *cache_max)
{
	const char *p = cfg->arg;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		char buf[64], *tail;
		const char *num;
		unsigned long long v;

		if (n >= sizeof(buf) ||
		    (strncmp(p, "seed=", 5) && strncmp(p, "cache-max=", 10))) {
			return bk_store_bad_arg(cfg, "unknown option \"%.*s\" for driver "
						"volatile", (int)n, p);
		}
		memcpy(buf, p, n);
		buf[n] = '\0';
		num = strchr(buf, '=') + 1;
		errno = 0;
		v = strtoull(num, &tail, 0);
		if (errno || tail == num || *tail) {
			return bk_store_bad_arg(cfg, "bad option \"%s\" for driver volatile",
						buf);
		}
		if (buf[0] == 's') {
			*seed = v;
			*have_seed = true;
		} else {
			*cache_max = v;
		}
		p = end ? end + 1 : NULL;
	}
	return 0;
}

static int
volatile_open(const struct bk_store_config *cfg, void **priv,
	      struct bk_store_features *features)
{
	struct volatile_store *vs;
	bool have_seed = false;
	int r;

	if (!cfg->lower) {
		log_error("store \"volatile\": no lower store to cache");
		return -EINVAL;
	}
	vs = calloc(1, sizeof(*vs));
	if (!vs)
		return -ENOMEM;
	vs->lower = cfg->lower;
	vs->lower_features = *bk_store_features(cfg->lower);
	vs->cache_max = VC_DEFAULT_MAX;
	vs->next_seq = 1;
	r = vc_parse_options(cfg, &vs->seed, &have_seed, &vs->cache_max);
	if (r < 0)
		goto err;
	if (!have_seed) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		vs->seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
			   (uint64_t)getpid();
	}
	r = bk_store_queue_open(vs->lower, VC_LOWER_DEPTH, &vs->lq);
	if (r < 0) {
		errno = -r;
		log_error("store \"volatile\": opening a queue on the store below: %m");
		goto err;
	}
	pthread_mutex_init(&vs->lock, NULL);
	*features = vs->lower_features;
	features->read_only = cfg->read_only;
	vs->off = cfg->writethrough;
	if (vs->off) {
		/* wce=0: no volatile cache to model; the store below decides */
		log_info("store \"volatile\": cache=writethrough: the write cache is "
			 "off, writes go through (a power cut loses nothing)");
		*priv = vs;
		return 0;
	}
	log_info("store \"volatile\": write cache of up to %" PRIu64
		 " bytes, power-cut seed %" PRIu64, vs->cache_max, vs->seed);
	features->writeback = true;	/* that is the point */
	features->can_flush = true;
	features->fua = BK_FUA_NATIVE;	/* honoured here, whatever is below */
	*priv = vs;
	return 0;
err:
	free(vs);
	return r;
}

static void
volatile_close(void *priv)
{
	struct volatile_store *vs = priv;

	/*
	 * A close is no power cut: the modelled disk keeps its power and
	 * writes its cache back on its own, so what is still cached goes to
	 * the store below, not flushed (a close never flushes: store.h).
	 * blkbackd closes a vbd's stack at each disconnect, and a guest
	 * that reconnects reads what it wrote (test-fix-volatile-reconnect).
	 * After a power cut the cache is empty already.
	 */
	if (vs->nentries) {
		uint64_t n = vs->nentries;
		int r = vc_writeback_oldest(vs, n);

		if (r < 0) {
			errno = -r;
			log_error("store \"volatile\": close: writing back %" PRIu64
				  " cached writes failed: %m; those not yet written "
				  "are lost", n);
		}
		vc_drop_oldest(vs, vs->nentries);
	}
	bk_store_queue_close(vs->lq);
	pthread_mutex_destroy(&vs->lock);
	free(vs);
}

static void
volatile_power_cut(void *priv)
{
	struct volatile_store *vs = priv;
	struct vc_entry **kept = NULL, *e;
	uint64_t state, nkept = 0, nlost = 0, ntotal;
	int r = 0;

	pthread_mutex_lock(&vs->lock);
	if (vs->dead) {
		pthread_mutex_unlock(&vs->lock);
		return;
	}
	vs->dead = true;
	if (vs->off) {
		log_info("store \"volatile\": power cut: the write cache is off "
			 "(cache=writethrough), nothing to lose");
		pthread_mutex_unlock(&vs->lock);
		return;
	}
	ntotal = vs->nentries;
	state = vs->seed;
	kept = calloc(ntotal ? ntotal : 1, sizeof(*kept));
	if (!kept) {
		log_error("store \"volatile\": power cut: out of memory, losing all %"
			  PRIu64 " cached writes", ntotal);
		goto out;
	}
	for (e = vs->head; e; e = e->next) {
		if (vc_rand(&state) & 1) {
			kept[nkept++] = e;
		} else {
			if (nlost++ < 16)
				log_info("store \"volatile\": power cut: lost cached write #%"
					 PRIu64 " offset %" PRIu64 " length %" PRIu64
					 "%s", e->seq, e->off, e->len,
					 nlost == 16 ? " (and more, not listed)" : "");
		}
	}
	r = vc_write_entries(vs, kept, (size_t)nkept);
	if (r == 0)
		r = vc_lower_flush(vs);
	if (r < 0) {
		errno = -r;
		log_error("store \"volatile\": power cut: writing the surviving writes: %m");
	}
out:
	log_info("store \"volatile\": power cut (seed %" PRIu64 "): %" PRIu64
		 " of %" PRIu64 " unflushed writes lost, %" PRIu64 " survived",
		 vs->seed, nlost, ntotal, nkept);
	free(kept);
	vc_drop_oldest(vs, vs->nentries);
	pthread_mutex_unlock(&vs->lock);
}

static void
vq_free(struct volatile_queue *vq)
{
	if (vq->efd >= 0)
		close(vq->efd);
	free(vq->done);
	free(vq);
}

static int
volatile_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct volatile_queue *vq;
	int r;

	if (depth == 0)
		return -EINVAL;
	vq = calloc(1, sizeof(*vq));
	if (!vq)
		return -ENOMEM;
	vq->s = priv;
	vq->depth = depth;
	vq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	vq->done = calloc(depth, sizeof(*vq->done));
	if (vq->efd < 0 || !vq->done) {
		r = vq->efd < 0 ? -errno : -ENOMEM;
		vq_free(vq);
		return r;
	}
	*qpriv = vq;
	return 0;
}

static void
volatile_queue_close(void *qpriv)
{
	/* Everything completes inside submit(): nothing is in flight. */
	vq_free(qpriv);
}

static int
volatile_queue_fd(void *qpriv)
{
	struct volatile_queue *vq = qpriv;

	return vq->efd;
}

static int
volatile_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct volatile_queue *vq = qpriv;
	struct volatile_store *vs = vq->s;
	uint64_t one = 1;
	unsigned int i;

	if (n > vq->depth - vq->count)
		n = vq->depth - vq->count;
	if (n == 0)
		return -EAGAIN;
	pthread_mutex_lock(&vs->lock);
	for (i = 0; i < n; i++) {
		struct bk_io *io = ios[i];

		io->host_action = vs->off ? "volatile-off" : "volatile-cache";
		if (vs->dead)
			io->result = -EIO;
		else if (io->op == BK_IO_READ)
			io->result = vc_do_read(vs, io);
		else if (io->op == BK_IO_WRITE && vs->off)
			io->result = vc_do_write_through(vs, io);
		else if (io->op == BK_IO_WRITE && (io->flags & BK_IO_FUA))
			io->result = vc_do_fua_write(vs, io);
		else if (io->op == BK_IO_WRITE)
			io->result = vc_do_write(vs, io);
		else if (io->op == BK_IO_FLUSH)
			io->result = vc_do_flush(vs);
		else if (io->op == BK_IO_DISCARD)
			io->result = vc_do_discard(vs, io);
		else
			io->result = -EOPNOTSUPP;
		vq->done[(vq->head + vq->count) % vq->depth] = io;
		vq->count++;
	}
	pthread_mutex_unlock(&vs->lock);
	if (write(vq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;	/* cannot happen with an eventfd */
	return (int)n;
}

static int
volatile_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct volatile_queue *vq = qpriv;
	unsigned int n = 0;
	uint64_t v;

	while (n < max && vq->count > 0) {
		done[n++] = vq->done[vq->head];
		vq->head = (vq->head + 1) % vq->depth;
		vq->count--;
	}
	if (vq->count == 0 && read(vq->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	return (int)n;
}

const struct bk_store_driver bk_store_volatile_driver = {
	.name = "volatile",
	.wrapper = true,
	.open = volatile_open,
	.close = volatile_close,
	.queue_open = volatile_queue_open,
	.queue_close = volatile_queue_close,
	.queue_fd = volatile_queue_fd,
	.submit = volatile_submit,
	.reap = volatile_reap,
	.power_cut = volatile_power_cut,
};
