/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * request.c: validation of a private request copy (the trust boundary).
 *
 * Input is a struct blkreq that ring.c decoded from its private copy of a
 * ring slot; nothing here reads shared memory except
 * blkreq_parse_indirect(), which reads each segment descriptor of the
 * indirect pages exactly once.
 *
 * Rules, in the order they are applied (the first failure gives the
 * status and reason; tests pin each reason string):
 *
 *   READ/WRITE        write on read-only -> ERROR; nr_segments 1..11;
 *                     segments; range; logical-block alignment
 *   WRITE_BARRIER,    nr_segments 0..11; 0 -> no data: sector_number is
 *   FLUSH_DISKCACHE   ignored (set to 0), OKAY whatever the device mode;
 *                     with data: as a WRITE (read-only -> ERROR, ...)
 *   DISCARD           not advertised -> EOPNOTSUPP; read-only -> ERROR;
 *                     nr_sectors 0 -> ERROR; wrap/past end -> ERROR (never
 *                     EOPNOTSUPP, which makes Linux blkfront turn discard
 *                     off for good, case C07); alignment; the SECURE flag
 *                     is passed on as a bool, the backend decides (C08)
 *   INDIRECT          not advertised (max_indirect_segments 0) ->
 *                     EOPNOTSUPP: blkif.h says a backend that does not
 *                     offer it must not see it, so it is an unknown op;
 *                     indirect_op not READ/WRITE -> ERROR (C13); write on
 *                     read-only -> ERROR; nr_segments 1..max (C05);
 *                     ceil(nr_segments / 512) <= 8 pages; the segments
 *                     themselves in blkreq_parse_indirect()
 *   RESERVED_1 (4), 7..255 -> EOPNOTSUPP (C13)
 *
 *   segments: last_sect <= 7, first_sect <= last_sect (C06)
 *   range:    sector + nr_sectors must not wrap past 2^64 (C02) and must
 *             end at or before lim->sectors
 *   alignment (sector_size > 512 only): the start sector and every
 *             segment's (or the discard's) length are multiples of
 *             sector_size / 512 (Linux blkback "Misaligned I/O request")
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "private.h"

#define OK(reason_)		({ *reason = (reason_); BLKIF_RSP_OKAY; })
#define FAIL(reason_)		({ *reason = (reason_); BLKIF_RSP_ERROR; })
#define UNSUPPORTED(reason_)	({ *reason = (reason_); BLKIF_RSP_EOPNOTSUPP; })

/* 512-byte sectors per logical block: 1 for 512-byte devices. */
static uint64_t sectors_per_block(const struct blkreq_limits *lim)
{
	return lim->sector_size > SECTOR_SIZE ? lim->sector_size / SECTOR_SIZE : 1;
}

/* Most indirect segments accepted: the advertised value, capped by the
 * capacity of struct blkreq. */
static unsigned int max_indirect(const struct blkreq_limits *lim)
{
	return lim->max_indirect_segments < BLKRING_MAX_INDIRECT_SEGMENTS ?
	       lim->max_indirect_segments : BLKRING_MAX_INDIRECT_SEGMENTS;
}

/*
 * Check seg[0, n) and the resulting sector range; sets req->nr_sectors.
 * Shared by direct requests and parsed indirect ones.
 */
static int check_data(struct blkreq *req, unsigned int n,
		      const struct blkreq_limits *lim, const char **reason)
{
	uint64_t spb = sectors_per_block(lim);
	uint64_t total = 0, end;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct blkreq_seg *s = &req->seg[i];

		if (s->last_sect >= SECTORS_PER_PAGE)
			return FAIL("last_sect > 7");
		if (s->first_sect > s->last_sect)
			return FAIL("first_sect > last_sect");
		if ((uint64_t)(s->last_sect - s->first_sect + 1) % spb)
			return FAIL("segment not a multiple of sector-size");
		total += s->last_sect - s->first_sect + 1;
	}
	req->nr_sectors = total;

	end = req->sector + total;
	if (end < req->sector)
		return FAIL("sector range wraps past 2^64");
	if (end > lim->sectors)
		return FAIL("sector range past end of device");
	if (req->sector % spb)
		return FAIL("sector not aligned to sector-size");
	return OK("ok");
}

