/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgrant.c: one queue's persistent grants (pgrant.h).
 *
 * A hash of grant refs (chained through an entry array) points at the
 * group that mapped each one; groups are what xenops mapped in one call.
 * Everything is preallocated for max grants at creation: nothing is
 * allocated on the request path but a group's list of refs when it is
 * mapped (once per new batch of grants).
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "pgrant.h"

#define NONE	(-1)

struct pg_entry {
	grant_ref_t gref;
	int32_t next;		/* hash chain, or the free list */
	uint16_t group;
	uint16_t page;		/* in the group's mapping */
};

struct pg_group {
	void *addr;		/* NULL: free */
	grant_ref_t *refs;	/* what was mapped, in order (malloc'd) */
	uint16_t count;		/* pages */
	int32_t next_free;
	uint32_t in_use;	/* pages held by requests in flight */
	uint64_t last_used;	/* ns */
};

struct bk_pgrants {
	xenops_t *xops;
	uint32_t domid;
	unsigned int max;
	unsigned int mapped;
	struct pg_entry *entries;	/* max */
	int32_t free_entry;
	struct pg_group *groups;	/* max: a group has at least one page */
	int32_t free_group;
	int32_t *buckets;
	unsigned int bucket_shift;	/* 32 - log2(nr buckets) */
	/* scratch for get(): the new refs and where they go */
	grant_ref_t *new_refs;
	uint16_t *new_slot;
	uint8_t *is_new;		/* per page of the get */
	struct bk_pgrant_stats st;
};

static unsigned int
bucket(const struct bk_pgrants *pg, grant_ref_t gref)
{
	return (uint32_t)(gref * 2654435761u) >> pg->bucket_shift;
}

static int32_t
lookup(const struct bk_pgrants *pg, grant_ref_t gref)
{
	int32_t e;

	for (e = pg->buckets[bucket(pg, gref)]; e != NONE; e = pg->entries[e].next)
		if (pg->entries[e].gref == gref)
			return e;
	return NONE;
}

struct bk_pgrants *
bk_pgrants_new(xenops_t *x, uint32_t domid, unsigned int max)
{
	struct bk_pgrants *pg;
	unsigned int nb = 1, shift = 32, i;

	if (max == 0 || max > 32768) {
		errno = EINVAL;
		return NULL;
	}
	while (nb < 2 * max) {
		nb <<= 1;
		shift--;
	}
	pg = calloc(1, sizeof(*pg));
	if (!pg)
		return NULL;
	pg->xops = x;
	pg->domid = domid;
	pg->max = max;
	pg->bucket_shift = shift;
	pg->entries = calloc(max, sizeof(*pg->entries));
	pg->groups = calloc(max, sizeof(*pg->groups));
	pg->buckets = malloc(nb * sizeof(*pg->buckets));
	pg->new_refs = malloc(max * sizeof(*pg->new_refs));
	pg->new_slot = malloc(max * sizeof(*pg->new_slot));
	pg->is_new = malloc(max);
	if (!pg->entries || !pg->groups || !pg->buckets || !pg->new_refs || !pg->new_slot ||
	    !pg->is_new) {
		bk_pgrants_free(pg);
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nb; i++)
		pg->buckets[i] = NONE;
	for (i = 0; i < max; i++) {
		pg->entries[i].next = i + 1 < max ? (int32_t)i + 1 : NONE;
		pg->groups[i].next_free = i + 1 < max ? (int32_t)i + 1 : NONE;
	}
	pg->free_entry = 0;
	pg->free_group = 0;
	return pg;
}

/* Remove group g's entries from the hash, unmap it, free it. */
static void
group_unmap(struct bk_pgrants *pg, int32_t g)
{
	struct pg_group *grp = &pg->groups[g];
	unsigned int i;

	for (i = 0; i < grp->count; i++) {
		int32_t *pp = &pg->buckets[bucket(pg, grp->refs[i])];

		while (*pp != NONE && pg->entries[*pp].group != g)
			pp = &pg->entries[*pp].next;
		if (*pp != NONE) {
			int32_t e = *pp;

			*pp = pg->entries[e].next;
			pg->entries[e].next = pg->free_entry;
			pg->free_entry = e;
		}
	}
	xenops_unmap(pg->xops, grp->addr, grp->count);
	pg->mapped -= grp->count;
	pg->st.unmaps += grp->count;
	free(grp->refs);
	grp->refs = NULL;
	grp->addr = NULL;
	grp->next_free = pg->free_group;
	pg->free_group = g;
}

void
bk_pgrants_free(struct bk_pgrants *pg)
{
	unsigned int i;

	if (!pg)
		return;
	for (i = 0; pg->groups && i < pg->max; i++)
		if (pg->groups[i].addr)
			group_unmap(pg, i);
	free(pg->entries);
	free(pg->groups);
	free(pg->buckets);
	free(pg->new_refs);
	free(pg->new_slot);
	free(pg->is_new);
	free(pg);
}

