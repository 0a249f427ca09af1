/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkfront.c: libblkfront, see blkfront.h for the contract.
 *
 * Ownership: struct blkfront owns its queues; each queue (struct ft_queue)
 * owns its shared ring pages, its event channel handle, its data page
 * pool and its slots, all under q->lock.  The completion thread is the
 * only reader of responses; submitters are the only writers of requests.
 * Semantics follow Linux xen-blkfront (talk_to_blkback, blkfront_connect,
 * blkfront_gather_backend_features, blkif_interrupt) and Xen io/blkif.h.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <xen/io/protocols.h>
#include <xen/io/xenbus.h>

#include "compiler.h"
#include "barrier.h"
#include "log.h"
#include "pollwin.h"
#include "guestlog.h"
#include "xbus.h"
#include "blkfront.h"

#define FT_DEFAULT_TIMEOUT_MS	30000u
#define FT_MAX_QUEUES		16u

struct ft_slot {
	struct blkfront_req *req;	/* NULL when free */
	uint32_t gen;			/* upper half of the id */
	uint8_t op;			/* expected response operation */
	bool busy;			/* on the ring, no response yet */
	uint64_t t_submit;
	uint64_t covers;		/* flush: guestlog seq covered */
	uint64_t issued_after;		/* guestlog seq before it was sent */
	void *data;			/* segs_per_req pages */
	grant_ref_t *data_refs;
	void *ind;			/* indirect pages (or NULL) */
	grant_ref_t *ind_refs;
	/* Without persistent grants (bf->per_request): the pages granted
	 * for the request on the ring, access ended at its response. */
	unsigned int ndata, nind;
};

struct ft_queue {
	pthread_mutex_t lock;
	pthread_cond_t slot_free;
	unsigned int idx;
	blkring_t *ring;
	void *sring;
	unsigned int nr_ring_pages;
	grant_ref_t ring_refs[BLKRING_MAX_PAGES];
	xenops_evtchn_t *evtchn;
	int port;
	unsigned int pool_pages;	/* data + indirect pages, all slots */
	unsigned int pages_per_slot;	/* shared once per slot */
	grant_ref_t *pool_refs;
	struct ft_slot *slots;
	unsigned int nr_slots;
	unsigned int *freelist;
	unsigned int nfree;
	struct blkreq *wire;		/* blkfront_submit's, under lock; ~2 KiB */
};

struct blkfront {
	struct blkfront_config cfg;
	xenops_t *x;
	struct xs_handle *xs;		/* control: handshake, waits */
	struct xs_handle *xsw;		/* completion thread's watch */
	struct blkfront_info info;
	char fe[128], be[128];
	char fe_state[136];		/* fe + "/state": watched, as Linux's
					 * xenbus core watches the device */
	enum blkring_abi abi;
	const char *protocol;
	unsigned int nr_ind_pages;	/* per slot */
	bool adv_flush_cache, adv_barrier;

	struct ft_queue q[FT_MAX_QUEUES];
	unsigned int nq;
	unsigned int rr;		/* atomic: round robin */

	pthread_t thread;
	bool thread_running;
	int stop_fd;			/* eventfd */
	struct pollwin poll;		/* completion thread's, cfg.poll_max_us */
	/* Threads inside blkfront_poll_begin()..end() (atomic).  While
	 * nonzero they reap (blkfront_poll/blkfront_wait) and the completion
	 * thread leaves the rings and event channels to them. */
	unsigned int pollers;
	int resume_fd;			/* eventfd: pollers fell to 0 */
	int wake_fd;			/* eventfd: wakes blkfront_wait() */

	bool broken;			/* atomic */
	bool notify_failed;		/* atomic: logged once */
	/* No persistent grants negotiated: a request's pages are granted
	 * at submit and access to them is ended at its response (Linux
	 * blkfront; a backend still mapping one then breaks the device). */
	bool per_request;
	bool close_fault;		/* the backend was Closed and still mapped */
	pthread_mutex_t stats_lock;
	struct blkfront_stats stats;

	pthread_mutex_t log_lock;
	uint64_t log_seq, log_last_w;

	/* handshake overrides (script mode / tests), see blkfront_set_fe_key */
	char *fe_keys[16];
	unsigned int nr_fe_keys;
};

static uint8_t
op_to_blkif(enum blkfront_op op)
{
	switch (op) {
	case BLKFRONT_READ: return BLKIF_OP_READ;
	case BLKFRONT_WRITE: return BLKIF_OP_WRITE;
	case BLKFRONT_FLUSH_DISKCACHE: return BLKIF_OP_FLUSH_DISKCACHE;
	case BLKFRONT_WRITE_BARRIER: return BLKIF_OP_WRITE_BARRIER;
	case BLKFRONT_DISCARD: return BLKIF_OP_DISCARD;
	}
	return 0xff;
}

uint64_t
ft_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* guest log                                                          */
/* ------------------------------------------------------------------ */

/* The last W record and the last record of any kind logged so far. */
static void
glog_marks(blkfront_t *bf, uint64_t *last_w, uint64_t *last)
{
	*last_w = *last = 0;
	if (!bf->cfg.guestlog)
		return;
	pthread_mutex_lock(&bf->log_lock);
	*last_w = bf->log_last_w;
	*last = bf->log_seq;
	pthread_mutex_unlock(&bf->log_lock);
}

static void
glog_write(blkfront_t *bf, uint64_t sector, uint64_t nr, const void *data,
	   bool fua, uint64_t issued_after)
{
	uint64_t h = guestlog_hash(data, nr * SECTOR_SIZE);

	pthread_mutex_lock(&bf->log_lock);
	bf->log_last_w = ++bf->log_seq;
	fprintf(bf->cfg.guestlog, "W %" PRIu64 " %" PRIu64 " %" PRIu64 " %016" PRIx64
		" %d %" PRIu64 "\n", bf->log_seq, sector, nr, h, fua ? 1 : 0, issued_after);
	fflush(bf->cfg.guestlog);
	pthread_mutex_unlock(&bf->log_lock);
}

static void
glog_flush(blkfront_t *bf, uint64_t covers)
{
	pthread_mutex_lock(&bf->log_lock);
	fprintf(bf->cfg.guestlog, "F %" PRIu64 " %" PRIu64 "\n", ++bf->log_seq, covers);
	fflush(bf->cfg.guestlog);
	pthread_mutex_unlock(&bf->log_lock);
}

static void
glog_error(blkfront_t *bf, const char *op, uint64_t sector, uint64_t nr, int status)
{
	pthread_mutex_lock(&bf->log_lock);
	fprintf(bf->cfg.guestlog, "E %" PRIu64 " %s %" PRIu64 " %" PRIu64 " %d\n",
		++bf->log_seq, op, sector, nr, status);
	fflush(bf->cfg.guestlog);
	pthread_mutex_unlock(&bf->log_lock);
}

/* ------------------------------------------------------------------ */
/* breaking the device                                                */
/* ------------------------------------------------------------------ */

static void complete_req(blkfront_t *bf, struct ft_slot *s, struct blkfront_req *req,
			 int16_t status, bool have_rsp);

static void
efd_kick(int fd)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is saturated, so the fd is readable anyway */
	if (fd >= 0 && write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_error("blkfront: eventfd write: %m");
}

static void
efd_clear(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_error("blkfront: eventfd read: %m");
}

/* Threads in blkfront_wait() look again (something completed without them). */
static void
wake_waiters(blkfront_t *bf)
{
	if (__atomic_load_n(&bf->pollers, __ATOMIC_ACQUIRE))
		efd_kick(bf->wake_fd);
}

/*
 * Fail every outstanding request with -EIO and refuse new ones.  msg is
 * logged once (NULL: quiet, e.g. on close).  Callable from any thread
 * that holds no queue lock.
 */
static void
fail_all(blkfront_t *bf, const char *msg)
{
	unsigned int i, j;

	if (msg && !__atomic_exchange_n(&bf->broken, true, __ATOMIC_ACQ_REL))
		log_error("vbd %s: %s; device disabled for further use", bf->fe, msg);
	else
		__atomic_store_n(&bf->broken, true, __ATOMIC_RELEASE);

	for (i = 0; i < bf->nq; i++) {
		struct ft_queue *q = &bf->q[i];
		struct blkfront_req **done;
		unsigned int n = 0;

		if (!q->slots)
			continue;
		done = calloc(q->nr_slots, sizeof(*done));
		pthread_mutex_lock(&q->lock);
		for (j = 0; done && j < q->nr_slots; j++) {
			struct ft_slot *s = &q->slots[j];

			if (s->busy) {
				/* the slot stays out of the freelist for good:
				 * the backend may still touch its pages */
				s->busy = false;
				done[n++] = s->req;
				s->req = NULL;
			}
		}
		pthread_cond_broadcast(&q->slot_free);
		pthread_mutex_unlock(&q->lock);
		for (j = 0; j < n; j++)
			complete_req(bf, NULL, done[j], 1, false);
		free(done);
	}
	wake_waiters(bf);
}

bool
blkfront_broken(const blkfront_t *bf)
{
	return __atomic_load_n(&bf->broken, __ATOMIC_ACQUIRE);
}

/* ------------------------------------------------------------------ */
/* completion                                                         */
/* ------------------------------------------------------------------ */

