/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkif_ops.h: THE blkif operation -> host action table of blkbackd, the
 * status mapping, and struct bk_features.
 *
 * Semantics: Xen public io/blkif.h (op-code comments, "feature-barrier",
 * "feature-flush-cache", "feature-discard"), Linux xen-blkback
 * (blkback.c dispatch_rw_block_io / dispatch_discard_io /
 * __end_block_io_op, xenbus.c connect()), and three decisions of ours,
 * taken once and kept (DESIGN-NOTES.md "blkbackd"):
 *   - a FLUSH_DISKCACHE with data flushes first, then writes (Linux
 *     blkback's preflush); OKAY only when both succeeded;
 *   - a WRITE_BARRIER holds the ring and drains it (blkif.h; stricter
 *     than Linux blkback, as tapdisk);
 *   - FUA is RWF_DSYNC on the write where the store has it, else the
 *     write followed by a FLUSH.
 *
 * Features are negotiated ONCE, at connect, into a struct bk_features
 * (from the storage driver's probe and the per-device knobs, as nbdkit
 * primes its can_* cache at handshake); the feature nodes are published
 * from it and the per-request path reads only it.
 *
 * The table.  Each valid request becomes a fixed sequence of host steps,
 * executed strictly one after the other for that request; the response
 * is sent after the last step (or the first failing one):
 *
 *   blkif op                 condition            host steps
 *   ------------------------ -------------------- ----------------------------
 *   READ                                          READ (preadv), then grant
 *                                                 copy to the guest
 *   WRITE                                         grant copy from the guest,
 *                                                 then WRITE (pwritev)
 *   FLUSH_DISKCACHE, 0 segs  flush advertised     FLUSH (fdatasync)
 *                            ... no volatile cache none (OKAY at once)
 *   FLUSH_DISKCACHE, data    flush advertised     FLUSH, then WRITE (flush
 *                                                 first: Linux blkback's
 *                                                 REQ_PREFLUSH; no FUA)
 *                            ... no volatile cache WRITE
 *   WRITE_BARRIER, 0 segs    barrier advertised   DRAIN, FLUSH
 *                            ... no volatile cache DRAIN
 *   WRITE_BARRIER, data      fua=native           DRAIN, FLUSH, WRITE_FUA
 *                            fua=emulated/none    DRAIN, FLUSH, WRITE, FLUSH
 *                            ... no volatile cache DRAIN, WRITE
 *   DISCARD                  discard advertised   DISCARD (fallocate
 *                                                 PUNCH_HOLE|KEEP_SIZE on a
 *                                                 file, BLKDISCARD on a block
 *                                                 device, BLKSECDISCARD when
 *                                                 SECURE is set AND
 *                                                 discard-secure=1; SECURE
 *                                                 is ignored otherwise)
 *   FLUSH/BARRIER/DISCARD    not advertised       none: EOPNOTSUPP
 *   any other op (4, 7..255)                      none: EOPNOTSUPP
 *
 * DRAIN: the queue stops taking requests from the ring when it reads a
 * barrier, waits until every earlier request of that ring has completed
 * (responded), runs the barrier's other steps, responds, and only then
 * resumes consuming the ring (blkif.h; stricter than Linux blkback, which
 * does not hold later requests; matches tapdisk).
 * FLUSH covers every write that completed before the FLUSH step was
 * issued (fdatasync semantics); it does not wait for writes in flight
 * except after DRAIN.
 * WRITE_FUA: RWF_DSYNC on the write (the host block layer turns it into
 * FUA where the device has it).  Where the store has no native FUA
 * (probed once at open), the write is followed by a FLUSH instead.
 * "No volatile cache" = the store's features say writeback == false
 * (cache=writethrough opens the backing O_DSYNC; the null store): every
 * WRITE is durable on completion, so there is nothing for a FLUSH to
 * commit or a FUA to add.  Flushes stay advertised per flush-mode (they
 * are cheap, not wrong) and a barrier keeps its ordering (DRAIN).
 *
 * Status mapping (response "status"):
 *   every step succeeded                      BLKIF_RSP_OKAY
 *   malformed request (libblkring says so:    BLKIF_RSP_ERROR, no host I/O
 *     bad nr_segments, first_sect > last_sect, (validated before any I/O)
 *     range past the end or wrapping 2^64,
 *     write/discard on a read-only vbd)
 *   unknown op, or op not advertised          BLKIF_RSP_EOPNOTSUPP
 *   a grant copy failed (bad gref, wrong dom, BLKIF_RSP_ERROR, and nothing of
 *     read-only grant for a READ)              a WRITE reaches the host
 *   a host step failed with -EOPNOTSUPP on    BLKIF_RSP_EOPNOTSUPP, and the
 *     FLUSH (flush/barrier) or DISCARD         feature node is withdrawn
 *                                              (feature-flush-cache /
 *                                              feature-barrier /
 *                                              feature-discard set to 0)
 *   a host step failed otherwise (EIO...)     BLKIF_RSP_ERROR; a failed
 *                                              FLUSH also marks the device
 *                                              failed (logged loudly, error
 *                                              node): never OKAY afterwards
 *                                              (case C15)
 *   device failed earlier                     BLKIF_RSP_ERROR
 */
#ifndef BLK_BLKIF_OPS_H
#define BLK_BLKIF_OPS_H

#include <stdbool.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/io/blkif.h>

struct blkreq;

/* One host action of a request (see the table above). */
enum bk_step {
	BK_STEP_END = 0,	/* respond */
	BK_STEP_DRAIN,		/* wait until no other request of the ring is in flight */
	BK_STEP_FLUSH,		/* fdatasync of the backing */
	BK_STEP_READ,		/* preadv into the request buffer */
	BK_STEP_WRITE,		/* pwritev from the request buffer */
	BK_STEP_WRITE_FUA,	/* pwritev with RWF_DSYNC */
	BK_STEP_DISCARD,	/* punch hole / BLKDISCARD / BLKSECDISCARD */
};

#define BK_MAX_STEPS 5	/* longest plan (barrier, emulated FUA) + END */

/* "drain", "flush", "read", "write", "write-fua", "discard", "end". */
const char *bk_step_name(enum bk_step s);

/*
 * FUA: how a store makes one write durable, probed once when it is
 * opened (nbdkit's can_fua NONE/EMULATE/NATIVE).  The store reports it
 * (bk_store_features.fua) and the vbd's features carry it unchanged.
 */
enum bk_fua {
	BK_FUA_NONE = 0,	/* cannot make one write durable: FLUSH after it */
	BK_FUA_EMULATED,	/* the store writes, then fdatasyncs */
	BK_FUA_NATIVE,		/* RWF_DSYNC on the write (FUA on the device) */
};

/* The "flush-mode" knob: which of flush/barrier is advertised. */
enum bk_flush_mode {
	BK_FLUSH_MODE_FLUSH = 0,	/* feature-flush-cache=1 only */
	BK_FLUSH_MODE_BARRIER,		/* feature-barrier=1 only */
	BK_FLUSH_MODE_BOTH,		/* both */
	BK_FLUSH_MODE_NONE,		/* neither */
	/*
	 * The default (no flush-mode key): feature-flush-cache=1 only when
	 * the store has a volatile cache (bk_store_features.writeback),
	 * else neither -- Linux xen-blkback's connect(), which advertises
	 * flush-cache from bdev_write_cache() of the backing.
	 */
	BK_FLUSH_MODE_AUTO,
};

/* Parse "flush"/"barrier"/"both"/"none"/"auto": 0 or -EINVAL. */
int bk_flush_mode_parse(const char *s, enum bk_flush_mode *out);
const char *bk_flush_mode_name(enum bk_flush_mode m);

/*
 * What one vbd honours; decided once at connect and published from.
 * The control thread fills it before the dataplane starts; each queue
 * gets its own copy, and clears a feature in it when the host answers
 * EOPNOTSUPP (the control thread then withdraws the feature node).
 */
struct bk_features {
	uint64_t sectors;		/* device size, 512-byte units ("sectors") */
	unsigned int sector_size;	/* "sector-size": logical block, bytes */
	unsigned int physical_sector_size; /* "physical-sector-size", bytes */
	unsigned int info;		/* "info": VDISK_* bits */
	bool read_only;			/* mode=r */
	bool flush_cache;		/* "feature-flush-cache" */
	bool barrier;			/* "feature-barrier" */
	bool discard;			/* "feature-discard" */
	bool discard_secure;		/* "discard-secure" */
	unsigned int discard_granularity; /* bytes */
	unsigned int discard_alignment;	/* bytes */
	bool writeback;			/* backing has a volatile cache; false:
					 * flushes commit nothing (table) */
	enum bk_fua fua;
	bool ignore_flush;		/* --unsafe-ignore-flush: FLUSH is a no-op */
};

/*
 * The plan for one request that libblkring validated as OKAY: fills
 * steps[] (terminated by BK_STEP_END) per the table above and returns
 * BLKIF_RSP_OKAY, or returns BLKIF_RSP_EOPNOTSUPP when the operation is
 * not advertised / unknown (steps[0] = BK_STEP_END).  Pure function of
 * (*f, req->op, req->nr_segments); never logs; any thread.
 */
int bk_plan_request(const struct bk_features *f, const struct blkreq *req,
		    enum bk_step steps[BK_MAX_STEPS]);

/*
 * The status for a host step that failed with err (-errno), per the
 * status mapping above: EOPNOTSUPP for a refused FLUSH or DISCARD, else
 * ERROR.  Pure; any thread.
 */
int16_t bk_step_status(enum bk_step step, int64_t err);

#endif /* BLK_BLKIF_OPS_H */
