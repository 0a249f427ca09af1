/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkfront.h: libblkfront, a userspace Xen blkfront (frontend-test/).
 *
 * The guest side of a vbd, done the way Linux xen-blkfront does it, over
 * xenops (guest side: share pages, unbound event channels) and the real
 * libxenstore:
 *
 *   open:   wait for the backend's InitWait; read max-ring-page-order,
 *           multi-queue-max-queues; share ring pages, allocate event
 *           channels; in one transaction write ring-page-order (if > 0),
 *           ring-ref / ring-refN, event-channel (or multi-queue-num-queues
 *           and queue-N/...), protocol, feature-persistent; Initialised;
 *           wait for Connected; read sectors, info, sector-size (required),
 *           physical-sector-size; features in Linux's order
 *           (blkfront_gather_backend_features): feature-barrier gives
 *           flush+FUA via barriers, feature-flush-cache overrides it
 *           (flush, no FUA); discard keys; feature-max-indirect-segments;
 *           Connected.
 *   close:  Closing, wait for the backend to close, Closed, release the
 *           pages once the backend has unmapped them.
 *
 * Data pages.  Every ring slot owns a fixed set of data pages shared with
 * the backend once at connect (persistent grants; "feature-persistent"):
 * user data is copied in before a write and out after a read.  A request
 * carries at most blkfront_max_sectors() sectors (11 pages direct, or the
 * negotiated indirect maximum); longer I/O is split by blkfront_pread()
 * and blkfront_pwrite().
 *
 * Ids.  A request's id is (generation << 32 | slot).  A response is
 * checked like hardened Linux blkfront checks it (blkif_interrupt):
 * rsp_prod overflow, slot out of range, slot not outstanding or a stale
 * generation (duplicate), operation mismatch.  Any of those marks the
 * device BROKEN: one log_error line naming the device and the fault,
 * every outstanding and later request fails with -EIO, nothing is
 * written to caller memory.
 *
 * EOPNOTSUPP (Linux blkif_interrupt): a refused FLUSH_DISKCACHE or
 * WRITE_BARRIER (EOPNOTSUPP, or ERROR with no data) withdraws flush and
 * FUA; a refused DISCARD withdraws discard.  One log line each.  Unlike
 * Linux, the caller of that request still sees the failure
 * (-EOPNOTSUPP / -EIO), it is not turned into success.
 *
 * Threads and completion.  Any number of threads may submit at once: each
 * queue (ring) has one mutex that covers its ring, slots and event
 * channel handle.  One completion thread per device polls the queues'
 * event channel fds and a xenstore watch on the backend's state; it
 * drains responses, copies read data out, and runs the callbacks
 * (outside the lock).  Callbacks must not block for long.  Requests that
 * get no response within the timeout (default 30 s), or a backend that
 * goes to Closing/Closed or vanishes, fail with -EIO and break the device
 * (no hang when the backend dies).
 *
 * Raw mode (BLKFRONT_RAW) is for the script engine: no completion thread;
 * the caller puts arbitrary (even malformed) requests on queue 0's ring
 * and collects raw responses itself.
 *
 * Units: sectors are 512 bytes, lengths in bytes (multiples of 512).
 * Conventions: 0/-errno; pointers NULL+errno.  Logs: open
 * and close log what went wrong (with the xenstore path); the I/O path
 * logs only protocol faults of the backend and feature withdrawals.
 */
#ifndef FT_BLKFRONT_H
#define FT_BLKFRONT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "xenops.h"
#include "blkring.h"

/* CLOCK_MONOTONIC in nanoseconds (request latencies, deadlines). */
static inline uint64_t
ft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

typedef struct blkfront blkfront_t;

#define BLKFRONT_RAW		(1u << 0)	/* script mode, see above */
#define BLKFRONT_NO_PERSISTENT	(1u << 1)	/* write feature-persistent=0 */
/*
 * Load generation only: a request's data is never copied between the
 * caller's buffer and the granted pages (a write sends whatever the
 * pages hold, a read leaves its data there; req->buf is not touched).
 * A real guest makes that copy on its own vCPUs; on the simulator it
 * would run on the cores the backend shares, and be charged to it.
 */
