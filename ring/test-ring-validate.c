/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ring-validate.c: table-driven hostile and edge requests.
 *
 * Each case is written by a front ring, read back by a back ring (in all
 * three ABIs, so decoding is covered too), validated, and for INDIRECT
 * requests parsed from indirect pages.  Every case pins the exact blkif
 * status and the exact reason string.  Case names starting with Cnn are
 * the ring-level parts of the hostile-input cases the test-case-Cnn.sh
 * integration tests cover end to end; C03 (producer overflow) is in
 * test-ring-overflow.c.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>

#include "test-ring.h"

#define DEV_SECTORS	(UINT64_C(1) << 20)	/* 512 MiB */
#define SEG_ALL		0xffff			/* "no bad segment" */

enum lim_kind {
	LIM_DEFAULT = 0,	/* rw, 512-byte sectors, discard, 256 indirect */
	LIM_RO,			/* mode=r */
	LIM_4K,			/* sector-size 4096 */
	LIM_NO_DISCARD,		/* feature-discard absent */
	LIM_NO_INDIRECT,	/* feature-max-indirect-segments absent */
	LIM_INDIRECT_32,	/* feature-max-indirect-segments = 32 */
	LIM_ABOVE_CAP,		/* a backend advertising more than we hold */
};

struct vcase {
	const char *name;
	enum lim_kind lim;
	uint8_t operation;
	uint8_t indirect_op;
	uint64_t sector;
	unsigned int nr_segments;
	uint8_t first, last;		/* every segment */
	unsigned int bad;		/* index of a segment with bad_first/last */
	uint8_t bad_first, bad_last;
	uint64_t discard_sectors;
	bool secure;
	/* expected */
	int status;
	const char *reason;
	uint64_t nr_sectors;		/* when OKAY */
};

#define OKAY	BLKIF_RSP_OKAY
#define ERROR	BLKIF_RSP_ERROR
#define NOTSUP	BLKIF_RSP_EOPNOTSUPP
#define RD	BLKIF_OP_READ
#define WR	BLKIF_OP_WRITE
#define BAR	BLKIF_OP_WRITE_BARRIER
#define FL	BLKIF_OP_FLUSH_DISKCACHE
#define DISC	BLKIF_OP_DISCARD
#define IND	BLKIF_OP_INDIRECT
#define WRAP8	(UINT64_MAX - 7)		/* 2^64 - 8 */