static const char *
opname(uint8_t op)
{
	return blkreq_op_name(op);
}

/*
 * Finish one request whose slot was taken off the ring (s may be NULL
 * when failing without a response).  Runs on the completion thread (or
 * in fail_all), no lock held.
 */
static void
complete_req(blkfront_t *bf, struct ft_slot *s, struct blkfront_req *req,
	     int16_t status, bool have_rsp)
{
	uint8_t op = op_to_blkif(req->op);
	bool empty = req->len == 0 || req->op == BLKFRONT_DISCARD;

	req->status = status;
	if (!have_rsp) {
		req->result = -EIO;
	} else if (status == BLKIF_RSP_OKAY) {
		req->result = 0;
	} else if (status == BLKIF_RSP_EOPNOTSUPP) {
		req->result = -EOPNOTSUPP;
	} else {
		req->result = -EIO;
	}

	/* Linux blkif_interrupt's feature withdrawal rules. */
	if (have_rsp && (op == BLKIF_OP_FLUSH_DISKCACHE || op == BLKIF_OP_WRITE_BARRIER) &&
	    (status == BLKIF_RSP_EOPNOTSUPP || (status == BLKIF_RSP_ERROR && empty))) {
		/* racing readers see the old or the new value; both are safe */
		bool had_flush = __atomic_exchange_n(&bf->info.feature_flush, false,
						     __ATOMIC_RELAXED);
		bool had_fua = __atomic_exchange_n(&bf->info.feature_fua, false,
						   __ATOMIC_RELAXED);

		if (had_flush || had_fua)
			log_info("vbd %s: %s%s op failed (status %d): flush and FUA withdrawn",
				 bf->fe, empty ? "empty " : "", opname(op), status);
	}
	if (have_rsp && op == BLKIF_OP_DISCARD && status == BLKIF_RSP_EOPNOTSUPP) {
		if (__atomic_exchange_n(&bf->info.feature_discard, false, __ATOMIC_RELAXED))
			log_info("vbd %s: discard op failed: discard withdrawn", bf->fe);
		WRITE_ONCE(bf->info.feature_secdiscard, false);
	}

	if (s && req->result == 0 && req->op == BLKFRONT_READ)
		memcpy(req->buf, s->data, req->len);

	if (bf->cfg.guestlog && s) {
		uint64_t nr = req->len / SECTOR_SIZE;
		bool flush = op == BLKIF_OP_FLUSH_DISKCACHE || op == BLKIF_OP_WRITE_BARRIER;

		if (req->result == 0) {
			if (flush)
				glog_flush(bf, s->covers);
			if ((op == BLKIF_OP_WRITE || flush) && nr)
				glog_write(bf, req->sector, nr, s->data,
					   op == BLKIF_OP_WRITE_BARRIER, s->issued_after);
		} else if (op == BLKIF_OP_WRITE || flush) {
			glog_error(bf, op == BLKIF_OP_WRITE ? "write" :
				   op == BLKIF_OP_WRITE_BARRIER ? "barrier" : "flush",
				   req->sector, nr, status);
		}
	}

	pthread_mutex_lock(&bf->stats_lock);
	if (req->result == -EOPNOTSUPP)
		bf->stats.eopnotsupp++;
	else if (req->result)
		bf->stats.errors++;
	pthread_mutex_unlock(&bf->stats_lock);

	req->latency_ns = 0;
	if (s)
		req->latency_ns = ft_now_ns() - s->t_submit;
	req->done(req);
}

/*
 * Without persistent grants, end access to the pages of slot s's request
 * (data, then indirect) at its response, as Linux blkfront's
 * blkif_completion does (gnttab_try_end_foreign_access): a backend must
 * have unmapped them before the response was visible.  0, or -EBUSY
 * (nothing ended: the slot is never reused, see fail_all).
 */
static int
end_access(blkfront_t *bf, struct ft_slot *s)
{
	int r = 0;

	if (s->ndata)
		r = xenops_end_access(bf->x, s->data, s->ndata);
	if (!r && s->nind) {
		r = xenops_end_access(bf->x, s->ind, s->nind);
		if (r < 0 && s->ndata)
			xenops_grant_again(bf->x, s->data, s->ndata);
	}
	if (r < 0)
		return r;
	s->ndata = s->nind = 0;
	return 0;
}

/*
 * Drain queue q's responses; first take the event channel's pending
 * event when its fd polled readable (evtchn: the completion thread only).
 * Returns how many requests completed, or -EPROTO after breaking the
 * device.  Called with no lock held, by the completion thread or a
 * blkfront_poll() caller (both may run it at once: each response is
 * taken under q->lock by one of them).
 */
static int
drain_queue(blkfront_t *bf, struct ft_queue *q, bool evtchn)
{
	struct ft_slot *done[512];
	int16_t st[512];
	char why[200];
	unsigned int n = 0, i;
	int port, r = 0;

	why[0] = '\0';
	pthread_mutex_lock(&q->lock);
	port = evtchn ? xenops_evtchn_pending(q->evtchn) : -EAGAIN;
	for (;;) {
		struct blkrsp rsp;
		struct ft_slot *s;
		uint64_t slot;
		int g;

		if (n == ARRAY_SIZE(done))
			break;		/* come back for the rest */
		g = blkring_front_get_response(q->ring, &rsp);
		if (g < 0) {
			snprintf(why, sizeof(why), "queue %u: illegal number of responses (rsp_prod overflow)",
				 q->idx);
			break;
		}
		if (g == 0)
			break;	/* the completion thread arms rsp_event before sleeping */
		slot = rsp.id & 0xffffffffu;
		if (slot >= q->nr_slots) {
			snprintf(why, sizeof(why), "queue %u: response has incorrect id %#" PRIx64,
				 q->idx, rsp.id);
			break;
		}
		s = &q->slots[slot];
		if (!s->busy || s->gen != (uint32_t)(rsp.id >> 32)) {
			snprintf(why, sizeof(why),
				 "queue %u: response references no pending request (id %#" PRIx64 ", %s)",
				 q->idx, rsp.id, s->busy ? "stale generation" : "duplicate or never sent");
			break;
		}
		if (rsp.operation != s->op) {
			snprintf(why, sizeof(why),
				 "queue %u: response has wrong operation (%u instead of %u) for id %#" PRIx64,
				 q->idx, rsp.operation, s->op, rsp.id);
			break;
		}
		if (bf->per_request && end_access(bf, s) < 0) {
			snprintf(why, sizeof(why),
				 "queue %u: the backend still maps a grant of %s id %#" PRIx64
				 " at its response (no persistent grants negotiated)",
				 q->idx, opname(s->op), rsp.id);
			break;
		}
		s->busy = false;
		st[n] = rsp.status;
		done[n++] = s;
	}
	if (port >= 0)
		xenops_evtchn_unmask(q->evtchn, (uint32_t)port);
	pthread_mutex_unlock(&q->lock);

	for (i = 0; i < n; i++)
		complete_req(bf, done[i], done[i]->req, st[i], true);

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < n; i++) {
		done[i]->req = NULL;
		q->freelist[q->nfree++] = (unsigned int)(done[i] - q->slots);
	}
	if (n)
		pthread_cond_broadcast(&q->slot_free);
	pthread_mutex_unlock(&q->lock);

	if (why[0]) {
		fail_all(bf, why);
		return -EPROTO;
	}
	if (n == ARRAY_SIZE(done)) {
		r = drain_queue(bf, q, false);
		return r < 0 ? r : (int)n + r;
	}
	return (int)n;
}

/*
 * Drain each queue that has a response waiting or whose event channel
 * polled readable (pfd[i].revents; pfd NULL: none polled, take no
 * event).  How many requests completed, or -EPROTO (drain_queue).
 */
static int
reap_queues(blkfront_t *bf, const struct pollfd *pfd)
{
	unsigned int i;
	int n = 0, r;

	for (i = 0; i < bf->nq; i++) {
		bool evtchn = pfd && pfd[i].revents;

		if (!evtchn && !blkring_front_peek(bf->q[i].ring))
			continue;
		r = drain_queue(bf, &bf->q[i], evtchn);
		if (r < 0)
			return r;
		n += r;
	}
	return n;
}

int
blkfront_poll(blkfront_t *bf)
{
	return reap_queues(bf, NULL);
}

void
blkfront_poll_begin(blkfront_t *bf)
{
	__atomic_add_fetch(&bf->pollers, 1, __ATOMIC_SEQ_CST);
}

void
blkfront_poll_end(blkfront_t *bf)
{
	/* the completion thread takes the rings back */
	if (__atomic_sub_fetch(&bf->pollers, 1, __ATOMIC_SEQ_CST) == 0)
		efd_kick(bf->resume_fd);
}


