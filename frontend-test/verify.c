/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * verify.c: "blkfront-test verify", writes that can be recognised.
 *
 * Every block (bs bytes, bs-aligned) written carries a header:
 *
 *   magic "BLKFTVFY", sector, generation, seed, bs, checksum
 *
 * followed by pseudo-random bytes derived from (seed, sector, generation);
 * the checksum (guestlog_hash) covers the whole block with the checksum
 * field zeroed.  Reading a block back tells apart:
 *   lost       zeroes (or no header) where a write was acknowledged;
 *   torn       header present but the checksum fails (part of the block
 *              is from another write);
 *   misplaced  a valid block of another sector;
 *   stale      a valid block with an older generation than the last
 *              acknowledged write (the write was lost);
 *   phantom    a generation never acknowledged for that sector.
 * A block verify wrote is also compared byte for byte with what its last
 * acknowledged write carried, which catches what the header cannot (a
 * whole block of another run, say).
 *
 * The run ends -- its --count done, or on the first SIGINT/SIGTERM --
 * the same way: no new writes, everything in flight answered (and
 * checked), then every block of the region read back: a block verify
 * wrote must hold its last acknowledged write.  One it never wrote holds
 * whatever the disk held before (zeroes, an earlier run's blocks of
 * another --bs, a file system): the model says nothing of it, except
 * that a block of this --bs there must be whole and of this sector -- a
 * misdirected or torn write of ours would show there.  The
 * summary says "ok" only after that read-back saw every block; a signal
 * that comes once it has begun abandons it, and that is a failure (an
 * unfinished check is not a pass).  Signals before it do not count:
 * timeout(1) passes one on twice, to its child and to its process group.
 *
 * Threads: the main thread submits; completions (libblkfront's thread)
 * update the per-block state and check reads under one mutex, and wake
 * the main thread.  Nothing is submitted from a completion.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "log.h"
#include "guestlog.h"
#include "ft.h"

#define VFY_MAGIC 0x594656544b464c42ull		/* "BLKFTVFY" little-endian */
#define VFY_SAY_BAD 16		/* bad blocks of the read-back named one by one */

struct vfy_hdr {
	uint64_t magic;
	uint64_t sector;
	uint64_t gen;
	uint64_t seed;
	uint32_t bs;
	uint32_t pad;
	uint64_t csum;
};

struct vfy_block {
	uint64_t acked;		/* last acknowledged generation, 0 none */
	uint64_t inflight;	/* generation of a write in flight, 0 none */
	bool reading;
};

struct vfy;

struct vfy_op {
	struct blkfront_req req;
	struct vfy *v;
	uint64_t block;
	uint64_t gen;
	bool busy;
	bool readback;		/* a read of the final pass */
	void *buf;
	void *want;		/* the block a read must find (check_read) */
};

struct vfy {
	blkfront_t *bf;
	uint32_t bs;
	uint64_t nblocks, base_sector;
	uint64_t seed;
	struct vfy_block *blk;
	struct vfy_op *ops;
	unsigned int depth, inflight;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	uint64_t gen;
	uint64_t writes_acked, reads_checked, flushes, since_flush;
	/* the final pass: blocks read back and checked, and how many of
	 * them were wrong (each said on stderr, up to VFY_SAY_BAD) */
	uint64_t read_back, bad;
	char first_bad[200];
	char failure[320];
	bool failed;
	/* each read's and write's latency, for the summary's p99 */
	uint64_t *lat;
	uint64_t nlat, caplat;
};

static uint64_t
sector_of(const struct vfy *v, uint64_t block)
{
	return v->base_sector + block * (v->bs / SECTOR_SIZE);
}

static void
make_block(const struct vfy *v, void *buf, uint64_t sector, uint64_t gen)
{
	struct vfy_hdr h = {
		.magic = VFY_MAGIC, .sector = sector, .gen = gen, .seed = v->seed,
		.bs = v->bs, .csum = 0,
	};

	ft_pattern_fill((char *)buf + sizeof(h), v->bs - sizeof(h),
			v->seed ^ (sector * 0x9e3779b97f4a7c15ull) ^ (gen << 20));
	memcpy(buf, &h, sizeof(h));
	h.csum = guestlog_hash(buf, v->bs);
	memcpy(buf, &h, sizeof(h));
}

static bool
all_zero(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Check one block read at sector.  want: the generation that must be
 * there (0: anything valid or zeroes).  Fills why and returns false when
 * the block is bad.
 */
static bool
check_block(const struct vfy *v, void *buf, uint64_t sector, uint64_t want,
	    char *why, size_t len)
{
	struct vfy_hdr h;
	uint64_t csum;

	memcpy(&h, buf, sizeof(h));
	if (h.magic != VFY_MAGIC) {
		if (all_zero(buf, v->bs)) {
			if (!want)
				return true;
			snprintf(why, len, "sector %" PRIu64 ": lost write: zeroes where generation %"
				 PRIu64 " was acknowledged", sector, want);
		} else {
			snprintf(why, len, "sector %" PRIu64 ": corrupt: no header (want generation %"
				 PRIu64 ")", sector, want);
		}
		return false;
	}
	if (h.bs != v->bs) {
		snprintf(why, len, "sector %" PRIu64 ": block written with --bs %u, checked with %u",
			 sector, h.bs, v->bs);
		return false;
	}
	csum = h.csum;
	h.csum = 0;
	memcpy(buf, &h, sizeof(h));
	if (guestlog_hash(buf, v->bs) != csum) {
		snprintf(why, len, "sector %" PRIu64 ": torn write: checksum mismatch (header says "
			 "sector %" PRIu64 " generation %" PRIu64 ")", sector, h.sector, h.gen);
		return false;
	}
	if (h.sector != sector) {
		snprintf(why, len, "sector %" PRIu64 ": misplaced write: holds sector %" PRIu64
			 "'s block (generation %" PRIu64 ")", sector, h.sector, h.gen);
		return false;
	}
	if (want && h.gen < want) {
		snprintf(why, len, "sector %" PRIu64 ": stale data: generation %" PRIu64
			 ", but %" PRIu64 " was acknowledged (lost write)", sector, h.gen, want);
		return false;
	}
	if (want && h.gen > want) {
		snprintf(why, len, "sector %" PRIu64 ": phantom write: generation %" PRIu64
			 " never acknowledged (last %" PRIu64 ")", sector, h.gen, want);
		return false;
	}
	return true;
}

/*
 * Check a block read at sector against the model: want is the generation
 * of its last acknowledged write.  A written block must be byte for byte
 * what make_block() made for it (expect: a bs scratch buffer);
 * check_block() then only names what is wrong.  want 0: verify never
 * wrote it, and only a header of this --bs is held to anything (whole,
 * and of this sector).
 */
static bool
check_read(const struct vfy *v, void *buf, void *expect, uint64_t sector, uint64_t want,
	   char *why, size_t len)
{
	struct vfy_hdr h;

	if (!want) {
		memcpy(&h, buf, sizeof(h));
		if (h.magic != VFY_MAGIC || h.bs != v->bs)
			return true;
		return check_block(v, buf, sector, 0, why, len);
	}
	make_block(v, expect, sector, want);
	if (!memcmp(buf, expect, v->bs))
		return true;
	if (check_block(v, buf, sector, want, why, len))
		snprintf(why, len, "sector %" PRIu64 ": not the block written as generation %"
			 PRIu64 " (a valid header: another run's seed?)", sector, want);
	return false;
}

static void
vfy_fail(struct vfy *v, const char *why)
{
	if (!v->failed) {
		v->failed = true;
		snprintf(v->failure, sizeof(v->failure), "%s", why);
	}
}

static void
op_done(struct blkfront_req *req)
{
	struct vfy_op *o = container_of(req, struct vfy_op, req);
	struct vfy *v = o->v;
	char why[200];

	pthread_mutex_lock(&v->lock);
	if (!req->result && req->op != BLKFRONT_FLUSH_DISKCACHE &&
	    req->op != BLKFRONT_WRITE_BARRIER) {
		if (v->nlat == v->caplat) {
			uint64_t cap = v->caplat ? v->caplat * 2 : 4096;
			uint64_t *l = realloc(v->lat, cap * sizeof(*l));

			if (l) {
				v->lat = l;
				v->caplat = cap;
			}
		}
		if (v->nlat < v->caplat)
			v->lat[v->nlat++] = req->latency_ns;
	}
	if (req->result) {
		snprintf(why, sizeof(why), "%s at sector %" PRIu64 " failed: %s (status %d)",
			 req->op == BLKFRONT_READ ? "read" : req->op == BLKFRONT_WRITE ? "write" :
			 "flush", req->sector, strerror(-req->result), req->status);
		vfy_fail(v, why);
	} else if (req->op == BLKFRONT_WRITE) {
		struct vfy_block *b = &v->blk[o->block];

		if (o->gen > b->acked)
			b->acked = o->gen;
		b->inflight = 0;
		v->writes_acked++;
		v->since_flush++;
	} else if (req->op == BLKFRONT_READ) {
		struct vfy_block *b = &v->blk[o->block];

		if (o->readback) {
			/* every bad block of the final pass is counted and
			 * the first few named, not just the first */
			if (!check_read(v, o->buf, o->want, req->sector, b->acked, why,
					sizeof(why))) {
				if (!v->bad++)
					snprintf(v->first_bad, sizeof(v->first_bad), "%s", why);
				if (v->bad <= VFY_SAY_BAD)
					fprintf(stderr, "verify: read back: %s\n", why);
			}
			v->read_back++;
		} else if (!check_read(v, o->buf, o->want, req->sector, b->acked, why,
				       sizeof(why))) {
			vfy_fail(v, why);
		}
		v->reads_checked++;
		b->reading = false;
	} else {
		v->flushes++;
	}
	if (req->op == BLKFRONT_WRITE && req->result)
		v->blk[o->block].inflight = 0;
	if (req->op == BLKFRONT_READ && req->result)
		v->blk[o->block].reading = false;
	o->busy = false;
	v->inflight--;
	pthread_cond_signal(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

/* Called with v->lock held: a free op slot, waiting if needed. */
static struct vfy_op *
get_op(struct vfy *v)
{
	unsigned int i;

	while (v->inflight >= v->depth && !v->failed)
		pthread_cond_wait(&v->cond, &v->lock);
	if (v->failed)
		return NULL;
	for (i = 0; i < v->depth; i++)
		if (!v->ops[i].busy)
			return &v->ops[i];
	return NULL;
}

/* Submit with v->lock held (dropped around blkfront_submit). */
static int
submit(struct vfy *v, struct vfy_op *o)
{
	int r;

	o->busy = true;
	o->req.done = op_done;
	v->inflight++;
	pthread_mutex_unlock(&v->lock);
	r = blkfront_submit(v->bf, &o->req);
	pthread_mutex_lock(&v->lock);
	if (r) {
		char why[128];

		o->busy = false;
		v->inflight--;
		snprintf(why, sizeof(why), "submit: %s", strerror(-r));
		vfy_fail(v, why);
	}
	return r;
}

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The 99th percentile of the reads' and writes' latencies, in us. */
static double
p99_us(struct vfy *v)
{
	if (!v->nlat)
		return 0;
	qsort(v->lat, v->nlat, sizeof(*v->lat), cmp_u64);
	return (double)v->lat[(v->nlat - 1) * 99 / 100] / 1e3;
}

static void
drain(struct vfy *v)
{
	while (v->inflight)
		pthread_cond_wait(&v->cond, &v->lock);
}

/*
 * Write (and read) until count writes or the first stop signal, let what
 * is in flight finish, then read every block of the region back and
 * check it.  0 when every block was read back and right, else 1 with
 * v->failure saying why.
 */
static int
run_verify(struct vfy *v, uint64_t count, unsigned int flush_every)
{
	const struct blkfront_info *in = blkfront_info(v->bf);
	uint64_t rs = v->seed | 1, w = 0, i;
	sig_atomic_t stops;
	struct vfy_op *o;
	char why[320];
	int tries;

	pthread_mutex_lock(&v->lock);
	while (w < count && !v->failed && !ft_stop) {
		uint64_t blk = rnd(&rs) % v->nblocks;
		bool is_read = (rnd(&rs) & 3) == 0;	/* 1 read : 3 writes */

		o = get_op(v);
		if (!o)
			break;
		/* a block with nothing in flight */
		for (tries = 0; tries < 64 && (v->blk[blk].inflight || v->blk[blk].reading); tries++)
			blk = (blk + 1) % v->nblocks;
		if (v->blk[blk].inflight || v->blk[blk].reading) {
			pthread_cond_wait(&v->cond, &v->lock);
			continue;
		}
		memset(&o->req, 0, sizeof(o->req));
		o->readback = false;
		o->block = blk;
		o->req.sector = sector_of(v, blk);
		o->req.buf = o->buf;
		o->req.len = v->bs;
		if (is_read && v->blk[blk].acked) {
			o->req.op = BLKFRONT_READ;
			v->blk[blk].reading = true;
		} else {
			o->req.op = BLKFRONT_WRITE;
			o->gen = ++v->gen;
			v->blk[blk].inflight = o->gen;
			make_block(v, o->buf, o->req.sector, o->gen);
			w++;
		}
		submit(v, o);
		if (flush_every && in->feature_flush && v->since_flush >= flush_every) {
			o = get_op(v);
			if (!o)
				break;
			v->since_flush = 0;
			memset(&o->req, 0, sizeof(o->req));
			o->req.op = in->feature_barrier ? BLKFRONT_WRITE_BARRIER :
				BLKFRONT_FLUSH_DISKCACHE;
			submit(v, o);
		}
	}
	/* no new writes: what is in flight is answered and checked first,
	 * so that the model below is final */
	drain(v);
	/*
	 * Final pass: every block of the region, written or not, also when
	 * a signal ended the writes (that is how the kill and restart tests
	 * stop the guest, and this read is their check).  A signal from now
	 * on abandons it, as an I/O error does (v->failed).
	 */
	stops = ft_stops;
	for (i = 0; i < v->nblocks && !v->failed && ft_stops == stops; i++) {
		o = get_op(v);
		if (!o)
			break;
		memset(&o->req, 0, sizeof(o->req));
		o->readback = true;
		o->block = i;
		o->req.op = BLKFRONT_READ;
		o->req.sector = sector_of(v, i);
		o->req.buf = o->buf;
		o->req.len = v->bs;
		v->blk[i].reading = true;
		submit(v, o);
	}
	drain(v);
	if (!v->failed && v->bad) {
		snprintf(why, sizeof(why), "%" PRIu64 " of %" PRIu64 " blocks read back are wrong"
			 " (first: %s)", v->bad, v->read_back, v->first_bad);
		vfy_fail(v, why);
	}
	if (!v->failed && v->read_back < v->nblocks) {
		snprintf(why, sizeof(why), "read-back interrupted by a signal: %" PRIu64
			 " of %" PRIu64 " blocks checked, so no verdict", v->read_back, v->nblocks);
		vfy_fail(v, why);
	}
	pthread_mutex_unlock(&v->lock);
	return v->failed ? 1 : 0;
}

static int
run_check_only(struct vfy *v)
{
	uint64_t i, valid = 0, zero = 0;
	char why[200];
	void *buf = v->ops[0].buf;
	int r;

	for (i = 0; i < v->nblocks && !ft_stop; i++) {
		r = blkfront_pread(v->bf, buf, v->bs, sector_of(v, i));
		if (r) {
			fprintf(stderr, "verify: read sector %" PRIu64 ": %s\n", sector_of(v, i),
				strerror(-r));
			return 1;
		}
		if (all_zero(buf, v->bs)) {
			zero++;
			continue;
		}
		if (!check_block(v, buf, sector_of(v, i), 0, why, sizeof(why))) {
			fprintf(stderr, "verify: %s\n", why);
			return 1;
		}
		valid++;
	}
	if (i < v->nblocks) {
		fprintf(stderr, "verify: FAILED: check-only interrupted by a signal: %" PRIu64
			" of %" PRIu64 " blocks checked, so no verdict\n", i, v->nblocks);
		return 1;
	}
	printf("verify: ok: check-only: %" PRIu64 " valid blocks, %" PRIu64 " zero blocks\n",
	       valid, zero);
	return 0;
}

struct vfy_opts {
	uint64_t bs, size, count, offset, seed;
	unsigned int depth, flush_every;
	const char *log;
	bool check_only;
};

static void
verify_usage(FILE *f)
{
	fprintf(f, "usage: blkfront-test verify [device options] [--bs SIZE] [--size SIZE]\n"
		"         [--offset SIZE] [--count N] [--iodepth N] [--flush-every N]\n"
		"         [--seed N] [--log FILE] [--check-only]\n%s", FT_COMMON_HELP);
}

static int
verify_opt(void *ctx, int opt, const char *arg)
{
	struct vfy_opts *o = ctx;
	uint64_t n;

	switch (opt) {
	case 'b': return ft_parse_size(arg, &o->bs) ? ft_bad(SIZE_ALLOWED) : 1;
	/* --size 0 and --count 0 would silently mean the defaults */
	case 's':
		if (ft_parse_size(arg, &o->size) || o->size == 0)
			return ft_bad("a size above 0 (bytes, or with k/M/G/s; default 64M)");
		return 1;
	case 'o': return ft_parse_size(arg, &o->offset) ? ft_bad(SIZE_ALLOWED) : 1;
	case 'c':
		if (ft_parse_size(arg, &o->count) || o->count == 0)
			return ft_bad("a whole number above 0 (default: twice the blocks)");
		return 1;
	case 'S': return ft_parse_size(arg, &o->seed) ? ft_bad("a whole number") : 1;
	case 'q':
		if (ft_parse_size(arg, &n) || n == 0 || n > 1024)
			return ft_bad("a whole number in 1..1024");
		o->depth = (unsigned int)n;
		return 1;
	case 'f':
		if (ft_parse_size(arg, &n) || n > 1000000)
			return ft_bad("a whole number in 0..1000000");
		o->flush_every = (unsigned int)n;
		return 1;
	case 'l': o->log = arg; return 1;
	case 'C': o->check_only = true; return 1;
	}
	return 0;
}

int
ft_cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "bs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "offset", required_argument, NULL, 'o' },
		{ "count", required_argument, NULL, 'c' },
		{ "seed", required_argument, NULL, 'S' },
		{ "iodepth", required_argument, NULL, 'q' },
		{ "flush-every", required_argument, NULL, 'f' },
		{ "log", required_argument, NULL, 'l' },
		{ "check-only", no_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	struct vfy_opts vo = { .bs = 4096, .depth = 8, .flush_every = 64, .seed = 1 };
	const struct blkfront_info *in;
	struct ft_common c;
	struct vfy v;
	blkfront_t *bf;
	FILE *log = NULL;
	unsigned int i;
	uint64_t disk;
	int r;

	i = (unsigned int)ft_parse(argc, argv, &c, NULL, opts, verify_opt, &vo, verify_usage);
	if (i != (unsigned int)argc) {
		verify_usage(stderr);
		return 2;
	}
	if (vo.bs < sizeof(struct vfy_hdr) || vo.bs % SECTOR_SIZE || vo.offset % SECTOR_SIZE) {
		log_error("verify: --bs must be a multiple of 512 and --offset sector-aligned");
		return 2;
	}
	if (vo.log) {
		log = fopen(vo.log, "a");
		if (!log) {
			log_error("verify: --log %s: %m", vo.log);
			return 1;
		}
		setvbuf(log, NULL, _IOLBF, 0);
		fprintf(log, "%s %d\n", GUESTLOG_MAGIC, GUESTLOG_VERSION);
		c.bcfg.guestlog = log;
	}
	ft_install_stop_signals();
	bf = ft_common_open(&c);
	if (!bf) {
		if (log)
			fclose(log);
		return 1;
	}
	in = blkfront_info(bf);
	disk = in->sectors * SECTOR_SIZE;
	if (vo.bs > (uint64_t)blkfront_max_sectors(bf) * SECTOR_SIZE || vo.bs % in->sector_size) {
		log_error("verify: --bs %" PRIu64 " must be a multiple of the sector size %u and at "
			  "most %u bytes (one request)", vo.bs, in->sector_size,
			  blkfront_max_sectors(bf) * SECTOR_SIZE);
		r = 2;
		goto out_close;
	}
	if (vo.offset >= disk) {
		log_error("verify: --offset beyond the disk (%" PRIu64 " bytes)", disk);
		r = 2;
		goto out_close;
	}
	if (!vo.size)
		vo.size = disk - vo.offset < (64u << 20) ? disk - vo.offset : (64u << 20);
	if (vo.size > disk - vo.offset)
		vo.size = disk - vo.offset;
	memset(&v, 0, sizeof(v));
	v.bf = bf;
	v.bs = (uint32_t)vo.bs;
	v.seed = vo.seed;
	v.base_sector = vo.offset / SECTOR_SIZE;
	v.nblocks = vo.size / vo.bs;
	v.depth = vo.depth;
	if (v.nblocks == 0) {
		log_error("verify: region smaller than one block");
		r = 2;
		goto out_close;
	}
	pthread_mutex_init(&v.lock, NULL);
	pthread_cond_init(&v.cond, NULL);
	v.blk = calloc(v.nblocks, sizeof(*v.blk));
	v.ops = calloc(v.depth, sizeof(*v.ops));
	r = 1;
	if (!v.blk || !v.ops)
		goto out_free;
	for (i = 0; i < v.depth; i++) {
		v.ops[i].v = &v;
		if (posix_memalign(&v.ops[i].buf, 4096, v.bs))
			goto out_free;
		v.ops[i].want = malloc(v.bs);
		if (!v.ops[i].want)
			goto out_free;
	}
	if (vo.check_only) {
		r = run_check_only(&v);
	} else {
		r = run_verify(&v, vo.count ? vo.count : 2 * v.nblocks, vo.flush_every);
		if (r)
			fprintf(stderr, "verify: FAILED: %s\n", v.failure);
		else
			printf("verify: ok: %" PRIu64 " writes acknowledged, %" PRIu64
			       " reads checked, %" PRIu64 " flushes, %" PRIu64 " blocks of %u bytes"
			       " read back; p99 %.1f us\n", v.writes_acked, v.reads_checked,
			       v.flushes, v.read_back, v.bs, p99_us(&v));
	}
out_free:
	for (i = 0; v.ops && i < v.depth; i++) {
		free(v.ops[i].buf);
		free(v.ops[i].want);
	}
	free(v.ops);
	free(v.blk);
	free(v.lat);
	pthread_mutex_destroy(&v.lock);
	pthread_cond_destroy(&v.cond);
out_close:
	ft_common_close(&c, bf);
	if (log && fclose(log)) {
		log_error("verify: --log: %m");
		r = 1;
	}
	return r;
}
