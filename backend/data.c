/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * data.c: how a request's data moves between the guest's pages and the
 * host I/O (queue.h): on persistent grants, the pages a queue keeps
 * mapped (pgrant.h); without them, grant copies batched over a pass of
 * the ring or a burst of completions, or, for large requests, the pages
 * mapped for the duration of the I/O.  The indirect descriptor pages
 * come the same ways.  The queue thread's.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "queue.h"

/*
 * The segments as iovecs, at base + i pages (the segments' pages,
 * mapped contiguously) or at pages[i] (persistent grants): one per
 * segment, except that a segment that begins where the previous one
 * ends in our address space extends it.  Whole-page segments of a
 * contiguous mapping make one iovec: an rbd write of 1 MiB is then one
 * buffer for librbd instead of 256 (each one its own bufferptr, and,
 * when librbd copies, its own allocation and memcpy).  Sets
 * req->niovs.
 */
static void
seg_iovs(struct bk_req *req, char *base, void *const *pages)
{
	const struct blkreq *br = &req->br;
	unsigned int i, n = 0;

	for (i = 0; i < br->nr_segments; i++) {
		unsigned int first = br->seg[i].first_sect, last = br->seg[i].last_sect;
		char *page = pages ? pages[i] : base + (size_t)i * XEN_PAGE_SIZE;
		char *p = page + (first << SECTOR_SHIFT);
		size_t len = (size_t)(last - first + 1) << SECTOR_SHIFT;

		if (n && (char *)req->iovs[n - 1].iov_base + req->iovs[n - 1].iov_len == p) {
			req->iovs[n - 1].iov_len += len;
			continue;
		}
		req->iovs[n].iov_base = p;
		req->iovs[n].iov_len = len;
		n++;
	}
	req->niovs = n;
}

/*
 * Zero-copy without persistent grants, for large requests: map the
 * segments' grants (writable for a READ, whose data goes into the
 * guest's pages) for the duration of the host I/O.  All or nothing
 * (xenops_map_grefs), so a bad gref fails the whole request before any
 * I/O, like a failed grant copy.  Unmapped by bk_data_release().
 */
int
bk_data_map(struct bk_queue *q, struct bk_req *req, bool writable)
{
	const struct blkreq *br = &req->br;
	unsigned int i, n = br->nr_segments;

	for (i = 0; i < n; i++)
		q->grefs[i] = br->seg[i].gref;
	req->map = xenops_map_grefs(q->xops, q->domid, n, q->grefs, writable);
	if (!req->map)
		return -errno;
	seg_iovs(req, req->map, NULL);
	return 0;
}

/* New persistent grants were mapped (some may have been purged): the
 * counters SIGUSR1 shows. */
static void
pg_account(struct bk_queue *q)
{
	struct bk_pgrant_stats st;

	bk_pgrants_stats(q->pg, &st);
	__atomic_store_n(&q->stats.pgrant_mapped, st.mapped, __ATOMIC_RELAXED);
	__atomic_store_n(&q->stats.pgrant_maps, st.maps, __ATOMIC_RELAXED);
}

/*
 * Persistent grants: the segments' pages stay mapped (pgrant.h) and the
 * host I/O works on them directly, as Linux blkback's bios do.  0,
 * -ENOSPC when they do not fit (the caller copies instead), or -errno
 * for a grant that cannot be mapped (nothing held).
 */
int
bk_data_persistent(struct bk_queue *q, struct bk_req *req)
{
	const struct blkreq *br = &req->br;
	unsigned int i, n = br->nr_segments;
	int rc;

	for (i = 0; i < n; i++)
		q->grefs[i] = br->seg[i].gref;
	rc = bk_pgrants_get(q->pg, q->grefs, n, bk_pgrant_now(), q->pages, req->holds);
	if (rc < 0)
		return rc;
	if (rc > 0)
		pg_account(q);
	req->pg = true;
	seg_iovs(req, NULL, q->pages);
	return 0;
}

/*
 * Grant copies are batched: every request of a pass over the ring (its
 * indirect pages, then its write data), and every read of a burst of
 * completions, goes into one xenops_grant_copy() -- on Xen one
 * IOCTL_GNTDEV_GRANT_COPY, instead of one per request (tapdisk3 does
 * the same).  A request learns its result from req->copy_err.
 */
void
bk_data_copy_flush(struct bk_queue *q)
{
	unsigned int i, k;

	if (!q->cb_n)
		return;
	xenops_grant_copy(q->xops, q->domid, q->cb_to_guest, q->cb_n, q->cb_segs);
	for (i = 0; i < q->cb_nreqs; i++) {
		struct bk_req *req = q->cb_reqs[i];

		req->copy_err = 0;
		for (k = req->cfirst; k < req->cfirst + req->cn && !req->copy_err; k++)
			req->copy_err = q->cb_segs[k].status;
	}
	q->cb_n = 0;
	q->cb_nreqs = 0;
}

/* Room for n more segments in the batch (flushing it when full) in the
 * direction to_guest; returns where they go. */