#define BLKFRONT_IN_PLACE	(1u << 2)

struct blkfront_config {
	xenops_t *x;			/* guest-side handle; caller owns it */
	unsigned int devid;		/* virtual-device, e.g. 51712 (xvda) */
	unsigned int max_ring_page_order; /* our cap (Linux module param) */
	unsigned int max_queues;	/* our cap; 0 = 1 */
	unsigned int max_indirect_segments; /* our cap; 0 = no indirect */
	unsigned int flags;		/* BLKFRONT_* */
	unsigned int timeout_ms;	/* handshake steps and each request;
					 * 0 = 30000 */
	FILE *guestlog;			/* guestlog.h records, or NULL */
	/* Most grants the data pool of all queues may use (fewer slots
	 * than ring entries are used below it); 0 = 4096.  A domain's
	 * grant table is finite: many vbds on one guest need less each. */
	unsigned int grant_budget;
	/* The completion thread polls the rings for responses up to this
	 * many microseconds before sleeping, adaptively (include/pollwin.h);
	 * 0 = never.  Costs CPU; saves a cross-CPU wake-up per batch. */
	unsigned int poll_max_us;
	/* ABI of the ring and the "protocol" key; NATIVE writes this
	 * build's name (XEN_IO_PROTO_ABI_NATIVE). */
	enum blkring_abi abi;
	/* Tests: "KEY=VALUE" frontend keys written last in the handshake
	 * transaction (may override ours, e.g. multi-queue-num-queues=0);
	 * "KEY=-" removes KEY there instead.  At most 16. */
	const char *const *fe_keys;
	unsigned int nr_fe_keys;
};

/*
 * What was negotiated, fixed at connect, except that feature_flush,
 * feature_fua, feature_discard and feature_secdiscard may turn false at
 * any time (EOPNOTSUPP withdrawal, on the completion thread), and that
 * sectors follows a resize (the backend rewrites "sectors" and its state
 * while Connected; the completion thread re-reads it, as Linux
 * blkfront_connect does): read them with READ_ONCE() when other threads
 * do I/O.
 */
struct blkfront_info {
	uint32_t backend_domid;
	char backend_path[128];
	char frontend_path[128];
	uint64_t sectors;		/* 512-byte sectors */
	unsigned int sector_size;	/* bytes */
	unsigned int physical_sector_size;
	unsigned int vdisk_info;	/* "info": VDISK_READONLY, ... */
	bool read_only;
	unsigned int ring_page_order;
	unsigned int nr_queues;
	unsigned int ring_size;		/* entries per ring */
	bool feature_flush;		/* flush via FLUSH_DISKCACHE or barrier */
	bool feature_fua;		/* true only with barriers */
	bool feature_barrier;		/* flushes are WRITE_BARRIERs */
	bool feature_discard;
	bool feature_secdiscard;
	unsigned int discard_granularity, discard_alignment;
	bool feature_persistent;
	unsigned int max_indirect_segments; /* 0 = direct only (11) */
	unsigned int segs_per_req;	/* 11 or max_indirect_segments */
};

/*
 * Connect to vbd devid of our domain (the frontend dir must exist: the
 * toolstack, or "blkfront-test xl-add", wrote it).  Blocks until the
 * backend is Connected or timeout.  The xenstore connection is opened
 * with XENSTORED_PATH = xenops_xenstore_path(cfg->x) when that is set.
 * Returns NULL with errno (ETIMEDOUT, ENOENT: no such device dir,
 * EPROTO: a bad backend key, logged with its path).
 */
blkfront_t *blkfront_open(const struct blkfront_config *cfg);

/*
 * Fail outstanding requests, Closing -> wait backend -> Closed, unbind,
 * unshare (waiting up to the timeout for the backend to unmap), free.
 * NULL is a no-op.  Call with no other thread inside the library.
 * Returns 0, or -EPROTO when the backend said Closed while it still
 * mapped a page of ours (ring or data; logged).
 */
int blkfront_close(blkfront_t *bf);

