/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dataplane.h: blkbackd's data plane: one thread per ring queue, from
 * the frontend's event channel to the response on the ring.
 *
 * The control plane (vbd.c) and the data plane meet here, and only
 * here, through six things: create, start, stop, destroy, reports,
 * and a size probe asked of the queue thread.  A queue gets everything it will ever need at creation, in
 * one parameter block (who it serves, the ring, the store, the
 * features negotiated at connect, its limits, where to report); it
 * keeps its own copy of what it may change (the features, when the
 * host refuses an operation), owns every piece of its state, and never
 * calls the control plane or touches xenstore.  What the control plane
 * must act on -- a broken ring, a failed flush, a feature to withdraw,
 * the end of a drain -- the queue records in its report box and
 * signals through one eventfd (bk_queue_params.report_efd); the control
 * thread takes the reports with bk_dataplane_reports().
 *
 * Semantics: Linux xen-blkback's blkback.c (do_block_io_op,
 * dispatch_rw_block_io, __end_block_io_op, make_response), with the
 * op -> host action table of include/blkif_ops.h.
 *
 * Threads: create, start, stop, stopped, join, destroy, probe_size,
 * reports and stats run on the control thread; everything else is the
 * queue's own thread.
 */
#ifndef BK_DATAPLANE_H
#define BK_DATAPLANE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "blkif_ops.h"
#include "blkring.h"
#include "compiler.h"
#include "store.h"
#include "xenops.h"

struct bk_queue;

/* ---------------------------------------------------------------- */
/* trace.c: --trace=FILE (format in blkbackd.8 "TRACE FORMAT").      */
/* ---------------------------------------------------------------- */

struct bk_trace;

/* Open path for appending lines, emptied first when truncate.  NULL +
 * errno, logs why.  Control thread. */
struct bk_trace *bk_trace_open(const char *path, bool truncate);
/*
 * Open the trace's path again, for appending (SIGHUP, for logrotate):
 * queue threads tracing meanwhile write to the old file or the new one.
 * 0 (also for t NULL), or -errno with the old file kept (logged).
 * Control thread.
 */
int bk_trace_reopen(struct bk_trace *t);
void bk_trace_close(struct bk_trace *t);
/*
 * Write one line "t=US vbd=F/D ring=Q " + fmt + "\n" with a single
 * write(2), so lines of different queue threads never mix; US is
 * CLOCK_MONOTONIC in microseconds.  A failed write is logged once (until
 * one succeeds again).  t may be NULL (no-op).  Any thread.
 */
