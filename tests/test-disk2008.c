/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-disk2008.c: the 2008 disk (backend/disk2008.h, store-disk2008.c).
 *
 * The model's part is deterministic: given arrival times, the
 * completion times and cache states it computes are checked exactly
 * (or, for the averages, against the spec-sheet values it is built
 * from).  The store's part runs "disk2008:PATH" through the checked
 * dispatch (bk_stack_open, as blkbackd and export --direct open it):
 * data round trip, features per write cache setting, flush, no discard,
 * and a completion never handed back before the time the model gave it
 * (a lower bound on elapsed time, which a loaded host cannot break).
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "disk2008.h"
#include "store.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, #c); \
	return 1; } } while (0)

#define MS 1000000ull
#define KIB 1024ull
#define MIB (1024ull * 1024)

static struct bk_d8_params P;

static uint64_t
xfer(uint64_t len, uint64_t bps)
{
	return (len * 1000000000ull + bps - 1) / bps;
}

/* The wait for the sector at off, the head arriving at time at: the
 * rule of disk2008.h, written again. */
static uint64_t
rotwait(uint64_t at, uint64_t off)
{
	uint64_t track = P.media_bps * P.rot_ns / 1000000000ull;
	uint64_t target = (off % track) * P.rot_ns / track;

	return (target + P.rot_ns - at % P.rot_ns) % P.rot_ns;
}

