/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * io.c: "blkfront-test io", a small fio: one job of fixed-size blocks at
 * a queue depth, and bonnie++'s block phases (--bonnie).
 *
 * A block ("unit") of bs bytes may need several requests (bs above one
 * request's maximum): they are submitted together and the unit completes
 * when all did.  A unit may have two stages (rewrite: read then write the
 * same buffer; FUA emulation: write then flush).  Completions run on
 * libblkfront's thread and only queue the unit back to the main thread,
 * which does all submitting (a completion must never block on a full
 * ring, the completion thread being the one that empties it).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compiler.h"
#include "barrier.h"
#include "log.h"
#include "pollwin.h"
#include "xbus.h"
#include "ft.h"

enum io_rw { RW_READ, RW_WRITE, RW_RANDREAD, RW_RANDWRITE, RW_RW, RW_RANDRW };
static const char *const rw_names[] = {
	"read", "write", "randread", "randwrite", "rw", "randrw",
};

enum unit_kind { U_READ, U_WRITE, U_REWRITE, U_SEEK, U_FLUSH };

struct io_job {
	enum io_rw rw;
	uint64_t bs, size, offset;
	unsigned int depth;
	double runtime;		/* seconds, 0 = once over size */
	bool fua;
	unsigned int flush_every;
	unsigned int rwmixread;
	uint64_t seed;
	uint64_t max_units;	/* 0 = by size/runtime */
	enum unit_kind forced;	/* bonnie phases */
	bool use_forced;
	unsigned int poll_max_us;	/* --poll-max-us, for wait_done */
};

struct io_res {
	uint64_t ios, bytes, errors, flushes;
	double secs;
	uint64_t lat_min, lat_max, lat_p50, lat_p99;
	double lat_mean;
};

struct io_unit {
	struct io_ctx *ctx;
	enum unit_kind kind;
	unsigned int stage;		/* 0 first, 1 second */
	bool write_back;		/* seek: dirty 10% */
	uint64_t sector;
	uint64_t t0;
	unsigned int parts, pending;
	int err;
	struct blkfront_req *reqs;
	void *buf;
	struct io_unit *next_done;
	bool busy;
};

struct io_ctx {
	blkfront_t *bf;
	const struct io_job *job;
	/* done() mostly runs in this job's own thread (it reaps, see
	 * wait_done), but may run on another (blkfront's fail_all) */
	pthread_mutex_t lock;
	struct io_unit *done, **done_tail;	/* completed stages, FIFO */
	bool ready;			/* done != NULL; read unlocked to poll */
	struct pollwin poll;		/* wait_done's, before blkfront_wait */
	struct io_unit *units;
	unsigned int nunits;
	uint64_t *lat;			/* ns, one per unit completed */
	uint64_t nlat, cap;
	uint64_t ios, bytes, errors, flushes;
	uint64_t rs;
	uint64_t seq_next;
};

static uint64_t
rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Queue a unit whose stage completed (c->lock held).  FIFO: a LIFO here
 * starved the oldest completions while new ones kept arriving. */
static void
push_done(struct io_ctx *c, struct io_unit *u)
{
	u->next_done = NULL;
	*c->done_tail = u;
	c->done_tail = &u->next_done;
	WRITE_ONCE(c->ready, true);
}

static void
part_done(struct blkfront_req *req)
{
	struct io_unit *u = req->opaque;
	struct io_ctx *c = u->ctx;

	pthread_mutex_lock(&c->lock);
	if (req->result && !u->err)
		u->err = req->result;
	if (--u->pending == 0)
		push_done(c, u);
	pthread_mutex_unlock(&c->lock);
}

/* Submit stage op of u (with the unit's data, or an empty flush when
 * !data): nothing locked. */
static int
submit_stage(struct io_ctx *c, struct io_unit *u, enum blkfront_op op, bool data)
{
	size_t max = (size_t)blkfront_max_sectors(c->bf) * SECTOR_SIZE;
	uint64_t len = data ? c->job->bs : 0;
	unsigned int i, n;
	int r;

	n = len ? (unsigned int)((len + max - 1) / max) : 1;
	pthread_mutex_lock(&c->lock);
	u->pending = n;
	u->parts = n;
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < n; i++) {
		struct blkfront_req *q = &u->reqs[i];
		uint64_t off = (uint64_t)i * max;

		memset(q, 0, sizeof(*q));
		q->op = op;
		q->sector = u->sector + off / SECTOR_SIZE;
		q->buf = (char *)u->buf + off;
		q->len = (uint32_t)(len ? (len - off < max ? len - off : max) : 0);
		q->done = part_done;
		q->opaque = u;
		r = blkfront_submit(c->bf, q);
		if (r) {
			/* the parts not submitted will never complete */
			pthread_mutex_lock(&c->lock);
			if (!u->err)
				u->err = r;
			u->pending -= n - i;
			if (u->pending == 0)
				push_done(c, u);
			pthread_mutex_unlock(&c->lock);
			return r;
		}
	}
	return 0;
}

