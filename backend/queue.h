/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue.h: the data plane's own structures, shared by queue.c (a queue's
 * life: create, start, stop, destroy, reports) and dataplane.c (its
 * work: the thread, from the event channel to the response).  Nothing
 * outside those two files includes it.
 */
#ifndef BK_QUEUE_H
#define BK_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "dataplane.h"
#include "pgrant.h"
#include "pollwin.h"
#include "qstate.h"

enum { EV_EVTCHN = 1, EV_STORE, EV_STOP };
/* bk_store_queue_wait_setup()'s fds, in this order (bits of *fired). */
enum { WAIT_EVTCHN, WAIT_STOP, WAIT_NFDS };

/* A plan per (operation, with data or not): the blkif_ops.h table for
 * this queue's features. */
struct bk_plan {
	int16_t status;			/* BLKIF_RSP_OKAY, or EOPNOTSUPP: no steps */
	uint8_t steps[BK_MAX_STEPS];	/* enum bk_step */
};
#define PLAN_OPS 8			/* BLKIF_OP_READ .. 7; others: EOPNOTSUPP */

/* One request taken from the ring, until its response is pushed. */
struct bk_req {
	struct blkreq br;		/* private, validated copy */
	uint32_t take_idx;		/* the ring index it was taken at */
	uint64_t t_taken;		/* ns, lat_clock: for the latency histogram */
	struct bk_plan plan;		/* its steps: a copy of the queue's table
					 * entry, which a withdrawal may change */
	unsigned int step;		/* index into plan->steps */
	bool secure;			/* DISCARD: BLKSECDISCARD */
	bool need_indirect;		/* its descriptors are in indirect pages */
	struct bk_io io;
	struct iovec iov;
	void *buf;			/* 4096-aligned, one page per segment (max) */
	/*
	 * Zero-copy (requests of at least map_threshold bytes): the
	 * guest's pages mapped for the duration of the host I/O, one iovec
	 * per segment; NULL when the data goes through buf (grant copy).
	 */
	void *map;
	/* Persistent grants: the data is on the guest's pages, held
	 * (holds[], one per segment) until the response. */
	bool pg;
	bk_pgrant_hold_t *holds;	/* max_segs entries */
	struct iovec *iovs;		/* max_segs entries */
	unsigned int niovs;		/* map/pg: how many of iovs (seg_iovs) */
	/* Its segments in the queue's grant copy batch, and the result:
	 * 0, or the first failing segment's -errno. */
	unsigned int cfirst, cn;
	int copy_err;
	void *ind;			/* 4096-aligned: copies of the indirect pages */
	char host[96];			/* host actions so far, for the trace */
	struct bk_req *next;		/* free list */
};


struct bk_queue {
	char name[32];			/* the vbd's "F/D" */
	unsigned int idx;
	xenops_t *xops;
	uint32_t domid;
	struct bk_features feat;	/* ours: withdrawals clear it */
	struct bk_plan plans[PLAN_OPS][2];	/* [op][has data] from feat */
	struct bk_trace *trace;

	void *sring;
	unsigned int nr_pages;
	blkring_t *ring;
	xenops_evtchn_t *evtchn;
	uint32_t port;			/* local port */

	struct bk_store *store;
	struct bk_store_queue *sq;
	bool store_polls;		/* bk_store_can_poll() */
	/* The thread sleeps in the store (bk_store_wait: io_uring), which
	 * watches the event channel (WAIT_EVTCHN) and stop_efd (WAIT_STOP);
	 * else in epoll_wait on epfd. */
	bool store_waits;
	bool wait_failed;		/* bk_store_wait failed: logged, stopping */

	int epfd, stop_efd, report_efd;
	pthread_t thread;
	bool started, stop_sent, joined;	/* control thread's */
	bool finished;			/* atomic: the thread's last store */