static const struct vcase cases[] = {
	/* ---- READ / WRITE ---- */
	{ "read_one_page", .operation = RD, .sector = 0, .nr_segments = 1,
	  .first = 0, .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 8 },
	{ "write_11_segments", .operation = WR, .sector = 64, .nr_segments = 11,
	  .first = 0, .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 88 },
	{ "read_partial_segment", .operation = RD, .sector = 3, .nr_segments = 1,
	  .first = 2, .last = 5, .status = OKAY, .reason = "ok", .nr_sectors = 4 },
	{ "read_one_sector_each", .operation = RD, .sector = 0, .nr_segments = 3,
	  .first = 7, .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 3 },
	{ "C05_read_0_segments", .operation = RD, .nr_segments = 0,
	  .status = ERROR, .reason = "read/write with no segments" },
	{ "C05_write_0_segments", .operation = WR, .nr_segments = 0,
	  .status = ERROR, .reason = "read/write with no segments" },
	{ "C05_read_12_segments", .operation = RD, .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "more than 11 segments" },
	{ "C05_write_255_segments", .operation = WR, .nr_segments = 255, .last = 7,
	  .status = ERROR, .reason = "more than 11 segments" },
	{ "C06_first_5_last_3", .operation = RD, .nr_segments = 1,
	  .first = 5, .last = 3,
	  .status = ERROR, .reason = "first_sect > last_sect" },
	{ "C06_first_0_last_8", .operation = WR, .nr_segments = 1,
	  .first = 0, .last = 8, .status = ERROR, .reason = "last_sect > 7" },
	{ "C06_bad_last_segment", .operation = WR, .nr_segments = 11, .last = 7,
	  .bad = 10, .bad_first = 6, .bad_last = 5,
	  .status = ERROR, .reason = "first_sect > last_sect" },
	{ "C06_last_sect_255", .operation = RD, .nr_segments = 2, .last = 7,
	  .bad = 1, .bad_first = 0, .bad_last = 255,
	  .status = ERROR, .reason = "last_sect > 7" },
	{ "C02_read_wraps_2_64", .operation = RD, .sector = WRAP8, .nr_segments = 1,
	  .last = 7, .status = ERROR, .reason = "sector range wraps past 2^64" },
	{ "C02_write_wraps_2_64", .operation = WR, .sector = WRAP8 - 80,
	  .nr_segments = 11, .last = 7,
	  .status = ERROR, .reason = "sector range wraps past 2^64" },
	{ "read_ends_one_past_end", .operation = RD, .sector = DEV_SECTORS - 7,
	  .nr_segments = 1, .last = 7,
	  .status = ERROR, .reason = "sector range past end of device" },
	{ "read_starts_at_end", .operation = RD, .sector = DEV_SECTORS,
	  .nr_segments = 1, .first = 0, .last = 0,
	  .status = ERROR, .reason = "sector range past end of device" },
	{ "read_last_page", .operation = RD, .sector = DEV_SECTORS - 8,
	  .nr_segments = 1, .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 8 },
	{ "write_read_only", .lim = LIM_RO, .operation = WR, .nr_segments = 1,
	  .last = 7, .status = ERROR, .reason = "write to a read-only device" },
	{ "read_read_only", .lim = LIM_RO, .operation = RD, .nr_segments = 1,
	  .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 8 },
	{ "4k_read_aligned", .lim = LIM_4K, .operation = RD, .sector = 8,
	  .nr_segments = 2, .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 16 },
	{ "4k_read_unaligned_sector", .lim = LIM_4K, .operation = RD, .sector = 1,
	  .nr_segments = 1, .last = 7,
	  .status = ERROR, .reason = "sector not aligned to sector-size" },
	{ "4k_write_partial_block", .lim = LIM_4K, .operation = WR, .sector = 8,
	  .nr_segments = 1, .first = 0, .last = 3,
	  .status = ERROR, .reason = "segment not a multiple of sector-size" },

	/* ---- FLUSH_DISKCACHE / WRITE_BARRIER ---- */
	{ "C01_flush_0_segments_garbage_sector", .operation = FL,
	  .sector = UINT64_C(0xFFFFFFFFFFFFFF00), .nr_segments = 0,
	  .status = OKAY, .reason = "ok", .nr_sectors = 0 },
	{ "C01_barrier_0_segments_garbage_sector", .operation = BAR,
	  .sector = UINT64_C(0xFFFFFFFFFFFFFF00), .nr_segments = 0,
	  .status = OKAY, .reason = "ok", .nr_sectors = 0 },
	{ "flush_0_segments_read_only", .lim = LIM_RO, .operation = FL,
	  .status = OKAY, .reason = "ok" },
	{ "C04_flush_2_segments", .operation = FL, .sector = 16, .nr_segments = 2,
	  .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 16 },
	{ "barrier_11_segments", .operation = BAR, .sector = 0, .nr_segments = 11,
	  .last = 7, .status = OKAY, .reason = "ok", .nr_sectors = 88 },
	{ "barrier_data_read_only", .lim = LIM_RO, .operation = BAR,
	  .nr_segments = 1, .last = 7,
	  .status = ERROR, .reason = "write to a read-only device" },
	{ "flush_12_segments", .operation = FL, .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "more than 11 segments" },
	{ "C06_barrier_first_gt_last", .operation = BAR, .nr_segments = 1,
	  .first = 5, .last = 3, .status = ERROR, .reason = "first_sect > last_sect" },
	{ "C02_flush_data_wraps", .operation = FL, .sector = WRAP8,
	  .nr_segments = 1, .last = 7,
	  .status = ERROR, .reason = "sector range wraps past 2^64" },
	{ "flush_data_past_end", .operation = FL, .sector = DEV_SECTORS,
	  .nr_segments = 1, .last = 7,
	  .status = ERROR, .reason = "sector range past end of device" },

	/* ---- DISCARD ---- */
	{ "discard_1mib", .operation = DISC, .sector = 2048, .discard_sectors = 2048,
	  .status = OKAY, .reason = "ok", .nr_sectors = 2048 },
	{ "discard_whole_device", .operation = DISC, .sector = 0,
	  .discard_sectors = DEV_SECTORS,
	  .status = OKAY, .reason = "ok", .nr_sectors = DEV_SECTORS },
	{ "C07_discard_past_end", .operation = DISC, .sector = DEV_SECTORS - 8,
	  .discard_sectors = 16,
	  .status = ERROR, .reason = "discard range past end of device" },
	{ "C07_discard_read_only", .lim = LIM_RO, .operation = DISC,
	  .sector = 0, .discard_sectors = 8,
	  .status = ERROR, .reason = "discard on a read-only device" },
	{ "C07_discard_nr_sectors_overflows", .operation = DISC, .sector = 8,
	  .discard_sectors = UINT64_MAX,
	  .status = ERROR, .reason = "discard range wraps past 2^64" },
	{ "C02_discard_wraps_2_64", .operation = DISC, .sector = WRAP8,
	  .discard_sectors = 8,
	  .status = ERROR, .reason = "discard range wraps past 2^64" },
	{ "discard_not_advertised", .lim = LIM_NO_DISCARD, .operation = DISC,
	  .sector = 0, .discard_sectors = 8,
	  .status = NOTSUP, .reason = "discard not advertised" },
	{ "C08_discard_secure_flag", .operation = DISC, .sector = 0,
	  .discard_sectors = 8, .secure = true,
	  .status = OKAY, .reason = "ok", .nr_sectors = 8 },
	{ "discard_0_sectors", .operation = DISC, .sector = 0, .discard_sectors = 0,
	  .status = ERROR, .reason = "discard of 0 sectors" },
	{ "4k_discard_unaligned_start", .lim = LIM_4K, .operation = DISC,
	  .sector = 4, .discard_sectors = 8,
	  .status = ERROR, .reason = "discard start not aligned to sector-size" },
	{ "4k_discard_partial_block", .lim = LIM_4K, .operation = DISC,
	  .sector = 8, .discard_sectors = 12,
	  .status = ERROR, .reason = "discard length not a multiple of sector-size" },

	/* ---- unknown operations ---- */
	{ "C13_op_4_reserved", .operation = BLKIF_OP_RESERVED_1, .nr_segments = 1,
	  .last = 7, .status = NOTSUP, .reason = "reserved operation" },
	{ "C13_op_7", .operation = 7, .nr_segments = 1, .last = 7,
	  .status = NOTSUP, .reason = "unknown operation" },
	{ "C13_op_255", .operation = 255, .status = NOTSUP,
	  .reason = "unknown operation" },

	/* ---- INDIRECT ---- */
	{ "indirect_read_12_segments", .operation = IND, .indirect_op = RD,
	  .sector = 0, .nr_segments = 12, .last = 7,
	  .status = OKAY, .reason = "ok", .nr_sectors = 96 },
	{ "indirect_write_256_segments", .operation = IND, .indirect_op = WR,
	  .sector = 8, .nr_segments = 256, .last = 7,
	  .status = OKAY, .reason = "ok", .nr_sectors = 2048 },
	{ "indirect_read_1_segment", .operation = IND, .indirect_op = RD,
	  .sector = 0, .nr_segments = 1, .first = 1, .last = 1,
	  .status = OKAY, .reason = "ok", .nr_sectors = 1 },
	{ "C05_indirect_0_segments", .operation = IND, .indirect_op = RD,
	  .nr_segments = 0,
	  .status = ERROR, .reason = "indirect with no segments" },
	{ "C05_indirect_above_advertised", .lim = LIM_INDIRECT_32,
	  .operation = IND, .indirect_op = RD, .nr_segments = 33, .last = 7,
	  .status = ERROR, .reason = "more than feature-max-indirect-segments" },
	{ "C05_indirect_65535_segments", .operation = IND, .indirect_op = WR,
	  .nr_segments = 65535, .last = 7,
	  .status = ERROR, .reason = "more than feature-max-indirect-segments" },
	{ "indirect_above_capacity", .lim = LIM_ABOVE_CAP, .operation = IND,
	  .indirect_op = RD, .nr_segments = 257, .last = 7,
	  .status = ERROR, .reason = "more than feature-max-indirect-segments" },
	{ "indirect_not_advertised", .lim = LIM_NO_INDIRECT, .operation = IND,
	  .indirect_op = RD, .nr_segments = 12, .last = 7,
	  .status = NOTSUP, .reason = "indirect not advertised" },
	{ "C13_indirect_op_flush", .operation = IND, .indirect_op = FL,
	  .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "indirect_op not read or write" },
	{ "C13_indirect_op_barrier", .operation = IND, .indirect_op = BAR,
	  .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "indirect_op not read or write" },
	{ "C13_indirect_op_discard", .operation = IND, .indirect_op = DISC,
	  .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "indirect_op not read or write" },
	{ "C13_indirect_op_indirect", .operation = IND, .indirect_op = IND,
	  .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "indirect_op not read or write" },
	{ "indirect_write_read_only", .lim = LIM_RO, .operation = IND,
	  .indirect_op = WR, .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "write to a read-only device" },
	{ "C06_indirect_bad_segment_200", .operation = IND, .indirect_op = WR,
	  .nr_segments = 256, .last = 7, .bad = 200, .bad_first = 5, .bad_last = 3,
	  .status = ERROR, .reason = "first_sect > last_sect" },
	{ "C06_indirect_last_sect_8", .operation = IND, .indirect_op = RD,
	  .nr_segments = 20, .last = 7, .bad = 19, .bad_first = 0, .bad_last = 8,
	  .status = ERROR, .reason = "last_sect > 7" },
	{ "C02_indirect_wraps_2_64", .operation = IND, .indirect_op = RD,
	  .sector = WRAP8 - 64, .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "sector range wraps past 2^64" },
	{ "indirect_past_end", .operation = IND, .indirect_op = WR,
	  .sector = DEV_SECTORS - 95, .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "sector range past end of device" },
	{ "4k_indirect_unaligned", .lim = LIM_4K, .operation = IND,
	  .indirect_op = RD, .sector = 9, .nr_segments = 12, .last = 7,
	  .status = ERROR, .reason = "sector not aligned to sector-size" },
};