/* Oldest request older than the timeout?  Fills msg. */
static bool
check_timeouts(blkfront_t *bf, char *msg, size_t len)
{
	uint64_t lim = (uint64_t)bf->cfg.timeout_ms * 1000000ull;
	unsigned int i, j;
	bool late = false;

	for (i = 0; i < bf->nq && !late; i++) {
		struct ft_queue *q = &bf->q[i];
		uint64_t now;

		pthread_mutex_lock(&q->lock);
		/* read the clock under the lock: a request submitted after it
		 * would otherwise look 2^64 ns old */
		now = ft_now_ns();
		for (j = 0; j < q->nr_slots; j++) {
			struct ft_slot *s = &q->slots[j];

			if (s->busy && now > s->t_submit && now - s->t_submit > lim) {
				blkif_sring_t *sr = q->sring;

				/* the shared indexes tell a dead backend from a
				 * lost notification (same header in every ABI) */
				snprintf(msg, len, "queue %u: no response to %s id %#" PRIx64
					 " sector %" PRIu64 " within %u ms (backend dead?) "
					 "[req_prod %u req_event %u rsp_prod %u rsp_event %u]",
					 i, opname(s->op), (uint64_t)s->gen << 32 | j,
					 s->req->sector, bf->cfg.timeout_ms,
					 READ_ONCE(sr->req_prod), READ_ONCE(sr->req_event),
					 READ_ONCE(sr->rsp_prod),
					 READ_ONCE(sr->rsp_event));
				late = true;
				break;
			}
		}
		pthread_mutex_unlock(&q->lock);
	}
	return late;
}

/* A response on any ring (no system calls; for pollwin_spin). */
static bool
any_response(void *opaque)
{
	blkfront_t *bf = opaque;
	unsigned int i;

	for (i = 0; i < bf->nq; i++)
		if (blkring_front_peek(bf->q[i].ring))
			return true;
	return false;
}

/* RING_FINAL_CHECK_FOR_RESPONSES on every ring: arm rsp_event; true
 * when a response slipped in meanwhile. */
static bool
arm_responses(blkfront_t *bf)
{
	bool more = false;
	unsigned int i;

	for (i = 0; i < bf->nq; i++) {
		struct ft_queue *q = &bf->q[i];

		pthread_mutex_lock(&q->lock);
		if (blkring_front_final_check(q->ring))
			more = true;
		pthread_mutex_unlock(&q->lock);
	}
	return more;
}

int
blkfront_wait(blkfront_t *bf, int timeout_ms)
{
	struct pollfd pfd[FT_MAX_QUEUES + 1];
	unsigned int i, n = 0;

	/* RING_FINAL_CHECK_FOR_RESPONSES: a response pushed from here on
	 * notifies; one already there is reaped without sleeping */
	if (!arm_responses(bf)) {
		for (i = 0; i < bf->nq; i++) {
			pfd[n].fd = xenops_evtchn_fd(bf->q[i].evtchn);
			pfd[n++].events = POLLIN;
		}
		pfd[n].fd = bf->wake_fd;
		pfd[n++].events = POLLIN;
		if (poll(pfd, n, timeout_ms) < 0)
			return errno == EINTR ? 0 : -errno;
		if (pfd[bf->nq].revents)
			efd_clear(bf->wake_fd);
	}
	/* a readable event channel: take its event (and unmask) */
	return reap_queues(bf, n ? pfd : NULL);
}

/*
 * The backend wrote its state again while Connected: it may have been
 * resized (Linux blkfront_connect, BLKIF_STATE_CONNECTED: "Setting
 * capacity to N").  Completion thread.
 */
static void
reread_sectors(blkfront_t *bf)
{
	uint64_t v, old = READ_ONCE(bf->info.sectors);

	if (xbus_read_u64(bf->xsw, XBT_NULL, bf->be, "sectors", UINT64_MAX, 0, &v) < 0 ||
	    v == old)
		return;
	log_info("vbd %s: backend resized: capacity %" PRIu64 " -> %" PRIu64 " sectors",
		 bf->fe, old, v);
	WRITE_ONCE(bf->info.sectors, v);
}

/* A read of the backend's state that says its directory is gone:
 * ENOENT, or EACCES once the parent went too (xenstored checks the
 * nearest existing ancestor's permissions). */
static bool
backend_gone(int r)
{
	return r == -ENOENT || r == -EACCES;
}

/*
 * The completion thread: the backend's state (xenstore watch), request
 * timeouts, and, unless callers reap for themselves (pollers, see
 * blkfront_poll_begin), the rings: poll for responses for a window, then
 * sleep on the event channels.
 */
static void *
completion_thread(void *opaque)
{
	blkfront_t *bf = opaque;
	struct pollfd pfd[FT_MAX_QUEUES + 3];
	unsigned int i, n;
	char msg[200];

	for (;;) {
		uint64_t start = pollwin_now_ns();
		bool callers = __atomic_load_n(&bf->pollers, __ATOMIC_SEQ_CST) != 0;
		bool busy = false;

		if (!callers) {
			busy = pollwin_spin(&bf->poll, start, any_response, bf);
			if (!busy && !blkfront_broken(bf))
				busy = arm_responses(bf);
		}
		if (busy && pollwin_may_skip_wait(&bf->poll, start)) {
			/* responses, and the fds were looked at < 1 ms ago */
			for (i = 0; i < bf->nq; i++)
				drain_queue(bf, &bf->q[i], false);
			wake_waiters(bf);	/* a caller began meanwhile */
			continue;
		}
		n = 0;
		pfd[n].fd = bf->stop_fd;
		pfd[n++].events = POLLIN;
		pfd[n].fd = xs_fileno(bf->xsw);
		pfd[n++].events = POLLIN;
		pfd[n].fd = bf->resume_fd;
		pfd[n++].events = POLLIN;
		for (i = 0; !callers && i < bf->nq; i++) {
			pfd[n].fd = xenops_evtchn_fd(bf->q[i].evtchn);
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, busy ? 0 : 1000) < 0) {
			if (errno == EINTR)
				continue;
			log_error("vbd %s: poll: %m", bf->fe);
			fail_all(bf, "completion thread cannot poll");
			break;
		}
		pollwin_waited(&bf->poll, start, !busy && !callers);
		if (pfd[0].revents)
			break;
		if (pfd[1].revents) {
			char **ev;
			unsigned int state = 0;
			int r;

			while ((ev = xs_check_watch(bf->xsw)) != NULL)
				free(ev);
			/* our own directory removed under us (the toolstack
			 * took the vbd away without asking the backend): the
			 * device is gone, as when Linux's xenbus core
			 * unregisters it */
			r = xbus_read_uint(bf->xsw, XBT_NULL, bf->fe, "state", 0, &state);
			if (!blkfront_broken(bf) && backend_gone(r)) {
				snprintf(msg, sizeof(msg), "frontend %s was removed (%s)",
					 bf->fe, strerror(-r));
				fail_all(bf, msg);
			}
			r = xbus_read_uint(bf->xsw, XBT_NULL, bf->be, "state", 0, &state);
			/* a state that is not a number is Linux's Unknown:
			 * ignored, as blkfront's backend_changed does */
			if (!blkfront_broken(bf) &&
			    (backend_gone(r) || (r == 0 && state >= XenbusStateClosing))) {
				if (r < 0)
					snprintf(msg, sizeof(msg), "backend %s went away (%s)",
						 bf->be, strerror(-r));
				else
					snprintf(msg, sizeof(msg), "backend %s went %s",
						 bf->be, xbus_state_name(state));
				fail_all(bf, msg);
			} else if (r == 0 && state == XenbusStateConnected) {
				reread_sectors(bf);
			}
		}
		if (pfd[2].revents)
			efd_clear(bf->resume_fd);
		if (!callers) {
			for (i = 0; i < bf->nq; i++)
				if (busy || pfd[3 + i].revents)
					drain_queue(bf, &bf->q[i], pfd[3 + i].revents);
			/* what it drained may be what a caller that began
			 * meanwhile sleeps for */
			wake_waiters(bf);
		}
		if (!blkfront_broken(bf) && check_timeouts(bf, msg, sizeof(msg)))
			fail_all(bf, msg);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* rings                                                              */
/* ------------------------------------------------------------------ */

/*
 * The backend is Closed: it must not map any page of ours any more, the
 * ring's included (Linux blkback unmaps everything before it writes
 * Closed).  Checked once, before teardown waits for stragglers: a
 * backend that still maps a page is a fault, logged, and makes
 * blkfront_close() fail.
 */
static void
check_unmapped(blkfront_t *bf, struct ft_queue *q)
{
	const char *what = NULL;
	unsigned int i;

	for (i = 0; q->slots && i < q->nr_slots && !what; i++)
		if (xenops_end_access(bf->x, q->slots[i].data, q->pages_per_slot) == -EBUSY)
			what = "data page";
	if (!what && q->sring && xenops_end_access(bf->x, q->sring, q->nr_ring_pages) == -EBUSY)
		what = "ring page";
	if (!what)
		return;
	log_error("vbd %s: queue %u: backend %s is Closed but still maps a %s of ours",
		  bf->fe, q->idx, bf->be, what);
	bf->close_fault = true;
}

static void
queue_teardown(blkfront_t *bf, struct ft_queue *q)
{
	uint64_t deadline = ft_now_ns() + (uint64_t)bf->cfg.timeout_ms * 1000000ull;
	unsigned int i;
	int r = 0;

	if (q->evtchn) {
		xenops_evtchn_close(q->evtchn);
		q->evtchn = NULL;
	}
	if (q->ring) {
		blkring_free(q->ring);
		q->ring = NULL;
	}
	/* The backend unmaps when it disconnects; wait for it like Linux's
	 * gnttab_end_foreign_access would defer the free. */
	for (i = 0; q->slots && i < q->nr_slots; i++) {
		while ((r = xenops_unshare_pages(bf->x, q->slots[i].data, q->pages_per_slot)) == -EBUSY &&
		       ft_now_ns() < deadline)
			usleep(10000);
		if (r < 0)
			log_error("vbd %s: queue %u: cannot end access to slot %u's %u pages: %s (leaked)",
				  bf->fe, q->idx, i, q->pages_per_slot, strerror(-r));
	}
	while (q->sring && (r = xenops_unshare_pages(bf->x, q->sring, q->nr_ring_pages)) == -EBUSY &&
	       ft_now_ns() < deadline)
		usleep(10000);
	if (q->sring && r < 0)
		log_error("vbd %s: queue %u: cannot end access to the ring: %s (leaked)",
			  bf->fe, q->idx, strerror(-r));
	q->sring = NULL;
	free(q->pool_refs);
	q->pool_refs = NULL;
	free(q->slots);
	q->slots = NULL;
	free(q->freelist);
	q->freelist = NULL;
	free(q->wire);
	q->wire = NULL;
	q->nr_slots = q->nfree = 0;
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->slot_free);
}

