/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * queue.c: a data plane queue's life (dataplane.h): create (map the
 * ring, bind the event channel, open a queue on the store, allocate the
 * request pool), start, stop, join, destroy, and the control thread's
 * side of the report box.  The queue's work is dataplane.c's.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier.h"
#include "log.h"
#include "queue.h"

unsigned int
bk_dataplane_reports(struct bk_queue *q, struct bk_report *out)
{
	pthread_mutex_lock(&q->rep_lock);
	*out = q->rep;
	q->rep.events = 0;
	q->rep.withdraw = 0;
	pthread_mutex_unlock(&q->rep_lock);
	return out->events;
}

const struct bk_stats *
bk_dataplane_stats(const struct bk_queue *q)
{
	return &q->stats;
}

/* One request per ring slot, each with a 4096-aligned buffer of
 * max_segs pages and its indirect pages, from one MAP_NORESERVE
 * mapping. */
static int
pool_init(struct bk_queue *q, unsigned int nr, unsigned int ind_pages)
{
	size_t per = (size_t)(q->max_segs + ind_pages) * XEN_PAGE_SIZE;
	unsigned int i;

	q->reqs = calloc(nr, sizeof(*q->reqs));
	q->req_iovs = calloc((size_t)nr * q->max_segs, sizeof(*q->req_iovs));
	q->req_holds = calloc((size_t)nr * q->max_segs, sizeof(*q->req_holds));
	if (!q->reqs || !q->req_iovs || !q->req_holds)
		return -ENOMEM;
	q->bufs_len = (size_t)nr * per;
	q->bufs = mmap(NULL, q->bufs_len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (q->bufs == MAP_FAILED) {
		q->bufs = NULL;
		return -errno;
	}
	q->nr_reqs = nr;
	for (i = nr; i-- > 0;) {
		struct bk_req *r = &q->reqs[i];

		r->buf = (char *)q->bufs + (size_t)i * per;
		r->ind = (char *)r->buf + (size_t)q->max_segs * XEN_PAGE_SIZE;
		r->iovs = q->req_iovs + (size_t)i * q->max_segs;
		r->holds = q->req_holds + (size_t)i * q->max_segs;
		r->next = q->free;
		q->free = r;
	}
	q->nr_free = nr;
	return 0;
}

static void
pool_fini(struct bk_queue *q)
{
	if (q->bufs)
		munmap(q->bufs, q->bufs_len);
	free(q->reqs);
	free(q->req_iovs);
	free(q->req_holds);
}

/* ---------------------------------------------------------------- */
/* Create, start, stop, destroy.                                      */
/* ---------------------------------------------------------------- */

/* bk_qstate_recover's callback: queue a request to do again (the
 * queue thread takes them before anything new from the ring), in the
 * request structure whose record slot it has. */
static void
recov_add(void *arg, unsigned int slot, uint32_t idx, const struct blkreq *br)
{
	struct bk_queue *q = arg;
	struct bk_req *req = &q->reqs[slot], **pp = &q->free;

	/* the pool is full, and as big as the record */
	while (*pp != req)
		pp = &(*pp)->next;
	*pp = req->next;
	q->nr_free--;
	pp = &q->recov;
	req->br = *br;
	req->take_idx = idx;
	req->next = NULL;
	while (*pp)
		pp = &(*pp)->next;
	*pp = req;
}

/* The connection a queue's record belongs to (qstate.h). */
static void
record_id(uint32_t domid, uint32_t devid, unsigned int idx, const struct bk_ring_config *rc,
	  struct bk_qstate_id *id)
{
	memset(id, 0, sizeof(*id));
	id->domid = domid;
	id->devid = devid;
	id->queue = idx;
	id->nr_pages = rc->nr_pages;
	id->evtchn = rc->evtchn;
	id->abi = rc->abi;
	id->ring_size = blkring_size_for(rc->abi, rc->nr_pages);
	memcpy(id->refs, rc->refs, rc->nr_pages * sizeof(id->refs[0]));
}

int
bk_dataplane_record_check(const char *path, uint32_t domid, uint32_t devid, unsigned int idx,
			  const struct bk_ring_config *rc)
{
	struct bk_qstate_id id;

	if (rc->nr_pages > BLKRING_MAX_PAGES)
		return -ESTALE;
	record_id(domid, devid, idx, rc, &id);
	return bk_qstate_check(path, &id);
}

/*
 * Attach the ring, and the recovery record: with p->recover, where the
 * previous blkbackd left both (a record of this very connection), else a
 * fresh record at where the ring stands.  0, or an errno with *why.
 */
static int
ring_attach(struct bk_queue *q, const struct bk_queue_params *p, const char **why,
	    const char **key)
{
	const struct bk_ring_config *rc = &p->ring;
	struct bk_qstate_id id;
	uint32_t cons;
	int err;

	record_id(p->domid, p->devid, p->idx, rc, &id);
	if (p->state_path && p->recover) {
		q->qs = bk_qstate_open(p->state_path, &id, &cons);
		if (q->qs) {
			q->ring = blkring_back_attach_resume(q->sring, rc->nr_pages, rc->abi, cons);
			if (q->ring) {
				q->recovering = true;
				return 0;
			}
			log_error("vbd %s ring %u: the recovery record's consumer index %u does not "
				  "fit the ring: not used", q->name, q->idx, cons);
			bk_qstate_close(q->qs, false);
			q->qs = NULL;
		} else if (errno == ENOENT) {
			log_error("vbd %s ring %u: no recovery record at %s: taking the ring "
				  "over where its responses stand", q->name, q->idx, p->state_path);
		}
	}
	q->ring = blkring_back_attach(q->sring, rc->nr_pages, rc->abi);
	if (!q->ring) {
		err = errno;
		*why = err == EIO ? "the ring's req_prod is more than the ring size past rsp_prod" :
				    "cannot attach the ring";
		*key = "ring-ref";
		return err;
	}
	if (p->state_path) {
		q->qs = bk_qstate_create(p->state_path, &id, blkring_back_req_cons(q->ring));
		if (!q->qs) {
			*why = "cannot create the queue's recovery record (--state-dir)";
			return errno;
		}
	}
	return 0;
}

static int
epoll_add(int epfd, int fd, uint32_t tag, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.u32 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

struct bk_queue *
bk_dataplane_create(const struct bk_queue_params *p, const char **why, const char **key)
{
	const struct bk_ring_config *rc = &p->ring;
	struct bk_queue *q;
	unsigned int size;
	int err, port;

	q = calloc(1, sizeof(*q));
	if (!q) {
		*why = "out of memory";
		errno = ENOMEM;
		return NULL;
	}
	snprintf(q->name, sizeof(q->name), "%s", p->name);
	q->idx = p->idx;
	q->xops = p->xops;
	q->domid = p->domid;
	q->feat = p->feat;
	q->failed = p->failed;
	q->crash_point = p->crash_point;
	q->batch_submit = p->batch_submit;
	q->lat_clock = p->lat_clock;
	q->crash_after = p->crash_after;
	q->trace = p->trace;
	q->store = p->store;
	q->store_polls = bk_store_can_poll(p->store);
	q->report_efd = p->report_efd;
	q->epfd = q->stop_efd = -1;
	q->nr_pages = rc->nr_pages;
	pthread_mutex_init(&q->rep_lock, NULL);
	bk_queue_plans_build(q);

	q->sring = xenops_map_grefs(q->xops, q->domid, rc->nr_pages, rc->refs, true);
	if (!q->sring) {
		err = errno;
		*why = "cannot map the ring pages";
		*key = "ring-ref";
		goto fail;
	}
	err = ring_attach(q, p, why, key);
	if (err)
		goto fail;
	size = blkring_size(q->ring);
	q->max_segs = p->max_indirect > BLKIF_MAX_SEGMENTS_PER_REQUEST ?
		      p->max_indirect : BLKIF_MAX_SEGMENTS_PER_REQUEST;
	q->map_threshold = p->map_threshold;
	pollwin_init(&q->poll, p->poll_max_us);
	q->grefs = calloc(q->max_segs, sizeof(*q->grefs));
	q->pages = calloc(q->max_segs, sizeof(*q->pages));
	q->pass = calloc(size, sizeof(*q->pass));
	q->cb_reqs = calloc(size, sizeof(*q->cb_reqs));
	/* a batch holds a ring's worth of small requests, or a few big
	 * ones: it is flushed early when full */
	q->cb_cap = size * BLKIF_MAX_SEGMENTS_PER_REQUEST;
	if (q->cb_cap < q->max_segs + BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST)
		q->cb_cap = q->max_segs + BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST;
	q->cb_segs = calloc(q->cb_cap, sizeof(*q->cb_segs));
	err = q->grefs && q->pages && q->pass && q->cb_reqs && q->cb_segs ? 0 : ENOMEM;
	if (!err)
		err = -pool_init(q, size, (q->max_segs + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) /
				 BLKRING_SEGS_PER_INDIRECT_PAGE);
	if (!err && p->persistent) {
		q->pg = bk_pgrants_new(q->xops, q->domid, p->max_pgrants);
		if (!q->pg)
			err = errno;
	}
	if (err) {
		*why = "cannot allocate the request pool";
		goto fail;
	}
	if (q->recovering) {
		int n = bk_qstate_recover(q->qs, blkring_back_rsp_pushed(q->ring), recov_add, q);

		if (n < 0) {
			err = -n;
			*why = "the recovery record does not add up";
			goto fail;
		}
		if (n) {
			log_info("vbd %s ring %u: %d request%s taken by the previous blkbackd "
				 "and not answered: answering %s", q->name, q->idx, n,
				 n == 1 ? "" : "s", n == 1 ? "it" : "them");
		}
	}
	q->submit_q = calloc(size, sizeof(*q->submit_q));
	if (!q->submit_q) {
		err = ENOMEM;
		*why = "out of memory";
		goto fail;
	}
	err = -bk_store_queue_open(q->store, size, &q->sq);
	if (err) {
		*why = "cannot open a queue on the backing store";
		goto fail;
	}
	q->evtchn = xenops_evtchn_open(q->xops);
	if (!q->evtchn) {
		err = errno;
		*why = "cannot open an event channel handle";
		goto fail;
	}
	port = xenops_evtchn_bind_interdomain(q->evtchn, q->domid, rc->evtchn);
	if (port < 0) {
		err = -port;
		*why = "cannot bind the event channel";
		*key = "event-channel";
		goto fail;
	}
	q->port = port;
	q->stop_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->stop_efd < 0) {
		err = errno;
		*why = "cannot create the queue's eventfd";
		goto fail;
	}
	/* The store owns the sleep when it can (io_uring: one
	 * io_uring_enter submits and waits, no epoll_wait); the engine's
	 * log line says whether this kernel lets it. */
	{
		int fds[WAIT_NFDS];

		fds[WAIT_EVTCHN] = xenops_evtchn_fd(q->evtchn);
		fds[WAIT_STOP] = q->stop_efd;
		err = -bk_store_queue_wait_setup(q->sq, fds, WAIT_NFDS);
		if (err == 0)
			q->store_waits = true;
		else if (err != EOPNOTSUPP)
			log_error("vbd %s ring %u: the store cannot take the queue's wait "
				  "(%s): waiting in epoll_wait", q->name, q->idx, strerror(err));
	}
	if (!q->store_waits) {
		q->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (q->epfd < 0) {
			err = errno;
			*why = "cannot create the queue's epoll";
			goto fail;
		}
		/* the store's completions edge-triggered when it can
		 * (store.h): then its reap reads no eventfd */
		if ((err = -epoll_add(q->epfd, xenops_evtchn_fd(q->evtchn), EV_EVTCHN,
				      EPOLLIN)) ||
		    (err = -epoll_add(q->epfd, bk_store_queue_fd(q->sq), EV_STORE,
				      EPOLLIN | (bk_store_queue_edge(q->sq) ? EPOLLET : 0))) ||
		    (err = -epoll_add(q->epfd, q->stop_efd, EV_STOP, EPOLLIN))) {
			*why = "cannot set up the queue's epoll";
			goto fail;
		}
	}
	q->lim.sectors = q->feat.sectors;
	q->lim.sector_size = q->feat.sector_size;
	q->lim.read_only = q->feat.read_only;
	q->lim.max_indirect_segments = p->max_indirect;
	/* A read-only vbd answers DISCARD with ERROR, not EOPNOTSUPP (C07;
	 * Linux blkback's failed xen_vbd_translate), so libblkring sees it. */
	q->lim.discard = q->feat.discard || q->feat.read_only;
	bk_dbg(BK_DBG_XENBUS, "vbd %s ring %u: %u pages, %u entries, port %u", q->name,
	       q->idx, rc->nr_pages, size, q->port);
	return q;
fail:
	/* the vbd will not be Connected by us: no recovery record may say
	 * it is (blkbackd-ctl status would call it stalled once we are
	 * down); a predecessor's, when recovering, goes too, as the
	 * records of the queues made before this one do (disconnect) */
	bk_dataplane_destroy(q, false);
	errno = err ? err : EIO;
	return NULL;
}

int
bk_dataplane_start(struct bk_queue *q)
{
	int rc = pthread_create(&q->thread, NULL, bk_queue_main, q);

	if (rc)
		return -rc;
	q->started = true;
	return 0;
}

/* Ring the queue thread's doorbell (stop_efd): it looks at stop_asked
 * and size_asked. */
static void
ring_bell(struct bk_queue *q, const char *what)
{
	uint64_t one = 1;

	/* an eventfd write fails only on counter overflow: never here */
	if (write(q->stop_efd, &one, sizeof(one)) != sizeof(one))
		log_error("vbd %s ring %u: cannot signal %s: %m", q->name, q->idx, what);
}

void
bk_dataplane_stop(struct bk_queue *q)
{
	if (!q->started || q->stop_sent)
		return;
	pthread_mutex_lock(&q->rep_lock);
	q->stop_asked = true;
	pthread_mutex_unlock(&q->rep_lock);
	ring_bell(q, "stop");
	q->stop_sent = true;
}

bool
bk_dataplane_probe_size(struct bk_queue *q)
{
	if (q->stop_sent || bk_dataplane_stopped(q))
		return false;
	pthread_mutex_lock(&q->rep_lock);
	q->size_asked = true;
	pthread_mutex_unlock(&q->rep_lock);
	ring_bell(q, "a size probe");
	return true;
}

bool
bk_dataplane_stopped(const struct bk_queue *q)
{
	/* paired with the release at the end of bk_queue_main */
	return !q->started || smp_load_acquire(&q->finished);
}

void
bk_dataplane_join(struct bk_queue *q)
{
	if (!q->started || q->joined)
		return;
	bk_dataplane_stop(q);
	pthread_join(q->thread, NULL);
	q->joined = true;
	/* what stays mapped is unmapped by destroy: count it as gone */
	q->stats.pgrant_mapped = 0;
}

void
bk_dataplane_destroy(struct bk_queue *q, bool keep_state)
{
	if (!q)
		return;
	bk_dataplane_join(q);
	if (q->evtchn)
		xenops_evtchn_close(q->evtchn);
	bk_store_queue_close(q->sq);
	if (q->epfd >= 0)
		close(q->epfd);
	if (q->stop_efd >= 0)
		close(q->stop_efd);
	free(q->submit_q);
	bk_pgrants_free(q->pg);
	free(q->pages);
	free(q->pass);
	free(q->cb_reqs);
	free(q->cb_segs);
	free(q->grefs);
	pool_fini(q);
	/* after the store queue: nothing is in flight any more */
	bk_qstate_close(q->qs, !keep_state);
	if (q->ring)
		blkring_free(q->ring);
	if (q->sring)
		xenops_unmap(q->xops, q->sring, q->nr_pages);
	pthread_mutex_destroy(&q->rep_lock);
	free(q);
}

