/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-conformance.c: one storage driver held to the store contract
 * (backend/store.h) from outside, through the path a vbd takes:
 * bk_params_parse, bk_stack_open, a queue, submit and reap.  Run by
 * test-store-conformance.sh over every driver a user can name in params
 * (and by the rbd and nbd checks where their servers run).
 *
 *   store-conformance [OPTIONS] PARAMS
 *     --read-only       open with mode=r (the caller prepared the data)
 *     --writethrough    cache=writethrough
 *     --size BYTES      the size the store must report
 *     --no-data         the driver keeps no data (null): reads are zeroes
 *     --io-engine E     auto, libaio or io_uring (the file store's engine)
 *     --pattern SEED    (with --read-only) the backing holds
 *                       pattern(SEED) at every byte: check it, write nothing
 *
 * What is checked, each named on failure:
 *  - features: size a multiple of 512 (and --size when given), sector
 *    sizes powers of two >= 512, read_only as asked, FUA only where it
 *    can flush, a writethrough store has no volatile cache to flush;
 *  - data: writes at the first sector, the last one and across a
 *    4 KiB boundary, 4 KiB .. 1 MiB long, scattered over several iovecs,
 *    read back byte-exact (zeroes for --no-data); a FUA write where the
 *    store promises FUA; a batch of depth writes in one submit;
 *  - the promises: FLUSH succeeds where can_flush and is refused with
 *    -EINVAL where not; FUA and DISCARD the same; a discard leaves the
 *    range reading either its old data or zeroes (the contract promises
 *    no more), never anything else;
 *  - errors: I/O past the end, misaligned, with len 0, a WRITE or
 *    DISCARD on a read-only store are refused with -EINVAL before the
 *    driver sees them, and the queue goes on working after each.
 * Exit 0 conforming, 1 not (each broken promise printed), 2 usage or a
 * store that cannot be opened.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "compiler.h"
#include "store.h"

#define DEPTH 32
#define MAX_LEN (1u << 20)

static unsigned int failures;

#define EXPECT(c, ...) do { if (!(c)) { \
	fprintf(stderr, "store-conformance: NOT CONFORMING: " __VA_ARGS__); \
	fputc('\n', stderr); failures++; } } while (0)

struct ctx {
	struct bk_store *top;
	struct bk_store_queue *q;
	const struct bk_store_features *f;
	bool no_data;
};

/* The byte at offset off of pattern seed: every byte differs from its
 * neighbours and from other seeds' (so a misplaced or stale sector shows). */
static unsigned char
pat(uint64_t seed, uint64_t off)
{
	uint64_t x = (off >> 3) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;

	x ^= x >> 29;
	return (unsigned char)(x >> ((off & 7) * 8));
}

static void
fill(unsigned char *buf, uint64_t off, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pat(seed, off + i);
}

/* Wait until at least one I/O completes; hand them back into done[]. */
static int
reap_some(struct ctx *c, struct bk_io **done, unsigned int max)
{
	for (;;) {
		struct pollfd pfd = { .fd = bk_store_queue_fd(c->q), .events = POLLIN };
		int n = bk_store_reap(c->q, done, max);

		if (n != 0)
			return n;
		if (poll(&pfd, 1, 30000) == 0) {
			fprintf(stderr, "store-conformance: no completion within 30 s "
				"(%u in flight)\n", bk_store_inflight(c->q));
			exit(1);
		}
	}
}

/* Submit ios[n] and wait for every one: 0, or the submit's -errno when
 * it refused the first (the ios are then untouched). */
static int
run(struct ctx *c, struct bk_io **ios, unsigned int n)
{
	unsigned int sub = 0, got = 0;
	struct bk_io *done[DEPTH];

	while (sub < n) {
		int r = bk_store_submit(c->q, ios + sub, n - sub);

		if (r < 0) {
			if (sub == 0)
				return r;
			/* a later one refused: finish, report it as its result */
			ios[sub]->result = r;
			n = sub;
			break;
		}
		sub += (unsigned int)r;
		if (sub < n)
			got += (unsigned int)reap_some(c, done, DEPTH);
	}
	while (got < sub)
		got += (unsigned int)reap_some(c, done, DEPTH);
	return 0;
}

static int64_t
one(struct ctx *c, enum bk_io_op op, unsigned int flags, uint64_t off, void *buf, uint64_t len)
{
	struct iovec iov = { buf, len };
	struct bk_io io = { .op = op, .flags = flags, .offset = off, .len = len,
			    .iov = &iov, .iovcnt = 1 };
	struct bk_io *p = &io;
	int r;

	if (op == BK_IO_FLUSH)
		io.iov = NULL, io.iovcnt = 0;
	else if (op == BK_IO_DISCARD)
		io.iov = NULL, io.iovcnt = 0;
	r = run(c, &p, 1);
	return r < 0 ? r : io.result;
}

