/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-crash-store.c: the blkcrash store wrappers ("record", "volatile")
 * driven through the checked dispatch (store.h) over a small in-test
 * RAM store driver.
 *
 * record:   every write/flush/discard is on the log, in completion order,
 *           with its data; a flush covers only what completed before it
 *           was submitted; a torn tail is ignored by the reader.
 * volatile: reads see the cache; a power cut can lose unflushed writes,
 *           never flushed or FUA ones (many seeds); the cache writes back
 *           on its own when full.
 * writethrough (no volatile cache, wce=0): the recorder logs every
 *           completed write as durable; the volatile cache is off (writes
 *           go through, a power cut loses nothing).
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "blkcrash.h"
#include "compiler.h"
#include "crashlog.h"
#include "log.h"
#include "store.h"

/* ---- tmem: a RAM store driver that does each I/O at submit ---- */

struct tmem {
	unsigned char *data;
	uint64_t size;
	unsigned int flushes;
	bool fail_flush;
};

/* The tmem opened last: the tests look at its bytes. */
static struct tmem *tmem_last;

static int
tmem_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	struct tmem *m = calloc(1, sizeof(*m));

	assert(m);
	assert(bk_parse_size(cfg->arg, &m->size) == 0);
	m->data = calloc(1, m->size);
	assert(m->data);
	memset(f, 0, sizeof(*f));
	f->size = m->size;
	f->sector_size = 512;
	f->physical_sector_size = 512;
	f->read_only = cfg->read_only;
	f->can_flush = true;
	f->writeback = !cfg->writethrough;	/* as the file store reports */
	f->fua = BK_FUA_NATIVE;
	f->can_discard = true;
	*priv = m;
	tmem_last = m;
	return 0;
}

static void
tmem_close(void *priv)
{
	struct tmem *m = priv;

	free(m->data);
	free(m);
}

static void
tmem_io(void *priv, struct bk_io *io)
{
	struct tmem *m = priv;
	uint64_t pos = io->offset;
	int k;

	assert(io->offset + io->len <= m->size);
	io->result = (int64_t)io->len;
	switch (io->op) {
	case BK_IO_READ:
	case BK_IO_WRITE:
		for (k = 0; k < io->iovcnt; k++) {
			if (io->op == BK_IO_READ)
				memcpy(io->iov[k].iov_base, m->data + pos, io->iov[k].iov_len);
			else
				memcpy(m->data + pos, io->iov[k].iov_base, io->iov[k].iov_len);
			pos += io->iov[k].iov_len;
		}
		break;
	case BK_IO_FLUSH:
		m->flushes++;
		io->result = m->fail_flush ? -EIO : 0;
		break;
	case BK_IO_DISCARD:
		memset(m->data + io->offset, 0, io->len);
		break;
	}
}

static const struct bk_store_driver tmem_driver = {
	.name = "tmem",
	.open = tmem_open,
	.close = tmem_close,
	.io = tmem_io,
};

/* Open one layer through the dispatch; its features in *f. */
static struct bk_store *
layer_open(const struct bk_store_driver *drv, const struct bk_store_config *cfg,
	   struct bk_store_features *f)
{
	struct bk_store_why why;
	struct bk_store *s;

	if (bk_store_open(drv, cfg, &s, &why) != 0) {
		fprintf(stderr, "cannot open a %s store: %s\n", drv->name, why.msg);
		abort();
	}
	if (f)
		*f = *bk_store_features(s);
	return s;
}

/* ---- helpers ---- */

#define DEV_SIZE	(1u << 20)
#define BLK		4096u
#define NBLK		(DEV_SIZE / BLK)

#define DEV_ARG		"1M"	/* DEV_SIZE, as tmem's arg */

struct stack {
	struct bk_store *low, *top;
	struct bk_store_features lowf, topf;
	struct tmem *m;			/* low's */
	struct bk_store_queue *q;
};

