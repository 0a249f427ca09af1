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
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
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

/* Put an event into the report box and wake the control thread. */
static void
report(struct bk_queue *q, unsigned int event, unsigned int withdraw, const char *msg)
{
	uint64_t one = 1;

	pthread_mutex_lock(&q->rep_lock);
	q->rep.events |= event;
	q->rep.withdraw |= withdraw;
	if (msg)
		snprintf(q->rep.msg, sizeof(q->rep.msg), "%s", msg);
	pthread_mutex_unlock(&q->rep_lock);
	/* an eventfd write fails only on counter overflow */
	if (write(q->report_efd, &one, sizeof(one)) != sizeof(one))
		log_error("vbd %s ring %u: cannot wake the control thread: %m", q->name, q->idx);
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
	r->step = 0;
	r->secure = false;
	r->host[0] = '\0';
	r->map = NULL;
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
	 * blkback's req_operation, which hardened blkfront checks). */
	if (blkring_back_put_response(q->ring, br->id, br->op, status) == 0)
		q->need_push = true;
	if (status == BLKIF_RSP_ERROR)
		bk_stat_add(&q->stats, err_rsp, 1);
	else if (status == BLKIF_RSP_EOPNOTSUPP)
		bk_stat_add(&q->stats, eopnotsupp_rsp, 1);
	if (bk_tracing(q->trace))
		trace_response(q, req, status, reason);
	if (req->map) {
		xenops_unmap(q->xops, req->map, br->nr_segments);
		req->map = NULL;
	}
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

/*
 * Zero-copy for large requests: map the segments' grants (writable for a
 * READ, whose data goes into the guest's pages) for the duration of the
 * host I/O, one iovec per segment.  All or nothing (xenops_map_grefs),
 * so a bad gref fails the whole request before any I/O, like a failed
 * grant copy.  Unmapped in complete().
 */
static int
map_data(struct bk_queue *q, struct bk_req *req, bool writable)
{
	const struct blkreq *br = &req->br;
	unsigned int i, n = br->nr_segments;

	for (i = 0; i < n; i++)
		q->grefs[i] = br->seg[i].gref;
	req->map = xenops_map_grefs(q->xops, q->domid, n, q->grefs, writable);
	if (!req->map)
		return -errno;
	for (i = 0; i < n; i++) {
		unsigned int first = br->seg[i].first_sect, last = br->seg[i].last_sect;

		req->iovs[i].iov_base = (char *)req->map + (size_t)i * XEN_PAGE_SIZE +
					(first << SECTOR_SHIFT);
		req->iovs[i].iov_len = (last - first + 1) << SECTOR_SHIFT;
	}
	host_append(q, req, "map");
	return 0;
}

/* Grant-copy the request's segments between the guest and req->buf,
 * packed back to back (one iovec for the host). */
static int
copy_data(struct bk_queue *q, struct bk_req *req, bool to_guest)
{
	struct xenops_copy_seg *segs = q->copy;
	const struct blkreq *br = &req->br;
	unsigned int i, n = br->nr_segments;
	size_t off = 0;

	if (n > q->max_segs)
		return -EINVAL;	/* validated already */
	for (i = 0; i < n; i++) {
		unsigned int first = br->seg[i].first_sect, last = br->seg[i].last_sect;

		segs[i].gref = br->seg[i].gref;
		segs[i].offset = first << SECTOR_SHIFT;
		segs[i].len = (last - first + 1) << SECTOR_SHIFT;
		segs[i].local = (char *)req->buf + off;
		segs[i].status = 0;
		off += segs[i].len;
	}
	return xenops_grant_copy(q->xops, q->domid, to_guest, n, segs);
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
		if (req->map) {
			/* zero-copy: one iovec per segment of the mapped pages */
			io->iov = req->iovs;
			io->iovcnt = req->br.nr_segments;
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
	if (step == BK_STEP_READ && !req->map && copy_data(q, req, true) < 0) {
		complete(q, req, BLKIF_RSP_ERROR, "grant copy to guest failed");
		return;
	}
	req->step++;
	req_advance(q, req);
}

/* Copy the indirect descriptor pages once, then parse the private copy. */
static int
fetch_indirect(struct bk_queue *q, struct bk_req *req, const char **reason)
{
	struct blkreq *br = &req->br;
	const void *pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	unsigned int i, n = br->nr_indirect_pages;

	if (n == 0 || n > BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST ||
	    n > (q->max_segs + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) / BLKRING_SEGS_PER_INDIRECT_PAGE) {
		*reason = "bad number of indirect pages";
		return BLKIF_RSP_ERROR;
	}
	for (i = 0; i < n; i++) {
		q->copy[i].gref = br->indirect_grefs[i];
		q->copy[i].offset = 0;
		q->copy[i].len = XEN_PAGE_SIZE;
		q->copy[i].local = (char *)req->ind + (size_t)i * XEN_PAGE_SIZE;
		q->copy[i].status = 0;
		pages[i] = q->copy[i].local;
	}
	if (xenops_grant_copy(q->xops, q->domid, false, n, q->copy) < 0) {
		*reason = "cannot read an indirect page (bad grant)";
		return BLKIF_RSP_ERROR;
	}
	return blkreq_parse_indirect(br, &q->lim, pages, reason);
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

static void
dispatch(struct bk_queue *q, struct bk_req *req)
{
	struct blkreq *br = &req->br;
	const char *reason = NULL;
	bool needs_indirect = false;
	int status;

	q->inflight++;
	req->plan.steps[0] = BK_STEP_END;
	/* a flush failed: here, on another queue of the store (C15), or
	 * before the vbd reconnected */
	if (unlikely(q->failed || bk_store_failed(q->store))) {
		complete(q, req, BLKIF_RSP_ERROR, "device failed");
		return;
	}
	status = blkreq_validate(br, &q->lim, &needs_indirect, &reason);
	if (status == BLKIF_RSP_OKAY && needs_indirect)
		status = fetch_indirect(q, req, &reason);
	if (status != BLKIF_RSP_OKAY) {
		bk_dbg(BK_DBG_RING, "vbd %s ring %u id %" PRIu64 ": %s", q->name, q->idx,
		       br->id, reason ? reason : "invalid");
		complete(q, req, status, reason ? reason : "invalid");
		return;
	}
	req->plan = *plan_of(q, br);
	if (req->plan.status != BLKIF_RSP_OKAY) {
		complete(q, req, req->plan.status, "not offered");
		return;
	}
	count_request(q, br);
	/* SECURE without discard-secure=1 is a plain discard (blkif.h) */
	if (br->op == BLKIF_OP_DISCARD)
		req->secure = br->discard_secure && q->feat.discard_secure;
	if (q->map_threshold && br->nr_segments &&
	    (br->op == BLKIF_OP_READ || plan_has_write(&req->plan)) &&
	    (br->nr_sectors << SECTOR_SHIFT) >= q->map_threshold) {
		if (map_data(q, req, br->op == BLKIF_OP_READ) < 0) {
			complete(q, req, BLKIF_RSP_ERROR, "cannot map the guest's grants");
			return;
		}
	} else if (plan_has_write(&req->plan) && copy_data(q, req, false) < 0) {
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

static void
queue_consume(struct bk_queue *q)
{
	while (!q->hold && !q->broken && !q->stopping) {
		struct bk_req *req = req_get(q);
		int rc;

		if (!req) {
			if (blkring_back_peek(q->ring))
				bk_stat_add(&q->stats, oo_req, 1);
			return;	/* resumed when a request completes */
		}
		rc = blkring_back_get_request(q->ring, &req->br);
		if (rc == 1) {
			dispatch(q, req);
			/* Submit each request as soon as it is planned (Linux
			 * blkback plugs per request too): batching a whole
			 * ring's worth into one io_submit held the first
			 * request back ~60 us (4 KiB reads at QD32). */
			queue_submit(q);
			continue;
		}
		req_put(q, req);
		if (rc < 0)
			queue_broken(q);
		return;		/* empty: bk_queue_main arms req_event before sleeping */
	}
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

static void
queue_reap(struct bk_queue *q)
{
	struct bk_io *done[64];
	int n, i;

	/* fewer than asked: nothing else is ready (store.h reap contract) */
	do {
		n = bk_store_reap(q->sq, done, ARRAY_SIZE(done));
		for (i = 0; i < n; i++) {
			io_done(q, done[i]);
			/* Answer each at once, as Linux blkback's make_response
			 * does: the host completes in bursts (~25 at a time
			 * here), and a push after the whole burst held the
			 * first answers back while the rest were copied
			 * (4 KiB QD32 polled: ~107 k -> ~112 k IOPS).  A
			 * frontend that sleeps is notified once per arming. */
			queue_push(q);
		}
	} while (n == (int)ARRAY_SIZE(done));
}

static void
queue_push(struct bk_queue *q)
{
	if (!q->need_push)
		return;
	q->need_push = false;
	if (blkring_back_push_responses(q->ring)) {
		int rc = xenops_evtchn_notify(q->evtchn, q->port);

		if (rc < 0)
			bk_dbg(BK_DBG_EVTCHN, "vbd %s ring %u: notify: %s", q->name, q->idx,
			       strerror(-rc));
	}
}

static void
queue_evtchn(struct bk_queue *q)
{
	int port;

	while ((port = xenops_evtchn_pending(q->evtchn)) >= 0)
		xenops_evtchn_unmask(q->evtchn, port);
}

/* Could the ring give us a request now? */
static bool
queue_can_consume(const struct bk_queue *q)
{
	return !q->hold && !q->broken && !q->stopping && q->nr_free;
}

/* A request to consume, or a completion to reap (no system calls). */
static bool
queue_ready(void *opaque)
{
	struct bk_queue *q = opaque;

	return (queue_can_consume(q) && blkring_back_peek(q->ring)) ||
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
		queue_push(q);
		if (q->stopping && q->inflight == 0)
			break;
		start = pollwin_now_ns();
		busy = queue_poll(q, start);
		/* arm req_event and look once more: a request pushed since the
		 * last look would otherwise not notify us */
		if (!busy && queue_can_consume(q) && blkring_back_final_check(q->ring))
			busy = true;
		/* busy: go round again, but look at the fds (stop, event
		 * channel) at least once a millisecond */
		if (busy && pollwin_may_skip_wait(&q->poll, start))
			continue;
		n = epoll_wait(q->epfd, evs, ARRAY_SIZE(evs), busy ? 0 : -1);
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
				queue_evtchn(q);
				break;
			case EV_STORE:
				queue_reap(q);
				break;
			case EV_STOP: {
				uint64_t v;

				if (read(q->stop_efd, &v, sizeof(v)) < 0) {
					/* EAGAIN: already consumed */
				}
				q->stopping = true;
				break;
			}
			}
		}
	}
	queue_push(q);
	/* paired with the acquire in bk_dataplane_stopped: everything this
	 * thread did to the ring and the store happens before the control
	 * thread tears them down */
	smp_store_release(&q->finished, true);
	report(q, BK_REPORT_DRAINED, 0, NULL);
	return NULL;
}

