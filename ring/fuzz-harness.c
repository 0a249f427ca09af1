/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-harness.c: one fuzz input through a back ring.
 *
 * Shared by the libFuzzer target (fuzz-request.c, "make fuzz") and the
 * corpus replay unit test (test-fuzz-corpus.c, "make check").
 *
 * Input layout (little endian; missing bytes read as 0):
 *    0 u8   ring-page-order (mod 5)
 *    1 u8   ABI (mod 3)
 *    2 u8   flags: 1 read-only, 2 discard advertised, 4 req_prod absolute
 *    3 u8   sector-size = 512 << (v mod 4)
 *    4 u16  feature-max-indirect-segments (any value, also > capacity)
 *    6 u64  device size in sectors
 *   14 u32  starting index of both rings (exercises the 2^32 wrap)
 *   18 u32  req_prod: start + (int32)v, or v itself with flag 4
 *   22 u8   number of get/validate/respond rounds - 1 (mod 64)
 *   23 u16  offset of the indirect page contents in the payload
 *   25 ...  payload: the ring's entries (after the 64-byte header), and,
 *           cyclically from the offset above, the indirect pages
 *
 * The ring and each indirect page are separate heap blocks of exactly
 * their size, so ASan catches any read outside them.  Invariants (assert):
 * an OKAY request satisfies every rule (checked by an independent
 * re-implementation below, which must agree with blkreq_validate/
 * blkreq_parse_indirect in both directions); a non-OKAY one has a reason;
 * -EPROTO only for a producer index more than RING_SIZE ahead.
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

#define HDR_SIZE	25

struct fuzz_in {
	const uint8_t *data;
	size_t size;
};

static uint64_t get_le(const struct fuzz_in *in, size_t off, unsigned int bytes)
{
	uint64_t v = 0;
	unsigned int i;

	for (i = 0; i < bytes; i++)
		if (off + i < in->size)
			v |= (uint64_t)in->data[off + i] << (8 * i);
	return v;
}

/* Fill n bytes of dst cyclically from the payload starting at off.  The
 * first period is copied from the payload, then dst doubles from its own
 * start (each copy ends on a multiple of plen): a byte loop with a modulo
 * filled a 16-page ring at ~200 us an input, most of the fuzzer's time. */
static void fill_cyclic(uint8_t *dst, size_t n, const uint8_t *payload,
			size_t plen, size_t off)
{
	size_t head, have;

	if (plen == 0) {
		memset(dst, 0, n);
		return;
	}
	off %= plen;
	head = plen - off < n ? plen - off : n;
	memcpy(dst, payload + off, head);
	have = head;
	if (have < n) {
		size_t tail = off < n - have ? off : n - have;

		memcpy(dst + have, payload, tail);
		have += tail;
	}
	while (have < n) {
		size_t c = have < n - have ? have : n - have;

		memcpy(dst + have, dst, c);
		have += c;
	}
}

static uint64_t spb_of(const struct blkreq_limits *lim)
{
	return lim->sector_size > SECTOR_SIZE ? lim->sector_size / SECTOR_SIZE : 1;
}

/* Independent check of segments + range; nsec receives the sector count. */
static bool ref_data_ok(uint64_t sector, const struct blkreq_seg *seg,
			unsigned int n, const struct blkreq_limits *lim,
			uint64_t *nsec)
{
	uint64_t spb = spb_of(lim), total = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (seg[i].first_sect > seg[i].last_sect || seg[i].last_sect > 7)
			return false;
		if ((seg[i].last_sect - seg[i].first_sect + 1u) % spb)
			return false;
		total += seg[i].last_sect - seg[i].first_sect + 1u;
	}
	*nsec = total;
	if (sector > UINT64_MAX - total)	/* wraps past 2^64 */
		return false;
	if (sector + total > lim->sectors)
		return false;
	return sector % spb == 0;
}

/* The header of an INDIRECT request, before its pages are read. */
static bool ref_indirect_header_ok(const struct blkreq *r,
				   const struct blkreq_limits *lim)
{
	unsigned int maxind = lim->max_indirect_segments < BLKRING_MAX_INDIRECT_SEGMENTS ?
			      lim->max_indirect_segments : BLKRING_MAX_INDIRECT_SEGMENTS;

	if (maxind == 0)
		return false;
	if (r->op != BLKIF_OP_READ && r->op != BLKIF_OP_WRITE)
		return false;
	if (r->op == BLKIF_OP_WRITE && lim->read_only)
		return false;
	return r->nr_segments >= 1 && r->nr_segments <= maxind;
}