static const char *
op_name(enum bk_io_op op)
{
	return op == BK_IO_READ ? "READ" : op == BK_IO_WRITE ? "WRITE" :
	       op == BK_IO_FLUSH ? "FLUSH" : "DISCARD";
}

/* A refused io: -EINVAL from submit, and the queue still works after. */
static void
expect_refused(struct ctx *c, enum bk_io_op op, unsigned int flags, uint64_t off,
	       uint64_t len, const char *what)
{
	static unsigned char buf[8192] __attribute__((aligned(4096)));
	int64_t r = one(c, op, flags, off, buf, len);

	EXPECT(r == -EINVAL, "%s %s (offset %" PRIu64 ", %" PRIu64 " bytes): %" PRId64
	       ", want -EINVAL (refused)", op_name(op), what, off, len, r);
	r = one(c, BK_IO_READ, 0, 0, buf, 512);
	EXPECT(r == 512, "READ after a refused %s %s: %" PRId64, op_name(op), what, r);
}

/* Read len bytes at off: byte-exact seed's pattern (or zeroes). */
static void
expect_data(struct ctx *c, uint64_t off, uint64_t len, uint64_t seed, const char *what)
{
	static unsigned char buf[MAX_LEN] __attribute__((aligned(4096)));
	uint64_t i;
	int64_t r = one(c, BK_IO_READ, 0, off, buf, len);

	EXPECT(r == (int64_t)len, "READ %s (offset %" PRIu64 ", %" PRIu64 " bytes): %" PRId64,
	       what, off, len, r);
	if (r != (int64_t)len)
		return;
	for (i = 0; i < len; i++) {
		unsigned char want = c->no_data ? 0 : pat(seed, off + i);

		if (buf[i] != want) {
			EXPECT(0, "READ %s: byte %" PRIu64 " is 0x%02x, want 0x%02x", what,
			       off + i, buf[i], want);
			return;
		}
	}
}

/* Write seed's pattern at off, len bytes over n iovecs (n divides the
 * 512-byte sectors), flags; expect it to complete whole. */
static void
write_pat(struct ctx *c, uint64_t off, uint64_t len, unsigned int n, uint64_t seed,
	  unsigned int flags, const char *what)
{
	static unsigned char buf[MAX_LEN] __attribute__((aligned(4096)));
	struct iovec iov[8];
	struct bk_io io = { .op = BK_IO_WRITE, .flags = flags, .offset = off, .len = len,
			    .iov = iov, .iovcnt = (int)n };
	struct bk_io *p = &io;
	uint64_t each = len / n, done = 0;
	unsigned int i;
	int r;

	fill(buf, off, len, seed);
	for (i = 0; i < n; i++) {
		iov[i].iov_base = buf + done;
		iov[i].iov_len = i == n - 1 ? len - done : each;
		done += each;
	}
	r = run(c, &p, 1);
	EXPECT(r == 0 && io.result == (int64_t)len, "WRITE %s (offset %" PRIu64 ", %" PRIu64
	       " bytes, %u iovecs): submit %d, result %" PRId64, what, off, len, n, r, io.result);
}

static void
check_features(struct ctx *c, bool read_only, bool writethrough, uint64_t want_size)
{
	const struct bk_store_features *f = c->f;

	EXPECT(f->size > 0 && f->size % 512 == 0, "size %" PRIu64 " is not a positive "
	       "multiple of 512", f->size);
	EXPECT(!want_size || f->size == want_size, "size %" PRIu64 ", want %" PRIu64,
	       f->size, want_size);
	EXPECT(f->sector_size >= 512 && !(f->sector_size & (f->sector_size - 1)),
	       "sector_size %u", f->sector_size);
	EXPECT(f->physical_sector_size >= f->sector_size &&
	       !(f->physical_sector_size & (f->physical_sector_size - 1)),
	       "physical_sector_size %u (sector_size %u)", f->physical_sector_size,
	       f->sector_size);
	EXPECT(f->read_only == read_only, "read_only %d, opened with mode=%s", f->read_only,
	       read_only ? "r" : "w");
	EXPECT(f->fua == BK_FUA_NONE || f->can_flush, "FUA without FLUSH");
	EXPECT(!writethrough || !f->writeback, "cache=writethrough, yet a volatile cache "
	       "(writeback) is reported");
	EXPECT(!f->can_secure_discard || f->can_discard, "secure discard without discard");
}