static void make_limits(enum lim_kind k, struct blkreq_limits *lim)
{
	memset(lim, 0, sizeof(*lim));
	lim->sectors = DEV_SECTORS;
	lim->sector_size = 512;
	lim->max_indirect_segments = BLKRING_MAX_INDIRECT_SEGMENTS;
	lim->discard = true;
	switch (k) {
	case LIM_DEFAULT:	break;
	case LIM_RO:		lim->read_only = true; break;
	case LIM_4K:		lim->sector_size = 4096; break;
	case LIM_NO_DISCARD:	lim->discard = false; break;
	case LIM_NO_INDIRECT:	lim->max_indirect_segments = 0; break;
	case LIM_INDIRECT_32:	lim->max_indirect_segments = 32; break;
	case LIM_ABOVE_CAP:	lim->max_indirect_segments = 4096; break;
	}
}

/* The request a frontend would send for case c (segments in seg[] also
 * for INDIRECT: they go into the indirect pages). */
static void make_request(const struct vcase *c, uint64_t id, struct blkreq *req)
{
	unsigned int i, n;

	memset(req, 0, sizeof(*req));
	req->operation = c->operation;
	req->op = c->operation == IND ? c->indirect_op : c->operation;
	req->id = id;
	req->handle = 0x51;
	req->sector = c->sector;
	req->nr_segments = c->nr_segments;
	req->nr_sectors = c->discard_sectors;
	req->discard_secure = c->secure;
	n = c->nr_segments < BLKRING_MAX_INDIRECT_SEGMENTS ?
	    c->nr_segments : BLKRING_MAX_INDIRECT_SEGMENTS;
	for (i = 0; i < n; i++) {
		req->seg[i].gref = 1000 + i;
		req->seg[i].first_sect = c->first;
		req->seg[i].last_sect = c->last;
	}
	if (c->bad != SEG_ALL && c->bad < n && (c->bad_first || c->bad_last)) {
		req->seg[c->bad].first_sect = c->bad_first;
		req->seg[c->bad].last_sect = c->bad_last;
	}
	if (c->operation == IND) {
		req->nr_indirect_pages = (n + 511) / 512;
		for (i = 0; i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++)
			req->indirect_grefs[i] = 500 + i;
	}
}

