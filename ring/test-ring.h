/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ring.h: helpers for the ring unit tests (t_ prefix).
 *
 * Each test file has one behaviour per "static int test_x(void)" that
 * returns 0 on success and 1 on failure (T_CHECK prints the failing
 * expression and its line); main() runs them all with T_RUN and reports
 * which failed.  Exit status: 0 all passed, 1 some failed.
 */
#ifndef BLK_RING_TEST_RING_H
#define BLK_RING_TEST_RING_H

#undef NDEBUG
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

#define T_CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			return 1;					\
		}							\
	} while (0)

#define T_RUN(fn)							\
	do {								\
		if ((fn)()) {						\
			fprintf(stderr, "FAIL: %s\n", #fn);		\
			t_failed++;					\
		} else {						\
			printf("PASS: %s\n", #fn);			\
		}							\
	} while (0)

static int t_failed;

/* Zeroed, page-aligned shared ring memory of nr_pages pages. */
static inline void *t_ring_pages(unsigned int nr_pages)
{
	void *p = aligned_alloc(XEN_PAGE_SIZE, (size_t)nr_pages * XEN_PAGE_SIZE);

	assert(p != NULL);
	memset(p, 0, (size_t)nr_pages * XEN_PAGE_SIZE);
	return p;
}

/* A front ring and a back ring on the same shared memory. */
struct t_pair {
	void *mem;
	blkring_t *front;
	blkring_t *back;
};

static inline void t_pair_init_at(struct t_pair *p, unsigned int nr_pages,
				  enum blkring_abi abi, RING_IDX start)
{
	p->mem = t_ring_pages(nr_pages);
	p->front = blkring_attach_at(p->mem, nr_pages, abi, true, start);
	p->back = blkring_attach_at(p->mem, nr_pages, abi, false, start);
	assert(p->front != NULL && p->back != NULL);
}

static inline void t_pair_init(struct t_pair *p, unsigned int nr_pages,
			       enum blkring_abi abi)
{
	t_pair_init_at(p, nr_pages, abi, 0);
}

static inline void t_pair_fini(struct t_pair *p)
{
	blkring_free(p->front);
	blkring_free(p->back);
	free(p->mem);
}

/* A one-segment READ of sector `sector` (first_sect 0..last 7). */
static inline void t_read_req(struct blkreq *req, uint64_t id, uint64_t sector)
{
	memset(req, 0, sizeof(*req));
	req->operation = BLKIF_OP_READ;
	req->op = BLKIF_OP_READ;
	req->id = id;
	req->sector = sector;
	req->nr_segments = 1;
	req->seg[0].gref = 100 + (grant_ref_t)id;
	req->seg[0].first_sect = 0;
	req->seg[0].last_sect = 7;
}

static const enum blkring_abi t_abis[] = {
	BLKRING_ABI_NATIVE, BLKRING_ABI_X86_32, BLKRING_ABI_X86_64,
};

#endif /* BLK_RING_TEST_RING_H */