/* The data path of a writable store. */
static void
check_data(struct ctx *c)
{
	const struct bk_store_features *f = c->f;
	uint64_t end = f->size, len4k = end >= 8192 ? 4096 : 512;
	uint64_t big = end >= 4 * MAX_LEN ? MAX_LEN : end / 4 / 512 * 512;
	struct bk_io ios[DEPTH], *p[DEPTH];
	static unsigned char bufs[DEPTH][4096] __attribute__((aligned(4096)));
	struct iovec iov[DEPTH];
	unsigned int i, n;

	write_pat(c, 0, 512, 1, 1, 0, "first sector");
	write_pat(c, end - 512, 512, 1, 2, 0, "last sector");
	if (end >= 16384)
		write_pat(c, 4096 - 1024, 4096, 4, 3, 0, "across 4 KiB, 4 iovecs");
	if (big >= 512)
		write_pat(c, end / 2 / 4096 * 4096, big, 8, 4, 0, "large, 8 iovecs");
	expect_data(c, 0, 512, 1, "first sector");
	expect_data(c, end - 512, 512, 2, "last sector");
	if (end >= 16384)
		expect_data(c, 4096 - 1024, 4096, 3, "across 4 KiB");
	if (big >= 512)
		expect_data(c, end / 2 / 4096 * 4096, big, 4, "large");

	/* a batch of DEPTH writes in one submit, then read back */
	n = end / len4k >= 2 * DEPTH ? DEPTH : 1;
	for (i = 0; i < n; i++) {
		uint64_t off = (uint64_t)(2 * i + 1) * len4k;

		fill(bufs[i], off, len4k, 5);
		iov[i] = (struct iovec){ bufs[i], len4k };
		ios[i] = (struct bk_io){ .op = BK_IO_WRITE, .offset = off, .len = len4k,
					 .iov = &iov[i], .iovcnt = 1 };
		p[i] = &ios[i];
	}
	EXPECT(run(c, p, n) == 0, "a batch of %u writes refused", n);
	for (i = 0; i < n; i++) {
		EXPECT(ios[i].result == (int64_t)len4k, "batch write %u: %" PRId64, i,
		       ios[i].result);
		expect_data(c, ios[i].offset, len4k, 5, "batch write");
	}

	/* FUA: written and durable where promised, refused elsewhere */
	if (f->fua == BK_FUA_NATIVE) {
		write_pat(c, len4k, len4k, 1, 6, BK_IO_FUA, "FUA");
		expect_data(c, len4k, len4k, 6, "after a FUA write");
	} else {
		expect_refused(c, BK_IO_WRITE, BK_IO_FUA, len4k, len4k,
			       "with FUA on a store without native FUA");
	}
	/* FLUSH */
	if (f->can_flush) {
		int64_t r = one(c, BK_IO_FLUSH, 0, 0, NULL, 0);

		EXPECT(r == 0, "FLUSH on a store that can flush: %" PRId64, r);
		EXPECT(!bk_store_failed(c->top), "the store failed after a FLUSH");
	} else {
		expect_refused(c, BK_IO_FLUSH, 0, 0, 0, "on a store that cannot flush");
	}
	/* DISCARD: old data or zeroes, nothing else */
	if (f->can_discard) {
		static unsigned char buf[4096] __attribute__((aligned(4096)));
		uint64_t off = len4k;
		int64_t r;

		write_pat(c, off, len4k, 1, 7, 0, "before a discard");
		r = one(c, BK_IO_DISCARD, 0, off, NULL, len4k);
		EXPECT(r == 0, "DISCARD on a store that can discard: %" PRId64, r);
		r = one(c, BK_IO_READ, 0, off, buf, len4k);
		EXPECT(r == (int64_t)len4k, "READ after DISCARD: %" PRId64, r);
		if (r == (int64_t)len4k && !c->no_data) {
			uint64_t j;
			bool zero = true, old = true;

			for (j = 0; j < len4k; j++) {
				zero = zero && buf[j] == 0;
				old = old && buf[j] == pat(7, off + j);
			}
			EXPECT(zero || old, "a discarded range reads neither its data nor zeroes");
		}
	} else {
		expect_refused(c, BK_IO_DISCARD, 0, 0, 4096, "on a store that cannot discard");
	}
}