static void
stack_open(struct stack *st, const struct bk_store_driver *drv, const char *record,
	   const char *options)
{
	struct bk_store_config lc = { .arg = DEV_ARG };
	struct bk_store_config c = { 0 };

	memset(st, 0, sizeof(*st));
	st->low = layer_open(&tmem_driver, &lc, &st->lowf);
	st->m = tmem_last;
	c.lower = st->low;
	c.record_path = record;
	c.arg = options;
	st->top = layer_open(drv, &c, &st->topf);
	assert(bk_store_queue_open(st->top, 32, &st->q) == 0);
}

static void
stack_close(struct stack *st)
{
	bk_store_queue_close(st->q);
	bk_stack_close(st->top);
}

/* Submit one I/O and wait for it; returns its result. */
static int64_t
do_io(struct stack *st, enum bk_io_op op, unsigned int flags, uint64_t off,
      void *buf, uint64_t len)
{
	struct iovec iov = { buf, len };
	struct bk_io io = { .op = op, .flags = flags, .offset = off, .len = len,
			    .iov = &iov, .iovcnt = buf ? 1 : 0 };
	struct bk_io *p = &io, *done[4];
	int n;

	assert(bk_store_submit(st->q, &p, 1) == 1);
	for (;;) {
		struct pollfd pfd = { bk_store_queue_fd(st->q), POLLIN, 0 };

		n = bk_store_reap(st->q, done, 4);
		assert(n >= 0);
		if (n == 1) {
			assert(done[0] == &io);
			return io.result;
		}
		assert(poll(&pfd, 1, 5000) == 1);
	}
}

static void
fill(unsigned char *b, size_t len, unsigned int tag)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (unsigned char)(tag * 31 + i / 512 * 7 + 1);
}

static char logpath[] = "/tmp/test-crash-store.XXXXXX";

/* ---- record ---- */

static int
test_record_basic(void)
{
	struct stack st;
	struct cl_log *log;
	static unsigned char a[BLK], b[2 * BLK], r[BLK];

	fill(a, sizeof(a), 1);
	fill(b, sizeof(b), 2);
	stack_open(&st, &bk_store_record_driver, logpath, NULL);
	assert(st.topf.size == DEV_SIZE && st.topf.writeback);
	assert(do_io(&st, BK_IO_WRITE, 0, 0, a, BLK) == BLK);		/* 1 */
	assert(do_io(&st, BK_IO_READ, 0, 0, r, BLK) == BLK);		/* not logged */
	assert(memcmp(a, r, BLK) == 0);
	assert(do_io(&st, BK_IO_FLUSH, 0, 0, NULL, 0) == 0);		/* 2 */
	assert(do_io(&st, BK_IO_WRITE, BK_IO_FUA, 8 * BLK, b, 2 * BLK) == 2 * BLK); /* 3 */
	assert(do_io(&st, BK_IO_DISCARD, 0, 16 * BLK, NULL, BLK) == BLK);	/* 4 */
	assert(do_io(&st, BK_IO_WRITE, 0, BLK, a, BLK) == BLK);		/* 5 */
	stack_close(&st);

	assert(cl_log_open(logpath, &log) == 0);
	assert(log->hdr.dev_size == DEV_SIZE && (log->hdr.flags & CRASHLOG_F_WRITEBACK));
	assert(log->n == 5 && log->ignored_bytes == 0 && log->nflush == 1);
	assert(log->e[0].rec.type == CRASHLOG_WRITE && log->e[0].rec.offset == 0 &&
	       log->e[0].rec.len == BLK && memcmp(log->e[0].data, a, BLK) == 0);
	assert(log->e[0].rec.hash == crashlog_hash(a, BLK));
	assert(log->e[0].durable_at == 2);
	assert(log->e[1].rec.type == CRASHLOG_FLUSH && log->e[1].rec.covers == 2);
	assert(log->e[2].rec.type == CRASHLOG_WRITE &&
	       (log->e[2].rec.flags & CRASHLOG_R_FUA) &&
	       (log->e[2].rec.flags & CRASHLOG_R_DURABLE) && log->e[2].durable_at == 3);
	assert(memcmp(log->e[2].data, b, 2 * BLK) == 0);
	assert(log->e[3].rec.type == CRASHLOG_DISCARD && log->e[3].rec.offset == 16 * BLK &&
	       log->e[3].durable_at == CL_NEVER);
	assert(log->e[4].durable_at == CL_NEVER);
	cl_log_close(log);
	return 0;
}