/*
 * Clean reconnect: close the rings as blkfront_close() does but keep the
 * handle, write Initialising, wait for the backend's InitWait and run the
 * handshake again (Linux blkback's "prepare for reconnect").  Outstanding
 * requests fail with -EIO.  0 or -errno.  Same thread rule as close.
 */
int blkfront_reconnect(blkfront_t *bf);

const struct blkfront_info *blkfront_info(const blkfront_t *bf);
/* Most 512-byte sectors one request can carry. */
unsigned int blkfront_max_sectors(const blkfront_t *bf);
/* true once a protocol fault, a backend gone or Closing, or our own
 * frontend directory removed (Linux's xenbus core would unregister the
 * device) broke it.  Any thread. */
bool blkfront_broken(const blkfront_t *bf);

/* ---- asynchronous requests ---- */

enum blkfront_op {
	BLKFRONT_READ,
	BLKFRONT_WRITE,
	BLKFRONT_FLUSH_DISKCACHE,	/* raw op: optional data */
	BLKFRONT_WRITE_BARRIER,		/* raw op: optional data */
	BLKFRONT_DISCARD,
};

#define BLKFRONT_F_SECURE	(1u << 0)	/* DISCARD: secure flag */

struct blkfront_req;
typedef void (*blkfront_done_fn)(struct blkfront_req *req);

struct blkfront_req {
	enum blkfront_op op;
	unsigned int flags;
	uint64_t sector;	/* 512-byte sectors */
	void *buf;		/* READ: filled; writes: copied at submit */
	uint32_t len;		/* bytes, multiple of 512, <= max_sectors*512
				 * (DISCARD: any length, no buf) */
	blkfront_done_fn done;	/* completion thread (or a blkfront_poll()
				 * caller); Required */
	void *opaque;
	/* out: */
	int result;		/* 0, -EIO (ERROR / broken / timeout),
				 * -EOPNOTSUPP */
	int16_t status;		/* the blkif status, or 1 when no response */
	uint64_t latency_ns;	/* submit to completion */
};

/*
 * Queue req on a ring (queue chosen round robin) and notify the backend
 * when RING_PUSH_REQUESTS_AND_CHECK_NOTIFY says so.  Blocks while the ring
 * is full.  Returns 0 (done() will run once, on the completion thread or
 * in a blkfront_poll() caller),
 * or -errno without calling done(): -EINVAL bad length/alignment, -EIO
 * device broken, -EROFS write on a read-only device, -EOPNOTSUPP a
 * withdrawn or never-offered feature.  Any thread.
 */
int blkfront_submit(blkfront_t *bf, struct blkfront_req *req);

/*
 * Reap responses now, in the calling thread: done() callbacks of what
 * completed run here (with no library lock held) instead of on the
 * completion thread.  No system call when nothing is waiting.  For a
 * submitter that expects completions soon and would rather poll than be
 * woken through the completion thread (include/pollwin.h).  Returns how
 * many requests completed (0: none), or -EPROTO when a protocol fault
 * broke the device.  Any thread, while the device is open.
 */
int blkfront_poll(blkfront_t *bf);

/*
 * A thread that reaps its own completions for a while (a submitter
 * keeping a queue depth, like fio's io_getevents loop) brackets that
 * time with these.  Meanwhile the completion thread leaves the rings and
 * the event channels alone (it still watches the backend's state and
 * the timeouts): the caller reaps with blkfront_poll() and sleeps in
 * blkfront_wait().  So a response that finds the caller asleep costs
 * one wake-up, not two (completion thread, then the caller), and no
 * second thread spins beside a polling caller (measured: 4 KiB QD32
 * through the ring fell from ~91 k to ~57 k IOPS with one).  Counted:
 * any number of threads may be inside at once; each begin needs one
 * end, after which the completion thread takes the rings back.  Any
 * thread, while the device is open.
 */
void blkfront_poll_begin(blkfront_t *bf);
void blkfront_poll_end(blkfront_t *bf);

