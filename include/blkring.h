/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkring.h: libblkring, the blkif ring on Xen's own <xen/io/ring.h> and
 * <xen/io/blkif.h> (ring/).
 *
 * Pure protocol logic: no I/O, no Xen devices, no logging.  Both the
 * backend (consumer of requests) and blkfront-test (producer) use it.
 *
 * The trust boundary.  Everything in the shared ring is written by the
 * other side and is untrusted.  A back ring copies each request out of
 * shared memory exactly once (RING_COPY_REQUEST style) into a private
 * struct blkreq; only the copy is validated and used.  Indirect segment
 * pages are read once the same way (blkreq_parse_indirect()).
 *
 * ABIs (the frontend's "protocol" xenstore node):
 *   BLKRING_ABI_NATIVE   this build's layout (x86_64 here);
 *   BLKRING_ABI_X86_32   "x86_32-abi": packed, 108-byte request,
 *                        12-byte response;
 *   BLKRING_ABI_X86_64   "x86_64-abi": 112-byte request, 16-byte response.
 * A frontend that writes no "protocol" gets x86_32 (Linux blkback).
 *
 * Units: sector numbers and counts are 512-byte sectors, always (blkif.h
 * "feature-large-sector-size" notwithstanding).  Ring sizes are entries.
 *
 * Conventions: int functions return >= 0 or -errno.  Validation returns
 * a blkif status (BLKIF_RSP_OKAY/ERROR/EOPNOTSUPP) plus a static reason
 * string for the trace and tests.
 *
 * Threads: a blkring_t is used by one thread at a time (the queue's
 * dataplane thread, or the frontend's submitter under its lock).
 * Memory ordering goes through include/barrier.h only.
 *
 * Semantics: Xen public io/blkif.h and io/ring.h; hardening follows Linux
 * xen-blkback (blkback.c "Apply all sanity checks to /private copy/",
 * "bogus ring requests") and hardened xen-blkfront (response checks).
 */
#ifndef BLK_BLKRING_H
#define BLK_BLKRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "barrier.h"	/* before <xen/io/ring.h>: its xen_mb() etc. */
#include <xen/xen.h>
#include <xen/grant_table.h>
#include <xen/io/blkif.h>

enum blkring_abi {
	BLKRING_ABI_NATIVE = 0,
	BLKRING_ABI_X86_32 = 1,
	BLKRING_ABI_X86_64 = 2,
};

/*
 * Map the frontend's "protocol" node to an ABI.  NULL or "" gives
 * BLKRING_ABI_X86_32 (Linux blkback's default).  Returns 0 or -EINVAL for
 * an unknown string.
 */
int blkring_abi_from_protocol(const char *protocol, enum blkring_abi *abi);
/* "x86_32-abi", "x86_64-abi", or the native name.  Static string. */
const char *blkring_abi_name(enum blkring_abi abi);

/* Ring pages: 1 << ring-page-order, ring-page-order 0..4. */
#define BLKRING_MAX_PAGE_ORDER	4
#define BLKRING_MAX_PAGES	(1u << BLKRING_MAX_PAGE_ORDER)

/* Entries in a ring of nr_pages pages for this ABI (RING_SIZE), or 0 if
 * nr_pages is not a power of two in 1..16. */
unsigned int blkring_size_for(enum blkring_abi abi, unsigned int nr_pages);

/* Most segments one request may carry: direct 11, indirect up to this. */
#define BLKRING_MAX_INDIRECT_SEGMENTS 256
#define BLKRING_SEGS_PER_INDIRECT_PAGE \
	(4096 / sizeof(struct blkif_request_segment))	/* 512 */

/* ------------------------------------------------------------------ */
/* The private request copy.                                          */
/* ------------------------------------------------------------------ */

struct blkreq_seg {
	grant_ref_t gref;
	uint8_t first_sect;	/* 0..7, first 512-byte sector in the page */
	uint8_t last_sect;	/* first_sect..7, inclusive */
};

struct blkreq {
	uint8_t operation;	/* as on the wire: BLKIF_OP_* (incl. INDIRECT) */
	uint8_t op;		/* effective op: READ/WRITE/WRITE_BARRIER/
				 * FLUSH_DISKCACHE/DISCARD (indirect_op for
				 * INDIRECT); == operation for unknown ops */
	uint64_t id;		/* echoed in the response */
	blkif_vdev_t handle;
	uint64_t sector;	/* first 512-byte sector */
	uint64_t nr_sectors;	/* total 512-byte sectors (segments summed,
				 * or the discard length) */
	unsigned int nr_segments;	/* as on the wire (u8 direct, u16 indirect) */
	/* INDIRECT only: */
	unsigned int nr_indirect_pages;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	/* DISCARD only: */
	bool discard_secure;	/* BLKIF_DISCARD_SECURE was set */
	/* Valid segments: [0, min(nr_segments, capacity)) after parsing. */
	struct blkreq_seg seg[BLKRING_MAX_INDIRECT_SEGMENTS];
};

/* What the device allows; fixed at connect. */
struct blkreq_limits {
	uint64_t sectors;		/* device size in 512-byte sectors */
	unsigned int sector_size;	/* logical block size, bytes: 512, 4096 */
	bool read_only;			/* mode=r */
	unsigned int max_indirect_segments; /* 0 = indirect not advertised */
	bool discard;			/* feature-discard advertised */
};

/*
 * Validate a private copy (from blkring_back_get_request(); never shared
 * memory).  Returns BLKIF_RSP_OKAY, BLKIF_RSP_ERROR (malformed) or
 * BLKIF_RSP_EOPNOTSUPP (unknown or unadvertised op), and always sets
 * *reason to a static string: "ok" for OKAY, else the first rule broken.
 * Pure: no I/O, no logging, any thread.  May rewrite req->op, sector,
 * nr_sectors, nr_indirect_pages (below).
 *
 * Rules, in order (ring/request.c has the full table; the test
 * ring/test-ring-validate.c pins every reason string):
 *   READ/WRITE       "write to a read-only device" (ERROR),
 *                    "read/write with no segments", "more than 11 segments",
 *                    then segments and range (below); nr_sectors = sum.
 *   WRITE_BARRIER,   "more than 11 segments"; with 0 segments OKAY with
 *   FLUSH_DISKCACHE  sector = nr_sectors = 0 (sector_number ignored, C01),
 *                    also on a read-only device; with data as a WRITE.
 *   DISCARD          "discard not advertised" (EOPNOTSUPP), "discard on a
 *                    read-only device", "discard of 0 sectors", "discard
 *                    range wraps past 2^64", "discard range past end of
 *                    device", "discard start not aligned to sector-size",
 *                    "discard length not a multiple of sector-size" (all
 *                    ERROR, never EOPNOTSUPP: C07).  discard_secure is
 *                    passed on; the backend decides what it means (C08).
 *   INDIRECT         "indirect not advertised" (EOPNOTSUPP when
 *                    lim->max_indirect_segments is 0: blkif.h says such a
 *                    backend does not know the op), "indirect_op not read
 *                    or write" (ERROR, C13), "write to a read-only device",
 *                    "indirect with no segments", "more than
 *                    feature-max-indirect-segments" (the advertised value,
 *                    capped at BLKRING_MAX_INDIRECT_SEGMENTS), "more than 8
 *                    indirect pages"; then OKAY with *needs_indirect set
 *                    and req->nr_indirect_pages = ceil(nr_segments / 512).
 *   4 (RESERVED_1)   "reserved operation" (EOPNOTSUPP)
 *   7..255           "unknown operation" (EOPNOTSUPP, C13)
 * Segments: "last_sect > 7", "first_sect > last_sect" (C06), and with
 * sector_size > 512 "segment not a multiple of sector-size".  Range:
 * "sector range wraps past 2^64" (C02), "sector range past end of
 * device", and with sector_size > 512 "sector not aligned to sector-size".
 * *needs_indirect is set (OKAY only) when the caller must fetch
 * req->nr_indirect_pages pages and call blkreq_parse_indirect().
 */
int blkreq_validate(struct blkreq *req, const struct blkreq_limits *lim,
		    bool *needs_indirect, const char **reason);

/*
 * Copy the segments of an INDIRECT request out of its fetched indirect
 * pages (pages[i] is a private copy or mapping of indirect_grefs[i], 4096
 * bytes each, i < req->nr_indirect_pages) into req->seg, then validate
 * them and the sector range (same rules and reasons as direct requests);
 * sets req->nr_sectors.  Each segment descriptor is read exactly once, so
 * a live mapping the guest still writes is safe.  Refuses ("not a
 * validated indirect request", ERROR) a request blkreq_validate() did not
 * accept.  Same return convention; pure, no logging.
 */
int blkreq_parse_indirect(struct blkreq *req, const struct blkreq_limits *lim,
			  const void *const *pages, const char **reason);

/*
 * Front side: write req->seg[0, nr_segments) into indirect pages in the
 * wire layout (struct blkif_request_segment, the same in every ABI).
 * pages[i] is 4096 bytes, for i < ceil(nr_segments / 512); unused entries
 * of the last page are zeroed.  Returns 0, or -EINVAL when nr_segments is
 * 0 or above BLKRING_MAX_INDIRECT_SEGMENTS.  Never logs.
 */
int blkreq_fill_indirect_pages(const struct blkreq *req, void *const *pages);

/*
 * "read", "write", "barrier", "flush", "discard", "indirect", "reserved",
 * and "unknown" for anything else.  Static string.
 */
const char *blkreq_op_name(uint8_t op);
/* The op named name (one of blkreq_op_name's, "unknown" excepted):
 * 0 with *op set, or -EINVAL. */
int blkreq_op_parse(const char *name, uint8_t *op);

/* ------------------------------------------------------------------ */
/* Rings.                                                             */
/* ------------------------------------------------------------------ */

typedef struct blkring blkring_t;

/*
 * Attach to a shared ring of nr_pages pages at sring (contiguous, as
 * mapped by xenops_map_grefs() or from xenops_share_pages()).
 * blkring_back_attach() consumes requests and produces responses and does
 * not modify the shared indexes on attach (the frontend initialised them);
 * it starts at the shared rsp_prod, as Linux blkback's xen_blkif_map does,
 * so a frontend reconnecting with a used ring is not answered twice, and
 * fails with EIO when req_prod is more than the ring size past rsp_prod.
 * blkring_front_attach() zeroes the whole nr_pages * 4096 bytes and
 * initialises the shared ring (SHARED_RING_INIT, FRONT_RING_INIT).  The
 * caller keeps ownership of the memory, which must outlive the
 * blkring_t (free it with blkring_free() first).  Returns NULL with errno
 * EINVAL (NULL sring, nr_pages not a power of two in 1..16, unknown abi),
 * EIO (back: see above) or ENOMEM.  Never logs.
 */
blkring_t *blkring_back_attach(void *sring, unsigned int nr_pages, enum blkring_abi abi);
/*
 * Take over a ring another process of ours served and left (a restart or
 * an upgrade): responses go on at the shared rsp_prod (what the frontend
 * has been shown), requests at req_cons, the consumer index that process
 * recorded; the requests in between are the ones it had taken and not
 * answered, which the caller answers from its own record.  Fails with
 * EIO unless rsp_prod <= req_cons <= req_prod, all within the ring size
 * (index arithmetic modulo 2^32).  Otherwise as blkring_back_attach().
 */
blkring_t *blkring_back_attach_resume(void *sring, unsigned int nr_pages,
				      enum blkring_abi abi, uint32_t req_cons);
blkring_t *blkring_front_attach(void *sring, unsigned int nr_pages, enum blkring_abi abi);
void blkring_free(blkring_t *r);
unsigned int blkring_size(const blkring_t *r);
enum blkring_abi blkring_abi(const blkring_t *r);

/* ---- back side (consumer of requests) ---- */

/*
 * Copy the next request out of the ring into *req (header fields and up
 * to 11 direct segments; a DISCARD's range; an INDIRECT's grefs), and
 * advance the private consumer index.  Does not validate beyond what is
 * needed to copy safely.
 * Returns 1 when a request was copied, 0 when the ring is empty, or
 * -EPROTO when the frontend's req_prod is more than RING_SIZE ahead of
 * our responses ("bogus ring requests"): the ring is then broken for
 * good and every later call returns -EPROTO.  Also returns 0 while
 * RING_SIZE requests are consumed but unanswered (their slots are not
 * free yet): push responses, then call again.  -EINVAL on a front ring.
 */
int blkring_back_get_request(blkring_t *r, struct blkreq *req);

/*
 * Queue a response at the private producer index: only id, operation and
 * status are written, in the negotiated ABI's layout, padding zeroed.
 * Returns 0, or -ENOSPC if more responses than requests consumed are
 * queued (a backend bug; nothing written).
 */
int blkring_back_put_response(blkring_t *r, uint64_t id, uint8_t operation, int16_t status);

/*
 * Publish queued responses (RING_PUSH_RESPONSES_AND_CHECK_NOTIFY).
 * Returns true when the frontend must be notified.
 */
bool blkring_back_push_responses(blkring_t *r);

/*
 * RING_FINAL_CHECK_FOR_REQUESTS: true when more requests are waiting
 * (call after the ring looked empty, before sleeping).  Also true when
 * the ring is broken, so the caller's next get sees -EPROTO.
 */
bool blkring_back_final_check(blkring_t *r);

/*
 * RING_HAS_UNCONSUMED_REQUESTS without arming req_event: for a backend
 * that polls the ring for a while before it sleeps.  While it does not
 * arm, the frontend's pushes do not notify (req_event stays behind), so
 * polling also saves the frontend its notifications; call
 * blkring_back_final_check() before sleeping.  True also when the ring
 * is broken.  Lock-free: reads the shared req_prod once.
 */
bool blkring_back_peek(const blkring_t *r);

/* True once a bogus producer index was seen. */
bool blkring_broken(const blkring_t *r);

/*
 * The back ring's indexes: the private consumer index (the next request
 * blkring_back_get_request() takes: one it took had index req_cons - 1),
 * the private response producer (the index the next response goes to),
 * and the shared rsp_prod (what the frontend has been shown).  For a
 * backend that records them to survive a restart.
 */
uint32_t blkring_back_req_cons(const blkring_t *r);
uint32_t blkring_back_rsp_prod_pvt(const blkring_t *r);
uint32_t blkring_back_rsp_pushed(const blkring_t *r);

/* ---- front side (producer of requests) ---- */

/* Free request slots (RING_FULL counterpart). */
unsigned int blkring_front_free_slots(const blkring_t *r);

/*
 * Write a request at the private producer index WITHOUT validating it:
 * fields are written as given (a test frontend sends malformed requests
 * on purpose).  For direct ops min(nr_segments, 11) segments are written
 * and nr_segments is stored as its low 8 bits; INDIRECT writes
 * indirect_op, 16-bit nr_segments and the indirect grefs
 * (nr_indirect_pages, at most 8); DISCARD writes flag and nr_sectors.
 * Returns 0 or -ENOSPC when the ring is full.
 */
int blkring_front_put_request(blkring_t *r, const struct blkreq *req);

/* RING_PUSH_REQUESTS_AND_CHECK_NOTIFY: true when the backend must be notified. */
bool blkring_front_push_requests(blkring_t *r);

/*
 * Test hook: store an arbitrary value into the shared req_prod (after a
 * write barrier), to play a hostile frontend (case C03).
 */
void blkring_front_set_shared_req_prod(blkring_t *r, uint32_t value);

struct blkrsp {
	uint64_t id;
	uint8_t operation;
	int16_t status;
};

/*
 * Copy the next response out.  Returns 1, 0 when none, or -EPROTO when
 * rsp_prod moved past the requests we produced (a bad backend: the ring
 * is broken for good).  Checking ids against outstanding requests is the
 * caller's job (it owns the id space).
 */
int blkring_front_get_response(blkring_t *r, struct blkrsp *rsp);

/* RING_FINAL_CHECK_FOR_RESPONSES: true when more responses are waiting. */
bool blkring_front_final_check(blkring_t *r);

/* RING_HAS_UNCONSUMED_RESPONSES without arming rsp_event (see
 * blkring_back_peek; call blkring_front_final_check() before sleeping). */
bool blkring_front_peek(const blkring_t *r);

#endif /* BLK_BLKRING_H */