/* Ring pages + event channel (before the xenstore transaction). */
static int
queue_setup_ring(blkfront_t *bf, struct ft_queue *q, unsigned int order)
{
	int r;

	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->slot_free, NULL);
	q->nr_ring_pages = 1u << order;
	q->sring = xenops_share_pages(bf->x, bf->info.backend_domid, q->nr_ring_pages,
				      true, q->ring_refs);
	if (!q->sring) {
		r = -errno;
		log_error("vbd %s: queue %u: sharing %u ring pages: %m", bf->fe, q->idx,
			  q->nr_ring_pages);
		return r;
	}
	q->ring = blkring_front_attach(q->sring, q->nr_ring_pages, bf->abi);
	if (!q->ring) {
		r = -errno;
		log_error("vbd %s: queue %u: ring attach: %m", bf->fe, q->idx);
		return r;
	}
	q->evtchn = xenops_evtchn_open(bf->x);
	if (!q->evtchn) {
		r = -errno;
		log_error("vbd %s: queue %u: evtchn open: %m", bf->fe, q->idx);
		return r;
	}
	q->port = xenops_evtchn_bind_unbound(q->evtchn, bf->info.backend_domid);
	if (q->port < 0) {
		log_error("vbd %s: queue %u: evtchn alloc unbound for dom%u: %s", bf->fe,
			  q->idx, bf->info.backend_domid, strerror(-q->port));
		return q->port;
	}
	return 0;
}

/*
 * Slots and their data/indirect pages (after Connected).  Each slot's
 * pages are shared in one call (at most 1 + 256 pages, under
 * XENOPS_MAX_MAP_BATCH).  The grants of one device are capped at
 * FT_GRANT_BUDGET (a domain's table is finite: xensim has 8192, Linux
 * guests 32 frames' worth): fewer slots than ring entries are used then,
 * and the ring simply never fills.
 */
#define FT_GRANT_BUDGET 4096u

static int
queue_setup_slots(blkfront_t *bf, struct ft_queue *q, unsigned int segs,
		  unsigned int ind_pages)
{
	unsigned int nslots = blkring_size(q->ring);
	unsigned int per = segs + ind_pages, i;
	unsigned int budget = (bf->cfg.grant_budget ? bf->cfg.grant_budget : FT_GRANT_BUDGET) / bf->nq;

	if (nslots * per > budget) {
		unsigned int n = budget / per;

		if (n == 0)
			n = 1;
		log_info("vbd %s: queue %u: using %u of %u ring slots (%u grants each, budget %u)",
			 bf->fe, q->idx, n, nslots, per, budget);
		nslots = n;
	}
	q->pool_pages = nslots * per;
	q->pages_per_slot = per;
	q->pool_refs = calloc(q->pool_pages, sizeof(*q->pool_refs));
	q->slots = calloc(nslots, sizeof(*q->slots));
	q->freelist = calloc(nslots, sizeof(*q->freelist));
	q->wire = malloc(sizeof(*q->wire));
	if (!q->pool_refs || !q->slots || !q->freelist || !q->wire)
		return -ENOMEM;
	for (i = 0; i < nslots; i++) {
		struct ft_slot *s = &q->slots[i];
		char *base;

		base = xenops_share_pages(bf->x, bf->info.backend_domid, per, true,
					  &q->pool_refs[i * per]);
		if (!base)
			return -errno;
		q->nr_slots = i + 1;	/* what teardown must unshare */
		/* granted per request from now on (nobody can map them yet) */
		if (bf->per_request && xenops_end_access(bf->x, base, per) < 0)
			return -EIO;
		s->data = base;
		s->data_refs = &q->pool_refs[i * per];
		s->ind = ind_pages ? base + (size_t)segs * XEN_PAGE_SIZE : NULL;
		s->ind_refs = ind_pages ? &q->pool_refs[i * per + segs] : NULL;
		q->freelist[i] = nslots - 1 - i;
	}
	q->nfree = nslots;
	return 0;
}

/* ------------------------------------------------------------------ */
/* handshake                                                          */
/* ------------------------------------------------------------------ */

static int
write_ring_nodes(blkfront_t *bf, xs_transaction_t t, const char *dir, struct ft_queue *q)
{
	unsigned int i;
	int r;

	if (q->nr_ring_pages == 1) {
		r = xbus_printf(bf->xs, t, dir, "ring-ref", "%u", q->ring_refs[0]);
	} else {
		for (i = 0, r = 0; i < q->nr_ring_pages && !r; i++) {
			char key[24];

			snprintf(key, sizeof(key), "ring-ref%u", i);
			r = xbus_printf(bf->xs, t, dir, key, "%u", q->ring_refs[i]);
		}
	}
	if (!r)
		r = xbus_printf(bf->xs, t, dir, "event-channel", "%d", q->port);
	return r;
}

static const char *const stale_keys[] = {
	"ring-ref", "event-channel", "ring-page-order", "multi-queue-num-queues",
};

static void
stale_rm(blkfront_t *bf, xs_transaction_t t, const char *key)
{
	xbus_rm(bf->xs, t, bf->fe, key);	/* absent is the common case */
}

/* Every ring layout key any session may have written (in transaction t). */
static void
rm_ring_keys(blkfront_t *bf, xs_transaction_t t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(stale_keys); i++)
		stale_rm(bf, t, stale_keys[i]);
	for (i = 0; i < BLKRING_MAX_PAGES; i++) {
		char key[24];

		snprintf(key, sizeof(key), "ring-ref%u", i);
		stale_rm(bf, t, key);
		snprintf(key, sizeof(key), "queue-%u", i);
		stale_rm(bf, t, key);
	}
}

static int
unpublish_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	blkfront_t *bf = arg;
	unsigned int i;

	(void)xs;
	rm_ring_keys(bf, t);
	stale_rm(bf, t, "protocol");
	stale_rm(bf, t, "feature-persistent");
	for (i = 0; i < bf->nr_fe_keys; i++) {
		char *kv = bf->fe_keys[i], *eq = strchr(kv, '=');

		*eq = '\0';
		stale_rm(bf, t, kv);
		*eq = '=';
	}
	return 0;
}

/*
 * On close, once the backend is Closed: remove every key publish()
 * wrote, in one transaction, so the next session (ours, or another
 * frontend's with fewer queues or pages) starts from the toolstack's
 * keys alone.  Failures are logged; the caller goes on closing.
 */
static void
unpublish(blkfront_t *bf)
{
	int r = xbus_transact(bf->xs, unpublish_keys, bf);

	if (r < 0)
		log_error("vbd %s: removing the ring keys: %s", bf->fe, strerror(-r));
}

struct publish_arg {
	blkfront_t *bf;
	unsigned int order;
};

static int
publish_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct publish_arg *a = arg;
	blkfront_t *bf = a->bf;
	unsigned int i;
	int r = 0;

	/* Drop an earlier session's layout (it may have had other queues or
	 * pages): the backend must see only this one. */
	rm_ring_keys(bf, t);
	if (bf->q[0].nr_ring_pages > 1)
		r = xbus_printf(xs, t, bf->fe, "ring-page-order", "%u", a->order);
	if (!r && bf->nq == 1) {
		r = write_ring_nodes(bf, t, bf->fe, &bf->q[0]);
	} else if (!r) {
		r = xbus_printf(xs, t, bf->fe, "multi-queue-num-queues", "%u", bf->nq);
		for (i = 0; i < bf->nq && !r; i++) {
			char dir[160];

			snprintf(dir, sizeof(dir), "%s/queue-%u", bf->fe, i);
			r = write_ring_nodes(bf, t, dir, &bf->q[i]);
		}
	}
	if (!r)
		r = xbus_printf(xs, t, bf->fe, "protocol", "%s", bf->protocol);
	if (!r)
		r = xbus_printf(xs, t, bf->fe, "feature-persistent", "%u",
				(bf->cfg.flags & BLKFRONT_NO_PERSISTENT) ? 0 : 1);
	for (i = 0; i < bf->nr_fe_keys && !r; i++) {
		char *kv = bf->fe_keys[i], *eq = strchr(kv, '=');

		*eq = '\0';
		if (!strcmp(eq + 1, "-"))
			r = xbus_rm(xs, t, bf->fe, kv);	/* KEY=-: absent */
		else
			r = xbus_printf(xs, t, bf->fe, kv, "%s", eq + 1);
		*eq = '=';
	}
	return r;
}