/*
 * For a thread inside blkfront_poll_begin()..end(): arm every ring's
 * rsp_event (RING_FINAL_CHECK_FOR_RESPONSES), sleep until the backend
 * notifies, the device breaks (fail_all) or timeout_ms passes (-1: no
 * limit), then reap as blkfront_poll() does.  Returns how many requests
 * completed here (0: none; the caller looks at its own state and calls
 * again), -EPROTO after a protocol fault, or -errno from poll(2).  The
 * device breaking completes every request with an error and wakes it.
 * A request may also complete on another thread (a caller reaping at the
 * same time, fail_all): such a completion wakes sleepers here.
 */
int blkfront_wait(blkfront_t *bf, int timeout_ms);

/* ---- synchronous helpers (any thread; split and run in parallel) ---- */

/* len bytes at sector; splits into up to max_sectors requests, all
 * in flight at once.  0 or the first -errno. */
int blkfront_pread(blkfront_t *bf, void *buf, size_t len, uint64_t sector);
/* fua: the data is durable on return (barrier with data when barriers
 * were negotiated; else write then flush; else a plain write). */
int blkfront_pwrite(blkfront_t *bf, const void *buf, size_t len,
		    uint64_t sector, bool fua);
/*
 * Flush the disk cache per negotiation: WRITE_BARRIER (no data) when only
 * feature-barrier was offered, FLUSH_DISKCACHE when feature-flush-cache
 * was; 0 without any request when neither was offered (the backend
 * promises write-through, as Linux's block layer assumes).
 */
int blkfront_flush(blkfront_t *bf);
int blkfront_discard(blkfront_t *bf, uint64_t sector, uint64_t nr_sectors);

/* Counters since open (for tests and the export's statistics). */
struct blkfront_stats {
	uint64_t reads, writes, flushes, barriers, discards;
	uint64_t errors, eopnotsupp;
};
void blkfront_get_stats(blkfront_t *bf, struct blkfront_stats *st);

/* ---- raw mode (BLKFRONT_RAW; one thread) ---- */

/* Queue 0's ring. */
blkring_t *blkfront_raw_ring(blkfront_t *bf);
/*
 * Data page i (0 .. blkfront_raw_nr_pages()-1) of the pool and its gref;
 * pages are writable grants to the backend.  NULL if out of range.
 */
void *blkfront_raw_page(blkfront_t *bf, unsigned int i, grant_ref_t *gref);
unsigned int blkfront_raw_nr_pages(const blkfront_t *bf);
/* Notify queue 0's event channel now.  0 or -errno. */
int blkfront_raw_notify(blkfront_t *bf);
/*
 * Wait up to timeout_ms for one response on queue 0 and copy it out
 * (no id check: the caller knows what it sent).  1 got one, 0 timeout,
 * -EPROTO rsp_prod overflow.
 */
int blkfront_raw_get_response(blkfront_t *bf, struct blkrsp *rsp,
			      unsigned int timeout_ms);
/*
 * End access to queue 0's ring pages, waiting up to timeout_ms while the
 * backend still maps them (the pages stay ours and readable: responses
 * still in the ring can be collected).  0, or -EBUSY when still mapped.
 */
int blkfront_raw_end_ring_access(blkfront_t *bf, unsigned int timeout_ms);
/*
 * A new ring and event channel for queue 0 (same size), their keys
 * (ring-ref(s), event-channel) written in one transaction, no state
 * change; the old ring's event channel is closed and its pages freed.
 * What a frontend does between Initialising and Initialised when it
 * reconnects.  A one-page ring is "ring-ref" without ring-page-order
 * (Linux blkfront), unless multi_ref: then ring-page-order and
 * ring-ref0.. as for bigger rings (the other spelling's keys are
 * removed).  0 or -errno.
 */
int blkfront_raw_new_ring(blkfront_t *bf, bool multi_ref);
/* Queue 0's ring pages (contiguous) and their number. */
void *blkfront_raw_ring_pages(blkfront_t *bf, unsigned int *nr_pages);
/* The xenstore handle the device uses (for script reads of keys). */
struct xs_handle *blkfront_xs(blkfront_t *bf);

#endif /* FT_BLKFRONT_H */