/* A write that completes while a flush is in flight is not covered by it. */
static int
test_record_covers(void)
{
	struct stack st;
	struct cl_log *log;
	unsigned char a[BLK], b[BLK];
	struct iovec iov = { b, BLK };
	struct bk_io fl = { .op = BK_IO_FLUSH };
	struct bk_io w = { .op = BK_IO_WRITE, .offset = BLK, .len = BLK,
			   .iov = &iov, .iovcnt = 1 };
	struct bk_io *batch[2] = { &fl, &w }, *done[4];
	int n = 0;

	fill(a, sizeof(a), 3);
	fill(b, sizeof(b), 4);
	stack_open(&st, &bk_store_record_driver, logpath, NULL);
	assert(do_io(&st, BK_IO_WRITE, 0, 0, a, BLK) == BLK);	/* 1 */
	/* flush submitted with write 2 in the same batch: both in flight */
	assert(bk_store_submit(st.q, batch, 2) == 2);
	while (n < 2) {
		int r = bk_store_reap(st.q, done + n, 4);

		assert(r >= 0);
		n += r;
	}
	stack_close(&st);
	assert(cl_log_open(logpath, &log) == 0);
	assert(log->n == 3);
	assert(log->e[1].rec.type == CRASHLOG_FLUSH && log->e[1].rec.covers == 2);
	assert(log->e[0].durable_at == 2);
	assert(log->e[2].rec.type == CRASHLOG_WRITE && log->e[2].durable_at == CL_NEVER);
	cl_log_close(log);
	return 0;
}

/* A failed flush is logged as failed and makes nothing durable. */
static int
test_record_failed_flush(void)
{
	struct stack st;
	struct cl_log *log;
	unsigned char a[BLK];

	fill(a, sizeof(a), 5);
	stack_open(&st, &bk_store_record_driver, logpath, NULL);
	st.m->fail_flush = true;
	assert(do_io(&st, BK_IO_WRITE, 0, 0, a, BLK) == BLK);
	assert(do_io(&st, BK_IO_FLUSH, 0, 0, NULL, 0) == -EIO);
	stack_close(&st);
	assert(cl_log_open(logpath, &log) == 0);
	assert(log->n == 2 && log->nflush == 0);
	assert((log->e[1].rec.flags & CRASHLOG_R_FAILED) && log->e[1].rec.result == -EIO);
	assert(log->e[0].durable_at == CL_NEVER);
	cl_log_close(log);
	return 0;
}

/* Cut the log anywhere: the reader keeps exactly the whole records. */
static int
test_record_torn_tail(void)
{
	struct stack st;
	struct cl_log *log;
	unsigned char a[BLK];
	uint64_t full, rec_bytes = CRASHLOG_REC_SIZE + BLK, cut;
	int i;

	fill(a, sizeof(a), 6);
	stack_open(&st, &bk_store_record_driver, logpath, NULL);
	for (i = 0; i < 4; i++)
		assert(do_io(&st, BK_IO_WRITE, 0, (uint64_t)i * BLK, a, BLK) == BLK);
	stack_close(&st);
	full = CRASHLOG_HDR_SIZE + 4 * rec_bytes;
	for (cut = full; cut >= CRASHLOG_HDR_SIZE; cut -= 61) {
		assert(truncate(logpath, (off_t)cut) == 0);
		assert(cl_log_open(logpath, &log) == 0);
		assert(log->n == (cut - CRASHLOG_HDR_SIZE) / rec_bytes);
		assert(log->valid_bytes + log->ignored_bytes == cut);
		cl_log_close(log);
	}
	/* garbage in the data of the last record: hash mismatch, dropped */
	{
		FILE *f;

		stack_open(&st, &bk_store_record_driver, logpath, NULL);
		for (i = 0; i < 3; i++)
			assert(do_io(&st, BK_IO_WRITE, 0, 0, a, BLK) == BLK);
		stack_close(&st);
		f = fopen(logpath, "r+");
		assert(f);
		assert(fseek(f, -100, SEEK_END) == 0);
		fputc(0x5a ^ a[BLK - 100], f);
		fclose(f);
		assert(cl_log_open(logpath, &log) == 0);
		assert(log->n == 2 && log->ignored_bytes == rec_bytes);
		cl_log_close(log);
	}
	return 0;
}