void bk_trace(struct bk_trace *t, const char *vbd, unsigned int ring,
	      const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(4, 5);
#define bk_tracing(t) ((t) != NULL)

/* ---------------------------------------------------------------- */
/* stats.c: per-queue counters (Linux blkback's st_* counters).      */
/* ---------------------------------------------------------------- */

/* Buckets of the response latency histogram (bk_stats.lat_us). */
#define BK_LAT_BUCKETS 32

/* Updated by the queue thread with relaxed atomics, summed by the
 * control thread. */
struct bk_stats {
	uint64_t rd_req, wr_req, flush_req, barrier_req, discard_req;
	uint64_t rd_sect, wr_sect, discard_sect;	/* 512-byte sectors */
	uint64_t oo_req;		/* ring had work, no free request */
	uint64_t err_rsp;		/* BLKIF_RSP_ERROR sent */
	uint64_t eopnotsupp_rsp;	/* BLKIF_RSP_EOPNOTSUPP sent */
	uint64_t pgrant_mapped;		/* persistent grants mapped now */
	uint64_t pgrant_maps;		/* grants ever mapped persistently */
	/*
	 * Response latency, from the request taken off the ring to its
	 * response pushed: bucket b counts the requests that took
	 * [2^b, 2^(b+1)) microseconds (b = 0: under 2 us; the last bucket
	 * also everything longer).
	 */
	uint64_t lat_us[BK_LAT_BUCKETS];
	/* The sum of those latencies, in nanoseconds (a histogram's _sum:
	 * the buckets alone cannot give a mean) */
	uint64_t lat_sum_ns;
};
#define bk_stat_add(s, field, n) \
	__atomic_fetch_add(&(s)->field, (n), __ATOMIC_RELAXED)

void bk_stats_sum(struct bk_stats *acc, const struct bk_stats *one);
/* log_info one line "stats vbd=F/D rd_req=... ". */
void bk_stats_log(const char *vbd, const struct bk_stats *s);

/* ---------------------------------------------------------------- */
/* Creating a queue.                                                  */
/* ---------------------------------------------------------------- */

/* One queue's ring, as the frontend wrote it (blkif.h "Multi-queue"). */
struct bk_ring_config {
	unsigned int nr_pages;		/* 1 << ring-page-order */
	grant_ref_t refs[BLKRING_MAX_PAGES];
	uint32_t evtchn;		/* the frontend's port */
	enum blkring_abi abi;
};

struct bk_queue_params {
	const char *name;		/* the vbd, "F/D", for logs and the trace; copied */
	unsigned int idx;		/* the queue's index in its vbd */
	uint32_t domid;			/* the frontend's domain */
	uint32_t devid;			/* the vbd's device id */
	struct bk_ring_config ring;
	/* Borrowed; they outlive the queue. */
	xenops_t *xops;
	struct bk_store *store;		/* the vbd's store (top of its stack) */
	struct bk_trace *trace;		/* NULL: not tracing */
	/* Negotiated once at connect; the queue keeps its own copy. */
	struct bk_features feat;
	/* The vbd has failed already (a flush failed, C15): answer ERROR to
	 * every request, as the queue does once a flush of its store fails. */
	bool failed;
	/* Limits (blkbackd.8 OPTIONS). */
	unsigned int max_indirect;	/* feature-max-indirect-segments offered; 0: none */
	uint64_t map_threshold;		/* bytes: map requests this big; 0: always copy */
	/* Persistent grants negotiated (both ends said 1), and how many the
	 * queue may keep mapped (Linux blkback's max_persistent_grants). */
	bool persistent;
	unsigned int max_pgrants;
	unsigned int poll_max_us;	/* polling window cap before sleeping; 0: never */
	/* System calls are slow here (a PV domain: each traps to the
	 * hypervisor): submit a ring pass's I/O in one call rather than one
	 * per request. */
	bool batch_submit;
	/* The clock of the latency histogram: CLOCK_MONOTONIC, or
	 * CLOCK_MONOTONIC_COARSE where the fine one is a system call. */
	clockid_t lat_clock;
	/* The control thread's eventfd: written (+1) after each report. */
	int report_efd;
	/*
	 * The queue's recovery record (qstate.h), or NULL for none: with
	 * recover, the ring is taken over from the record a previous
	 * blkbackd left there (a restart or an upgrade) and what it had
	 * taken and not answered is answered; else a fresh record.
	 */
	const char *state_path;
	bool recover;
	/* Tests only (--test-crash-at): SIGKILL ourselves the crash_after-th
	 * time the queue reaches crash_point (BK_CRASH_*), 0: never. */
	unsigned int crash_point, crash_after;
};

/* Where a test may kill a queue thread (--test-crash-at=NAME:N). */
enum {
	BK_CRASH_NONE,
	BK_CRASH_TAKEN,		/* a request recorded, not yet acted on */
	BK_CRASH_RESPONDED,	/* a response in the ring, not yet recorded */
	BK_CRASH_RECORDED,	/* recorded as answered, not yet pushed */
	BK_CRASH_PUSHED,	/* pushed, its record not yet freed */
};
/* "taken", "responded", "recorded", "pushed": the BK_CRASH_* value, or
 * BK_CRASH_NONE when name is none of them. */
unsigned int bk_crash_point_parse(const char *name);

/*
 * Map the ring, bind the event channel, open a queue on the store and
 * allocate one request per ring slot.  Control thread.  NULL + errno,
 * with *why set to a static reason for the error node ("cannot map the
 * ring pages", ...) and *key to the frontend key it is about
 * ("ring-ref", "event-channel"), or NULL when the failure is the
 * backend's own.
 */
struct bk_queue *bk_dataplane_create(const struct bk_queue_params *p,
				     const char **why, const char **key);
/*
 * Did a blkbackd keep the recovery record at path for this very
 * connection: queue idx of vbd domid/devid on the ring rc the frontend
 * shows now?  0 yes, -ENOENT no record, -ESTALE a record of another
 * connection (the vbd or the frontend re-created since), another -errno
 * when it cannot be read.  Reads only, never logs; control thread.
 */
int bk_dataplane_record_check(const char *path, uint32_t domid, uint32_t devid,
			      unsigned int idx, const struct bk_ring_config *rc);
/* Start the queue thread.  0/-errno. */
int bk_dataplane_start(struct bk_queue *q);
/*
 * Ask the queue to stop and return at once (never waits for I/O): the
 * thread stops consuming the ring, finishes every request in flight,
 * pushes their responses, notifies, and then, as its last act, reports
 * BK_REPORT_DRAINED (Linux blkback: the last request in flight completes
 * the disconnect).  Idempotent; a queue never started is stopped
 * already.
 */
void bk_dataplane_stop(struct bk_queue *q);
/*
 * True once the queue thread has finished (drained and reported), or
 * was never started; bk_dataplane_destroy() then does not wait.  Also
 * true after a thread stopped on its own (it could not wait any more).
 */
bool bk_dataplane_stopped(const struct bk_queue *q);
/*
 * Stop (if not yet) and join the thread; its counters are final after.
 * Blocks until the thread has drained when bk_dataplane_stopped() is
 * false: only SIGTERM's shutdown, which wants exactly that, calls it
 * then.  Idempotent.
 */
void bk_dataplane_join(struct bk_queue *q);
/*
 * Join (as above), unbind, unmap, free.  keep_state: leave the recovery
 * record for the next blkbackd (the daemon stops or upgrades while the
 * vbd stays Connected); else remove it (the vbd closes).  q may be NULL.
 */
void bk_dataplane_destroy(struct bk_queue *q, bool keep_state);

/* ---------------------------------------------------------------- */
/* Reports (queue thread -> control thread).                          */
/* ---------------------------------------------------------------- */

enum {
	BK_REPORT_BROKEN_RING = 1u << 0, /* the frontend broke the ring: msg says how */
	BK_REPORT_FAILED = 1u << 1,	/* a flush failed (msg): the vbd has failed */
	BK_REPORT_WITHDRAW = 1u << 2,	/* the host refused an op: withdraw features */
	BK_REPORT_DRAINED = 1u << 3,	/* the thread finished (bk_dataplane_stopped) */
	BK_REPORT_SIZE = 1u << 4,	/* bk_dataplane_probe_size's answer: size_rc, size_bytes */
};

/* Features to withdraw (BK_REPORT_WITHDRAW): set their nodes to 0. */
enum {
	BK_WITHDRAW_FLUSH = 1u << 0,	/* feature-flush-cache */
	BK_WITHDRAW_BARRIER = 1u << 1,	/* feature-barrier */
	BK_WITHDRAW_DISCARD = 1u << 2,	/* feature-discard */
};

struct bk_report {
	unsigned int events;		/* BK_REPORT_* */
	unsigned int withdraw;		/* BK_WITHDRAW_* */
	char msg[256];			/* BROKEN_RING / FAILED: the latest reason */
	int size_rc;			/* SIZE: bk_store_size()'s 0/-errno */
	uint64_t size_bytes;		/* SIZE: the backing's size (when size_rc is 0) */
};

/*
 * Ask the queue's thread to read its store's size (bk_store_size(): the
 * backing's fstat or BLKGETSIZE64, librbd's size) and report it
 * (BK_REPORT_SIZE).  Returns at once: the thread does it the next time
 * it looks at its events (within a ring pass), so the control thread
 * never waits for the backing.  On a backing whose file system hangs,
 * the queue thread waits in the probe instead, as it would in that
 * backing's I/O, and the report comes when the probe returns; a stop
 * asked meanwhile is seen after it (the drain waits for the probe as
 * it waits for I/O in flight).  A probe the thread has not taken when
 * it stops is dropped: no SIZE report comes after DRAINED.  The caller
 * keeps at most one outstanding per queue (asking again before the
 * report only asks once).  True when asked; false when the queue was
 * never started, was asked to stop, or its thread has finished (no
 * report will come).  Control thread.
 */
bool bk_dataplane_probe_size(struct bk_queue *q);

/*
 * Take what the queue has reported since the last call (the box is
 * then empty).  Returns out->events (0: nothing new).  DRAINED is
 * reported once.
 */
unsigned int bk_dataplane_reports(struct bk_queue *q, struct bk_report *out);
/* The queue's counters (read with relaxed atomics; final after join). */
const struct bk_stats *bk_dataplane_stats(const struct bk_queue *q);

#endif /* BK_DATAPLANE_H */