/* Run case c through a ring of the given ABI; 0 when all matched. */
static int run_case(const struct vcase *c, enum blkring_abi abi, uint64_t id)
{
	struct blkreq sent, got;
	struct blkreq_limits lim;
	struct t_pair p;
	bool needs_indirect;
	const char *reason = NULL;
	int status;

	make_limits(c->lim, &lim);
	make_request(c, id, &sent);
	t_pair_init(&p, 1, abi);
	T_CHECK(blkring_front_put_request(p.front, &sent) == 0);
	blkring_front_push_requests(p.front);
	T_CHECK(blkring_back_get_request(p.back, &got) == 1);
	T_CHECK(got.id == id);
	T_CHECK(got.operation == c->operation);

	status = blkreq_validate(&got, &lim, &needs_indirect, &reason);
	if (status == OKAY && needs_indirect) {
		void *pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
		unsigned int i;

		T_CHECK(c->operation == IND);
		T_CHECK(got.nr_indirect_pages == (c->nr_segments + 511) / 512);
		for (i = 0; i < got.nr_indirect_pages; i++)
			pages[i] = t_ring_pages(1);
		T_CHECK(blkreq_fill_indirect_pages(&sent, pages) == 0);
		status = blkreq_parse_indirect(&got, &lim,
					       (const void *const *)pages, &reason);
		for (i = 0; i < got.nr_indirect_pages; i++)
			free(pages[i]);
	} else {
		T_CHECK(!needs_indirect);
	}
	t_pair_fini(&p);

	if (status != c->status || reason == NULL || strcmp(reason, c->reason)) {
		fprintf(stderr, "%s [%s]: got status %d reason \"%s\", want %d \"%s\"\n",
			c->name, blkring_abi_name(abi), status,
			reason ? reason : "(null)", c->status, c->reason);
		return 1;
	}
	if (status == OKAY) {
		if (got.nr_sectors != c->nr_sectors) {
			fprintf(stderr, "%s: nr_sectors %" PRIu64 ", want %" PRIu64 "\n",
				c->name, got.nr_sectors, c->nr_sectors);
			return 1;
		}
		T_CHECK(got.op == (c->operation == IND ? c->indirect_op : c->operation));
		T_CHECK(got.handle == 0x51);
		if (c->operation == DISC)
			T_CHECK(got.discard_secure == c->secure);
		if ((c->operation == FL || c->operation == BAR) && c->nr_segments == 0)
			T_CHECK(got.sector == 0);	/* ignored */
		else
			T_CHECK(got.sector == c->sector);
		if (c->operation != DISC && c->nr_segments > 0)
			T_CHECK(got.seg[c->nr_segments - 1].gref ==
				1000 + c->nr_segments - 1);
	}
	return 0;
}