/* ---- volatile ---- */

static int
test_volatile_reads_see_cache(void)
{
	struct stack st;
	static unsigned char a[BLK], b[BLK], r[3 * BLK];
	struct tmem *m;

	fill(a, sizeof(a), 7);
	fill(b, sizeof(b), 8);
	stack_open(&st, &bk_store_volatile_driver, NULL, "seed=1");
	m = st.m;
	assert(st.topf.writeback && st.topf.fua == BK_FUA_NATIVE);
	assert(do_io(&st, BK_IO_WRITE, 0, BLK, a, BLK) == BLK);
	/* a half-overlapping newer write */
	assert(do_io(&st, BK_IO_WRITE, 0, BLK + BLK / 2, b, BLK) == BLK);
	/* nothing reached the store below */
	assert(m->data[BLK] == 0 && m->data[2 * BLK] == 0);
	assert(do_io(&st, BK_IO_READ, 0, 0, r, 3 * BLK) == 3 * BLK);
	assert(r[0] == 0 && r[BLK - 1] == 0);
	assert(memcmp(r + BLK, a, BLK / 2) == 0);
	assert(memcmp(r + BLK + BLK / 2, b, BLK) == 0);
	assert(r[3 * BLK - 1] == 0);
	/* flush: below has newest-wins content, one flush below */
	assert(do_io(&st, BK_IO_FLUSH, 0, 0, NULL, 0) == 0);
	assert(m->flushes == 1);
	assert(memcmp(m->data + BLK, a, BLK / 2) == 0);
	assert(memcmp(m->data + BLK + BLK / 2, b, BLK) == 0);
	stack_close(&st);
	return 0;
}

/*
 * Random writes (a few per block, with overlaps), a flush now and then,
 * power cut.  Every block must then hold its content as of the last
 * flush or a version written after it; across seeds, unflushed writes
 * must sometimes survive and sometimes vanish.
 */
static int
test_volatile_power_cut(void)
{
	unsigned int seed, lost_some = 0, kept_some = 0;

	for (seed = 1; seed <= 60; seed++) {
		struct stack st;
		char opts[64];
		static unsigned char buf[BLK];
		/* per block: tag at the last flush, and tags written since */
		static unsigned int flushed[NBLK], nsince[NBLK];
		static unsigned int since[NBLK][16];
		unsigned int tag = 0, i, blk, lost = 0, kept = 0;
		uint64_t rs = seed * 7919u;
		struct tmem *m;

		memset(flushed, 0, sizeof(flushed));
		memset(nsince, 0, sizeof(nsince));
		snprintf(opts, sizeof(opts), "seed=%u,cache-max=1048576", seed);
		stack_open(&st, &bk_store_volatile_driver, NULL, opts);
		m = st.m;
		for (i = 0; i < 200; i++) {
			rs = rs * 6364136223846793005ull + 1442695040888963407ull;
			blk = (unsigned int)(rs >> 33) % 32;
			if ((rs >> 20) % 23 == 0) {
				assert(do_io(&st, BK_IO_FLUSH, 0, 0, NULL, 0) == 0);
				for (blk = 0; blk < NBLK; blk++) {
					if (nsince[blk])
						flushed[blk] = since[blk][nsince[blk] - 1];
					nsince[blk] = 0;
				}
				continue;
			}
			tag++;
			fill(buf, BLK, tag);
			if ((rs >> 40) % 17 == 0) {
				/* FUA: this block's newest content is durable */
				assert(do_io(&st, BK_IO_WRITE, BK_IO_FUA,
					     (uint64_t)blk * BLK, buf, BLK) == BLK);
				flushed[blk] = tag;
				nsince[blk] = 0;
				continue;
			}
			assert(do_io(&st, BK_IO_WRITE, 0, (uint64_t)blk * BLK, buf, BLK) == BLK);
			if (nsince[blk] < 16)
				since[blk][nsince[blk]++] = tag;
			else
				since[blk][15] = tag;
		}
		assert(bk_store_volatile_driver.power_cut);
		bk_stack_power_cut(st.top);
		/* after the cut, I/O fails */
		assert(do_io(&st, BK_IO_READ, 0, 0, buf, BLK) == -EIO);
		for (blk = 0; blk < NBLK; blk++) {
			static unsigned char want[BLK];
			bool ok = false;

			if (flushed[blk]) {
				fill(want, BLK, flushed[blk]);
				ok = memcmp(m->data + blk * BLK, want, BLK) == 0;
			} else {
				memset(want, 0, BLK);
				ok = memcmp(m->data + blk * BLK, want, BLK) == 0;
			}
			if (ok && nsince[blk])
				lost++;	/* back to the flushed version */
			for (i = 0; !ok && i < nsince[blk]; i++) {
				fill(want, BLK, since[blk][i]);
				ok = memcmp(m->data + blk * BLK, want, BLK) == 0;
				if (ok)
					kept++;
			}
			if (!ok) {
				fprintf(stderr, "seed %u block %u: content is neither the "
					"flushed version nor a later one\n", seed, blk);
				return 1;
			}
		}
		lost_some += lost > 0;
		kept_some += kept > 0;
		stack_close(&st);
	}
	/* any subset: both outcomes happen */
	assert(lost_some > 10 && kept_some > 10);
	return 0;
}