static int
publish(blkfront_t *bf, unsigned int order)
{
	struct publish_arg a = { .bf = bf, .order = order };
	int r = xbus_transact(bf->xs, publish_keys, &a);

	if (r < 0)
		log_error("vbd %s: writing ring details: %s", bf->fe, strerror(-r));
	return r;
}

static int
switch_state(blkfront_t *bf, unsigned int state)
{
	/* only while the node exists (Linux __xenbus_switch_state): a
	 * frontend removed by the toolstack is not brought back */
	int r = xbus_switch_state(bf->xs, bf->fe, state);

	if (r == -ENOENT)
		log_info("vbd %s: %s/state is gone: %s not written", bf->fe, bf->fe,
			 xbus_state_name(state));
	else if (r)
		log_error("vbd %s: writing %s/state=%u: %s", bf->fe, bf->fe, state, strerror(-r));
	return r;
}

static void
log_backend_error(blkfront_t *bf, const char *what, unsigned int state)
{
	char *err = xbus_read(bf->xs, XBT_NULL, bf->be, "error");

	log_error("vbd %s: %s: backend %s is %s (%u)%s%s", bf->fe, what, bf->be,
		  xbus_state_name(state), state, err ? ": error: " : "", err ? err : "");
	free(err);
}

/* Backend features, in blkfront_gather_backend_features()'s order. */
static void
gather_features(blkfront_t *bf)
{
	struct blkfront_info *in = &bf->info;
	unsigned int v, ind;

	in->feature_flush = in->feature_fua = in->feature_barrier = false;
	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "feature-barrier", 0, &v);
	bf->adv_barrier = v != 0;
	if (v) {
		in->feature_flush = true;
		in->feature_fua = true;
		in->feature_barrier = true;
	}
	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "feature-flush-cache", 0, &v);
	bf->adv_flush_cache = v != 0;
	if (v) {
		in->feature_flush = true;
		in->feature_fua = false;
		in->feature_barrier = false;
	}
	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "feature-discard", 0, &v);
	in->feature_discard = v != 0;
	if (v) {
		xbus_read_uint(bf->xs, XBT_NULL, bf->be, "discard-granularity", 0,
				&in->discard_granularity);
		xbus_read_uint(bf->xs, XBT_NULL, bf->be, "discard-alignment", 0,
				&in->discard_alignment);
		xbus_read_uint(bf->xs, XBT_NULL, bf->be, "discard-secure", 0, &v);
		in->feature_secdiscard = v != 0;
	}
	in->feature_persistent = false;
	if (!(bf->cfg.flags & BLKFRONT_NO_PERSISTENT)) {
		xbus_read_uint(bf->xs, XBT_NULL, bf->be, "feature-persistent", 0, &v);
		in->feature_persistent = v != 0;
	}
	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "feature-max-indirect-segments", 0, &ind);
	if (ind > bf->cfg.max_indirect_segments)
		ind = bf->cfg.max_indirect_segments;
	if (ind > BLKRING_MAX_INDIRECT_SEGMENTS)
		ind = BLKRING_MAX_INDIRECT_SEGMENTS;
	if (ind <= BLKIF_MAX_SEGMENTS_PER_REQUEST)
		ind = 0;
	in->max_indirect_segments = ind;
	in->segs_per_req = ind ? ind : BLKIF_MAX_SEGMENTS_PER_REQUEST;
}

static int
read_disk_info(blkfront_t *bf)
{
	struct blkfront_info *in = &bf->info;
	uint64_t v;
	int r;

	r = xbus_read_u64(bf->xs, XBT_NULL, bf->be, "sectors", UINT64_MAX, 0, &v);
	if (r) {
		log_error("vbd %s: reading %s/sectors: %s", bf->fe, bf->be, strerror(-r));
		return -EPROTO;
	}
	in->sectors = v;
	r = xbus_read_uint(bf->xs, XBT_NULL, bf->be, "info", 0, &in->vdisk_info);
	if (r) {
		log_error("vbd %s: reading %s/info: %s", bf->fe, bf->be, strerror(-r));
		return -EPROTO;
	}
	r = xbus_read_uint(bf->xs, XBT_NULL, bf->be, "sector-size", 0, &in->sector_size);
	if (r || in->sector_size < 512 || (in->sector_size & (in->sector_size - 1))) {
		log_error("vbd %s: reading %s/sector-size: %s", bf->fe, bf->be,
			  r ? strerror(-r) : "not a power of two >= 512");
		return -EPROTO;
	}
	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "physical-sector-size", in->sector_size,
			&in->physical_sector_size);
	in->read_only = in->vdisk_info & VDISK_READONLY;
	return 0;
}

/*
 * Stop the completion thread, fail what is outstanding and, when
 * handshake is set (we published rings), close the way Linux does before
 * ending access to the pages.
 */
static void
disconnect(blkfront_t *bf, bool handshake)
{
	unsigned int i, st;
	uint64_t v = 1;

	if (bf->thread_running) {
		if (write(bf->stop_fd, &v, sizeof(v)) != sizeof(v))
			log_error("vbd %s: stopping completion thread: %m", bf->fe);
		pthread_join(bf->thread, NULL);
		bf->thread_running = false;
		xs_unwatch(bf->xsw, bf->be, "ft-backend");
		xs_unwatch(bf->xsw, bf->fe_state, "ft-frontend");
		if (read(bf->stop_fd, &v, sizeof(v)) != sizeof(v))
			log_error("vbd %s: draining stop eventfd: %m", bf->fe);
	}
	fail_all(bf, NULL);
	if (!handshake)
		goto teardown;

	/* a backend that is gone will not answer: no 30 s waits for it */
	if (backend_gone(xbus_read_uint(bf->xs, XBT_NULL, bf->be, "state", 0, &st))) {
		log_info("vbd %s: backend %s is gone: not waiting for it to close",
			 bf->fe, bf->be);
		goto teardown;
	}
	/* Linux: Closing; backend Closing; Closed; backend Closed. */
	if (switch_state(bf, XenbusStateClosing) == 0 &&
	    xbus_wait(bf->xs, bf->be, "state", xbus_ge, XenbusStateClosing,
			     bf->cfg.timeout_ms, &st) < 0)
		log_error("vbd %s: backend %s did not close within %u ms (state %s)",
			  bf->fe, bf->be, bf->cfg.timeout_ms, xbus_state_name(st));
	if (switch_state(bf, XenbusStateClosed) == 0) {
		if (xbus_wait(bf->xs, bf->be, "state", xbus_eq, XenbusStateClosed,
			      bf->cfg.timeout_ms, &st) < 0)
			log_error("vbd %s: backend %s not Closed within %u ms (state %s)",
				  bf->fe, bf->be, bf->cfg.timeout_ms, xbus_state_name(st));
		else
			for (i = 0; i < bf->nq; i++)
				check_unmapped(bf, &bf->q[i]);
	}
teardown:
	for (i = 0; i < bf->nq; i++)
		queue_teardown(bf, &bf->q[i]);
	bf->nq = 0;
}

/* Write our state, then wait (bounded) for the backend's. */
static void
reset_step(blkfront_t *bf, unsigned int ours, unsigned int theirs)
{
	unsigned int st;

	if (switch_state(bf, ours) == 0 &&
	    xbus_wait(bf->xs, bf->be, "state", xbus_eq, theirs, bf->cfg.timeout_ms, &st) < 0)
		log_error("vbd %s: reset: backend %s is %s, not %s, after %u ms; going on",
			  bf->fe, bf->be, xbus_state_name(st), xbus_state_name(theirs),
			  bf->cfg.timeout_ms);
}

/*
 * Linux xenbus_reset_frontend (xenbus_probe_frontend.c): a frontend that
 * finds itself Connected or Closed at start belongs to an earlier
 * instance; the backend may still serve that instance's ring.  From the
 * backend's state on: Connected -> we write Closing and wait for its
 * Closing; Closing -> Closed, wait for Closed; Closed -> Initialising
 * (connect_rings then waits for InitWait).  Every old grant stays
 * untouched; this instance makes new ones.
 */
static void
reset_backend(blkfront_t *bf)
{
	unsigned int be;

	if (xbus_read_uint(bf->xs, XBT_NULL, bf->be, "state", 0, &be) < 0)
		return;
	switch (be) {
	case XenbusStateConnected:
		log_info("vbd %s: backend %s is Connected to an earlier instance: resetting it",
			 bf->fe, bf->be);
		reset_step(bf, XenbusStateClosing, XenbusStateClosing);
		/* fallthrough */
	case XenbusStateClosing:
		reset_step(bf, XenbusStateClosed, XenbusStateClosed);
		/* fallthrough */
	case XenbusStateClosed:
		switch_state(bf, XenbusStateInitialising);
		break;
	default:
		break;
	}
}