/* Every case of the table, in every ABI. */
static int test_table(void)
{
	unsigned int i, a, bad = 0;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
			if (run_case(&cases[i], t_abis[a], 0x1000 + i)) {
				fprintf(stderr, "FAIL case: %s\n", cases[i].name);
				bad++;
				break;
			}
		}
		if (a == ARRAY_SIZE(t_abis))
			printf("case PASS: %s\n", cases[i].name);
	}
	printf("%zu cases, %u failed\n", ARRAY_SIZE(cases), bad);
	return bad != 0;
}

/* The table really has the coverage it claims. */
static int test_table_size(void)
{
	T_CHECK(ARRAY_SIZE(cases) >= 40);
	return 0;
}

/* Validation sees only the private copy: the frontend rewriting the slot
 * after the backend's get changes nothing (no double fetch). */
static int test_copy_then_validate(void)
{
	struct blkreq_limits lim;
	struct blkreq req, got;
	struct t_pair p;
	bool needs_indirect;
	const char *reason;
	blkif_sring_t *s;

	make_limits(LIM_DEFAULT, &lim);
	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	t_read_req(&req, 5, 16);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	blkring_front_push_requests(p.front);
	T_CHECK(blkring_back_get_request(p.back, &got) == 1);
	/* Hostile frontend: make the slot invalid after the copy. */
	s = p.mem;
	s->ring[0].req.nr_segments = 200;
	s->ring[0].req.seg[0].last_sect = 9;
	s->ring[0].req.sector_number = UINT64_MAX;
	T_CHECK(blkreq_validate(&got, &lim, &needs_indirect, &reason) == OKAY);
	T_CHECK(got.nr_segments == 1 && got.seg[0].last_sect == 7);
	T_CHECK(got.sector == 16 && got.nr_sectors == 8);
	t_pair_fini(&p);
	return 0;
}