/*
 * The reference decision for a freshly copied request (before validate),
 * with segs the request's data segments (direct, or read from the
 * indirect pages).  Returns whether OKAY is the right answer.
 */
static bool ref_ok(const struct blkreq *r, const struct blkreq_seg *segs,
		   const struct blkreq_limits *lim)
{
	uint64_t spb = spb_of(lim), nsec;

	switch (r->operation) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
		if (r->operation == BLKIF_OP_WRITE && lim->read_only)
			return false;
		if (r->nr_segments < 1 || r->nr_segments > 11)
			return false;
		return ref_data_ok(r->sector, segs, r->nr_segments, lim, &nsec);
	case BLKIF_OP_WRITE_BARRIER:
	case BLKIF_OP_FLUSH_DISKCACHE:
		if (r->nr_segments > 11)
			return false;
		if (r->nr_segments == 0)
			return true;
		if (lim->read_only)
			return false;
		return ref_data_ok(r->sector, segs, r->nr_segments, lim, &nsec);
	case BLKIF_OP_DISCARD:
		return lim->discard && !lim->read_only && r->nr_sectors > 0 &&
		       r->sector <= UINT64_MAX - r->nr_sectors &&
		       r->sector + r->nr_sectors <= lim->sectors &&
		       r->sector % spb == 0 && r->nr_sectors % spb == 0;
	case BLKIF_OP_INDIRECT:
		return ref_indirect_header_ok(r, lim) &&
		       ref_data_ok(r->sector, segs, r->nr_segments, lim, &nsec);
	default:
		return false;
	}
}

/* What an OKAY result must look like. */
static void check_okay(const struct blkreq *r, const struct blkreq *orig,
		       const struct blkreq_limits *lim)
{
	uint64_t total = 0;
	unsigned int i;

	assert(r->id == orig->id && r->operation == orig->operation);
	switch (r->op) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
	case BLKIF_OP_WRITE_BARRIER:
	case BLKIF_OP_FLUSH_DISKCACHE:
		assert(r->operation == r->op || r->operation == BLKIF_OP_INDIRECT);
		assert(r->nr_segments <= BLKRING_MAX_INDIRECT_SEGMENTS);
		if (r->operation != BLKIF_OP_INDIRECT)
			assert(r->nr_segments <= BLKIF_MAX_SEGMENTS_PER_REQUEST);
		for (i = 0; i < r->nr_segments; i++) {
			assert(r->seg[i].first_sect <= r->seg[i].last_sect);
			assert(r->seg[i].last_sect <= 7);
			total += r->seg[i].last_sect - r->seg[i].first_sect + 1u;
		}
		assert(total == r->nr_sectors);
		if (r->op != BLKIF_OP_READ && total > 0)
			assert(!lim->read_only);
		if (total == 0)
			assert(r->op == BLKIF_OP_WRITE_BARRIER ||
			       r->op == BLKIF_OP_FLUSH_DISKCACHE);
		break;
	case BLKIF_OP_DISCARD:
		assert(r->operation == BLKIF_OP_DISCARD && lim->discard);
		assert(!lim->read_only && r->nr_sectors > 0);
		assert(r->nr_sectors % spb_of(lim) == 0);
		break;
	default:
		assert(!"OKAY for an unknown operation");
	}
	/* The range is inside the device, without wrapping. */
	assert(r->sector + r->nr_sectors >= r->sector);
	assert(r->sector + r->nr_sectors <= lim->sectors || r->nr_sectors == 0);
	assert(r->sector % spb_of(lim) == 0 || r->nr_sectors == 0);
}

