/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-pgrant.c: a queue's persistent grants (backend/pgrant.c) over
 * xensim: mapped once and in batches, the same page for the same gref,
 * bounded, purged least recently used and only when idle, never holding
 * anything after a failure, and nothing mapped after free (xensim then
 * lets the guest end its grants, as Xen does).
 *
 *   XENSIM_DIR=DIR test-pgrant DOMID
 *
 * "dom0" and "the guest" are two xenops handles of this process.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "compiler.h"
#include "pgrant.h"
#include "t-common.h"

#define PG XEN_PAGE_SIZE
#define MS 1000000ull

static uint32_t guest_id;
static xenops_t *dom0;
static xenops_t *guest;

/* n pages shared writable by the guest, filled with seed + i. */
struct shared {
	void *mem;
	unsigned int n;
	grant_ref_t refs[16];
};

static int
share(struct shared *s, unsigned int n, bool writable, uint32_t seed)
{
	unsigned int i;

	s->n = n;
	s->mem = xenops_share_pages(guest, 0, n, writable, s->refs);
	if (!s->mem)
		return -1;
	for (i = 0; i < n; i++)
		t_fill((char *)s->mem + (size_t)i * PG, PG, seed + i);
	return 0;
}

static int
unshare(struct shared *s)
{
	return xenops_unshare_pages(guest, s->mem, s->n);
}

/* The same gref gives the same page, mapped once, in one batch. */
static int
test_map_once(void)
{
	struct bk_pgrants *pg = bk_pgrants_new(dom0, guest_id, 16);
	struct bk_pgrant_stats st;
	bk_pgrant_hold_t h1[5], h2[5];
	void *p1[5], *p2[5];
	struct shared s;
	grant_ref_t refs[5];
	unsigned int i;

	T_CHECK(pg, "%m");
	T_CHECK(share(&s, 4, true, 10) == 0, "%m");
	memcpy(refs, s.refs, 4 * sizeof(refs[0]));
	refs[4] = s.refs[1];			/* twice in one request */
	T_CHECK(bk_pgrants_get(pg, refs, 5, 0, p1, h1) == 4, "first get maps the 4 grants");
	T_CHECK(p1[4] == p1[1], "a gref twice is one page");
	for (i = 0; i < 4; i++)
		T_CHECK(t_check(p1[i], PG, 10 + i) == 0, "page %u holds the guest's data", i);
	T_CHECK(bk_pgrants_get(pg, refs, 4, 1, p2, h2) == 0, "again: nothing new to map");
	for (i = 0; i < 4; i++)
		T_CHECK(p2[i] == p1[i], "page %u moved", i);
	bk_pgrants_stats(pg, &st);
	T_CHECK(st.mapped == 4 && st.maps == 4 && st.map_calls == 1,
		"mapped %u maps %lu calls %lu", st.mapped, (unsigned long)st.maps,
		(unsigned long)st.map_calls);
	/* the guest cannot end access while we hold the mapping (Xen) */
	T_CHECK(unshare(&s) == -EBUSY, "unshare while mapped");
	bk_pgrants_put(pg, h1, 5, 2);
	bk_pgrants_put(pg, h2, 4, 2);
	bk_pgrants_free(pg);
	T_CHECK(unshare(&s) == 0, "unshare after free: everything unmapped");
	return 0;
}

/* Full: idle groups are purged, least recently used first; busy ones and
 * recently used ones never; a request that still does not fit holds
 * nothing. */
