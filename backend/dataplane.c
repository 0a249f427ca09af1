/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dataplane.c: a queue's work (dataplane.h): its thread, from the event
 * channel to the response.  Its life (create, stop, destroy) is queue.c's.
 *
 * Loop: consume the ring until empty, validate each private copy, look
 * its plan up (the blkif_ops.h table, built once per queue from its
 * features by sync.c's planner), grant-copy write data in and submit its
 * host I/O at once; reap completions in batches, run each request's
 * next step and push its response at once, notifying only when the ring
 * macros ask.  Nothing here touches xenstore: what the control plane
 * must know goes into the queue's report box (report()).
 *
 * Requests: a fixed pool, one per ring slot (Linux blkback's
 * pending_req), each with a 4096-aligned data buffer of max_segs pages
 * and room for its indirect pages, all from one MAP_NORESERVE mapping
 * (pages a small workload never touches cost nothing).  So "out of
 * requests" cannot happen with a well-behaved frontend; it is counted
 * (oo_req) if it does.
 *
 * Sleeping: before it sleeps, the thread polls the ring and the store's
 * completions for a short, adaptive window (include/pollwin.h, at most
 * --poll-max-us).  While polling, req_event is not armed, so the
 * frontend does not notify either.  Then RING_FINAL_CHECK_FOR_REQUESTS
 * arms req_event and closes the race, and the thread sleeps in
 * epoll_wait on the event channel fd, the store queue's completion fd
 * and a stop eventfd.
 *
 * A WRITE_BARRIER holds the ring: nothing after it is consumed until it
 * has drained everything before it, flushed, written its data with FUA
 * and responded.
 *
 * Stopping never makes the control thread wait for the guest's I/O:
 * bk_dataplane_stop() only wakes the thread through stop_efd; the thread
 * consumes no more, finishes what it has in flight, responds, marks
 * itself finished and reports BK_REPORT_DRAINED as its last act.  The
 * control thread joins it (at once, then) when it handles that report.
 * The same doorbell asks for the store's size (bk_dataplane_probe_size):
 * the thread reads it and reports it, so that a backing whose file
 * system hangs holds this thread, as its I/O would, and never the
 * control thread.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "barrier.h"
#include "log.h"
#include "queue.h"

static void req_advance(struct bk_queue *q, struct bk_req *req);
static void queue_submit(struct bk_queue *q);
static void queue_push(struct bk_queue *q);

/* ---------------------------------------------------------------- */
/* Reports, plans and requests.                                       */
/* ---------------------------------------------------------------- */

unsigned int
bk_crash_point_parse(const char *name)
{
	static const char *const names[] = {
		[BK_CRASH_TAKEN] = "taken",
		[BK_CRASH_RESPONDED] = "responded",
		[BK_CRASH_RECORDED] = "recorded",
		[BK_CRASH_PUSHED] = "pushed",
	};
	unsigned int i;

	for (i = BK_CRASH_TAKEN; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return i;
	return BK_CRASH_NONE;
}

static uint64_t
lat_now(const struct bk_queue *q)
{
	struct timespec ts;

	clock_gettime(q->lat_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The response of a request taken at t_taken is out now. */
static void
lat_record(struct bk_queue *q, uint64_t t_taken)
{
	uint64_t ns = lat_now(q) - t_taken, us = ns / 1000;
	unsigned int b = 0;

	while (us >= 2 && b < BK_LAT_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	bk_stat_add(&q->stats, lat_us[b], 1);
	bk_stat_add(&q->stats, lat_sum_ns, ns);
}

/* Tests only: die here, as a SIGKILL would, the crash_after-th time. */
static inline void
crash_point(struct bk_queue *q, unsigned int point)
{
	if (unlikely(q->crash_point == point) && --q->crash_after == 0)
		raise(SIGKILL);
}

/* Wake the control thread: the report box has something new. */
static void
report_wake(struct bk_queue *q)
{
	uint64_t one = 1;

	/* an eventfd write fails only on counter overflow */
	if (write(q->report_efd, &one, sizeof(one)) != sizeof(one))
		log_error("vbd %s ring %u: cannot wake the control thread: %m", q->name, q->idx);
}

/* Put an event into the report box and wake the control thread. */
static void
report(struct bk_queue *q, unsigned int event, unsigned int withdraw, const char *msg)
{
	pthread_mutex_lock(&q->rep_lock);
	q->rep.events |= event;
	q->rep.withdraw |= withdraw;
	if (msg)
		snprintf(q->rep.msg, sizeof(q->rep.msg), "%s", msg);
	pthread_mutex_unlock(&q->rep_lock);
	report_wake(q);
}

/* The blkif_ops.h table for our features, as data: one plan per
 * (operation, with or without data).  At create, and after a
 * withdrawal changed the features. */
void
bk_queue_plans_build(struct bk_queue *q)
{
	struct blkreq br;
	unsigned int op, data;

	memset(&br, 0, sizeof(br));
	for (op = 0; op < PLAN_OPS; op++)
		for (data = 0; data < 2; data++) {
			struct bk_plan *p = &q->plans[op][data];

			enum bk_step steps[BK_MAX_STEPS];
			unsigned int i;

			br.op = op;
			br.nr_segments = data;
			p->status = bk_plan_request(&q->feat, &br, steps);
			for (i = 0; i < BK_MAX_STEPS; i++)
				p->steps[i] = steps[i];
		}
}

static const struct bk_plan *
plan_of(const struct bk_queue *q, const struct blkreq *br)
{
	static const struct bk_plan unknown = { .status = BLKIF_RSP_EOPNOTSUPP };

	return br->op < PLAN_OPS ? &q->plans[br->op][br->nr_segments != 0] : &unknown;
}

static void
req_reset(struct bk_req *r)
{
	r->step = 0;
	r->secure = false;
	r->host[0] = '\0';
	r->map = NULL;
}

/* NULL when every request is in flight (the caller counts oo_req). */
static struct bk_req *
req_get(struct bk_queue *q)
{
	struct bk_req *r = q->free;

	if (!r)
		return NULL;
	q->free = r->next;
	q->nr_free--;
	r->next = NULL;
	req_reset(r);
	return r;
}

static void
req_put(struct bk_queue *q, struct bk_req *r)
{
	r->next = q->free;
	q->free = r;
	q->nr_free++;
}

/* ---------------------------------------------------------------- */
/* A request's life.                                                  */
/* ---------------------------------------------------------------- */

/* Record a host action for the request's trace line (only when tracing). */
static void
host_append(struct bk_queue *q, struct bk_req *req, const char *action)
{
	size_t n;

	if (!bk_tracing(q->trace))
		return;
	n = strlen(req->host);
	snprintf(req->host + n, sizeof(req->host) - n, "%s%s", n ? "," : "", action);
}

static enum bk_step
req_step(const struct bk_req *req)
{
	return req->plan.steps[req->step];
}

static bool
plan_has(const struct bk_plan *p, enum bk_step step)
{
	unsigned int i;

	for (i = 0; i < BK_MAX_STEPS && p->steps[i] != BK_STEP_END; i++)
		if (p->steps[i] == step)
			return true;
	return false;
}

static bool
plan_has_write(const struct bk_plan *p)
{
	return plan_has(p, BK_STEP_WRITE) || plan_has(p, BK_STEP_WRITE_FUA);
}

static void
trace_response(struct bk_queue *q, struct bk_req *req, int16_t status, const char *reason)
{
	const struct blkreq *br = &req->br;
	const char *op = blkreq_op_name(br->op);
	char opn[8];

	if (!strcmp(op, "unknown")) {	/* blkbackd.8: "opN" */
		snprintf(opn, sizeof(opn), "op%u", br->op);
		op = opn;
	}
	bk_trace(q->trace, q->name, q->idx,
		 "op=%s id=%" PRIu64 " sector=%" PRIu64 " nr=%" PRIu64 " segs=%u fua=%d -> host=%s status=%d%s%s",
		 op, br->id, br->sector, br->nr_sectors, br->nr_segments,
		 plan_has(&req->plan, BK_STEP_WRITE_FUA),
		 req->host[0] ? req->host : "none", status,
		 reason ? " reason=" : "", reason ? reason : "");
}

/* Queue the response; wake a draining barrier; free the request. */
static void
complete(struct bk_queue *q, struct bk_req *req, int16_t status, const char *reason)
{
	const struct blkreq *br = &req->br;
	bool was_barrier = req->plan.steps[0] == BK_STEP_DRAIN;

	/* An INDIRECT request is answered with its indirect_op (Linux
	 * blkback's req_operation, which hardened blkfront checks).  The
	 * record learns where the response went (qstate.h: after the
	 * response is in the ring, before it is pushed). */
	uint32_t rsp = blkring_back_rsp_prod_pvt(q->ring);

	if (blkring_back_put_response(q->ring, br->id, br->op, status) == 0) {
		q->need_push = true;
		crash_point(q, BK_CRASH_RESPONDED);
		if (q->qs)
			bk_qstate_answered(q->qs, req - q->reqs, rsp);
		crash_point(q, BK_CRASH_RECORDED);
	}
	lat_record(q, req->t_taken);
	if (status == BLKIF_RSP_ERROR)
		bk_stat_add(&q->stats, err_rsp, 1);
	else if (status == BLKIF_RSP_EOPNOTSUPP)
		bk_stat_add(&q->stats, eopnotsupp_rsp, 1);
	if (bk_tracing(q->trace))
		trace_response(q, req, status, reason);
	bk_data_release(q, req);
	q->inflight--;
	req_put(q, req);

	if (was_barrier && q->drain_waiter != req)
		q->hold = false;
	if (q->drain_waiter && q->inflight == 1) {
		struct bk_req *w = q->drain_waiter;

		q->drain_waiter = NULL;
		bk_trace(q->trace, q->name, q->idx, "id=%" PRIu64 " host=drained", w->br.id);
		w->step++;
		req_advance(q, w);
	}
}

/* Fill req->io for the request's current step (READ/WRITE/...). */
static void
req_prepare_io(struct bk_req *req, enum bk_step step)
{
	struct bk_io *io = &req->io;

	memset(io, 0, sizeof(*io));
	io->opaque = req;
	switch (step) {
	case BK_STEP_FLUSH:
		io->op = BK_IO_FLUSH;
		break;
	case BK_STEP_READ:
	case BK_STEP_WRITE:
	case BK_STEP_WRITE_FUA:
		io->op = step == BK_STEP_READ ? BK_IO_READ : BK_IO_WRITE;
		io->flags = step == BK_STEP_WRITE_FUA ? BK_IO_FUA : 0;
		io->offset = req->br.sector << SECTOR_SHIFT;
		io->len = req->br.nr_sectors << SECTOR_SHIFT;
		if (req->map || req->pg) {
			/* zero-copy: the segments on the mapped pages, those
			 * adjacent in our address space merged (data.c) */
			io->iov = req->iovs;
			io->iovcnt = req->niovs;
		} else {
			req->iov.iov_base = req->buf;
			req->iov.iov_len = io->len;
			io->iov = &req->iov;
			io->iovcnt = 1;
		}
		break;
	case BK_STEP_DISCARD:
		io->op = BK_IO_DISCARD;
		io->flags = req->secure ? BK_IO_SECURE : 0;
		io->offset = req->br.sector << SECTOR_SHIFT;
		io->len = req->br.nr_sectors << SECTOR_SHIFT;
		break;
	default:
		break;
	}
}

/* The host refused op (EOPNOTSUPP): stop offering it (Linux blkback
 * parity): our features and plans now, the feature node through the
 * control thread. */
static void
withdraw(struct bk_queue *q, uint8_t op)
{
	unsigned int what;

	switch (op) {
	case BLKIF_OP_FLUSH_DISKCACHE:
		q->feat.flush_cache = false;
		what = BK_WITHDRAW_FLUSH;
		break;
	case BLKIF_OP_WRITE_BARRIER:
		q->feat.barrier = false;
		what = BK_WITHDRAW_BARRIER;
		break;
	case BLKIF_OP_DISCARD:
		q->feat.discard = false;
		what = BK_WITHDRAW_DISCARD;
		break;
	default:
		return;
	}
	bk_queue_plans_build(q);
	report(q, BK_REPORT_WITHDRAW, what, NULL);
}

/* Run the request's steps from req->step until one needs the host. */
static void
req_advance(struct bk_queue *q, struct bk_req *req)
{
	for (;;) {
		enum bk_step step = req_step(req);

		switch (step) {
		case BK_STEP_END:
			complete(q, req, BLKIF_RSP_OKAY, NULL);
			return;
		case BK_STEP_DRAIN:
			q->hold = true;
			bk_trace(q->trace, q->name, q->idx, "id=%" PRIu64 " host=drain inflight=%u",
				 req->br.id, q->inflight - 1);
			host_append(q, req, "drain");
			if (q->inflight > 1) {
				q->drain_waiter = req;
				return;
			}
			req->step++;
			continue;
		case BK_STEP_FLUSH:
			if (q->feat.ignore_flush) {
				bk_trace(q->trace, q->name, q->idx,
					 "id=%" PRIu64 " host=none(unsafe-ignore-flush)", req->br.id);
				host_append(q, req, "none(unsafe-ignore-flush)");
				req->step++;
				continue;
			}
			break;
		default:
			break;
		}
		req_prepare_io(req, step);
		bk_dbg(BK_DBG_IO, "vbd %s ring %u id %" PRIu64 ": issue %s", q->name, q->idx,
		       req->br.id, bk_step_name(step));
		if (bk_tracing(q->trace))
			bk_trace(q->trace, q->name, q->idx,
				 "id=%" PRIu64 " issue=%s sector=%" PRIu64 " nr=%" PRIu64,
				 req->br.id, bk_step_name(step),
				 step == BK_STEP_FLUSH ? 0 : req->br.sector,
				 step == BK_STEP_FLUSH ? 0 : req->br.nr_sectors);
		q->submit_q[q->submit_n++] = &req->io;
		return;
	}
}

#define IO_ERR_BURST	10
#define IO_ERR_WINDOW_NS 10000000000ull	/* 10 s */

/*
 * A host I/O failed (not a refusal): the admin must hear of it (a full
 * disk, a dying device) without a failing disk flooding the log: the
 * first IO_ERR_BURST of a window each, then a count when the next window
 * starts.
 */
static void
log_io_error(struct bk_queue *q, const struct bk_req *req, const struct bk_io *io)
{
	uint64_t now = bk_pgrant_now();

	if (now - q->ioerr_window >= IO_ERR_WINDOW_NS) {
		if (q->ioerr_dropped)
			log_error("vbd %s ring %u: %u more host I/O errors in the last %llu s",
				  q->name, q->idx, q->ioerr_dropped,
				  (unsigned long long)(IO_ERR_WINDOW_NS / 1000000000ull));
		q->ioerr_window = now;
		q->ioerr_logged = q->ioerr_dropped = 0;
	}
	if (q->ioerr_logged++ >= IO_ERR_BURST) {
		q->ioerr_dropped++;
		return;
	}
	log_error("vbd %s ring %u: %s of %" PRIu64 " bytes at sector %" PRIu64 " (id %" PRIu64
		  "): %s", q->name, q->idx, io->host_action ? io->host_action : bk_step_name(req_step(req)),
		  io->len, io->offset >> SECTOR_SHIFT, req->br.id, strerror((int)-io->result));
}

static void
io_done(struct bk_queue *q, struct bk_io *io)
{
	struct bk_req *req = io->opaque;
	enum bk_step step = req_step(req);
	int16_t status;

	host_append(q, req, io->host_action ? io->host_action : "?");
	if (bk_tracing(q->trace))
		bk_trace(q->trace, q->name, q->idx, "id=%" PRIu64 " host=%s result=%" PRId64,
			 req->br.id, io->host_action ? io->host_action : "?", io->result);
	if (io->result < 0) {
		status = bk_step_status(step, io->result);
		if (status != BLKIF_RSP_EOPNOTSUPP)
			log_io_error(q, req, io);
		if (status == BLKIF_RSP_EOPNOTSUPP) {
			withdraw(q, req->br.op);
		} else if (step == BK_STEP_FLUSH) {
			char msg[160];

			/* the store now says bk_store_failed(): every queue of
			 * this vbd answers ERROR from here on (dispatch) */
			snprintf(msg, sizeof(msg), "%s failed: %s; device failed, "
				 "acknowledged writes may not be durable",
				 io->host_action ? io->host_action : "flush",
				 strerror((int)-io->result));
			q->failed = true;
			report(q, BK_REPORT_FAILED, 0, msg);
		}
		complete(q, req, status, "host error");
		return;
	}
	/* the read's data went to the guest in queue_reap's batch */
	if (step == BK_STEP_READ && req->copy_err) {
		complete(q, req, BLKIF_RSP_ERROR, "grant copy to guest failed");
		return;
	}
	req->step++;
	req_advance(q, req);
}

static void
count_request(struct bk_queue *q, const struct blkreq *br)
{
	switch (br->op) {
	case BLKIF_OP_READ:
		bk_stat_add(&q->stats, rd_req, 1);
		bk_stat_add(&q->stats, rd_sect, br->nr_sectors);
		break;
	case BLKIF_OP_WRITE:
		bk_stat_add(&q->stats, wr_req, 1);
		bk_stat_add(&q->stats, wr_sect, br->nr_sectors);
		break;
	case BLKIF_OP_FLUSH_DISKCACHE:
		bk_stat_add(&q->stats, flush_req, 1);
		bk_stat_add(&q->stats, wr_sect, br->nr_sectors);
		break;
	case BLKIF_OP_WRITE_BARRIER:
		bk_stat_add(&q->stats, barrier_req, 1);
		bk_stat_add(&q->stats, wr_sect, br->nr_sectors);
		break;
	case BLKIF_OP_DISCARD:
		bk_stat_add(&q->stats, discard_req, 1);
		bk_stat_add(&q->stats, discard_sect, br->nr_sectors);
		break;
	}
}

/* Answer a request refused before any host I/O (logged when debugging). */
static void
refuse(struct bk_queue *q, struct bk_req *req, int status, const char *reason)
{
	bk_dbg(BK_DBG_RING, "vbd %s ring %u id %" PRIu64 ": %s", q->name, q->idx,
	       req->br.id, reason);
	complete(q, req, status, reason);
}

/*
 * A request just taken from the ring: validate the private copy and
 * start reading its indirect pages.  False when it has been answered
 * already.
 */
static bool
req_take(struct bk_queue *q, struct bk_req *req)
{
	const char *reason = NULL;
	bool needs_indirect = false;
	int status;

	q->inflight++;
	req->t_taken = lat_now(q);
	req->plan.steps[0] = BK_STEP_END;
	req->need_indirect = false;
	req->cn = 0;
	req->copy_err = 0;
	/* a flush failed: here, on another queue of the store (C15), or
	 * before the vbd reconnected */
	if (unlikely(q->failed || bk_store_failed(q->store))) {
		complete(q, req, BLKIF_RSP_ERROR, "device failed");
		return false;
	}
	/* the backing may have grown since connect (an rbd resize) */
	q->lim.sectors = bk_store_size_now(q->store) >> SECTOR_SHIFT;
	status = blkreq_validate(&req->br, &q->lim, &needs_indirect, &reason);
	if (status == BLKIF_RSP_OKAY && needs_indirect) {
		req->need_indirect = true;
		status = bk_data_indirect_fetch(q, req, &reason);
	}
	if (status != BLKIF_RSP_OKAY) {
		refuse(q, req, status, reason ? reason : "invalid");
		return false;
	}
	return true;
}

/*
 * After the indirect pages: the plan, the counters, and the data: on
 * persistent grants, mapped for the I/O, or (writes) into the pass's
 * grant copy batch.  False when it has been answered already.
 */
static bool
req_data_in(struct bk_queue *q, struct bk_req *req)
{
	struct blkreq *br = &req->br;
	const char *reason = NULL;
	bool write, data;
	int status;

	if (req->need_indirect) {
		status = bk_data_indirect_parse(q, req, &reason);
		if (status != BLKIF_RSP_OKAY) {
			refuse(q, req, status, reason ? reason : "invalid");
			return false;
		}
	}
	req->plan = *plan_of(q, br);
	if (req->plan.status != BLKIF_RSP_OKAY) {
		complete(q, req, req->plan.status, "not offered");
		return false;
	}
	count_request(q, br);
	/* SECURE without discard-secure=1 is a plain discard (blkif.h) */
	if (br->op == BLKIF_OP_DISCARD)
		req->secure = br->discard_secure && q->feat.discard_secure;
	write = plan_has_write(&req->plan);
	data = br->nr_segments && (write || br->op == BLKIF_OP_READ);
	req->cn = 0;
	req->copy_err = 0;
	if (data && q->pg) {
		status = bk_data_persistent(q, req);
		if (status == 0)
			return true;
		/* Persistent grants are mapped writable, as Linux blkback maps
		 * them; a WRITE's pages granted read-only cannot be, and are
		 * copied instead (a bad gref then fails the copy: ERROR).  A
		 * READ into them stays ERROR. */
		if (status != -ENOSPC && !write) {
			complete(q, req, BLKIF_RSP_ERROR, "cannot map the guest's grants");
			return false;
		}
	}
	if (data && q->map_threshold && (br->nr_sectors << SECTOR_SHIFT) >= q->map_threshold) {
		if (bk_data_map(q, req, !write) < 0) {
			complete(q, req, BLKIF_RSP_ERROR, "cannot map the guest's grants");
			return false;
		}
		host_append(q, req, "map");
	} else if (data && write) {
		bk_data_copy(q, req, false);
	}
	return true;
}

/* After the write data batch: run the plan. */
static void
req_start(struct bk_queue *q, struct bk_req *req)
{
	if (req->cn && req->copy_err) {
		complete(q, req, BLKIF_RSP_ERROR, "grant copy from guest failed");
		return;
	}
	req_advance(q, req);
}

/* ---------------------------------------------------------------- */
/* The queue thread.                                                  */
/* ---------------------------------------------------------------- */

static void
queue_broken(struct bk_queue *q)
{
	char msg[128];

	q->broken = true;
	snprintf(msg, sizeof(msg), "ring %u: request producer index moved more than "
		 "the ring size (%u) past our responses; ring stopped",
		 q->idx, blkring_size(q->ring));
	bk_trace(q->trace, q->name, q->idx, "ring=broken");
	report(q, BK_REPORT_BROKEN_RING, 0, msg);
}

/*
 * One pass over the ring: take every request there is (stopping after a
 * barrier, which holds the ring), then move their data in two grant
 * copy batches (indirect pages, write data), then start each: its host
 * I/O is submitted at once (Linux blkback plugs per request too:
 * batching a whole ring's worth into one io_submit held the first
 * request back ~60 us for 4 KiB reads at QD32), unless system calls
 * are slow here (batch_submit: in a PV domain each traps to the
 * hypervisor, ~60 us under emulation): then one io_submit for the pass.
 */
static void
queue_consume(struct bk_queue *q)
{
	unsigned int n = 0, k = 0, i;

	while (!q->hold && !q->broken && !q->stopping) {
		struct bk_req *req = q->recov;
		bool barrier;
		int rc;

		if (req) {
			/* a previous blkbackd took it: done again first, in
			 * take order (qstate.h) */
			q->recov = req->next;
			req->next = NULL;
			req_reset(req);
		} else if (!(req = req_get(q))) {
			if (blkring_back_peek(q->ring))
				bk_stat_add(&q->stats, oo_req, 1);
			break;	/* resumed when a request completes */
		} else if ((rc = blkring_back_get_request(q->ring, &req->br)) != 1) {
			req_put(q, req);
			if (rc < 0)
				queue_broken(q);
			break;	/* empty: bk_queue_main arms req_event before sleeping */
		} else {
			/* recorded before it is acted on (qstate.h) */
			req->take_idx = blkring_back_req_cons(q->ring) - 1;
			if (q->qs)
				bk_qstate_take(q->qs, req - q->reqs, req->take_idx, &req->br);
			crash_point(q, BK_CRASH_TAKEN);
		}
		barrier = req->br.op == BLKIF_OP_WRITE_BARRIER;
		if (req_take(q, req))
			q->pass[n++] = req;
		if (barrier)
			break;	/* nothing after it until it has run */
	}
	bk_data_copy_flush(q);		/* indirect pages */
	for (i = 0; i < n; i++)
		if (req_data_in(q, q->pass[i]))
			q->pass[k++] = q->pass[i];
	bk_data_copy_flush(q);		/* write data */
	for (i = 0; i < k; i++) {
		req_start(q, q->pass[i]);
		if (!q->batch_submit)
			queue_submit(q);
	}
	queue_submit(q);
}

static void
queue_submit(struct bk_queue *q)
{
	while (q->submit_n) {
		int rc = bk_store_submit(q->sq, q->submit_q, q->submit_n);

		if (rc == -EAGAIN || rc == 0)
			return;	/* the store is full: retried after a reap */
		if (rc < 0) {
			/* Refused outright: fail the first one, retry the rest. */
			struct bk_io *io = q->submit_q[0];

			memmove(q->submit_q, q->submit_q + 1, --q->submit_n * sizeof(*q->submit_q));
			io->result = rc;
			io_done(q, io);
			continue;
		}
		q->submit_n -= rc;
		memmove(q->submit_q, q->submit_q + rc, q->submit_n * sizeof(*q->submit_q));
	}
}

/* A read that completed and whose data goes to the guest by grant copy. */
static bool
read_to_copy(const struct bk_io *io)
{
	const struct bk_req *req = io->opaque;

	return io->result >= 0 && req->plan.steps[req->step] == BK_STEP_READ &&
	       !req->map && !req->pg;
}

/* Answer every completion the store has; how many it had. */
static unsigned int
queue_reap(struct bk_queue *q)
{
	struct bk_io *done[64];
	unsigned int total = 0;
	int n, i;

	/* fewer than asked: nothing else is ready (store.h reap contract) */
	do {
		n = bk_store_reap(q->sq, done, ARRAY_SIZE(done));
		/* the reads' data to the guests in one batch */
		for (i = 0; i < n; i++)
			if (read_to_copy(done[i]))
				bk_data_copy(q, done[i]->opaque, true);
		bk_data_copy_flush(q);
		for (i = 0; i < n; i++) {
			io_done(q, done[i]);
			/* Answer each at once, as Linux blkback's make_response
			 * does: a frontend that sleeps is notified once per
			 * arming, and one that polls sees the first answers
			 * while we build the rest. */
			queue_push(q);
		}
		if (n > 0)
			total += (unsigned int)n;
	} while (n == (int)ARRAY_SIZE(done));
	return total;
}

static void
queue_push(struct bk_queue *q)
{
	bool notify;

	if (!q->need_push)
		return;
	q->need_push = false;
	notify = blkring_back_push_responses(q->ring);
	crash_point(q, BK_CRASH_PUSHED);
	if (q->qs)
		bk_qstate_pushed(q->qs, blkring_back_rsp_pushed(q->ring));
	if (notify) {
		int rc = xenops_evtchn_notify(q->evtchn, q->port);

		if (rc < 0)
			bk_dbg(BK_DBG_EVTCHN, "vbd %s ring %u: notify: %s", q->name, q->idx,
			       strerror(-rc));
	}
}

/*
 * The event channel woke us: acknowledge it.  The handle has one port,
 * masked while pending until we unmask it, so one pending() is all
 * there is (a second would only cost another system call, a trap to
 * the hypervisor in a PV dom0); an event after the unmask wakes the
 * epoll again.  Done after the pass that consumed and submitted what
 * the event announced, not before it: the two system calls are no
 * longer between a guest's notify and its request's I/O (about 80 us
 * of a QD1 request's 630 in a PV dom0 under emulation).  Nothing is
 * lost meanwhile: a notify while the port is masked stays pending and
 * is raised again by the unmask, and the unmask comes before the final
 * look at the ring and before any sleep.
 */
static void
queue_evtchn(struct bk_queue *q)
{
	int port;

	if (!q->evtchn_unacked)
		return;
	q->evtchn_unacked = false;
	port = xenops_evtchn_pending(q->evtchn);
	if (port >= 0)
		xenops_evtchn_unmask(q->evtchn, port);
}

/* Could the ring give us a request now? */
static bool
queue_can_consume(const struct bk_queue *q)
{
	return !q->hold && !q->broken && !q->stopping && (q->nr_free || q->recov);
}

/* A request to consume, or a completion to reap (no system calls). */
static bool
queue_ready(void *opaque)
{
	struct bk_queue *q = opaque;

	return (queue_can_consume(q) && (q->recov || blkring_back_peek(q->ring))) ||
	       (q->inflight && bk_store_poll(q->sq));
}

/*
 * Spin for up to the current window on the shared ring and the store's
 * completion ring.  True when there is work (completions already reaped).
 */
static bool
queue_poll(struct bk_queue *q, uint64_t start)
{
	/* A store that cannot be polled tells of completions only through
	 * its fd: spinning on the ring alone would delay them. */
	if (q->inflight && !q->store_polls)
		return false;
	if (!pollwin_spin(&q->poll, start, queue_ready, q))
		return false;
	if (q->inflight && bk_store_poll(q->sq))
		queue_reap(q);
	return true;
}

/*
 * The control thread's doorbell (stop_efd) rang: a size probe, a stop,
 * or both.  The probe first, here: on a backing whose file system hangs
 * this thread waits in it (as it would in that backing's I/O), never
 * the control thread.  A stop: consume no more, finish what is in
 * flight.
 */
static void
queue_bell(struct bk_queue *q)
{
	bool probe, stop;
	uint64_t v;

	if (read(q->stop_efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: already consumed */
	}
	pthread_mutex_lock(&q->rep_lock);
	probe = q->size_asked;
	q->size_asked = false;
	stop = q->stop_asked;
	pthread_mutex_unlock(&q->rep_lock);
	if (probe) {
		uint64_t bytes = 0;
		int rc = bk_store_size(q->store, &bytes);

		pthread_mutex_lock(&q->rep_lock);
		q->rep.events |= BK_REPORT_SIZE;
		q->rep.size_rc = rc;
		q->rep.size_bytes = bytes;
		pthread_mutex_unlock(&q->rep_lock);
		report_wake(q);
	}
	if (stop)
		q->stopping = true;
}

/*
 * Sleep in the store (q->store_waits: io_uring), which watches the event
 * channel and stop_efd as polls in its ring: one io_uring_enter per
 * sleep, where epoll_wait took one and, on a kernel that signals the
 * ring's eventfd for a completion already reaped, a second that found
 * nothing new (DESIGN-NOTES.md).  Not busy: sleep until an event, a
 * stop or a completion; busy: only hand the kernel what the store has
 * prepared (no system call when there is nothing).  Then take what
 * came.  -1 when the thread must end now (nothing in flight, cannot
 * wait any more).
 */
static int
queue_wait_store(struct bk_queue *q, bool busy, uint64_t start)
{
	unsigned int fired;
	int rc = bk_store_wait(q->sq, !busy, &fired);

	if (q->poll.max_ns)
		pollwin_waited(&q->poll, start, !busy);
	if (fired & (1u << WAIT_EVTCHN))
		q->evtchn_unacked = true;	/* after the pass */
	if (fired & (1u << WAIT_STOP))
		queue_bell(q);
	if (rc < 0 && rc != -EINTR) {
		if (!q->stopping || !q->wait_failed)
			log_error("vbd %s ring %u: waiting in the store: %s; stopping after "
				  "what is in flight", q->name, q->idx, strerror(-rc));
		q->wait_failed = true;
		/* cannot wait any more: stop as if asked, after what is in
		 * flight, looking for it once a millisecond (no spinning) */
		q->stopping = true;
		queue_reap(q);
		if (q->inflight == 0)
			return -1;
		usleep(1000);
		return 0;
	}
	/* completions, and the events the store saw while walking its
	 * CQ (reported by the next bk_store_wait, which then does not
	 * sleep) */
	queue_reap(q);
	return 0;
}

void *
bk_queue_main(void *opaque)
{
	struct bk_queue *q = opaque;
	struct epoll_event evs[4];
	int n, i;

	for (;;) {
		uint64_t start;
		bool busy;

		queue_consume(q);
		queue_submit(q);
		/* What has completed already (a buffered file's aio often
		 * completes inside io_submit, a synchronous store always) is
		 * answered now, not after a trip through epoll_wait: a
		 * request costs one wake-up and system call less.  A reap
		 * may queue a plan's next step: submit again. */
		while (q->inflight && q->store_polls && bk_store_poll(q->sq) &&
		       queue_reap(q) > 0)
			queue_submit(q);
		queue_push(q);
		queue_evtchn(q);
		if (q->stopping && q->inflight == 0)
			break;
		/* no polling, no clock: reading it may be a system call */
		start = q->poll.max_ns ? pollwin_now_ns() : 0;
		busy = q->poll.max_ns && queue_poll(q, start);
		/* arm req_event and look once more: a request pushed since the
		 * last look would otherwise not notify us */
		if (!busy && queue_can_consume(q) &&
		    (q->recov || blkring_back_final_check(q->ring)))
			busy = true;
		/* busy: go round again, but look at the fds (stop, event
		 * channel) at least once a millisecond */
		if (busy && q->poll.max_ns && pollwin_may_skip_wait(&q->poll, start))
			continue;
		if (q->store_waits) {
			if (queue_wait_store(q, busy, start) < 0)
				break;
			continue;
		}
		n = epoll_wait(q->epfd, evs, ARRAY_SIZE(evs), busy ? 0 : -1);
		if (q->poll.max_ns)
			pollwin_waited(&q->poll, start, !busy);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("vbd %s ring %u: epoll_wait: %m", q->name, q->idx);
			/* cannot wait any more: stop as if asked, after what is in flight */
			q->stopping = true;
			if (q->inflight == 0)
				break;
			queue_reap(q);
			continue;
		}
		for (i = 0; i < n; i++) {
			switch (evs[i].data.u32) {
			case EV_EVTCHN:
				q->evtchn_unacked = true;	/* after the pass */
				break;
			case EV_STORE:
				queue_reap(q);
				break;
			case EV_STOP:
				queue_bell(q);
				break;
			}
		}
	}
	queue_push(q);
	if (q->store_waits) {
		/* the store lets go of the event channel and stop fds here,
		 * in the thread whose polls they were (store.h) */
		int rc = bk_store_queue_wait_setup(q->sq, NULL, 0);

		if (rc < 0)
			log_error("vbd %s ring %u: cannot take the queue's polls out of "
				  "the store: %s", q->name, q->idx, strerror(-rc));
	}
	/* paired with the acquire in bk_dataplane_stopped: everything this
	 * thread did to the ring and the store happens before the control
	 * thread tears them down */
	smp_store_release(&q->finished, true);
	report(q, BK_REPORT_DRAINED, 0, NULL);
	return NULL;
}