static enum blkfront_op
flush_op(const struct blkfront_info *in)
{
	return in->feature_barrier ? BLKFRONT_WRITE_BARRIER : BLKFRONT_FLUSH_DISKCACHE;
}

static enum blkfront_op
write_op(struct io_ctx *c)
{
	const struct blkfront_info *in = blkfront_info(c->bf);

	if (c->job->fua && in->feature_fua && in->feature_barrier)
		return BLKFRONT_WRITE_BARRIER;
	return BLKFRONT_WRITE;
}

static void
record(struct io_ctx *c, struct io_unit *u)
{
	uint64_t ns = ft_now_ns() - u->t0;

	if (c->nlat == c->cap) {
		uint64_t ncap = c->cap ? c->cap * 2 : 65536;
		uint64_t *p = realloc(c->lat, ncap * sizeof(*p));

		if (!p)
			return;
		c->lat = p;
		c->cap = ncap;
	}
	c->lat[c->nlat++] = ns;
}

/* Advance a unit whose stage completed.  Returns true when it finished. */
static bool
advance(struct io_ctx *c, struct io_unit *u)
{
	const struct blkfront_info *in = blkfront_info(c->bf);

	if (u->err) {
		c->errors++;
		return true;
	}
	if (u->stage == 0) {
		bool again = false;
		enum blkfront_op op = BLKFRONT_WRITE;

		switch (u->kind) {
		case U_REWRITE:
			((unsigned char *)u->buf)[0]++;		/* bonnie dirties it */
			again = true;
			break;
		case U_SEEK:
			again = u->write_back;
			break;
		case U_WRITE:
			/* FUA without barriers: write, then flush (block layer's way) */
			if (c->job->fua && !(in->feature_fua && in->feature_barrier) &&
			    in->feature_flush) {
				op = flush_op(in);
				again = true;
			}
			break;
		default:
			break;
		}
		if (again) {
			u->stage = 1;
			if (submit_stage(c, u, op == BLKFRONT_WRITE ? write_op(c) : op,
					 op == BLKFRONT_WRITE))
				return false;	/* error: comes back via done */
			return false;
		}
	}
	if (u->kind == U_FLUSH) {
		c->flushes++;
		return true;
	}
	record(c, u);
	c->ios++;
	c->bytes += c->job->bs;
	return true;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Reap what responses there are here; is a unit done?  (pollwin_spin) */
static bool
unit_ready(void *opaque)
{
	struct io_ctx *c = opaque;

	blkfront_poll(c->bf);	/* no system call when nothing is waiting */
	return READ_ONCE(c->ready);
}

/*
 * The next completed unit.  This thread reaps for itself (fio's
 * io_getevents loop; blkfront_poll_begin): it polls the rings for a
 * short adaptive window, since a response is usually about to arrive,
 * then sleeps on the event channels in blkfront_wait.
 */
static struct io_unit *
wait_done(struct io_ctx *c)
{
	uint64_t start = pollwin_now_ns();
	struct io_unit *u;
	bool slept = false;

	while (!READ_ONCE(c->ready)) {
		if (pollwin_spin(&c->poll, start, unit_ready, c))
			break;
		/* an error here has completed everything (fail_all) or will
		 * show in the next round; the timeout only bounds the sleep */
		blkfront_wait(c->bf, 1000);
		slept = true;
	}
	if (slept)
		pollwin_adapt(&c->poll, start);
	pthread_mutex_lock(&c->lock);
	u = c->done;
	c->done = u->next_done;
	if (!c->done) {
		c->done_tail = &c->done;
		WRITE_ONCE(c->ready, false);
	}
	pthread_mutex_unlock(&c->lock);
	return u;
}

static int
run_job(blkfront_t *bf, const struct io_job *job, struct io_res *res)
{
	const struct blkfront_info *in = blkfront_info(bf);
	uint64_t nblk = job->size / job->bs, t_start, deadline = 0, issued = 0;
	uint64_t target, writes_since_flush = 0, sum = 0;
	unsigned int inflight = 0, i;
	size_t max = (size_t)blkfront_max_sectors(bf) * SECTOR_SIZE;
	unsigned int parts = (unsigned int)((job->bs + max - 1) / max);
	struct io_ctx c;
	bool stop = false, flushing = false;
	int r = 0;

	memset(&c, 0, sizeof(c));
	c.bf = bf;
	c.job = job;
	c.rs = job->seed | 1;
	c.done_tail = &c.done;
	pollwin_init(&c.poll, job->poll_max_us);
	pthread_mutex_init(&c.lock, NULL);
	c.nunits = job->depth + 1;		/* +1: a flush unit */
	c.units = calloc(c.nunits, sizeof(*c.units));
	if (!c.units)
		return -ENOMEM;
	for (i = 0; i < c.nunits; i++) {
		c.units[i].ctx = &c;
		c.units[i].reqs = calloc(parts, sizeof(struct blkfront_req));
		if (!c.units[i].reqs || posix_memalign(&c.units[i].buf, 4096, job->bs)) {
			r = -ENOMEM;
			goto out;
		}
		ft_pattern_fill(c.units[i].buf, job->bs, job->seed + i);
	}
	target = job->max_units ? job->max_units : (job->runtime > 0 ? UINT64_MAX : nblk);
	t_start = ft_now_ns();
	if (job->runtime > 0)
		deadline = t_start + (uint64_t)(job->runtime * 1e9);

	blkfront_poll_begin(bf);	/* this thread reaps (wait_done) */
	while (!stop || inflight || flushing) {
		/* fill the queue */
		while (!stop && !flushing && inflight < job->depth) {
			struct io_unit *u = NULL;
			uint64_t blk;
			bool rd;

			/* a due flush first, also after the last write (fio's fsync=N) */
			if (job->flush_every && writes_since_flush >= job->flush_every &&
			    in->feature_flush && !blkfront_broken(bf)) {
				flushing = true;	/* wait for the queue to drain */
				break;
			}
			if (issued >= target || ft_stop || blkfront_broken(bf) ||
			    (deadline && ft_now_ns() >= deadline)) {
				stop = true;
				break;
			}
			for (i = 0; i < job->depth; i++)
				if (!c.units[i].busy) {
					u = &c.units[i];
					break;
				}
			switch (job->rw) {
			case RW_READ: case RW_WRITE: case RW_RW:
				blk = c.seq_next++ % nblk;
				break;
			default:
				blk = rnd(&c.rs) % nblk;
			}
			switch (job->rw) {
			case RW_READ: case RW_RANDREAD: rd = true; break;
			case RW_WRITE: case RW_RANDWRITE: rd = false; break;
			default: rd = rnd(&c.rs) % 100 < job->rwmixread;
			}
			u->busy = true;
			u->kind = job->use_forced ? job->forced : rd ? U_READ : U_WRITE;
			u->stage = 0;
			u->err = 0;
			u->write_back = u->kind == U_SEEK && rnd(&c.rs) % 10 == 0;
			u->sector = (job->offset + blk * job->bs) / SECTOR_SIZE;
			u->t0 = ft_now_ns();
			inflight++;
			issued++;
			if (u->kind == U_WRITE)
				writes_since_flush++;
			submit_stage(&c, u, u->kind == U_WRITE ? write_op(&c) : BLKFRONT_READ, true);
		}
		if (flushing && blkfront_broken(bf)) {
			flushing = false;
			stop = true;
		}
		if (flushing && inflight == 0) {
			struct io_unit *u = &c.units[job->depth];

			u->busy = true;
			u->kind = U_FLUSH;
			u->stage = 0;
			u->err = 0;
			u->t0 = ft_now_ns();
			inflight++;
			writes_since_flush = 0;
			flushing = false;
			submit_stage(&c, u, flush_op(in), false);
		}
		if (!inflight)
			continue;
		{
			struct io_unit *u = wait_done(&c);

			if (advance(&c, u)) {
				u->busy = false;
				inflight--;
			}
		}
	}
	blkfront_poll_end(bf);
	res->secs = (double)(ft_now_ns() - t_start) / 1e9;
	res->ios = c.ios;
	res->bytes = c.bytes;
	res->errors = c.errors;
	res->flushes = c.flushes;
	if (c.nlat) {
		qsort(c.lat, c.nlat, sizeof(*c.lat), cmp_u64);
		for (i = 0; i < c.nlat; i++)
			sum += c.lat[i];
		res->lat_min = c.lat[0];
		res->lat_max = c.lat[c.nlat - 1];
		res->lat_p50 = c.lat[(c.nlat - 1) * 50 / 100];
		res->lat_p99 = c.lat[(c.nlat - 1) * 99 / 100];
		res->lat_mean = (double)sum / (double)c.nlat;
	}
	if (c.errors)
		r = -EIO;
out:
	for (i = 0; i < c.nunits; i++) {
		free(c.units[i].reqs);
		free(c.units[i].buf);
	}
	free(c.units);
	free(c.lat);
	pthread_mutex_destroy(&c.lock);
	return r;
}

static void
print_res(const char *name, const struct io_job *job, const struct io_res *res, bool json)
{
	double iops = res->secs > 0 ? (double)res->ios / res->secs : 0;
	double mbps = res->secs > 0 ? (double)res->bytes / res->secs / 1e6 : 0;

	if (json) {
		printf("{\"job\":\"%s\",\"rw\":\"%s\",\"bs\":%" PRIu64 ",\"iodepth\":%u,"
		       "\"fua\":%s,\"flush_every\":%u,\"runtime_s\":%.3f,\"ios\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"iops\":%.1f,\"mbps\":%.2f,\"flushes\":%" PRIu64
		       ",\"errors\":%" PRIu64 ",\"lat_us\":{\"min\":%.1f,\"mean\":%.1f,"
		       "\"p50\":%.1f,\"p99\":%.1f,\"max\":%.1f}}\n",
		       name, rw_names[job->rw], job->bs, job->depth, job->fua ? "true" : "false",
		       job->flush_every, res->secs, res->ios, res->bytes, iops, mbps,
		       res->flushes, res->errors, res->lat_min / 1e3, res->lat_mean / 1e3,
		       res->lat_p50 / 1e3, res->lat_p99 / 1e3, res->lat_max / 1e3);
		return;
	}
	printf("%s: rw=%s bs=%" PRIu64 " iodepth=%u%s: %" PRIu64 " ios in %.2f s: "
	       "%.0f IOPS, %.1f MB/s; lat us min %.1f mean %.1f p50 %.1f p99 %.1f max %.1f"
	       "%s%" PRIu64 " flushes, %" PRIu64 " errors\n",
	       name, rw_names[job->rw], job->bs, job->depth, job->fua ? " fua" : "", res->ios,
	       res->secs, iops, mbps, res->lat_min / 1e3, res->lat_mean / 1e3,
	       res->lat_p50 / 1e3, res->lat_p99 / 1e3, res->lat_max / 1e3, "; ",
	       res->flushes, res->errors);
}

/* bonnie++'s block phases; KiB/s like bonnie's table, seeks/s. */
static int
run_bonnie(blkfront_t *bf, const struct io_job *base, bool json)
{
	static const struct {
		const char *name;
		enum io_rw rw;
		enum unit_kind kind;
	} phases[] = {
		{ "seq-output-block", RW_WRITE, U_WRITE },
		{ "seq-rewrite", RW_WRITE, U_REWRITE },
		{ "seq-input-block", RW_READ, U_READ },
		{ "random-seeks", RW_RANDREAD, U_SEEK },
	};
	unsigned int i;
	int rc = 0;

	for (i = 0; i < ARRAY_SIZE(phases); i++) {
		struct io_job j = *base;
		struct io_res res = { 0 };
		double rate;

		j.rw = phases[i].rw;
		j.forced = phases[i].kind;
		j.use_forced = true;
		if (phases[i].kind == U_REWRITE)
			j.depth = 1;		/* bonnie: read, lseek, write */
		if (phases[i].kind == U_SEEK) {
			j.depth = 3;		/* bonnie's 3 seeker processes */
			j.max_units = 8000;	/* bonnie: 8000 seeks */
			j.runtime = 0;
		}
		if (run_job(bf, &j, &res) < 0)
			rc = 1;
		rate = res.secs > 0 ? (phases[i].kind == U_SEEK ? (double)res.ios / res.secs :
				       (double)res.bytes / 1024.0 / res.secs) : 0;
		if (json)
			printf("{\"phase\":\"%s\",\"bs\":%" PRIu64 ",\"%s\":%.1f,\"secs\":%.3f,"
			       "\"errors\":%" PRIu64 "}\n", phases[i].name, j.bs,
			       phases[i].kind == U_SEEK ? "seeks_per_s" : "kib_per_s", rate,
			       res.secs, res.errors);
		else
			printf("%-18s %10.1f %s  (%.2f s, %" PRIu64 " errors)\n", phases[i].name,
			       rate, phases[i].kind == U_SEEK ? "seeks/s" : "KiB/s", res.secs,
			       res.errors);
	}
	return rc;
}

struct io_opts {
	struct io_job job;
	bool json, bonnie;
	bool flush_at_start;	/* one flush before the job, untimed */
	bool in_place;		/* BLKFRONT_IN_PLACE: no copy to the grants */
};

static void
io_usage(FILE *f)
{
	fprintf(f, "usage: blkfront-test io [device options] [--rw MODE] [--bs SIZE]\n"
		"         [--iodepth N] [--size SIZE] [--offset SIZE] [--runtime SEC] [--fua]\n"
		"         [--flush-every N] [--flush-at-start] [--rwmixread PCT] [--seed N]\n"
		"         [--in-place] [--bonnie] [--output-format normal|json]\n"
		"  MODE: read write randread randwrite rw randrw\n%s", FT_COMMON_HELP);
}

static int
io_opt(void *ctx, int opt, const char *arg)
{
	struct io_opts *o = ctx;
	uint64_t n;
	size_t i;

	switch (opt) {
	case 'r':
		for (i = 0; i < ARRAY_SIZE(rw_names); i++)
			if (strcmp(arg, rw_names[i]) == 0) {
				o->job.rw = (enum io_rw)i;
				return 1;
			}
		return ft_bad("one of read, write, randread, randwrite, rw, randrw");
	case 'b':
		if (ft_parse_size(arg, &o->job.bs) || o->job.bs == 0)
			return ft_bad("a size above 0 (bytes, or with k/M/G/s)");
		return 1;
	case 's':
		/* 0 would silently mean the default (the rest of the disk) */
		if (ft_parse_size(arg, &o->job.size) || o->job.size == 0)
			return ft_bad("a size above 0 (bytes, or with k/M/G/s; "
				      "default: to the end of the disk)");
		return 1;
	case 'o':
		return ft_parse_size(arg, &o->job.offset) ? ft_bad(SIZE_ALLOWED) : 1;
	case 'q':
		if (ft_parse_size(arg, &n) || n == 0 || n > 4096)
			return ft_bad("a whole number in 1..4096");
		o->job.depth = (unsigned int)n;
		return 1;
	case 't': {
		char *end;

		errno = 0;
		o->job.runtime = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->job.runtime >= 0))
			return ft_bad("seconds, 0 or more (0: once over --size)");
		return 1;
	}
	case 'F': o->job.fua = true; return 1;
	case 'f':
		if (ft_parse_size(arg, &n) || n > 1u << 30)
			return ft_bad("a whole number in 0..%u", 1u << 30);
		o->job.flush_every = (unsigned int)n;
		return 1;
	case 'm':
		if (ft_parse_size(arg, &n) || n > 100)
			return ft_bad("a percentage in 0..100");
		o->job.rwmixread = (unsigned int)n;
		return 1;
	case 'S':
		return ft_parse_size(arg, &o->job.seed) ? ft_bad("a whole number") : 1;
	case 'B': o->bonnie = true; return 1;
	case 'A': o->flush_at_start = true; return 1;
	case 'P': o->in_place = true; return 1;
	case 'O':
		if (strcmp(arg, "json") == 0)
			o->json = true;
		else if (strcmp(arg, "normal"))
			return ft_bad("normal or json");
		return 1;
	}
	return 0;
}