/* A full cache writes its oldest half back; reads still see everything. */
static int
test_volatile_writeback_when_full(void)
{
	struct stack st;
	unsigned char buf[BLK], r[BLK];
	struct tmem *m;
	unsigned int i;

	stack_open(&st, &bk_store_volatile_driver, NULL, "seed=3,cache-max=16384");
	m = st.m;
	for (i = 0; i < 5; i++) {
		fill(buf, BLK, 100 + i);
		assert(do_io(&st, BK_IO_WRITE, 0, (uint64_t)i * BLK, buf, BLK) == BLK);
	}
	/* 20 KiB > 16 KiB: the oldest 3 went below (unflushed) */
	fill(buf, BLK, 100);
	assert(memcmp(m->data, buf, BLK) == 0);
	assert(m->flushes == 0);
	fill(buf, BLK, 104);
	assert(m->data[4 * BLK] == 0);
	assert(do_io(&st, BK_IO_READ, 0, 4 * BLK, r, BLK) == BLK);
	assert(memcmp(r, buf, BLK) == 0);
	stack_close(&st);
	return 0;
}

/*
 * blkbackd's stack: volatile(record(RAM)).  The cache writes its
 * survivors through the recorder, which marks the cut once, whichever
 * order the stores' power_cut are called in.
 */
static int
cut_stack(bool bottom_up)
{
	struct bk_store_config lc = { .arg = DEV_ARG }, vc = { 0 }, rc = { 0 };
	struct bk_store *low, *vol, *rec;
	struct stack st;
	struct cl_log *log;
	static unsigned char a[BLK];
	size_t i, ncut = 0, nw = 0;

	low = layer_open(&tmem_driver, &lc, NULL);
	rc.lower = low;
	rc.record_path = logpath;
	rec = layer_open(&bk_store_record_driver, &rc, NULL);
	vc.lower = rec;
	vc.arg = "seed=11";
	vol = layer_open(&bk_store_volatile_driver, &vc, NULL);
	memset(&st, 0, sizeof(st));
	st.top = vol;
	assert(bk_store_queue_open(vol, 8, &st.q) == 0);
	fill(a, BLK, 9);
	assert(do_io(&st, BK_IO_WRITE, 0, 0, a, BLK) == BLK);
	assert(do_io(&st, BK_IO_FLUSH, 0, 0, NULL, 0) == 0);
	for (i = 1; i <= 16; i++)
		assert(do_io(&st, BK_IO_WRITE, 0, i * BLK, a, BLK) == BLK);
	/* the record layer cut first (and again), or the stack top first */
	if (bottom_up)
		bk_stack_power_cut(rec);
	bk_stack_power_cut(vol);
	bk_stack_power_cut(rec);
	bk_store_queue_close(st.q);
	bk_store_close(vol);
	bk_store_close(rec);
	bk_store_close(low);
	assert(cl_log_open(logpath, &log) == 0);
	/* W, F, then the survivors of the 16 (and their flush), one CUT */
	assert(log->e[0].rec.type == CRASHLOG_WRITE && log->e[0].durable_at == 2);
	for (i = 0; i < log->n; i++) {
		ncut += log->e[i].rec.type == CRASHLOG_CUT;
		nw += log->e[i].rec.type == CRASHLOG_WRITE;
		if (i > 1 && log->e[i].rec.type == CRASHLOG_WRITE)
			assert(log->e[i].durable_at != CL_NEVER);
	}
	assert(ncut == 1);
	assert(nw > 1 && nw < 17);	/* seed 11 keeps some, not all */
	cl_log_close(log);
	return 0;
}