static uint64_t
absdiff(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static int
model(struct bk_d8_model *m, bool wce)
{
	return bk_d8_init(m, &P, wce);
}

/* A pool of jobs, one per request of a test. */
static struct bk_d8_job jobs[40000];
static unsigned int njobs;

static struct bk_d8_job *
sub(struct bk_d8_model *m, uint64_t t, enum bk_d8_op op, uint64_t off, uint64_t len)
{
	struct bk_d8_job *j = &jobs[njobs++ % (sizeof(jobs) / sizeof(jobs[0]))];

	memset(j, 0, sizeof(*j));
	j->op = op;
	j->off = off;
	j->len = len;
	j->done_ns = 0;
	assert(bk_d8_submit(m, t, j) == 0);
	return j;
}

/* Run the model event by event as far as it goes (every arrival is
 * known), its clock at its last event. */
static void
settle(struct bk_d8_model *m)
{
	uint64_t ev;

	while ((ev = bk_d8_next_event(m)) != UINT64_MAX)
		assert(bk_d8_advance(m, ev) == 0);
}

/* settle(), then hand back everything decided; returns how many were. */
static unsigned int
drain(struct bk_d8_model *m)
{
	unsigned int n = 0;

	settle(m);
	while (bk_d8_take(m))
		n++;
	return n;
}

/* One request at t: its completion time, the model run only until it
 * is decided (so that the next request can arrive at that time). */
static uint64_t
one(struct bk_d8_model *m, uint64_t t, enum bk_d8_op op, uint64_t off, uint64_t len)
{
	struct bk_d8_job *j = sub(m, t, op, off, len);

	while (!j->done_ns) {
		assert(bk_d8_next_event(m) != UINT64_MAX);
		assert(bk_d8_advance(m, bk_d8_next_event(m)) == 0);
	}
	while (bk_d8_take(m))
		;
	return j->done_ns;
}

/* The seek curve: 0, t2t, full, and the spec sheets' 8.5 ms average
 * over uniformly random pairs of positions. */
static int
test_seek_curve(void)
{
	uint64_t sum = 0, n = 0, i, j, steps = 400;

	CHECK(bk_d8_seek_ns(&P, 0) == 0);
	CHECK(bk_d8_seek_ns(&P, 1) >= P.t2t_ns && bk_d8_seek_ns(&P, 1) < P.t2t_ns + MS / 10);
	CHECK(bk_d8_seek_ns(&P, P.stroke) == P.full_ns);
	CHECK(bk_d8_seek_ns(&P, P.stroke / 4) < bk_d8_seek_ns(&P, P.stroke / 2));
	for (i = 0; i < steps; i++)
		for (j = 0; j < steps; j++) {
			uint64_t a = P.stroke / steps * i, b = P.stroke / steps * j;

			sum += bk_d8_seek_ns(&P, a > b ? a - b : b - a);
			n++;
		}
	/* 8.5 ms +- 3 % (the grid includes the zero-distance pairs) */
	CHECK(sum / n > 8245 * 1000 && sum / n < 8755 * 1000);
	return 0;
}

/* Cache off: a write completes when it is on the media. */
static int
test_wce0_write(void)
{
	struct bk_d8_model m;
	uint64_t t = 1000 * MS, off = P.stroke / 2, len = 64 * KIB, d, d3;
	struct bk_d8_job *a, *b;

	CHECK(model(&m, false) == 0);
	/* two writes at once, the second right behind the first: it
	 * streams, no positioning */
	a = sub(&m, t, BK_D8_WRITE, off, len);
	b = sub(&m, t + 1, BK_D8_WRITE, off + len, len);
	CHECK(drain(&m) == 2);
	d = a->done_ns;
	{
		uint64_t at = t + xfer(len, P.iface_bps) + bk_d8_seek_ns(&P, off);

		CHECK(d == at + rotwait(at, off) + xfer(len, P.media_bps) + P.cmd_ns);
	}
	CHECK(b->done_ns == d + xfer(len, P.media_bps));
	/* the next one arrives 1 ms after the mechanism went idle: the
	 * sector went by, wait for it to come round */
	t = b->done_ns - P.cmd_ns + MS;
	d3 = one(&m, t, BK_D8_WRITE, off + 2 * len, len);
	/* to within the rounding of the sectors' phases */
	CHECK(absdiff(d3, t + xfer(len, P.iface_bps) + (P.rot_ns - MS - xfer(len, P.iface_bps)) +
		      xfer(len, P.media_bps) + P.cmd_ns) < 100);
	/* nothing is ever cached: a flush waits for nothing */
	CHECK(bk_d8_cached(&m) == 0);
	CHECK(one(&m, d3, BK_D8_FLUSH, 0, 0) == d3 + P.cmd_ns);
	CHECK(m.n_seeks == 1 && m.n_rot_waits == 1);
	bk_d8_fini(&m);
	return 0;
}

/* Cache off with a write buffer of wt_buf bytes: four 128 KiB writes of
 * one stream queued at once.  With room for two, the disk takes the
 * next one's data while it writes the last, and they stream; with room
 * for one, it takes each only when the last is on the media, and the
 * data crossing the interface makes it miss its sector: nearly a turn
 * per write. */
static int
test_wce0_write_buffer(void)
{
	uint64_t t = 1000 * MS, off = P.stroke / 2, len = 128 * KIB, i, k;
	struct bk_d8_job *j[4];

	for (k = 1; k <= 2; k++) {
		struct bk_d8_params p = P;
		struct bk_d8_model m;

		p.wt_buf = k * len;
		CHECK(bk_d8_init(&m, &p, false) == 0);
		for (i = 0; i < 4; i++)
			j[i] = sub(&m, t + i, BK_D8_WRITE, off + i * len, len);
		CHECK(drain(&m) == 4);
		CHECK(m.n_seeks == 1);
		for (i = 1; i < 4; i++) {
			uint64_t end = j[i - 1]->done_ns - P.cmd_ns;

			if (k == 2) {
				CHECK(j[i]->done_ns == j[i - 1]->done_ns + xfer(len, P.media_bps));
			} else {
				/* taken at the end of the last, so in the
				 * disk's queue an interface transfer later */
				uint64_t at = end + xfer(len, P.iface_bps);

				CHECK(absdiff(j[i]->done_ns, at + rotwait(at, off + i * len) +
					      xfer(len, P.media_bps) + P.cmd_ns) < 100);
				CHECK(j[i]->done_ns - j[i - 1]->done_ns > P.rot_ns);
			}
		}
		CHECK(m.n_rot_waits == (k == 2 ? 0 : 3) && m.wt_held == 0 && !m.wt_wait);
		bk_d8_fini(&m);
	}
	return 0;
}

/* Cache off, room for one write's data: A0, then B0 far from it, then
 * A1 continuing A0, queued at once.  When A0 is on the media the disk
 * takes A1's data before the older B0's (the drive streams on), so one
 * seek to A and one to B; unless B0 has waited p.max_wait_ns by then:
 * then the oldest first, A, B, A again. */
static int
test_wce0_stream_first(void)
{
	uint64_t t = 1000 * MS, a = P.stroke / 4, b = 3 * (P.stroke / 4), len = 128 * KIB;
	int bound;

	for (bound = 0; bound <= 1; bound++) {
		struct bk_d8_params p = P;
		struct bk_d8_job *a0, *b0, *a1;
		struct bk_d8_model m;

		p.wt_buf = len;
		if (bound)
			p.max_wait_ns = 1 * MS;
		CHECK(bk_d8_init(&m, &p, false) == 0);
		a0 = sub(&m, t, BK_D8_WRITE, a, len);
		b0 = sub(&m, t + 1, BK_D8_WRITE, b, len);
		a1 = sub(&m, t + 2, BK_D8_WRITE, a + len, len);
		CHECK(drain(&m) == 3);
		CHECK(a0->done_ns < a1->done_ns && a0->done_ns < b0->done_ns);
		if (!bound) {
			CHECK(a1->done_ns < b0->done_ns);
			CHECK(m.n_seeks == 2);
		} else {
			CHECK(b0->done_ns < a1->done_ns);
			CHECK(m.n_seeks == 3);
		}
		CHECK(m.wt_held == 0 && !m.wt_wait && m.wt_tail == &m.wt_wait);
		bk_d8_fini(&m);
	}
	return 0;
}

/* The queue's starvation bound: a far access behind a stream that
 * always has a next write ready (no positioning, so SPTF always prefers
 * it) waits until it has waited p.max_wait_ns (3 s), then goes first,
 * once. */
static int
test_starvation_bound(void)
{
	struct bk_d8_params p = P;
	struct bk_d8_model m;
	uint64_t t0 = 1000 * MS, len = 64 * KIB, next = 0, k;
	struct bk_d8_job *far, *d;

	CHECK(P.max_wait_ns == 3000 * MS);
	p.stroke = 1000 * MIB;	/* room for 3 s of the stream */
	CHECK(bk_d8_init(&m, &p, false) == 0);
	for (k = 0; k < 4; k++, next += len)
		sub(&m, t0, BK_D8_WRITE, next, len);
	far = sub(&m, t0, BK_D8_WRITE, p.stroke - len, len);
	for (;;) {
		while (!(d = bk_d8_take(&m)))
			CHECK(bk_d8_advance(&m, bk_d8_next_event(&m)) == 0);
		if (d == far)
			break;
		CHECK(next + len < p.stroke / 2);
		sub(&m, d->done_ns, BK_D8_WRITE, next, len);
		next += len;
	}
	/* taken when it had waited the bound: its seek and turn after that */
	CHECK(far->done_ns - t0 > P.max_wait_ns);
	CHECK(far->done_ns - t0 < P.max_wait_ns + P.full_ns + P.rot_ns + 2 * MS);
	CHECK(m.n_starved == 1);
	drain(&m);
	bk_d8_fini(&m);
	return 0;
}

/* Writes of one stream arriving out of order while the mechanism is
 * busy stream anyway: the next in offset order needs no positioning. */
static int
test_clook(void)
{
	struct bk_d8_model m;
	uint64_t t = 1000 * MS, len = 128 * KIB, i;
	static const unsigned int order[] = { 0, 3, 1, 2, 5, 4 };
	struct bk_d8_job *j[6];

	CHECK(model(&m, false) == 0);
	for (i = 0; i < 6; i++)
		j[i] = sub(&m, t + i, BK_D8_WRITE, P.stroke / 2 + order[i] * len, len);
	CHECK(drain(&m) == 6);
	/* one seek (the first), then the other five back to back in offset order */
	CHECK(m.n_seeks == 1 && m.n_rot_waits == 0);
	for (i = 1; i < 6; i++)
		CHECK(j[i]->done_ns == j[0]->done_ns + order[i] * xfer(len, P.media_bps));
	bk_d8_fini(&m);
	return 0;
}

/* Cache on: a write completes in the cache, a flush when it is drained,
 * and nothing is volatile once the flush has completed. */
static int
test_wce1_write_flush(void)
{
	struct bk_d8_model m;
	uint64_t t = 1000 * MS, off = P.stroke / 3, len = 128 * KIB, d, destaged;
	struct bk_d8_job *w, *f;

	CHECK(model(&m, true) == 0);
	w = sub(&m, t, BK_D8_WRITE, off, len);
	/* decided at once: in the cache */
	CHECK(bk_d8_take(&m) == w && bk_d8_take(&m) == NULL);
	d = w->done_ns;
	CHECK(d == t + xfer(len, P.iface_bps) + P.cmd_ns);
	destaged = t + xfer(len, P.iface_bps) + bk_d8_seek_ns(&P, off);
	destaged += rotwait(destaged, off) + xfer(len, P.media_bps);
	CHECK(bk_d8_cached(&m) == len);
	f = sub(&m, d, BK_D8_FLUSH, 0, 0);
	CHECK(bk_d8_take(&m) == NULL);		/* the flush waits */
	CHECK(bk_d8_advance(&m, destaged - 1) == 0 && bk_d8_take(&m) == NULL);
	CHECK(bk_d8_cached(&m) == len);
	CHECK(bk_d8_advance(&m, destaged) == 0 && bk_d8_take(&m) == f);
	CHECK(f->done_ns == destaged + P.cmd_ns);
	/* nothing volatile is left once the flush has completed */
	CHECK(bk_d8_cached(&m) == 0);
	/* a flush of an empty cache waits for nothing */
	CHECK(one(&m, f->done_ns, BK_D8_FLUSH, 0, 0) == f->done_ns + P.cmd_ns);
	/* FUA goes to the media, not into the cache */
	t = f->done_ns + 100 * MS;
	d = one(&m, t, BK_D8_FUA_WRITE, 0, len);
	{
		uint64_t at = t + xfer(len, P.iface_bps) + bk_d8_seek_ns(&P, off + len);

		CHECK(d == at + rotwait(at, 0) + xfer(len, P.media_bps) + P.cmd_ns);
	}
	CHECK(bk_d8_cached(&m) == 0);
	bk_d8_fini(&m);
	return 0;
}

/* The cache's size holds: a burst bigger than the cache waits for the
 * destage, and a flush covers only what was cached before it. */
static int
test_cache_full(void)
{
	struct bk_d8_model m;
	uint64_t t = 1000 * MS, len = 128 * KIB, n = P.cache_bytes / len, i;
	struct bk_d8_job *last, *f;

	CHECK(model(&m, true) == 0);
	for (i = 0; i < n; i++) {
		struct bk_d8_job *j = sub(&m, t, BK_D8_WRITE, i * len, len);

		CHECK(bk_d8_take(&m) == j && j->done_ns == t + xfer(len, P.iface_bps) + P.cmd_ns);
	}
	CHECK(m.n_cache_waits == 0 && bk_d8_cached(&m) == P.cache_bytes);
	/* one more: room when the first destage ends */
	last = sub(&m, t, BK_D8_WRITE, n * len, len);
	CHECK(m.n_cache_waits == 1 && bk_d8_take(&m) == NULL);
	f = sub(&m, t, BK_D8_FLUSH, 0, 0);
	settle(&m);
	CHECK(bk_d8_take(&m) == last && bk_d8_take(&m) == f);
	/* the first destage: the write streamed from offset 0 after a
	 * missed rotation... any way, the write waited for it */
	CHECK(last->done_ns > t + xfer(len, P.media_bps));
	CHECK(bk_d8_cached(&m) == 0);
	bk_d8_fini(&m);
	return 0;
}

/* The cache holds p.cache_writes writes whatever their size: small
 * writes fill it by entries long before its bytes, and the next one
 * waits for the first destage to end. */
static int
test_cache_entries(void)
{
	struct bk_d8_model m;
	uint64_t t = 1000 * MS, len = 4 * KIB, i;
	struct bk_d8_job *last;

	CHECK(P.cache_writes == 256 && P.cache_writes * len < P.cache_bytes);
	CHECK(model(&m, true) == 0);
	for (i = 0; i < P.cache_writes; i++) {
		struct bk_d8_job *j = sub(&m, t, BK_D8_WRITE, 2 * i * len, len);

		CHECK(bk_d8_take(&m) == j);
	}
	CHECK(m.n_cache_waits == 0 && bk_d8_cached(&m) == P.cache_writes * len);
	last = sub(&m, t, BK_D8_WRITE, 2 * i * len, len);
	CHECK(m.n_cache_waits == 1 && bk_d8_take(&m) == NULL);
	settle(&m);
	CHECK(bk_d8_take(&m) == last && last->done_ns > t + P.t2t_ns);
	drain(&m);
	bk_d8_fini(&m);
	return 0;
}

/* Cache on: a read that SPTF would leave behind a queue of destages
 * goes before them once it has waited p.read_wait_ns; the cache off,
 * where the host waits on every queued write, SPTF alone decides. */
static int
test_read_first(void)
{
	struct bk_d8_params p = P;
	struct bk_d8_model m;
	uint64_t t = 1000 * MS, len = 128 * KIB, far = P.stroke - len, i;
	/* the longest one access can take: a full seek, a turn, the data */
	uint64_t access = P.full_ns + P.rot_ns + xfer(len, P.media_bps) + P.cmd_ns;
	struct bk_d8_job *r, *w[32];

	CHECK(P.read_wait_ns == 25 * MS);
	p.wt_buf = 0;	/* cache off: all 32 writes queued at once */
	for (int wce = 1; wce >= 0; wce--) {
		CHECK(bk_d8_init(&m, &p, wce) == 0);
		/* 32 writes, every other 128 KiB of the disk's first 8 MiB */
		for (i = 0; i < 32; i++)
			w[i] = sub(&m, t, BK_D8_WRITE, 2 * i * len, len);
		r = sub(&m, t + MS, BK_D8_READ, far, len);
		settle(&m);
		drain(&m);
		if (wce) {
			/* after the bound, the access then under way and its own */
			CHECK(r->done_ns > t + MS + P.read_wait_ns);
			CHECK(r->done_ns < t + MS + P.read_wait_ns + 2 * access +
			      xfer(len, P.iface_bps));
			CHECK(m.n_reads_first == 1 && m.n_starved == 0);
		} else {
			for (i = 0; i < 32; i++)
				CHECK(w[i]->done_ns < r->done_ns);
			CHECK(m.n_reads_first == 0);
		}
		bk_d8_fini(&m);
	}
	return 0;
}

/* A closed loop of sequential 128 KiB writes (QD1, the next one sent
 * when the last completes): the cache makes them stream at the media
 * rate; without it each one waits for the platter to come round. */
static int
test_streaming_rates(void)
{
	struct bk_d8_model m;
	uint64_t len = 128 * KIB, n = 2000, i, t, t0 = 1000 * MS;
	double rate1, rate0;

	CHECK(model(&m, true) == 0);
	for (i = 0, t = t0; i < n; i++)
		t = one(&m, t, BK_D8_WRITE, i * len, len);
	t = one(&m, t, BK_D8_FLUSH, 0, 0);
	rate1 = (double)(n * len) / ((double)(t - t0) / 1e9);
	bk_d8_fini(&m);
	/* within 3 % of the media rate */
	CHECK(rate1 > 0.97 * (double)P.media_bps && rate1 <= (double)P.media_bps);

	CHECK(model(&m, false) == 0);
	for (i = 0, t = t0; i < n; i++)
		t = one(&m, t, BK_D8_WRITE, i * len, len);
	rate0 = (double)(n * len) / ((double)(t - t0) / 1e9);
	bk_d8_fini(&m);
	/* each 1.75 ms transfer waits ~8.3 ms - (0.05 + 0.44) ms */
	CHECK(rate0 < 0.25 * (double)P.media_bps && rate0 > 0.15 * (double)P.media_bps);
	return 0;
}

/* Random 4 KiB reads at QD1: the spec sheet's random access time. */
static int
test_random_reads(void)
{
	struct bk_d8_model m;
	uint64_t n = 4000, i, t, t0 = 1000 * MS, x = 12345, mean;

	CHECK(model(&m, false) == 0);
	for (i = 0, t = t0; i < n; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		t = one(&m, t, BK_D8_READ, ((x >> 11) % (P.stroke / 4096)) * 4096, 4096);
	}
	mean = (t - t0) / n;
	bk_d8_fini(&m);
	/* 8.5 ms seek + 4.17 ms rotation + transfer and overhead: 12.8 ms,
	 * i.e. ~78 IOPS, what a 7200 rpm disk of the time did */
	CHECK(mean > 12300 * 1000 && mean < 13300 * 1000);
	return 0;
}

/* A deep queue of random writes in a small region (the checkpoint of a
 * journal): the drive takes the one it can reach soonest, so each costs
 * far less than a random access alone; and none waits past the bound. */
static int
test_sptf(void)
{
	struct bk_d8_model m;
	uint64_t n = 3200, qd = 32, i, t0 = 1000 * MS, x = 777, t, qd1, maxwait = 0;
	struct bk_d8_job *inq[32];

	CHECK(model(&m, false) == 0);
	for (i = 0, t = t0; i < n / 8; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		t = one(&m, t, BK_D8_WRITE, ((x >> 11) % 2048) * 4096, 4096);
	}
	qd1 = (t - t0) / (n / 8);
	bk_d8_fini(&m);

	CHECK(model(&m, false) == 0);
	for (i = 0; i < qd; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		inq[i] = sub(&m, t0, BK_D8_WRITE, ((x >> 11) % 2048) * 4096, 4096);
	}
	for (i = qd, t = t0; i < n; i++) {
		struct bk_d8_job *d = NULL;
		unsigned int k;

		/* the next completion: replace it with a new request then */
		while (!(d = bk_d8_take(&m)))
			CHECK(bk_d8_advance(&m, bk_d8_next_event(&m)) == 0);
		for (k = 0; k < qd && inq[k] != d; k++)
			;
		CHECK(k < qd);
		if (d->done_ns - d->arrive > maxwait)
			maxwait = d->done_ns - d->arrive;
		t = d->done_ns;
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		inq[k] = sub(&m, t, BK_D8_WRITE, ((x >> 11) % 2048) * 4096, 4096);
	}
	drain(&m);
	fprintf(stderr, "sptf: QD1 %.2f ms, QD32 %.2f ms, longest %.1f ms\n", qd1 / 1e6,
		(double)(t - t0) / (n - qd) / 1e6, maxwait / 1e6);
	/* 8 MiB apart at most on a 64 MiB stroke: ~3.6 ms seeks + 4.2 ms
	 * waits alone; a queue of 32 to choose from saves most of both */
	CHECK(qd1 > 7 * MS && qd1 < 8500 * 1000);
	CHECK((t - t0) / (n - qd) < qd1 / 2);
	CHECK(maxwait < P.max_wait_ns + 2 * qd1);
	bk_d8_fini(&m);
	return 0;
}

/* Arrivals out of order (two queues' clocks) are made monotone. */
static int
test_monotone(void)
{
	struct bk_d8_model m;
	uint64_t d1, d2;

	CHECK(model(&m, false) == 0);
	d1 = one(&m, 2000 * MS, BK_D8_FLUSH, 0, 0);
	d2 = one(&m, 1000 * MS, BK_D8_FLUSH, 0, 0);
	CHECK(d1 == d2 && d1 >= 2000 * MS + P.cmd_ns);
	bk_d8_fini(&m);
	return 0;
}

/* ---- the store ---- */

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int64_t
run_io(struct bk_store_queue *q, struct bk_io *io)
{
	struct bk_io *done[4];
	struct pollfd pfd = { .fd = bk_store_queue_fd(q), .events = POLLIN };
	int n;

	io->result = 12345;
	n = bk_store_submit(q, &io, 1);
	if (n < 0)
		return n;
	assert(n == 1);
	for (;;) {
		assert(poll(&pfd, 1, 60000) == 1);
		n = bk_store_reap(q, done, 4);
		assert(n >= 0);
		if (n == 1) {
			assert(done[0] == io);
			return io->result;
		}
	}
}

static int
test_store(bool writethrough)
{
	char dir[] = "/tmp/bk-d8.XXXXXX", path[64], params[80];
	struct bk_stack_config sc = { .writethrough = writethrough };
	const struct bk_store_features *f;
	struct bk_store_queue *q;
	struct bk_store_why why;
	struct bk_store *s;
	struct bk_params p;
	struct iovec iov;
	struct bk_io io;
	uint64_t t0, el;
	char *buf, *rd;
	int fd;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/disk", dir);
	snprintf(params, sizeof(params), "disk2008:%s", path);
	fd = open(path, O_CREAT | O_RDWR, 0600);
	CHECK(fd >= 0 && ftruncate(fd, 64 * MIB) == 0);
	close(fd);
	CHECK(posix_memalign((void **)&buf, 4096, 64 * KIB) == 0);
	CHECK(posix_memalign((void **)&rd, 4096, 64 * KIB) == 0);
	memset(buf, 0xa5, 64 * KIB);
	buf[100] = 1;

	CHECK(bk_params_parse(params, &p, &why) == 0);
	CHECK(p.driver == &bk_store_disk2008_driver);
	CHECK(bk_stack_open(&p, &sc, false, &s, &why) == 0);
	f = bk_store_features(s);
	CHECK(f->size == 64 * MIB && f->writeback == !writethrough && f->can_flush &&
	      !f->can_discard && f->fua == BK_FUA_NATIVE);
	CHECK(bk_store_queue_open(s, 8, &q) == 0);

	/* a write at the far end from the head: seek + half a turn at
	 * least, whether it goes to the cache's destage or not: measured
	 * from a flush (cache on) or the write itself (cache off) */
	iov = (struct iovec){ buf, 64 * KIB };
	io = (struct bk_io){ .op = BK_IO_WRITE, .offset = 60 * MIB, .len = 64 * KIB,
			     .iov = &iov, .iovcnt = 1 };
	t0 = now_ns();
	CHECK(run_io(q, &io) == 64 * KIB);
	io = (struct bk_io){ .op = BK_IO_FLUSH };
	CHECK(run_io(q, &io) == 0);
	el = now_ns() - t0;
	{
		struct bk_d8_params dp;

		bk_d8_default_params(&dp);	/* the store's: a 250 GB stroke */
		/* the seek at least (the wait for the sector may be 0) */
		CHECK(el >= bk_d8_seek_ns(&dp, 60 * MIB));
	}

	/* read back through the store and straight from the file */
	memset(rd, 0, 64 * KIB);
	iov = (struct iovec){ rd, 64 * KIB };
	io = (struct bk_io){ .op = BK_IO_READ, .offset = 60 * MIB, .len = 64 * KIB,
			     .iov = &iov, .iovcnt = 1 };
	CHECK(run_io(q, &io) == 64 * KIB);
	CHECK(memcmp(rd, buf, 64 * KIB) == 0);
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && pread(fd, rd, 64 * KIB, 60 * MIB) == 64 * KIB);
	close(fd);
	CHECK(memcmp(rd, buf, 64 * KIB) == 0);

	/* the dispatch refuses a discard: the disk has no TRIM */
	io = (struct bk_io){ .op = BK_IO_DISCARD, .offset = 0, .len = 4096 };
	CHECK(run_io(q, &io) == -EINVAL);

	bk_store_queue_close(q);
	bk_stack_close(s);
	bk_params_free(&p);
	/* a character device is not a disk file */
	CHECK(bk_params_parse("disk2008:/dev/null", &p, &why) == 0);
	CHECK(bk_stack_open(&p, &sc, false, &s, &why) < 0 && strstr(why.msg, "regular file"));
	bk_params_free(&p);
	unlink(path);
	rmdir(dir);
	free(buf);
	free(rd);
	return 0;
}