int
ft_cmd_io(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rw", required_argument, NULL, 'r' },
		{ "bs", required_argument, NULL, 'b' },
		{ "size", required_argument, NULL, 's' },
		{ "offset", required_argument, NULL, 'o' },
		{ "iodepth", required_argument, NULL, 'q' },
		{ "runtime", required_argument, NULL, 't' },
		{ "fua", no_argument, NULL, 'F' },
		{ "flush-every", required_argument, NULL, 'f' },
		{ "flush-at-start", no_argument, NULL, 'A' },
		{ "in-place", no_argument, NULL, 'P' },
		{ "rwmixread", required_argument, NULL, 'm' },
		{ "seed", required_argument, NULL, 'S' },
		{ "bonnie", no_argument, NULL, 'B' },
		{ "output-format", required_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	struct io_opts o = {
		.job = { .rw = RW_READ, .bs = 4096, .depth = 1, .rwmixread = 50, .seed = 1 },
	};
	const struct blkfront_info *in;
	struct ft_common c;
	struct io_res res = { 0 };
	blkfront_t *bf;
	uint64_t disk;
	int i, rc;

	i = ft_parse(argc, argv, &c, NULL, opts, io_opt, &o, io_usage);
	if (i != argc) {
		io_usage(stderr);
		return 2;
	}
	if (o.job.bs % SECTOR_SIZE || o.job.offset % SECTOR_SIZE) {
		log_error("io: --bs and --offset must be multiples of 512");
		return 2;
	}
	/*
	 * --in-place: the job's data stays in the granted pages (a
	 * benchmark's client that copies nothing, as fio hands its
	 * buffer to its engine; what is written is not the job's pattern)
	 */
	if (o.in_place)
		c.bcfg.flags |= BLKFRONT_IN_PLACE;
	ft_install_stop_signals();
	bf = ft_common_open(&c);
	if (!bf)
		return 1;
	in = blkfront_info(bf);
	disk = in->sectors * SECTOR_SIZE;
	if (o.job.offset >= disk || o.job.bs % in->sector_size) {
		log_error("io: --offset beyond the disk, or --bs not a multiple of sector-size %u",
			  in->sector_size);
		ft_common_close(&c, bf);
		return 2;
	}
	if (o.job.size > disk - o.job.offset) {
		/* never clamped: a job over less than was asked for would
		 * report numbers for another workload */
		log_error("io: --size %" PRIu64 " is past the end of the disk: %" PRIu64
			  " bytes from --offset %" PRIu64 " (the disk has %" PRIu64 ")",
			  o.job.size, disk - o.job.offset, o.job.offset, disk);
		ft_common_close(&c, bf);
		return 2;
	}
	if (!o.job.size)
		o.job.size = disk - o.job.offset;
	if (o.job.size < o.job.bs) {
		log_error("io: region smaller than one block");
		ft_common_close(&c, bf);
		return 2;
	}
	if (o.job.fua && !in->feature_flush) {
		/* a write-through disk: every write is durable on completion
		 * and there is nothing to send; the job is plain writes, and
		 * its report must not say fua */
		log_warning("io: --fua: the backend offers neither flush nor barrier (a "
			    "write-through disk): plain writes, reported without fua");
		o.job.fua = false;
	}
	/*
	 * --flush-at-start: what a guest's filesystem sends at its first
	 * journal commit, and fio's rbd engine at open.  A cache that stays
	 * write-through until it has seen one (librbd's default,
	 * rbd_cache_writethrough_until_flush) behaves from here on as it
	 * does under a real guest.  Outside the timed job.
	 */
	if (o.flush_at_start && (rc = blkfront_flush(bf)) < 0) {
		log_error("io: --flush-at-start: %s", strerror(-rc));
		ft_common_close(&c, bf);
		return 1;
	}
	if (o.bonnie) {
		rc = run_bonnie(bf, &o.job, o.json);
	} else {
		o.job.poll_max_us = c.bcfg.poll_max_us;
		rc = run_job(bf, &o.job, &res) < 0 ? 1 : 0;
		print_res("io", &o.job, &res, o.json);
	}
	if (blkfront_broken(bf))
		rc = 1;
	ft_common_close(&c, bf);
	return rc;
}