/* A flush writes every cached write whole and in order (the recorder
 * below sees the guest's writes), overlapping ones one after the other. */
static int
test_volatile_destage_whole(void)
{
	struct bk_store_config lc = { .arg = DEV_ARG }, vc = { 0 }, rc = { 0 };
	struct bk_store *low, *vol, *rec;
	struct stack st;
	struct cl_log *log;
	static unsigned char a[2 * BLK], b[2 * BLK], c[BLK];
	struct tmem *m;

	low = layer_open(&tmem_driver, &lc, NULL);
	m = tmem_last;
	rc.lower = low;
	rc.record_path = logpath;
	rec = layer_open(&bk_store_record_driver, &rc, NULL);
	vc.lower = rec;
	vol = layer_open(&bk_store_volatile_driver, &vc, NULL);
	memset(&st, 0, sizeof(st));
	st.top = vol;
	assert(bk_store_queue_open(vol, 8, &st.q) == 0);
	fill(a, sizeof(a), 21);
	fill(b, sizeof(b), 22);
	fill(c, sizeof(c), 23);
	assert(do_io(&st, BK_IO_WRITE, 0, 0, a, 2 * BLK) == 2 * BLK);
	assert(do_io(&st, BK_IO_WRITE, 0, 8 * BLK, c, BLK) == BLK);
	assert(do_io(&st, BK_IO_WRITE, 0, BLK, b, 2 * BLK) == 2 * BLK);
	assert(do_io(&st, BK_IO_FLUSH, 0, 0, NULL, 0) == 0);
	bk_store_queue_close(st.q);
	bk_store_close(vol);
	bk_store_close(rec);
	assert(memcmp(m->data, a, BLK) == 0);
	assert(memcmp(m->data + BLK, b, 2 * BLK) == 0);
	bk_store_close(low);
	assert(cl_log_open(logpath, &log) == 0);
	assert(log->n == 4);
	/* a and c went down together, b after a completed */
	assert(log->e[0].rec.hash == crashlog_hash(a, 2 * BLK) ||
	       log->e[1].rec.hash == crashlog_hash(a, 2 * BLK));
	assert(log->e[2].rec.offset == BLK && log->e[2].rec.len == 2 * BLK &&
	       log->e[2].rec.hash == crashlog_hash(b, 2 * BLK));
	assert(log->e[3].rec.type == CRASHLOG_FLUSH && log->e[2].durable_at == 4);
	cl_log_close(log);
	return 0;
}

static int
test_volatile_over_record_cut(void)
{
	return cut_stack(false) || cut_stack(true);
}

/*
 * cache=writethrough: volatile(record(tmem)), all three opened with
 * cfg->writethrough as blkbackd does for the vbd.  No layer reports a
 * volatile cache; every write reaches the store below before it
 * completes and is logged durable without any flush; a power cut loses
 * nothing.  The recorder alone logs the same (the stack without
 * --cache=volatile).
 */
