/*
 * private.h: structures shared by blkbackd's own files only.
 *
 * Ownership (one owner per piece of state):
 *   struct bk_daemon   main.c; the control thread (xenbus.c) uses it.
 *   struct bk_dev      xenbus.c (control thread) creates, connects,
 *                      disconnects and frees it.  The dataplane reads
 *                      dev->feat and the immutable identity fields, and
 *                      reports back only through bk_dev_report().
 *   struct bk_queue    dataplane.c; created/started/stopped/destroyed by
 *                      the control thread, run by its own thread.
 *   struct bk_req      request-pool.c hands them out to one queue thread.
 */
#ifndef BK_PRIVATE_H
#define BK_PRIVATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/uio.h>

#include "compiler.h"
#include "blkif_ops.h"
#include "blkring.h"
#include "store.h"
#include "xenops.h"

struct xs_handle;
struct bk_dev;
struct bk_queue;

/* ---------------------------------------------------------------- */
/* trace.c: --trace=FILE (format in blkbackd.8 "TRACE FORMAT").      */
/* ---------------------------------------------------------------- */

struct bk_trace;

/* Open (truncate) path for appending lines.  NULL + errno, logs why. */
struct bk_trace *bk_trace_open(const char *path);
void bk_trace_close(struct bk_trace *t);
/*
 * Write one line "vbd=F/D ring=Q " + fmt + "\n" with a single write(2),
 * so lines of different queue threads never mix.  t may be NULL (no-op).
 * Any thread.
 */