static void
check_refusals(struct ctx *c, bool read_only)
{
	uint64_t end = c->f->size;

	expect_refused(c, BK_IO_READ, 0, end, 512, "past the end");
	expect_refused(c, BK_IO_READ, 0, end - 512, 1024, "across the end");
	expect_refused(c, BK_IO_READ, 0, 100, 512, "at a misaligned offset");
	expect_refused(c, BK_IO_READ, 0, 0, 100, "of a misaligned length");
	expect_refused(c, BK_IO_READ, 0, 0, 0, "of length 0");
	expect_refused(c, BK_IO_WRITE, 0, UINT64_MAX - 511, 512, "wrapping around");
	if (read_only) {
		expect_refused(c, BK_IO_WRITE, 0, 0, 512, "on a read-only store");
		expect_refused(c, BK_IO_DISCARD, 0, 0, 4096, "on a read-only store");
	}
}

/* --read-only --pattern SEED: the whole store reads pattern(SEED). */
static void
check_pattern(struct ctx *c, uint64_t seed)
{
	uint64_t off, len = c->f->size < MAX_LEN ? c->f->size : MAX_LEN;

	for (off = 0; off + len <= c->f->size; off += len)
		expect_data(c, off, len, seed, "the prepared pattern");
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "read-only", no_argument, NULL, 'r' },
		{ "writethrough", no_argument, NULL, 'w' },
		{ "size", required_argument, NULL, 's' },
		{ "no-data", no_argument, NULL, 'n' },
		{ "pattern", required_argument, NULL, 'p' },
		{ "write-pattern", required_argument, NULL, 'W' },
		{ "io-engine", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	struct bk_stack_config sc = { 0 };
	struct bk_store_why why = { .msg = "" };
	struct bk_params p;
	struct ctx c = { 0 };
	uint64_t want_size = 0, seed = 0, wseed = 0;
	bool pattern = false, write_pattern = false;
	int o;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'r': sc.read_only = true; break;
		case 'w': sc.writethrough = true; break;
		case 's': want_size = strtoull(optarg, NULL, 0); break;
		case 'n': c.no_data = true; break;
		case 'p': pattern = true; seed = strtoull(optarg, NULL, 0); break;
		case 'W': write_pattern = true; wseed = strtoull(optarg, NULL, 0); break;
		case 'e':
			if (bk_io_engine_parse(optarg, &sc.io_engine) < 0)
				return 2;
			break;
		default: return 2;
		}
	}
	if (optind + 1 != argc || (pattern && !sc.read_only)) {
		fprintf(stderr, "usage: store-conformance [--read-only [--pattern SEED]] "
			"[--writethrough] [--size BYTES] [--no-data] [--write-pattern SEED] "
			"PARAMS\n");
		return 2;
	}
	if (bk_params_parse(argv[optind], &p, &why) < 0 ||
	    bk_stack_open(&p, &sc, false, &c.top, &why) < 0) {
		fprintf(stderr, "store-conformance: %s: %s\n", argv[optind], why.msg);
		bk_params_free(&p);
		return 2;
	}
	c.f = bk_store_features(c.top);
	if (bk_store_queue_open(c.top, DEPTH, &c.q) < 0) {
		fprintf(stderr, "store-conformance: %s: cannot open a queue\n", argv[optind]);
		return 2;
	}
	check_features(&c, sc.read_only, sc.writethrough, want_size);
	if (write_pattern) {
		/* prepare a backing for a --read-only --pattern run */
		uint64_t off, len = c.f->size < MAX_LEN ? c.f->size : MAX_LEN;

		for (off = 0; off + len <= c.f->size; off += len)
			write_pat(&c, off, len, 1, wseed, 0, "the pattern");
		if (c.f->can_flush)
			EXPECT(one(&c, BK_IO_FLUSH, 0, 0, NULL, 0) == 0, "FLUSH after the pattern");
	} else if (sc.read_only) {
		if (pattern)
			check_pattern(&c, seed);
	} else {
		check_data(&c);
	}
	check_refusals(&c, sc.read_only);
	printf("store-conformance: %s: size %" PRIu64 ", sectors %u/%u, read_only %d, "
	       "flush %d, writeback %d, fua %s, discard %d: %s\n", argv[optind], c.f->size,
	       c.f->sector_size, c.f->physical_sector_size, c.f->read_only, c.f->can_flush,
	       c.f->writeback, c.f->fua == BK_FUA_NATIVE ? "native" :
	       c.f->fua == BK_FUA_EMULATED ? "emulated" : "none", c.f->can_discard,
	       failures ? "NOT CONFORMING" : "conforming");
	bk_store_queue_close(c.q);
	bk_stack_close(c.top);
	bk_params_free(&p);
	return failures ? 1 : 0;
}