static int validate_rw(struct blkreq *req, const struct blkreq_limits *lim,
		       const char **reason)
{
	if (req->operation == BLKIF_OP_WRITE && lim->read_only)
		return FAIL("write to a read-only device");
	if (req->nr_segments == 0)
		return FAIL("read/write with no segments");
	if (req->nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		return FAIL("more than 11 segments");
	return check_data(req, req->nr_segments, lim, reason);
}

static int validate_flush(struct blkreq *req, const struct blkreq_limits *lim,
			  const char **reason)
{
	if (req->nr_segments > BLKIF_MAX_SEGMENTS_PER_REQUEST)
		return FAIL("more than 11 segments");
	if (req->nr_segments == 0) {
		/* blkif.h: sector_number is only meaningful with data (C01). */
		req->sector = 0;
		req->nr_sectors = 0;
		return OK("ok");
	}
	if (lim->read_only)
		return FAIL("write to a read-only device");
	return check_data(req, req->nr_segments, lim, reason);
}

static int validate_discard(struct blkreq *req, const struct blkreq_limits *lim,
			    const char **reason)
{
	uint64_t spb = sectors_per_block(lim);
	uint64_t end;

	req->nr_segments = 0;
	if (!lim->discard)
		return UNSUPPORTED("discard not advertised");
	if (lim->read_only)
		return FAIL("discard on a read-only device");
	if (req->nr_sectors == 0)
		return FAIL("discard of 0 sectors");
	end = req->sector + req->nr_sectors;
	if (end < req->sector)
		return FAIL("discard range wraps past 2^64");
	if (end > lim->sectors)
		return FAIL("discard range past end of device");
	if (req->sector % spb)
		return FAIL("discard start not aligned to sector-size");
	if (req->nr_sectors % spb)
		return FAIL("discard length not a multiple of sector-size");
	return OK("ok");
}

static int validate_indirect(struct blkreq *req, const struct blkreq_limits *lim,
			     bool *needs_indirect, const char **reason)
{
	unsigned int pages;

	if (lim->max_indirect_segments == 0)
		return UNSUPPORTED("indirect not advertised");
	if (req->op != BLKIF_OP_READ && req->op != BLKIF_OP_WRITE)
		return FAIL("indirect_op not read or write");
	if (req->op == BLKIF_OP_WRITE && lim->read_only)
		return FAIL("write to a read-only device");
	if (req->nr_segments == 0)
		return FAIL("indirect with no segments");
	if (req->nr_segments > max_indirect(lim))
		return FAIL("more than feature-max-indirect-segments");
	pages = (req->nr_segments + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) /
		BLKRING_SEGS_PER_INDIRECT_PAGE;
	if (pages > BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST)
		return FAIL("more than 8 indirect pages");
	req->nr_indirect_pages = pages;
	*needs_indirect = true;
	return OK("ok");
}

int blkreq_validate(struct blkreq *req, const struct blkreq_limits *lim,
		    bool *needs_indirect, const char **reason)
{
	*needs_indirect = false;
	if (req->operation != BLKIF_OP_DISCARD)
		req->nr_sectors = 0;
	if (req->operation != BLKIF_OP_INDIRECT) {
		req->op = req->operation;
		req->nr_indirect_pages = 0;
	}

	switch (req->operation) {
	case BLKIF_OP_READ:
	case BLKIF_OP_WRITE:
		return validate_rw(req, lim, reason);
	case BLKIF_OP_WRITE_BARRIER:
	case BLKIF_OP_FLUSH_DISKCACHE:
		return validate_flush(req, lim, reason);
	case BLKIF_OP_DISCARD:
		return validate_discard(req, lim, reason);
	case BLKIF_OP_INDIRECT:
		return validate_indirect(req, lim, needs_indirect, reason);
	case BLKIF_OP_RESERVED_1:
		return UNSUPPORTED("reserved operation");
	default:
		return UNSUPPORTED("unknown operation");
	}
}

int blkreq_parse_indirect(struct blkreq *req, const struct blkreq_limits *lim,
			  const void *const *pages, const char **reason)
{
	unsigned int i, n = req->nr_segments;

	/* Only what blkreq_validate() accepted; re-checked because n sizes
	 * the reads below. */
	if (req->operation != BLKIF_OP_INDIRECT ||
	    (req->op != BLKIF_OP_READ && req->op != BLKIF_OP_WRITE) ||
	    n == 0 || n > max_indirect(lim) || pages == NULL)
		return FAIL("not a validated indirect request");

	for (i = 0; i < n; i++) {
		const uint8_t *page = pages[i / BLKRING_SEGS_PER_INDIRECT_PAGE];
		const volatile struct blkif_request_segment *src;
		struct blkif_request_segment s;

		/* One volatile read per descriptor: the page may be a live
		 * grant mapping the guest can still write. */
		src = (const volatile struct blkif_request_segment *)
			(page + (i % BLKRING_SEGS_PER_INDIRECT_PAGE) * sizeof(s));
		s.gref = src->gref;
		s.first_sect = src->first_sect;
		s.last_sect = src->last_sect;
		req->seg[i].gref = s.gref;
		req->seg[i].first_sect = s.first_sect;
		req->seg[i].last_sect = s.last_sect;
	}
	return check_data(req, n, lim, reason);
}

int blkreq_fill_indirect_pages(const struct blkreq *req, void *const *pages)
{
	unsigned int i, n = req->nr_segments;
	unsigned int npages;

	if (n == 0 || n > BLKRING_MAX_INDIRECT_SEGMENTS)
		return -EINVAL;
	npages = (n + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) / BLKRING_SEGS_PER_INDIRECT_PAGE;
	for (i = 0; i < npages; i++)
		memset(pages[i], 0, XEN_PAGE_SIZE);
	for (i = 0; i < n; i++) {
		struct blkif_request_segment s = {
			.gref = req->seg[i].gref,
			.first_sect = req->seg[i].first_sect,
			.last_sect = req->seg[i].last_sect,
		};
		uint8_t *page = pages[i / BLKRING_SEGS_PER_INDIRECT_PAGE];

		memcpy(page + (i % BLKRING_SEGS_PER_INDIRECT_PAGE) * sizeof(s),
		       &s, sizeof(s));
	}
	return 0;
}

int blkreq_op_parse(const char *name, uint8_t *op)
{
	unsigned int v;

	/* every op that has a name is below 8 (blkif.h) */
	for (v = 0; v < 8; v++)
		if (strcmp(blkreq_op_name((uint8_t)v), "unknown") != 0 &&
		    strcmp(blkreq_op_name((uint8_t)v), name) == 0) {
			*op = (uint8_t)v;
			return 0;
		}
	return -EINVAL;
}

const char *blkreq_op_name(uint8_t op)
{
	switch (op) {
	case BLKIF_OP_READ:		return "read";
	case BLKIF_OP_WRITE:		return "write";
	case BLKIF_OP_WRITE_BARRIER:	return "barrier";
	case BLKIF_OP_FLUSH_DISKCACHE:	return "flush";
	case BLKIF_OP_RESERVED_1:	return "reserved";
	case BLKIF_OP_DISCARD:		return "discard";
	case BLKIF_OP_INDIRECT:		return "indirect";
	default:			return "unknown";
	}
}