void bk_trace(struct bk_trace *t, const char *vbd, unsigned int ring,
	      const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(4, 5);
#define bk_tracing(t) ((t) != NULL)

/* ---------------------------------------------------------------- */
/* stats.c                                                           */
/* ---------------------------------------------------------------- */

/* Per-queue counters: updated by the queue thread with relaxed atomics,
 * summed by the control thread (Linux blkback's st_* counters). */
struct bk_stats {
	uint64_t rd_req, wr_req, flush_req, barrier_req, discard_req;
	uint64_t rd_sect, wr_sect, discard_sect;
	uint64_t oo_req;		/* ring had work, pool was empty */
	uint64_t err_rsp;		/* BLKIF_RSP_ERROR sent */
	uint64_t eopnotsupp_rsp;	/* BLKIF_RSP_EOPNOTSUPP sent */
};
#define bk_stat_add(s, field, n) \
	__atomic_fetch_add(&(s)->field, (n), __ATOMIC_RELAXED)

void bk_stats_sum(struct bk_stats *acc, const struct bk_stats *one);
/* log_info one line "vbd F/D: rd=... wr=..." */
void bk_stats_log(const char *vbd, const struct bk_stats *s);

/* ---------------------------------------------------------------- */
/* Request pool (request-pool.c).                                    */
/* ---------------------------------------------------------------- */

struct bk_req {
	struct blkreq br;		/* private, validated copy */
	struct bk_queue *q;
	enum bk_step plan[BK_MAX_STEPS];
	unsigned int step;		/* index into plan */
	int16_t status;
	bool secure;			/* DISCARD: BLKSECDISCARD */
	struct bk_io io;
	struct iovec iov;
	void *buf;			/* 4096-aligned, one page per segment (max) */
	/*
	 * Zero-copy (requests of at least --map-threshold bytes): the
	 * guest's pages mapped for the duration of the host I/O, one iovec
	 * per segment; NULL when the data goes through buf (grant copy).
	 */
	void *map;
	struct iovec *iovs;		/* max_segs entries (the pool's) */
	void *ind;			/* 4096-aligned: copies of the indirect pages */
	char host[96];			/* host actions so far, for the trace */
	struct bk_req *next;		/* freelist / submit list */
};

struct bk_pool {
	struct bk_req *reqs;
	unsigned int nr;
	struct bk_req *free;
	unsigned int nr_free;
	void *bufs;			/* mmap'ed; nr * (max_segs + ind_pages) pages */
	size_t bufs_len;
	struct iovec *iovs;		/* nr * max_segs */
};

/*
 * Allocate nr requests, each with a data buffer of max_segs pages and
 * ind_pages pages for indirect descriptors.  0/-errno.
 */
int bk_pool_init(struct bk_pool *p, unsigned int nr, unsigned int max_segs,
		 unsigned int ind_pages);
void bk_pool_fini(struct bk_pool *p);
/* NULL when empty (the caller counts oo_req). */
struct bk_req *bk_pool_get(struct bk_pool *p);
void bk_pool_put(struct bk_pool *p, struct bk_req *r);

/* ---------------------------------------------------------------- */
/* Dataplane (dataplane.c): the four-call interface (STYLE.md #6).   */
/* ---------------------------------------------------------------- */

struct bk_ring_config {
	unsigned int nr_pages;		/* 1 << ring-page-order */
	grant_ref_t refs[BLKRING_MAX_PAGES];
	uint32_t evtchn;		/* frontend's port */
	enum blkring_abi abi;
};

/*
 * Map the ring, bind the event channel, open a store queue and the
 * request pool.  Control thread.  NULL + errno, with *why set to a
 * static reason for the error node ("cannot map the ring pages", ...)
 * and *key to the frontend key it is about ("ring-ref",
 * "event-channel"), or NULL when the failure is the backend's own.
 */
struct bk_queue *bk_dataplane_create(struct bk_dev *dev, unsigned int idx,
				     const struct bk_ring_config *rc,
				     const char **why, const char **key);
/* Start the queue thread.  0/-errno. */
int bk_dataplane_start(struct bk_queue *q);
/*
 * Ask the queue to stop and return at once (never waits for I/O): the
 * thread stops consuming the ring, finishes every request in flight,
 * pushes their responses, notifies, and then, as its last act, reports
 * BK_REPORT_DRAINED through bk_dev_report() (Linux blkback: the last
 * request in flight completes the disconnect).  Idempotent; a queue
 * never started is stopped already.  Control thread.
 */
void bk_dataplane_stop(struct bk_queue *q);
/*
 * True once the queue thread has finished (drained and reported), or
 * was never started; bk_dataplane_destroy() then does not wait.  Also
 * true after a thread stopped on its own (it could not wait any more).
 * Control thread.
 */
bool bk_dataplane_stopped(const struct bk_queue *q);
/*
 * Stop (if not yet) and join the thread; its counters are final after.
 * Blocks until the thread has drained when bk_dataplane_stopped() is
 * false: only SIGTERM's shutdown, which wants exactly that, calls it
 * then.  Idempotent.  Control thread.
 */
void bk_dataplane_join(struct bk_queue *q);
/* Join (as above), unbind, unmap, free.  q may be NULL.  Control thread. */
void bk_dataplane_destroy(struct bk_queue *q);
const struct bk_stats *bk_dataplane_stats(const struct bk_queue *q);

/* ---------------------------------------------------------------- */
/* sync.c: the per-request plan engine (blkif_ops.h table).          */
/* ---------------------------------------------------------------- */

/* Set up req->io for the request's current step (READ/WRITE/...). */
void bk_sync_prepare_io(struct bk_req *req, enum bk_step step);
/* Map a failed host step's -errno to a blkif status (table above). */
int16_t bk_sync_status(enum bk_step step, int64_t err);

/* ---------------------------------------------------------------- */
/* Devices (xenbus.c).                                                */
/* ---------------------------------------------------------------- */

enum bk_report {
	BK_REPORT_BROKEN_RING,	/* C03: stop the device, error node */
	BK_REPORT_FAILED,	/* C15: a flush failed: device failed */
	BK_REPORT_WITHDRAW,	/* EOPNOTSUPP: withdraw a feature */
	BK_REPORT_DRAINED,	/* a queue thread finished: see bk_dataplane_stop */
};

/*
 * Called by a queue thread: record an event for the control thread
 * (which writes xenstore), and wake it.  msg is copied.  Feature
 * withdrawal is written to xenstore directly by the calling thread
 * (feature = "feature-flush-cache"...), the only dataplane write.
 */
void bk_dev_report(struct bk_dev *dev, enum bk_report what, const char *feature,
		   const char *msg);
/* The device's name for logs and the trace: "F/D". */
const char *bk_dev_name(const struct bk_dev *dev);

struct bk_dev_config {
	struct bk_params params;	/* the driver, and its arg after "driver:" */
	bool read_only;			/* mode=r */
	bool writethrough;		/* cache=writethrough */
	enum bk_flush_mode flush_mode;
	int discard_enable;		/* -1 unset (offer if supported), 0, 1 */
	bool cdrom, removable;
};

/* Daemon-wide options (main.c fills them). */
struct bk_options {
	enum xenops_transport transport;
	const char *sim_dir;
	unsigned int max_queues;	/* multi-queue-max-queues */
	unsigned int max_ring_order;	/* max-ring-page-order */
	unsigned int max_indirect;	/* feature-max-indirect-segments, 0 = off */
	uint64_t map_threshold;		/* map grants for requests >= this; 0 never */
	unsigned int poll_max_us;	/* queue threads' polling window cap; 0 never */
	bool ignore_flush;		/* --unsafe-ignore-flush */
	const char *record_path;	/* --record: crash engineer's wrapper */
	bool volatile_cache;		/* --cache=volatile */
};

struct bk_daemon {
	struct bk_options opt;
	xenops_t *xops;
	struct xs_handle *xs;
	uint32_t self;
	char vbd_root[64];		/* /local/domain/<self>/backend/vbd */
	struct bk_trace *trace;
	struct bk_dev *devs;
	struct bk_claims claims;	/* the backings connected vbds hold */
	int report_efd;			/* queue threads -> control thread */
	/* xenbus.c: the last few non-numeric directory names under
	 * vbd_root it has logged, so each is logged once, not per event */
	char bad_dirs[4][64];
	unsigned int bad_dirs_next;
};

/* The control plane, on the control thread (xenbus.c). */
int bk_xenbus_init(struct bk_daemon *d);
/* xs fd readable: handle every pending watch event. */
void bk_xenbus_handle_watches(struct bk_daemon *d);
/* report_efd readable: act on queue reports; finish the disconnect of
 * every device whose queues have drained, then what waited for it. */
void bk_xenbus_handle_reports(struct bk_daemon *d);
/* SIGUSR1 / --stats: one line per device. */
void bk_xenbus_log_stats(struct bk_daemon *d);
/* SIGTERM: stop every queue of every device at once, wait until each
 * has drained (in parallel), write Closed, free.  Blocks. */
void bk_xenbus_shutdown(struct bk_daemon *d);
/* SIGUSR2 (blkcrash): power-cut every device's store, no drain. */
void bk_xenbus_power_cut(struct bk_daemon *d);

/* Accessors for the dataplane. */
struct bk_daemon *bk_dev_daemon(const struct bk_dev *dev);
struct bk_features *bk_dev_features(struct bk_dev *dev);
uint32_t bk_dev_frontend_id(const struct bk_dev *dev);
/* The top of the device's store stack (while connected). */
struct bk_store *bk_dev_store(const struct bk_dev *dev);
bool bk_dev_failed(const struct bk_dev *dev);

#endif /* BK_PRIVATE_H */