/* blkreq_parse_indirect() refuses a request validate did not accept. */
static int test_parse_indirect_guard(void)
{
	struct blkreq_limits lim;
	struct blkreq req;
	const char *reason;
	void *page = t_ring_pages(1);
	const void *pages[1] = { page };

	make_limits(LIM_DEFAULT, &lim);
	t_read_req(&req, 1, 0);		/* not INDIRECT */
	T_CHECK(blkreq_parse_indirect(&req, &lim, pages, &reason) == ERROR);
	T_CHECK(strcmp(reason, "not a validated indirect request") == 0);
	req.operation = IND;
	req.nr_segments = 1000;		/* never validated */
	T_CHECK(blkreq_parse_indirect(&req, &lim, pages, &reason) == ERROR);
	T_CHECK(strcmp(reason, "not a validated indirect request") == 0);
	free(page);
	return 0;
}

/* fill_indirect_pages refuses counts a page set cannot hold. */
static int test_fill_indirect_limits(void)
{
	struct blkreq req;
	void *page = t_ring_pages(1);
	void *pages[1] = { page };

	memset(&req, 0, sizeof(req));
	req.nr_segments = 0;
	T_CHECK(blkreq_fill_indirect_pages(&req, pages) == -EINVAL);
	req.nr_segments = BLKRING_MAX_INDIRECT_SEGMENTS + 1;
	T_CHECK(blkreq_fill_indirect_pages(&req, pages) == -EINVAL);
	free(page);
	return 0;
}

/* Operation names for traces. */
static int test_op_names(void)
{
	T_CHECK(strcmp(blkreq_op_name(RD), "read") == 0);
	T_CHECK(strcmp(blkreq_op_name(WR), "write") == 0);
	T_CHECK(strcmp(blkreq_op_name(BAR), "barrier") == 0);
	T_CHECK(strcmp(blkreq_op_name(FL), "flush") == 0);
	T_CHECK(strcmp(blkreq_op_name(4), "reserved") == 0);
	T_CHECK(strcmp(blkreq_op_name(DISC), "discard") == 0);
	T_CHECK(strcmp(blkreq_op_name(IND), "indirect") == 0);
	T_CHECK(strcmp(blkreq_op_name(7), "unknown") == 0);
	T_CHECK(strcmp(blkreq_op_name(255), "unknown") == 0);
	/* and back: every name to its op, nothing else */
	{
		uint8_t op = 99, v;

		for (v = 0; v < 7; v++) {
			T_CHECK(blkreq_op_parse(blkreq_op_name(v), &op) == 0);
			T_CHECK(op == v);
		}
		T_CHECK(blkreq_op_parse("unknown", &op) == -EINVAL);
		T_CHECK(blkreq_op_parse("READ", &op) == -EINVAL);
		T_CHECK(blkreq_op_parse("", &op) == -EINVAL);
	}
	return 0;
}

int main(void)
{
	T_RUN(test_table_size);
	T_RUN(test_table);
	T_RUN(test_copy_then_validate);
	T_RUN(test_parse_indirect_guard);
	T_RUN(test_fill_indirect_limits);
	T_RUN(test_op_names);
	return t_failed ? 1 : 0;
}
