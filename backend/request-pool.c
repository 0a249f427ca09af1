/*
 * request-pool.c: a fixed pool of requests sized from the ring
 * (STYLE.md #9; Linux blkback pending_req).  One pool per queue, used by
 * that queue's thread only.  Each request owns a 4096-aligned buffer of
 * BLKIF_MAX_SEGMENTS_PER_REQUEST pages for its data (O_DIRECT); the
 * buffers come from one MAP_NORESERVE mapping, so pages a small workload
 * never touches cost nothing.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "private.h"

int
bk_pool_init(struct bk_pool *p, unsigned int nr, unsigned int max_segs,
	     unsigned int ind_pages)
{
	size_t per = (size_t)(max_segs + ind_pages) * 4096;
	unsigned int i;

	memset(p, 0, sizeof(*p));
	p->reqs = calloc(nr, sizeof(*p->reqs));
	p->iovs = calloc((size_t)nr * max_segs, sizeof(*p->iovs));
	if (!p->reqs || !p->iovs) {
		free(p->reqs);
		free(p->iovs);
		p->reqs = NULL;
		p->iovs = NULL;
		return -ENOMEM;
	}
	p->bufs_len = (size_t)nr * per;
	p->bufs = mmap(NULL, p->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p->bufs == MAP_FAILED) {
		int err = -errno;

		free(p->reqs);
		free(p->iovs);
		p->reqs = NULL;
		p->iovs = NULL;
		p->bufs = NULL;
		return err;
	}
	p->nr = nr;
	for (i = nr; i-- > 0;) {
		struct bk_req *r = &p->reqs[i];

		r->buf = (char *)p->bufs + (size_t)i * per;
		r->ind = (char *)r->buf + (size_t)max_segs * 4096;
		r->iovs = p->iovs + (size_t)i * max_segs;
		r->next = p->free;
		p->free = r;
	}
	p->nr_free = nr;
	return 0;
}

void
bk_pool_fini(struct bk_pool *p)
{
	if (p->bufs)
		munmap(p->bufs, p->bufs_len);
	free(p->reqs);
	free(p->iovs);
	memset(p, 0, sizeof(*p));
}

struct bk_req *
bk_pool_get(struct bk_pool *p)
{
	struct bk_req *r = p->free;

	if (!r)
		return NULL;
	p->free = r->next;
	p->nr_free--;
	r->next = NULL;
	r->step = 0;
	r->status = BLKIF_RSP_OKAY;
	r->secure = false;
	r->host[0] = '\0';
	r->map = NULL;
	return r;
}

void
bk_pool_put(struct bk_pool *p, struct bk_req *r)
{
	r->next = p->free;
	p->free = r;
	p->nr_free++;
}