	struct blkreq_limits lim;
	/* the request pool */
	struct bk_req *reqs;
	unsigned int nr_reqs;
	struct bk_req *free;
	unsigned int nr_free;
	void *bufs;			/* mmap'ed: nr_reqs * (max_segs + ind pages) pages */
	size_t bufs_len;
	struct iovec *req_iovs;		/* nr_reqs * max_segs */
	bk_pgrant_hold_t *req_holds;	/* nr_reqs * max_segs */

	unsigned int inflight;		/* consumed, not yet responded */
	struct bk_req *drain_waiter;	/* a barrier waiting for inflight == 1 */
	bool hold;			/* a barrier is in progress: do not consume */
	bool failed;			/* answer ERROR to everything (C15) */
	bool broken;
	bool stopping;
	bool need_push;
	bool evtchn_unacked;		/* woken by the event channel: read and
					 * unmask it before the next sleep */

	struct bk_io **submit_q;	/* waiting for the store; nr_reqs slots */
	unsigned int submit_n;

	unsigned int max_segs;		/* per request: 11, or the indirect maximum */
	grant_ref_t *grefs;		/* max_segs entries, for mapping */
	void **pages;			/* max_segs entries: persistent pages */
	struct bk_pgrants *pg;		/* persistent grants; NULL: not negotiated */
	struct bk_qstate *qs;		/* the recovery record; NULL: none */
	struct bk_req *recov;		/* taken by a previous blkbackd, to redo */
	bool recovering;		/* attached where a previous one left */
	unsigned int crash_point, crash_after;	/* tests only */
	bool batch_submit;
	clockid_t lat_clock;
	/* host I/O errors logged in the current window (log_io_error) */
	uint64_t ioerr_window;
	unsigned int ioerr_logged, ioerr_dropped;
	struct bk_req **pass;		/* nr_reqs: the requests of a ring pass */
	/* The grant copy batch (one direction at a time). */
	struct xenops_copy_seg *cb_segs;
	unsigned int cb_n, cb_cap;
	struct bk_req **cb_reqs;	/* nr_reqs: whose segments they are */
	unsigned int cb_nreqs;
	bool cb_to_guest;
	uint64_t map_threshold;		/* bytes; 0: always grant copy */

	struct pollwin poll;		/* before sleeping; max --poll-max-us */

	struct bk_stats stats;

	/* The report box: the queue thread fills it, the control thread
	 * empties it (bk_dataplane_reports). */
	pthread_mutex_t rep_lock;
	struct bk_report rep;
	/* The control thread's requests, under rep_lock too, each rung
	 * through stop_efd (the queue's one doorbell): stop (set once by
	 * bk_dataplane_stop) and read the store's size (set by
	 * bk_dataplane_probe_size, cleared by the thread as it takes it). */
	bool stop_asked, size_asked;
};

/* data.c: a request's data (see there).  0/-errno; -ENOSPC from
 * bk_data_persistent: the pages do not fit, copy instead. */
int bk_data_persistent(struct bk_queue *q, struct bk_req *req);
int bk_data_map(struct bk_queue *q, struct bk_req *req, bool writable);
/* Into the queue's grant copy batch (to the guest: a read's data). */
void bk_data_copy(struct bk_queue *q, struct bk_req *req, bool to_guest);
/* Do the batch now; each request's copy_err says how it went. */
void bk_data_copy_flush(struct bk_queue *q);
/* The indirect pages: read (perhaps into the batch), then parsed from
 * the private copy.  BLKIF_RSP_OKAY, or ERROR with *reason. */
int bk_data_indirect_fetch(struct bk_queue *q, struct bk_req *req, const char **reason);
int bk_data_indirect_parse(struct bk_queue *q, struct bk_req *req, const char **reason);
/* After its response: unmap, or give its persistent pages back. */
void bk_data_release(struct bk_queue *q, struct bk_req *req);

/* dataplane.c: the queue thread (started by bk_dataplane_start). */
void *bk_queue_main(void *opaque);
/* dataplane.c: q->plans from q->feat (the blkif_ops.h table as data). */
void bk_queue_plans_build(struct bk_queue *q);

#endif /* BK_QUEUE_H */