/*
 * Make room for need more grants: unmap idle groups (nothing in flight,
 * unused for BK_PGRANT_IDLE_NS), least recently used first.
 */
static void
purge(struct bk_pgrants *pg, unsigned int need, uint64_t now)
{
	while (pg->mapped + need > pg->max) {
		int32_t oldest = NONE;
		unsigned int g;

		for (g = 0; g < pg->max; g++) {
			const struct pg_group *grp = &pg->groups[g];

			if (!grp->addr || grp->in_use || now - grp->last_used < BK_PGRANT_IDLE_NS)
				continue;
			if (oldest == NONE || grp->last_used < pg->groups[oldest].last_used)
				oldest = g;
		}
		if (oldest == NONE)
			return;
		group_unmap(pg, oldest);
	}
}

/* Undo the holds taken on found entries (a failed get). */
static void
unhold(struct bk_pgrants *pg, const bk_pgrant_hold_t *holds, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!pg->is_new[i])
			pg->groups[pg->entries[holds[i]].group].in_use--;
}

int
bk_pgrants_get(struct bk_pgrants *pg, const grant_ref_t *refs, unsigned int n,
	       uint64_t now, void **pages, bk_pgrant_hold_t *holds)
{
	uint8_t *is_new = pg->is_new;
	unsigned int i, j, need = 0;
	struct pg_group *grp;
	int32_t g;
	void *addr;

	if (n == 0 || n > pg->max)
		return n ? -ENOSPC : 0;
	/* What is mapped already is held at once, so a purge below cannot
	 * take it; the new refs (each once) are collected. */
	for (i = 0; i < n; i++) {
		int32_t e = lookup(pg, refs[i]);

		is_new[i] = e == NONE;
		if (e != NONE) {
			holds[i] = e;
			pg->groups[pg->entries[e].group].in_use++;
			continue;
		}
		for (j = 0; j < need && pg->new_refs[j] != refs[i]; j++)
			;
		if (j == need)
			pg->new_refs[need++] = refs[i];
		holds[i] = j;		/* for now: the index among the new ones */
	}
	if (need) {
		if (pg->mapped + need > pg->max)
			purge(pg, need, now);
		if (pg->mapped + need > pg->max || pg->free_group == NONE) {
			unhold(pg, holds, n);
			pg->st.full++;
			return -ENOSPC;
		}
		addr = xenops_map_grefs(pg->xops, pg->domid, need, pg->new_refs, true);
		if (!addr) {
			int err = -errno;

			unhold(pg, holds, n);
			return err;
		}
		g = pg->free_group;
		grp = &pg->groups[g];
		grp->refs = malloc(need * sizeof(*grp->refs));
		if (!grp->refs) {
			xenops_unmap(pg->xops, addr, need);
			unhold(pg, holds, n);
			return -ENOMEM;
		}
		pg->free_group = grp->next_free;
		memcpy(grp->refs, pg->new_refs, need * sizeof(*grp->refs));
		grp->addr = addr;
		grp->count = need;
		grp->in_use = 0;
		grp->last_used = now;
		for (j = 0; j < need; j++) {
			int32_t e = pg->free_entry;
			unsigned int b = bucket(pg, pg->new_refs[j]);

			pg->free_entry = pg->entries[e].next;
			pg->entries[e].gref = pg->new_refs[j];
			pg->entries[e].group = g;
			pg->entries[e].page = j;
			pg->entries[e].next = pg->buckets[b];
			pg->buckets[b] = e;
			pg->new_slot[j] = e;
		}
		pg->mapped += need;
		pg->st.maps += need;
		pg->st.map_calls++;
		for (i = 0; i < n; i++)
			if (is_new[i]) {
				holds[i] = pg->new_slot[holds[i]];
				grp->in_use++;
			}
	}
	for (i = 0; i < n; i++) {
		const struct pg_entry *e = &pg->entries[holds[i]];

		pages[i] = (char *)pg->groups[e->group].addr + (size_t)e->page * XEN_PAGE_SIZE;
	}
	return (int)need;
}

void
bk_pgrants_put(struct bk_pgrants *pg, const bk_pgrant_hold_t *holds, unsigned int n,
	       uint64_t now)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct pg_group *grp = &pg->groups[pg->entries[holds[i]].group];

		grp->in_use--;
		grp->last_used = now;
	}
}

void
bk_pgrants_stats(const struct bk_pgrants *pg, struct bk_pgrant_stats *out)
{
	*out = pg->st;
	out->mapped = pg->mapped;
}