int blkring_fuzz_one(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct blkreq_limits lim;
	enum blkring_abi abi;
	unsigned int nr_pages, rounds, i, ring_size;
	uint32_t start, prod_field, req_prod;
	const uint8_t *payload = size > HDR_SIZE ? data + HDR_SIZE : NULL;
	size_t plen = size > HDR_SIZE ? size - HDR_SIZE : 0;
	size_t ind_off, ring_bytes;
	uint8_t flags, *mem;
	blkring_t *r;
	static struct blkreq req, orig;	/* large: keep off the stack */
	static struct blkreq_seg ref_segs[BLKRING_MAX_INDIRECT_SEGMENTS];

	nr_pages = 1u << (get_le(&in, 0, 1) % 5);
	abi = (enum blkring_abi)(get_le(&in, 1, 1) % 3);
	flags = (uint8_t)get_le(&in, 2, 1);
	memset(&lim, 0, sizeof(lim));
	lim.read_only = flags & 1;
	lim.discard = flags & 2;
	lim.sector_size = 512u << (get_le(&in, 3, 1) % 4);
	lim.max_indirect_segments = (unsigned int)get_le(&in, 4, 2);
	lim.sectors = get_le(&in, 6, 8);
	start = (uint32_t)get_le(&in, 14, 4);
	prod_field = (uint32_t)get_le(&in, 18, 4);
	rounds = (unsigned int)(get_le(&in, 22, 1) % 64) + 1;
	ind_off = (size_t)get_le(&in, 23, 2);
	req_prod = (flags & 4) ? prod_field : start + prod_field;

	ring_bytes = (size_t)nr_pages * XEN_PAGE_SIZE;
	mem = malloc(ring_bytes);
	assert(mem != NULL);
	/* Header as a frontend would set it up, then hostile contents. */
	r = blkring_attach_at(mem, nr_pages, abi, true, start);
	assert(r != NULL);
	blkring_free(r);
	fill_cyclic(mem + 64, ring_bytes - 64, payload, plen, 0);
	((blkif_sring_t *)mem)->req_prod = req_prod;

	r = blkring_attach_at(mem, nr_pages, abi, false, start);
	assert(r != NULL);
	ring_size = blkring_size(r);
	assert(ring_size == blkring_size_for(abi, nr_pages));

	for (i = 0; i < rounds; i++) {
		uint8_t *pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST] = { NULL };
		const char *reason = NULL;
		bool needs_indirect = false, want;
		unsigned int k, n = 0;
		int rc, status;

		rc = blkring_back_get_request(r, &req);
		if (rc < 0) {
			assert(rc == -EPROTO && blkring_broken(r));
			/* Only a producer more than RING_SIZE ahead of our
			 * responses breaks the ring. */
			assert((uint32_t)(req_prod - r->back.native.rsp_prod_pvt) > ring_size);
			assert(blkring_back_final_check(r));
			break;
		}
		if (rc == 0) {
			(void)blkring_back_final_check(r);
			break;
		}
		orig = req;

		status = blkreq_validate(&req, &lim, &needs_indirect, &reason);
		assert(reason != NULL && reason[0] != '\0');
		if (status == BLKIF_RSP_OKAY && needs_indirect) {
			assert(req.operation == BLKIF_OP_INDIRECT);
			assert(req.nr_indirect_pages >= 1 &&
			       req.nr_indirect_pages <= BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST);
			for (k = 0; k < req.nr_indirect_pages; k++) {
				pages[k] = malloc(XEN_PAGE_SIZE);
				assert(pages[k] != NULL);
				fill_cyclic(pages[k], XEN_PAGE_SIZE, payload, plen,
					    ind_off + (size_t)k * XEN_PAGE_SIZE);
			}
			status = blkreq_parse_indirect(&req, &lim,
						       (const void *const *)pages,
						       &reason);
			assert(reason != NULL && reason[0] != '\0');
		}

		/* Reference segments: direct from the copy, indirect from
		 * the pages (when they were fetched). */
		if (orig.operation == BLKIF_OP_INDIRECT) {
			if (pages[0] != NULL) {
				n = orig.nr_segments;
				for (k = 0; k < n; k++) {
					struct blkif_request_segment s;

					memcpy(&s, pages[k / 512] + (k % 512) * sizeof(s),
					       sizeof(s));
					ref_segs[k].gref = s.gref;
					ref_segs[k].first_sect = s.first_sect;
					ref_segs[k].last_sect = s.last_sect;
				}
			}
			if (pages[0] != NULL)
				want = ref_ok(&orig, ref_segs, &lim);
			else	/* refused before the pages were read */
				want = ref_indirect_header_ok(&orig, &lim);
			if (pages[0] == NULL)
				assert(!want);
		} else {
			want = ref_ok(&orig, orig.seg, &lim);
		}

		if (status == BLKIF_RSP_OKAY) {
			check_okay(&req, &orig, &lim);
			assert(strcmp(reason, "ok") == 0);
		} else {
			assert(status == BLKIF_RSP_ERROR || status == BLKIF_RSP_EOPNOTSUPP);
		}
		/* Validation agrees with the reference both ways. */
		assert(want == (status == BLKIF_RSP_OKAY));

		for (k = 0; k < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; k++)
			free(pages[k]);

		assert(blkring_back_put_response(r, req.id, req.operation,
						 (int16_t)status) == 0);
		if (i & 1)
			(void)blkring_back_push_responses(r);
	}
	(void)blkring_back_push_responses(r);
	blkring_free(r);
	free(mem);
	return 0;
}