static struct xenops_copy_seg *
cbatch_reserve(struct bk_queue *q, struct bk_req *req, unsigned int n, bool to_guest)
{
	if (q->cb_n + n > q->cb_cap || q->cb_nreqs == q->nr_reqs ||
	    (q->cb_n && q->cb_to_guest != to_guest))
		bk_data_copy_flush(q);
	q->cb_to_guest = to_guest;
	req->cfirst = q->cb_n;
	req->cn = n;
	req->copy_err = 0;
	q->cb_reqs[q->cb_nreqs++] = req;
	q->cb_n += n;
	return &q->cb_segs[req->cfirst];
}

/* Add the request's data segments to the batch, packed back to back in
 * req->buf (one iovec for the host). */
void
bk_data_copy(struct bk_queue *q, struct bk_req *req, bool to_guest)
{
	const struct blkreq *br = &req->br;
	unsigned int i, n = br->nr_segments;
	struct xenops_copy_seg *segs = cbatch_reserve(q, req, n, to_guest);
	size_t off = 0;

	for (i = 0; i < n; i++) {
		unsigned int first = br->seg[i].first_sect, last = br->seg[i].last_sect;

		segs[i].gref = br->seg[i].gref;
		segs[i].offset = first << SECTOR_SHIFT;
		segs[i].len = (last - first + 1) << SECTOR_SHIFT;
		segs[i].local = (char *)req->buf + off;
		segs[i].status = 0;
		off += segs[i].len;
	}
}

/* The descriptors out of persistently mapped indirect pages, into
 * req->ind: only what nr_segments needs.  0 or -errno. */
static int
indirect_from_pgrants(struct bk_queue *q, struct bk_req *req)
{
	const struct blkreq *br = &req->br;
	bk_pgrant_hold_t holds[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	size_t left = (size_t)br->nr_segments * sizeof(struct blkif_request_segment);
	unsigned int i, n = br->nr_indirect_pages;
	int rc;

	rc = bk_pgrants_get(q->pg, br->indirect_grefs, n, bk_pgrant_now(), q->pages, holds);
	if (rc < 0)
		return rc;
	if (rc > 0)
		pg_account(q);
	for (i = 0; i < n && left; i++) {
		size_t len = left < XEN_PAGE_SIZE ? left : XEN_PAGE_SIZE;

		memcpy((char *)req->ind + (size_t)i * XEN_PAGE_SIZE, q->pages[i], len);
		left -= len;
	}
	bk_pgrants_put(q->pg, holds, n, bk_pgrant_now());
	return 0;
}

/*
 * The indirect descriptor pages are read once, into req->ind, and only
 * that private copy is parsed (a guest may change its pages meanwhile).
 * With persistent grants the descriptors are copied out of the mapped
 * pages at once; else the pages join the pass's grant copy batch and
 * indirect_parse() runs after it.  Returns BLKIF_RSP_OKAY, or ERROR
 * with *reason.
 */
int
bk_data_indirect_fetch(struct bk_queue *q, struct bk_req *req, const char **reason)
{
	struct blkreq *br = &req->br;
	unsigned int i, n = br->nr_indirect_pages;
	struct xenops_copy_seg *segs;

	if (n == 0 || n > BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST ||
	    n > (q->max_segs + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) / BLKRING_SEGS_PER_INDIRECT_PAGE) {
		*reason = "bad number of indirect pages";
		return BLKIF_RSP_ERROR;
	}
	/* when they do not fit or a grant is bad, the grant copy below
	 * says which */
	if (q->pg && indirect_from_pgrants(q, req) == 0)
		return BLKIF_RSP_OKAY;
	segs = cbatch_reserve(q, req, n, false);
	for (i = 0; i < n; i++) {
		segs[i].gref = br->indirect_grefs[i];
		segs[i].offset = 0;
		segs[i].len = XEN_PAGE_SIZE;
		segs[i].local = (char *)req->ind + (size_t)i * XEN_PAGE_SIZE;
		segs[i].status = 0;
	}
	return BLKIF_RSP_OKAY;
}

/* After the batch: parse the private copy of the descriptors. */
int
bk_data_indirect_parse(struct bk_queue *q, struct bk_req *req, const char **reason)
{
	const void *pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	unsigned int i;

	if (req->copy_err) {
		*reason = "cannot read an indirect page (bad grant)";
		return BLKIF_RSP_ERROR;
	}
	for (i = 0; i < req->br.nr_indirect_pages; i++)
		pages[i] = (char *)req->ind + (size_t)i * XEN_PAGE_SIZE;
	return blkreq_parse_indirect(&req->br, &q->lim, pages, reason);
}

/* The request is answered: what its data held goes back. */
void
bk_data_release(struct bk_queue *q, struct bk_req *req)
{
	if (req->map) {
		xenops_unmap(q->xops, req->map, req->br.nr_segments);
		req->map = NULL;
	}
	if (req->pg) {
		bk_pgrants_put(q->pg, req->holds, req->br.nr_segments, bk_pgrant_now());
		req->pg = false;
	}
}