static int
test_writethrough_stack(void)
{
	struct bk_store_config lc = { .arg = DEV_ARG, .writethrough = true };
	struct bk_store_config vc = { .writethrough = true }, rc = { .writethrough = true };
	struct bk_store *low, *vol, *rec;
	struct bk_store_features lf, vf, rf;
	struct stack st;
	struct cl_log *log;
	static unsigned char a[BLK], b[2 * BLK];
	struct tmem *m;
	size_t i;

	fill(a, sizeof(a), 31);
	fill(b, sizeof(b), 32);
	low = layer_open(&tmem_driver, &lc, &lf);
	assert(!lf.writeback);
	m = tmem_last;
	rc.lower = low;
	rc.record_path = logpath;
	rec = layer_open(&bk_store_record_driver, &rc, &rf);
	assert(!rf.writeback);
	vc.lower = rec;
	vc.arg = "seed=11";
	vol = layer_open(&bk_store_volatile_driver, &vc, &vf);
	assert(!vf.writeback && vf.fua == rf.fua);
	memset(&st, 0, sizeof(st));
	st.top = vol;
	assert(bk_store_queue_open(vol, 8, &st.q) == 0);
	assert(do_io(&st, BK_IO_WRITE, 0, 0, a, BLK) == BLK);		/* 1 */
	assert(memcmp(m->data, a, BLK) == 0);	/* below, not cached */
	assert(do_io(&st, BK_IO_WRITE, 0, BLK, b, 2 * BLK) == 2 * BLK); /* 2 */
	assert(memcmp(m->data + BLK, b, 2 * BLK) == 0);
	assert(do_io(&st, BK_IO_DISCARD, 0, 8 * BLK, NULL, BLK) == BLK); /* 3 */
	for (i = 4; i < 20; i++)
		assert(do_io(&st, BK_IO_WRITE, 0, i * BLK, a, BLK) == BLK);
	bk_stack_power_cut(vol);
	bk_store_queue_close(st.q);
	bk_store_close(vol);
	bk_store_close(rec);
	for (i = 4; i < 20; i++)	/* the cut lost nothing */
		assert(memcmp(m->data + i * BLK, a, BLK) == 0);
	assert(m->flushes == 0);	/* not even the cut flushed */
	bk_store_close(low);
	assert(cl_log_open(logpath, &log) == 0);
	assert(!(log->hdr.flags & CRASHLOG_F_WRITEBACK));
	assert(log->nflush == 0);
	assert(log->n == 3 + 16 + 1);	/* 18 writes, 1 discard, the CUT */
	for (i = 0; i + 1 < log->n; i++) {
		assert(log->e[i].rec.type != CRASHLOG_FLUSH);
		assert(log->e[i].rec.flags & CRASHLOG_R_DURABLE);
		assert(!(log->e[i].rec.flags & CRASHLOG_R_FUA));
		assert(log->e[i].durable_at == log->e[i].rec.seq);
	}
	assert(log->e[1].rec.hash == crashlog_hash(b, 2 * BLK));
	assert(log->e[log->n - 1].rec.type == CRASHLOG_CUT);
	cl_log_close(log);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} tests[] = {
		{ "record_basic", test_record_basic },
		{ "record_covers", test_record_covers },
		{ "record_failed_flush", test_record_failed_flush },
		{ "record_torn_tail", test_record_torn_tail },
		{ "volatile_reads_see_cache", test_volatile_reads_see_cache },
		{ "volatile_power_cut", test_volatile_power_cut },
		{ "volatile_writeback_when_full", test_volatile_writeback_when_full },
		{ "volatile_destage_whole", test_volatile_destage_whole },
		{ "volatile_over_record_cut", test_volatile_over_record_cut },
		{ "writethrough_stack", test_writethrough_stack },
	};
	unsigned int i;
	int fd, fails = 0;

	log_init(argv[0]);
	fd = mkstemp(logpath);
	assert(fd >= 0);
	close(fd);
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		int r = tests[i].fn();

		printf("%s: %s\n", tests[i].name, r ? "FAIL" : "ok");
		fails += r != 0;
	}
	unlink(logpath);
	return fails ? 1 : 0;
}