static int
connect_rings(blkfront_t *bf)
{
	struct blkfront_info *in = &bf->info;
	unsigned int st, max_order, max_q, order, i;
	bool published = false;
	int r;

	__atomic_store_n(&bf->broken, false, __ATOMIC_RELEASE);

	/* An earlier instance (a bootloader, a killed blkfront-test) left
	 * the vbd Connected or Closed: walk the backend back to InitWait. */
	xbus_read_uint(bf->xs, XBT_NULL, bf->fe, "state", 0, &st);
	if (st == XenbusStateConnected || st == XenbusStateClosed)
		reset_backend(bf);
	xbus_read_uint(bf->xs, XBT_NULL, bf->fe, "state", 0, &st);
	if (st != XenbusStateInitialising && (r = switch_state(bf, XenbusStateInitialising)))
		return r;

	r = xbus_wait(bf->xs, bf->be, "state", xbus_eq, XenbusStateInitWait,
			     bf->cfg.timeout_ms, &st);
	if (r) {
		log_backend_error(bf, "waiting for InitWait", st);
		/* Closing/Closed after the whole wait: it refused the device */
		return st >= XenbusStateClosing ? -ECONNREFUSED : r;
	}

	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "max-ring-page-order", 0, &max_order);
	order = max_order < bf->cfg.max_ring_page_order ? max_order : bf->cfg.max_ring_page_order;
	if (order > BLKRING_MAX_PAGE_ORDER)
		order = BLKRING_MAX_PAGE_ORDER;
	xbus_read_uint(bf->xs, XBT_NULL, bf->be, "multi-queue-max-queues", 1, &max_q);
	bf->nq = max_q < bf->cfg.max_queues ? max_q : bf->cfg.max_queues;
	if (bf->nq == 0)
		bf->nq = 1;
	if (bf->nq > FT_MAX_QUEUES)
		bf->nq = FT_MAX_QUEUES;
	in->ring_page_order = order;
	in->nr_queues = bf->nq;

	for (i = 0; i < bf->nq; i++) {
		bf->q[i].idx = i;
		r = queue_setup_ring(bf, &bf->q[i], order);
		if (r)
			goto fail;
	}
	in->ring_size = blkring_size(bf->q[0].ring);
	r = publish(bf, order);
	if (r)
		goto fail;
	published = true;
	r = switch_state(bf, XenbusStateInitialised);
	if (r)
		goto fail;

	r = xbus_wait(bf->xs, bf->be, "state", xbus_ge, XenbusStateConnected,
			     bf->cfg.timeout_ms, &st);
	if (r || st != XenbusStateConnected) {
		log_backend_error(bf, "waiting for Connected", st);
		r = r ? r : -ECONNREFUSED;
		goto fail;
	}
	r = read_disk_info(bf);
	if (r)
		goto fail;
	gather_features(bf);
	bf->per_request = !in->feature_persistent && !(bf->cfg.flags & BLKFRONT_RAW);
	bf->nr_ind_pages = in->max_indirect_segments ?
		(in->max_indirect_segments + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) /
		BLKRING_SEGS_PER_INDIRECT_PAGE : 0;
	for (i = 0; i < bf->nq; i++) {
		r = queue_setup_slots(bf, &bf->q[i], in->segs_per_req, bf->nr_ind_pages);
		if (r) {
			log_error("vbd %s: queue %u: sharing %u data pages: %s", bf->fe, i,
				  bf->q[i].pool_pages, strerror(-r));
			goto fail;
		}
	}

	if (!(bf->cfg.flags & BLKFRONT_RAW)) {
		if (!xs_watch(bf->xsw, bf->be, "ft-backend")) {
			r = -errno;
			log_error("vbd %s: watching %s: %m", bf->fe, bf->be);
			goto fail;
		}
		if (!xs_watch(bf->xsw, bf->fe_state, "ft-frontend")) {
			r = -errno;
			log_error("vbd %s: watching %s: %m", bf->fe, bf->fe_state);
			xs_unwatch(bf->xsw, bf->be, "ft-backend");
			goto fail;
		}
		r = pthread_create(&bf->thread, NULL, completion_thread, bf);
		if (r) {
			xs_unwatch(bf->xsw, bf->be, "ft-backend");
			xs_unwatch(bf->xsw, bf->fe_state, "ft-frontend");
			r = -r;
			goto fail;
		}
		bf->thread_running = true;
	}
	r = switch_state(bf, XenbusStateConnected);
	if (r)
		goto fail;
	bk_dbg(BK_DBG_FRONT, "vbd %s: connected: %" PRIu64 " sectors, order %u, %u queue(s), "
	       "flush %d barrier %d discard %d indirect %u", bf->fe, in->sectors, order,
	       bf->nq, in->feature_flush, in->feature_barrier, in->feature_discard,
	       in->max_indirect_segments);
	return 0;

fail:
	disconnect(bf, published);
	return r;
}

blkfront_t *
blkfront_open(const struct blkfront_config *cfg)
{
	const char *const *fe_keys = cfg->fe_keys;
	unsigned int nr_fe_keys = cfg->nr_fe_keys;
	enum blkring_abi abi = cfg->abi;
	blkfront_t *bf;
	const char *sock;
	char *v;
	unsigned int i;
	int r;

	if (nr_fe_keys > ARRAY_SIZE(bf->fe_keys)) {
		errno = E2BIG;
		return NULL;
	}
	bf = calloc(1, sizeof(*bf));
	if (!bf)
		return NULL;
	bf->cfg = *cfg;
	pollwin_init(&bf->poll, cfg->poll_max_us);
	if (!bf->cfg.timeout_ms)
		bf->cfg.timeout_ms = FT_DEFAULT_TIMEOUT_MS;
	if (!bf->cfg.max_queues)
		bf->cfg.max_queues = 1;
	bf->x = cfg->x;
	bf->abi = abi;
	bf->protocol = abi == BLKRING_ABI_NATIVE ? XEN_IO_PROTO_ABI_NATIVE : blkring_abi_name(abi);
	bf->stop_fd = bf->resume_fd = bf->wake_fd = -1;
	pthread_mutex_init(&bf->stats_lock, NULL);
	pthread_mutex_init(&bf->log_lock, NULL);
	for (i = 0; i < nr_fe_keys; i++) {
		if (!strchr(fe_keys[i], '=')) {
			log_error("--fe-key %s: expected KEY=VALUE", fe_keys[i]);
			errno = EINVAL;
			goto fail;
		}
		bf->fe_keys[i] = strdup(fe_keys[i]);
		bf->nr_fe_keys++;
	}

	sock = xenops_xenstore_path(bf->x);
	bf->xs = xbus_open(sock);
	bf->xsw = bf->xs ? xs_open(0) : NULL;
	if (!bf->xs || !bf->xsw) {
		log_error("cannot connect to xenstore%s%s: %m", sock ? " at " : "", sock ? sock : "");
		goto fail;
	}
	snprintf(bf->fe, sizeof(bf->fe), "/local/domain/%u/device/vbd/%u",
		 xenops_self_domid(bf->x), cfg->devid);
	snprintf(bf->fe_state, sizeof(bf->fe_state), "%s/state", bf->fe);
	v = xbus_read(bf->xs, XBT_NULL, bf->fe, "backend");
	if (!v) {
		log_error("vbd %u: reading %s/backend: %m (no such device; see blkfront-test xl-add)",
			  cfg->devid, bf->fe);
		errno = ENOENT;
		goto fail;
	}
	snprintf(bf->be, sizeof(bf->be), "%s", v);
	free(v);
	r = xbus_read_uint(bf->xs, XBT_NULL, bf->fe, "backend-id", 0, &bf->info.backend_domid);
	if (r) {
		log_error("vbd %u: reading %s/backend-id: %s", cfg->devid, bf->fe, strerror(-r));
		errno = EPROTO;
		goto fail;
	}
	snprintf(bf->info.backend_path, sizeof(bf->info.backend_path), "%s", bf->be);
	snprintf(bf->info.frontend_path, sizeof(bf->info.frontend_path), "%s", bf->fe);
	bf->stop_fd = eventfd(0, EFD_CLOEXEC);
	bf->resume_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	bf->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (bf->stop_fd < 0 || bf->resume_fd < 0 || bf->wake_fd < 0)
		goto fail;

	r = connect_rings(bf);
	if (r) {
		errno = -r;
		goto fail;
	}
	return bf;

fail:
	r = errno;
	if (bf->xsw)
		xs_close(bf->xsw);
	if (bf->xs)
		xs_close(bf->xs);
	if (bf->stop_fd >= 0)
		close(bf->stop_fd);
	if (bf->resume_fd >= 0)
		close(bf->resume_fd);
	if (bf->wake_fd >= 0)
		close(bf->wake_fd);
	for (i = 0; i < bf->nr_fe_keys; i++)
		free(bf->fe_keys[i]);
	free(bf);
	errno = r;
	return NULL;
}

