/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pgrant.h: one queue's persistent grants (Linux xen-blkback's
 * persistent_gnt tree, blkif.h "feature-persistent").
 *
 * When both ends say feature-persistent=1, a frontend keeps its data
 * pages granted for the life of the connection and reuses them, so the
 * backend maps each grant once and keeps it mapped: no map, unmap (and
 * TLB flush) per request, and the host I/O works on the guest's pages
 * directly.  This table remembers what is mapped, keyed by grant ref.
 *
 * Mappings are made in batches: the grefs of one request that are not
 * mapped yet go into one xenops_map_grefs() call (one gntdev ioctl and
 * one mmap), a "group".  A group is unmapped as a whole, when none of
 * its pages is used by a request in flight and it has not been used for
 * BK_PGRANT_IDLE_NS (Linux blkback's LRU purge, every LRU_INTERVAL): so
 * the table never holds more than max grants, and what a frontend uses
 * all the time stays mapped.  A request whose new grants do not fit is
 * not mapped persistently at all (-ENOSPC): the caller copies it.
 *
 * Grants are mapped writable, as Linux blkback maps persistent grants
 * (the same page serves reads and writes); a frontend that granted a
 * page read-only gets its request refused.
 *
 * Owner: one queue thread; no locking.  Units: pages of 4096 bytes.
 * Errors: 0/-errno; never logs (a guest's bad gref is the caller's to
 * report).
 */
#ifndef BK_PGRANT_H
#define BK_PGRANT_H

#include <stdint.h>
#include <time.h>

#include "xenops.h"

#define BK_PGRANT_DEFAULT_MAX	1056	/* Linux xen-blkback's max_persistent_grants */
#define BK_PGRANT_IDLE_NS	100000000ull	/* 100 ms, Linux's LRU_INTERVAL */

struct bk_pgrants;

/*
 * The clock for the "now" arguments below: CLOCK_MONOTONIC_COARSE, a
 * few milliseconds fine, which is plenty for a 100 ms idle time, and
 * never a system call (the vDSO serves it even where it cannot serve
 * CLOCK_MONOTONIC: in a PV guest without a stable TSC that one costs a
 * trap to the hypervisor, ~60 us under emulation).
 */
static inline uint64_t
bk_pgrant_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What a request holds: one entry per page it got (bk_pgrants_get). */
typedef uint16_t bk_pgrant_hold_t;

/* A table of at most max (1..32768) grants of domain domid.  NULL+errno. */
struct bk_pgrants *bk_pgrants_new(xenops_t *x, uint32_t domid, unsigned int max);
/* Unmap every group (nothing may be held any more) and free. */
void bk_pgrants_free(struct bk_pgrants *pg);

/*
 * The pages of refs[0..n) (n <= max), mapping those not mapped yet in
 * one batch: pages[i] is refs[i]'s page (the same gref twice gives the
 * same page), holds[i] what bk_pgrants_put() gives back.  How many
 * grants it mapped now (0: all were mapped already); -ENOSPC
 * when the new ones do not fit even after purging idle groups (nothing
 * held then); -errno of the map (a bad gref: nothing held).  now: the
 * caller's CLOCK_MONOTONIC nanoseconds.
 */
int bk_pgrants_get(struct bk_pgrants *pg, const grant_ref_t *refs, unsigned int n,
		   uint64_t now, void **pages, bk_pgrant_hold_t *holds);
/* Release what a get() gave (n as there), used last at now. */
void bk_pgrants_put(struct bk_pgrants *pg, const bk_pgrant_hold_t *holds, unsigned int n,
		    uint64_t now);

struct bk_pgrant_stats {
	unsigned int mapped;		/* grants in the table now */
	uint64_t maps, map_calls;	/* grants mapped, and in how many calls */
	uint64_t unmaps;		/* grants unmapped by purges */
	uint64_t full;			/* gets refused with -ENOSPC */
};
void bk_pgrants_stats(const struct bk_pgrants *pg, struct bk_pgrant_stats *out);

#endif /* BK_PGRANT_H */