static int
test_store_wce0(void)
{
	return test_store(true);
}

static int
test_store_wce1(void)
{
	return test_store(false);
}

int
main(void)
{
	static const struct { const char *name; int (*fn)(void); } tests[] = {
		{ "seek_curve", test_seek_curve },
		{ "wce0_write", test_wce0_write },
		{ "wce0_write_buffer", test_wce0_write_buffer },
		{ "clook", test_clook },
		{ "sptf", test_sptf },
		{ "wce0_stream_first", test_wce0_stream_first },
		{ "starvation_bound", test_starvation_bound },
		{ "wce1_write_flush", test_wce1_write_flush },
		{ "cache_full", test_cache_full },
		{ "cache_entries", test_cache_entries },
		{ "read_first", test_read_first },
		{ "streaming_rates", test_streaming_rates },
		{ "random_reads", test_random_reads },
		{ "monotone", test_monotone },
		{ "store_wce0", test_store_wce0 },
		{ "store_wce1", test_store_wce1 },
	};
	int failed = 0;
	size_t i;

	bk_d8_default_params(&P);
	P.stroke = 64 * MIB;
	/* the store's disk holds 256 KiB of cache-off writes' data; the
	 * tests of the queue's order give it room for all of them
	 * (wce0_write_buffer tests the limit) */
	CHECK(P.wt_buf == 256 * KIB);
	P.wt_buf = 0;
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int rc = tests[i].fn();

		printf("%s: %s\n", tests[i].name, rc ? "FAIL" : "ok");
		failed |= rc;
	}
	return failed ? 1 : 0;
}