int
blkfront_close(blkfront_t *bf)
{
	unsigned int i;
	int r;

	if (!bf)
		return 0;
	disconnect(bf, true);
	r = bf->close_fault ? -EPROTO : 0;
	unpublish(bf);
	xs_close(bf->xsw);
	xs_close(bf->xs);
	close(bf->stop_fd);
	close(bf->resume_fd);
	close(bf->wake_fd);
	for (i = 0; i < bf->nr_fe_keys; i++)
		free(bf->fe_keys[i]);
	pthread_mutex_destroy(&bf->stats_lock);
	pthread_mutex_destroy(&bf->log_lock);
	free(bf);
	return r;
}

int
blkfront_reconnect(blkfront_t *bf)
{
	disconnect(bf, true);
	return connect_rings(bf);
}

const struct blkfront_info *
blkfront_info(const blkfront_t *bf)
{
	return &bf->info;
}

unsigned int
blkfront_max_sectors(const blkfront_t *bf)
{
	return bf->info.segs_per_req * SECTORS_PER_PAGE;
}

void
blkfront_get_stats(blkfront_t *bf, struct blkfront_stats *st)
{
	pthread_mutex_lock(&bf->stats_lock);
	*st = bf->stats;
	pthread_mutex_unlock(&bf->stats_lock);
}

/* ------------------------------------------------------------------ */
/* submission                                                         */
/* ------------------------------------------------------------------ */

static int
check_req(blkfront_t *bf, const struct blkfront_req *req)
{
	const struct blkfront_info *in = &bf->info;

	if (!req->done)
		return -EINVAL;
	switch (req->op) {
	case BLKFRONT_READ:
	case BLKFRONT_WRITE:
		if (req->len == 0)
			return -EINVAL;
		/* fallthrough */
	case BLKFRONT_FLUSH_DISKCACHE:
	case BLKFRONT_WRITE_BARRIER:
		if (req->len % SECTOR_SIZE || req->len / SECTOR_SIZE > blkfront_max_sectors(bf) ||
		    (req->len && !req->buf))
			return -EINVAL;
		break;
	case BLKFRONT_DISCARD:
		if (req->len == 0 || req->len % SECTOR_SIZE)
			return -EINVAL;
		if (!READ_ONCE(in->feature_discard))
			return -EOPNOTSUPP;
		break;
	default:
		return -EINVAL;
	}
	if (req->op == BLKFRONT_FLUSH_DISKCACHE &&
	    (!READ_ONCE(in->feature_flush) || !bf->adv_flush_cache))
		return -EOPNOTSUPP;
	if (req->op == BLKFRONT_WRITE_BARRIER &&
	    (!READ_ONCE(in->feature_flush) || !bf->adv_barrier))
		return -EOPNOTSUPP;
	if (req->op != BLKFRONT_READ && in->read_only)
		return -EROFS;
	return 0;
}

/*
 * Wait (q->lock held, dropped meanwhile) until a slot of q may be free.
 * The completion thread empties the rings unless callers reap for
 * themselves (blkfront_poll_begin): then nobody else would, and a
 * caller that keeps more requests in flight than the ring has slots
 * (io's 1 MiB blocks at depth 4 on a 32-slot ring) would wait here for
 * ever; it reaps itself instead (blkfront_wait: responses already there,
 * else sleep on the event channels).  Bounded waits either way, so a
 * change of who reaps meanwhile is seen.
 */
static void
wait_slot(blkfront_t *bf, struct ft_queue *q)
{
	struct timespec ts;

	if (__atomic_load_n(&bf->pollers, __ATOMIC_SEQ_CST)) {
		pthread_mutex_unlock(&q->lock);
		blkfront_wait(bf, 10);
		pthread_mutex_lock(&q->lock);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 10000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_cond_timedwait(&q->slot_free, &q->lock, &ts);
}

int
blkfront_submit(blkfront_t *bf, struct blkfront_req *req)
{
	struct blkreq *wire;
	struct ft_queue *q;
	struct ft_slot *s;
	unsigned int slot, nseg, i;
	int r;

	if (bf->cfg.flags & BLKFRONT_RAW)
		return -EINVAL;
	r = check_req(bf, req);
	if (r)
		return r;
	if (blkfront_broken(bf))
		return -EIO;

	q = &bf->q[__atomic_fetch_add(&bf->rr, 1, __ATOMIC_RELAXED) % bf->nq];

	pthread_mutex_lock(&q->lock);
	while (q->nfree == 0 && !blkfront_broken(bf))
		wait_slot(bf, q);
	if (blkfront_broken(bf)) {
		pthread_mutex_unlock(&q->lock);
		return -EIO;
	}
	/* the queue's one wire request (q->lock): segments past
	 * nr_segments are never read */
	wire = q->wire;
	memset(wire, 0, offsetof(struct blkreq, seg));
	slot = q->freelist[--q->nfree];
	s = &q->slots[slot];
	s->gen++;
	s->req = req;
	s->op = op_to_blkif(req->op);

	wire->operation = s->op;
	wire->op = s->op;
	wire->id = (uint64_t)s->gen << 32 | slot;
	wire->handle = (blkif_vdev_t)bf->cfg.devid;
	wire->sector = req->sector;
	if (req->op == BLKFRONT_DISCARD) {
		wire->nr_sectors = req->len / SECTOR_SIZE;
		wire->discard_secure = req->flags & BLKFRONT_F_SECURE;
	} else {
		nseg = (req->len + XEN_PAGE_SIZE - 1) / XEN_PAGE_SIZE;
		wire->nr_segments = nseg;
		wire->nr_sectors = req->len / SECTOR_SIZE;
		for (i = 0; i < nseg; i++) {
			unsigned int left = req->len - i * XEN_PAGE_SIZE;

			wire->seg[i].gref = s->data_refs[i];
			wire->seg[i].first_sect = 0;
			wire->seg[i].last_sect = left >= XEN_PAGE_SIZE ? 7 :
				(uint8_t)(left / SECTOR_SIZE - 1);
		}
		if (nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST) {
			struct blkif_request_segment *d = s->ind;

			wire->operation = BLKIF_OP_INDIRECT;
			wire->nr_indirect_pages = (nseg + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) /
				BLKRING_SEGS_PER_INDIRECT_PAGE;
			for (i = 0; i < wire->nr_indirect_pages; i++)
				wire->indirect_grefs[i] = s->ind_refs[i];
			for (i = 0; i < nseg; i++) {
				d[i].gref = wire->seg[i].gref;
				d[i].first_sect = wire->seg[i].first_sect;
				d[i].last_sect = wire->seg[i].last_sect;
			}
		}
		if (req->op != BLKFRONT_READ && req->len)
			memcpy(s->data, req->buf, req->len);
		if (bf->per_request && nseg) {
			/* after the data: the grant publishes it */
			s->ndata = nseg;
			s->nind = nseg > BLKIF_MAX_SEGMENTS_PER_REQUEST ?
				  wire->nr_indirect_pages : 0;
			xenops_grant_again(bf->x, s->data, s->ndata);
			if (s->nind)
				xenops_grant_again(bf->x, s->ind, s->nind);
		}
	}
	glog_marks(bf, &s->covers, &s->issued_after);

	pthread_mutex_lock(&bf->stats_lock);
	switch (req->op) {
	case BLKFRONT_READ: bf->stats.reads++; break;
	case BLKFRONT_WRITE: bf->stats.writes++; break;
	case BLKFRONT_FLUSH_DISKCACHE: bf->stats.flushes++; break;
	case BLKFRONT_WRITE_BARRIER: bf->stats.barriers++; break;
	case BLKFRONT_DISCARD: bf->stats.discards++; break;
	}
	pthread_mutex_unlock(&bf->stats_lock);

	s->t_submit = ft_now_ns();
	s->busy = true;
	r = blkring_front_put_request(q->ring, wire);
	if (r) {
		/* cannot happen: one slot per ring entry */
		s->busy = false;
		s->req = NULL;
		q->freelist[q->nfree++] = slot;
		pthread_mutex_unlock(&q->lock);
		return r;
	}
	if (blkring_front_push_requests(q->ring)) {
		r = xenops_evtchn_notify(q->evtchn, (uint32_t)q->port);
		/* -ENOTCONN: the backend's end is closed (a backend restarting:
		 * its successor binds the port again and reads the ring).  Xen
		 * drops such a notify silently and Linux blkfront never knows;
		 * we say so once, as information.  Anything else is an error. */
		if (r && !__atomic_exchange_n(&bf->notify_failed, true, __ATOMIC_RELAXED)) {
			if (r == -ENOTCONN)
				log_info("vbd %s: queue %u: notify: the backend's end is closed; "
					 "the request waits for the backend", bf->fe, q->idx);
			else
				log_error("vbd %s: queue %u: notify: %s", bf->fe, q->idx, strerror(-r));
		}
	}
	pthread_mutex_unlock(&q->lock);
	return 0;
}

/* ---- synchronous helpers ---- */

struct ft_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int pending;
	int err;
};