static int
test_bounded_lru(void)
{
	struct bk_pgrants *pg = bk_pgrants_new(dom0, guest_id, 8);
	struct bk_pgrant_stats st;
	bk_pgrant_hold_t ha[4], hb[4], hc[4];
	void *pa[4], *pb[4], *pc[4];
	struct shared a, b, c;

	T_CHECK(pg, "%m");
	T_CHECK(share(&a, 4, true, 1) == 0 && share(&b, 4, true, 2) == 0 &&
		share(&c, 4, true, 3) == 0, "%m");
	T_CHECK(bk_pgrants_get(pg, a.refs, 4, 0, pa, ha) == 4, "a");
	T_CHECK(bk_pgrants_get(pg, b.refs, 4, 10 * MS, pb, hb) == 4, "b");
	bk_pgrants_put(pg, ha, 4, 20 * MS);	/* a idle since 20 ms */
	/* full, and a is idle for less than BK_PGRANT_IDLE_NS: refused */
	T_CHECK(bk_pgrants_get(pg, c.refs, 4, 50 * MS, pc, hc) == -ENOSPC, "c while full");
	/* b is still held: only a may go */
	T_CHECK(bk_pgrants_get(pg, c.refs, 4, 20 * MS + BK_PGRANT_IDLE_NS, pc, hc) == 4,
		"c after a went idle");
	T_CHECK(unshare(&a) == 0, "a was unmapped by the purge");
	bk_pgrants_stats(pg, &st);
	T_CHECK(st.mapped == 8 && st.unmaps == 4 && st.full == 1, "mapped %u unmaps %lu full %lu",
		st.mapped, (unsigned long)st.unmaps, (unsigned long)st.full);
	/* b and c are both held: nothing can make room */
	T_CHECK(share(&a, 4, true, 4) == 0, "%m");
	T_CHECK(bk_pgrants_get(pg, a.refs, 4, 10 * BK_PGRANT_IDLE_NS, pa, ha) == -ENOSPC,
		"everything held");
	bk_pgrants_put(pg, hb, 4, 30 * MS);
	bk_pgrants_put(pg, hc, 4, 40 * MS);
	bk_pgrants_free(pg);
	T_CHECK(unshare(&a) == 0 && unshare(&b) == 0 && unshare(&c) == 0, "all unmapped");
	return 0;
}

/* A bad grant fails the whole get and leaves nothing held or mapped. */
static int
test_bad_grant(void)
{
	struct bk_pgrants *pg = bk_pgrants_new(dom0, guest_id, 8);
	struct bk_pgrant_stats st;
	bk_pgrant_hold_t h[8];
	grant_ref_t refs[2];
	void *p[8];
	struct shared a, ro;
	int rc;

	T_CHECK(pg, "%m");
	T_CHECK(share(&a, 1, true, 5) == 0 && share(&ro, 1, false, 6) == 0, "%m");
	T_CHECK(bk_pgrants_get(pg, a.refs, 1, 0, p, h) == 1, "a");
	bk_pgrants_put(pg, h, 1, 1);
	refs[0] = a.refs[0];
	refs[1] = 0xffffffff;
	rc = bk_pgrants_get(pg, refs, 2, 1, p, h);
	T_CHECK(rc < 0 && rc != -ENOSPC, "a bad gref: %d", rc);
	/* persistent grants are mapped writable: a read-only one is refused */
	rc = bk_pgrants_get(pg, ro.refs, 1, 2, p, h);
	T_CHECK(rc < 0 && rc != -ENOSPC, "a read-only grant: %d", rc);
	bk_pgrants_stats(pg, &st);
	T_CHECK(st.mapped == 1 && st.map_calls == 1, "mapped %u calls %lu", st.mapped,
		(unsigned long)st.map_calls);
	T_CHECK(unshare(&ro) == 0, "the read-only page was never mapped");
	/* the failed get left a unheld: purged once idle, to make room */
	T_CHECK(share(&ro, 8, true, 7) == 0, "%m");
	T_CHECK(bk_pgrants_get(pg, ro.refs, 8, 2 * BK_PGRANT_IDLE_NS, p, h) == 8, "8 more");
	bk_pgrants_stats(pg, &st);
	T_CHECK(st.mapped == 8 && st.unmaps == 1, "a purged: mapped %u unmaps %lu", st.mapped,
		(unsigned long)st.unmaps);
	bk_pgrants_put(pg, h, 8, 3 * BK_PGRANT_IDLE_NS);
	bk_pgrants_free(pg);
	T_CHECK(unshare(&a) == 0 && unshare(&ro) == 0, "all unmapped");
	return 0;
}

int
main(int argc, char **argv)
{
	int fails = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR %s DOMID\n", argv[0]);
		return T_EXIT_FAIL;
	}
	guest_id = (uint32_t)strtoul(argv[1], NULL, 10);
	dom0 = t_open(0);
	guest = t_open(guest_id);
	fails += t_run("map_once", test_map_once);
	fails += t_run("bounded_lru", test_bounded_lru);
	fails += t_run("bad_grant", test_bad_grant);
	xenops_close(guest);
	xenops_close(dom0);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
