/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkfront-io.c: libblkfront's requests (blkfront.h, blkfront-priv.h):
 * submission onto a queue's ring, the completion thread and polling
 * that take the responses (Linux xen-blkfront's blkif_queue_request,
 * blkif_interrupt), the guest log of what the backend acknowledged, and
 * what breaks the device.
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
#include <xen/io/xenbus.h>

#include "compiler.h"
#include "barrier.h"
#include "log.h"
#include "pollwin.h"
#include "guestlog.h"
#include "xbus.h"
#include "blkfront.h"
#include "blkfront-priv.h"

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
void
ft_fail_all(blkfront_t *bf, const char *msg)
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
 * in ft_fail_all), no lock held.
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

	if (s && req->result == 0 && req->op == BLKFRONT_READ &&
	    !(bf->cfg.flags & BLKFRONT_IN_PLACE))
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
 * (nothing ended: the slot is never reused, see ft_fail_all).
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
		ft_fail_all(bf, why);
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
bool
ft_backend_gone(int r)
{
	return r == -ENOENT || r == -EACCES;
}

/*
 * The completion thread: the backend's state (xenstore watch), request
 * timeouts, and, unless callers reap for themselves (pollers, see
 * blkfront_poll_begin), the rings: poll for responses for a window, then
 * sleep on the event channels.
 */
void *
ft_completion_thread(void *opaque)
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
			ft_fail_all(bf, "completion thread cannot poll");
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
			if (!blkfront_broken(bf) && ft_backend_gone(r)) {
				snprintf(msg, sizeof(msg), "frontend %s was removed (%s)",
					 bf->fe, strerror(-r));
				ft_fail_all(bf, msg);
			}
			r = xbus_read_uint(bf->xsw, XBT_NULL, bf->be, "state", 0, &state);
			/* a state that is not a number is Linux's Unknown:
			 * ignored, as blkfront's backend_changed does */
			if (!blkfront_broken(bf) &&
			    (ft_backend_gone(r) || (r == 0 && state >= XenbusStateClosing))) {
				if (r < 0)
					snprintf(msg, sizeof(msg), "backend %s went away (%s)",
						 bf->be, strerror(-r));
				else
					snprintf(msg, sizeof(msg), "backend %s went %s",
						 bf->be, xbus_state_name(state));
				ft_fail_all(bf, msg);
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
			ft_fail_all(bf, msg);
	}
	return NULL;
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
		if (req->op != BLKFRONT_READ && req->len &&
		    !(bf->cfg.flags & BLKFRONT_IN_PLACE))
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

/* the largest request this connection takes (blkfront.h) */
unsigned int
blkfront_max_sectors(const blkfront_t *bf)
{
	return bf->info.segs_per_req * SECTORS_PER_PAGE;
}