static void
sync_done(struct blkfront_req *req)
{
	struct ft_wait *w = req->opaque;

	pthread_mutex_lock(&w->lock);
	if (req->result && !w->err)
		w->err = req->result;
	w->pending--;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Submit the n prepared requests and wait for all of them. */
static int
run_sync(blkfront_t *bf, struct blkfront_req *reqs, unsigned int n)
{
	struct ft_wait w;
	unsigned int i;
	int r = 0;

	pthread_mutex_init(&w.lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	w.pending = 0;
	w.err = 0;
	for (i = 0; i < n; i++) {
		reqs[i].done = sync_done;
		reqs[i].opaque = &w;
		pthread_mutex_lock(&w.lock);
		w.pending++;
		pthread_mutex_unlock(&w.lock);
		r = blkfront_submit(bf, &reqs[i]);
		if (r) {
			pthread_mutex_lock(&w.lock);
			w.pending--;
			pthread_mutex_unlock(&w.lock);
			break;
		}
	}
	pthread_mutex_lock(&w.lock);
	while (w.pending)
		pthread_cond_wait(&w.cond, &w.lock);
	pthread_mutex_unlock(&w.lock);
	pthread_mutex_destroy(&w.lock);
	pthread_cond_destroy(&w.cond);
	return r ? r : w.err;
}

static int
rw_sync(blkfront_t *bf, enum blkfront_op op, void *buf, size_t len, uint64_t sector)
{
	size_t max = (size_t)blkfront_max_sectors(bf) * SECTOR_SIZE;
	unsigned int n = (unsigned int)((len + max - 1) / max), i;
	struct blkfront_req *reqs;
	int r;

	if (len == 0)
		return 0;
	if (len % SECTOR_SIZE)
		return -EINVAL;
	reqs = calloc(n, sizeof(*reqs));
	if (!reqs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		size_t off = (size_t)i * max;

		reqs[i].op = op;
		reqs[i].sector = sector + off / SECTOR_SIZE;
		reqs[i].buf = (char *)buf + off;
		reqs[i].len = (uint32_t)(len - off < max ? len - off : max);
	}
	r = run_sync(bf, reqs, n);
	free(reqs);
	return r;
}

int
blkfront_pread(blkfront_t *bf, void *buf, size_t len, uint64_t sector)
{
	return rw_sync(bf, BLKFRONT_READ, buf, len, sector);
}

int
blkfront_flush(blkfront_t *bf)
{
	struct blkfront_req req = { 0 };

	if (blkfront_broken(bf))
		return -EIO;
	if (!READ_ONCE(bf->info.feature_flush))
		return 0;
	req.op = bf->info.feature_barrier ? BLKFRONT_WRITE_BARRIER : BLKFRONT_FLUSH_DISKCACHE;
	return run_sync(bf, &req, 1);
}

int
blkfront_pwrite(blkfront_t *bf, const void *buf, size_t len, uint64_t sector, bool fua)
{
	int r;

	if (fua && READ_ONCE(bf->info.feature_fua) && bf->info.feature_barrier)
		return rw_sync(bf, BLKFRONT_WRITE_BARRIER, (void *)buf, len, sector);
	r = rw_sync(bf, BLKFRONT_WRITE, (void *)buf, len, sector);
	if (r == 0 && fua)
		r = blkfront_flush(bf);
	return r;
}

int
blkfront_discard(blkfront_t *bf, uint64_t sector, uint64_t nr_sectors)
{
	struct blkfront_req req = { 0 };

	if (nr_sectors == 0 || nr_sectors > UINT32_MAX / SECTOR_SIZE)
		return -EINVAL;
	req.op = BLKFRONT_DISCARD;
	req.sector = sector;
	req.len = (uint32_t)(nr_sectors * SECTOR_SIZE);
	return run_sync(bf, &req, 1);
}

/* ------------------------------------------------------------------ */
/* raw mode                                                           */
/* ------------------------------------------------------------------ */

blkring_t *
blkfront_raw_ring(blkfront_t *bf)
{
	return bf->q[0].ring;
}

unsigned int
blkfront_raw_nr_pages(const blkfront_t *bf)
{
	return bf->q[0].pool_pages;
}

void *
blkfront_raw_page(blkfront_t *bf, unsigned int i, grant_ref_t *gref)
{
	struct ft_queue *q = &bf->q[0];

	if (i >= q->pool_pages)
		return NULL;
	if (gref)
		*gref = q->pool_refs[i];
	return (char *)q->slots[i / q->pages_per_slot].data +
		(size_t)(i % q->pages_per_slot) * XEN_PAGE_SIZE;
}

int
blkfront_raw_end_ring_access(blkfront_t *bf, unsigned int timeout_ms)
{
	struct ft_queue *q = &bf->q[0];
	uint64_t deadline = ft_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int r;

	while ((r = xenops_end_access(bf->x, q->sring, q->nr_ring_pages)) == -EBUSY &&
	       ft_now_ns() < deadline)
		usleep(5000);
	return r;
}

struct new_ring_arg {
	blkfront_t *bf;
	bool multi_ref;
};

static int
new_ring_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct new_ring_arg *a = arg;
	blkfront_t *bf = a->bf;
	struct ft_queue *q = &bf->q[0];
	unsigned int i, order = 0;
	char dir[160], key[24];
	int r = 0;

	if (bf->nq == 1)
		snprintf(dir, sizeof(dir), "%s", bf->fe);
	else
		snprintf(dir, sizeof(dir), "%s/queue-0", bf->fe);
	if (!a->multi_ref && q->nr_ring_pages == 1) {
		/* Linux blkfront's one-page spelling: no ring-page-order */
		xbus_rm(xs, t, bf->fe, "ring-page-order");
		for (i = 0; i < BLKRING_MAX_PAGES; i++) {
			snprintf(key, sizeof(key), "ring-ref%u", i);
			xbus_rm(xs, t, dir, key);
		}
		return write_ring_nodes(bf, t, dir, q);
	}
	while ((1u << order) < q->nr_ring_pages)
		order++;
	xbus_rm(xs, t, dir, "ring-ref");
	r = xbus_printf(xs, t, bf->fe, "ring-page-order", "%u", order);
	for (i = 0; i < q->nr_ring_pages && !r; i++) {
		snprintf(key, sizeof(key), "ring-ref%u", i);
		r = xbus_printf(xs, t, dir, key, "%u", q->ring_refs[i]);
	}
	if (!r)
		r = xbus_printf(xs, t, dir, "event-channel", "%d", q->port);
	return r;
}

int
blkfront_raw_new_ring(blkfront_t *bf, bool multi_ref)
{
	struct new_ring_arg a = { .bf = bf, .multi_ref = multi_ref };
	struct ft_queue *q = &bf->q[0];
	blkring_t *ring;
	xenops_evtchn_t *e;
	grant_ref_t refs[BLKRING_MAX_PAGES];
	void *sring;
	int port, r;

	sring = xenops_share_pages(bf->x, bf->info.backend_domid, q->nr_ring_pages, true, refs);
	if (!sring)
		return -errno;
	ring = blkring_front_attach(sring, q->nr_ring_pages, bf->abi);
	e = ring ? xenops_evtchn_open(bf->x) : NULL;
	port = e ? xenops_evtchn_bind_unbound(e, bf->info.backend_domid) : -errno;
	if (port < 0) {
		r = port;
		if (e)
			xenops_evtchn_close(e);
		if (ring)
			blkring_free(ring);
		xenops_unshare_pages(bf->x, sring, q->nr_ring_pages);
		return r;
	}
	/* the old ring: its event channel closed, its pages freed (or
	 * leaked when the backend still maps them: said once) */
	xenops_evtchn_close(q->evtchn);
	blkring_free(q->ring);
	r = xenops_unshare_pages(bf->x, q->sring, q->nr_ring_pages);
	if (r < 0)
		log_error("vbd %s: the old ring is still mapped by the backend: leaked", bf->fe);
	q->sring = sring;
	q->ring = ring;
	q->evtchn = e;
	q->port = port;
	memcpy(q->ring_refs, refs, sizeof(refs[0]) * q->nr_ring_pages);
	r = xbus_transact(bf->xs, new_ring_keys, &a);
	if (r < 0)
		log_error("vbd %s: writing the new ring's keys: %s", bf->fe, strerror(-r));
	return r;
}

void *
blkfront_raw_ring_pages(blkfront_t *bf, unsigned int *nr_pages)
{
	*nr_pages = bf->q[0].nr_ring_pages;
	return bf->q[0].sring;
}

int
blkfront_raw_notify(blkfront_t *bf)
{
	return xenops_evtchn_notify(bf->q[0].evtchn, (uint32_t)bf->q[0].port);
}

int
blkfront_raw_get_response(blkfront_t *bf, struct blkrsp *rsp, unsigned int timeout_ms)
{
	struct ft_queue *q = &bf->q[0];
	uint64_t deadline = ft_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	for (;;) {
		struct pollfd pfd;
		uint64_t now;
		int r, port;

		r = blkring_front_get_response(q->ring, rsp);
		if (r)
			return r;
		if (blkring_front_final_check(q->ring))
			continue;
		now = ft_now_ns();
		if (now >= deadline)
			return 0;
		pfd.fd = xenops_evtchn_fd(q->evtchn);
		pfd.events = POLLIN;
		r = poll(&pfd, 1, (int)((deadline - now + 999999) / 1000000));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r > 0) {
			port = xenops_evtchn_pending(q->evtchn);
			if (port >= 0)
				xenops_evtchn_unmask(q->evtchn, (uint32_t)port);
		}
	}
}

struct xs_handle *
blkfront_xs(blkfront_t *bf)
{
	return bf->xs;
}
