/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkfront-dev.c: libblkfront (blkfront.h): a device's life -- its rings,
 * the xenbus handshake, open, close and reconnect.  Requests are
 * blkfront-io.c's, raw mode blkfront-raw.c's (blkfront-priv.h).
 * Semantics follow Linux xen-blkfront (talk_to_blkback, blkfront_connect,
 * blkfront_gather_backend_features) and Xen io/blkif.h.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
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
#include "xbus.h"
#include "blkfront.h"
#include "blkfront-priv.h"

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

int
ft_write_ring_nodes(blkfront_t *bf, xs_transaction_t t, const char *dir, struct ft_queue *q)
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
		r = ft_write_ring_nodes(bf, t, bf->fe, &bf->q[0]);
	} else if (!r) {
		r = xbus_printf(xs, t, bf->fe, "multi-queue-num-queues", "%u", bf->nq);
		for (i = 0; i < bf->nq && !r; i++) {
			char dir[160];

			snprintf(dir, sizeof(dir), "%s/queue-%u", bf->fe, i);
			r = ft_write_ring_nodes(bf, t, dir, &bf->q[i]);
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
	unsigned int now;
	char *err;

	if (ft_backend_gone(xbus_read_uint(bf->xs, XBT_NULL, bf->be, "state", 0, &now))) {
		log_error("vbd %s: %s: backend %s is gone", bf->fe, what, bf->be);
		return;
	}
	err = xbus_read(bf->xs, XBT_NULL, bf->be, "error");

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
 * One step of the close handshake: wait (bounded) for the backend's
 * state.  The toolstack may remove the backend's directory meanwhile
 * (xl-remove once it saw Closed, or by force): then the wait ends at
 * once (-ENOENT), as nothing will write the state again.
 */
static int
close_wait(blkfront_t *bf, xbus_pred pred, unsigned int want)
{
	unsigned int st;
	int r = xbus_wait(bf->xs, bf->be, "state", pred, want, bf->cfg.timeout_ms, &st);

	if (r == -ENOENT)
		log_info("vbd %s: backend %s went away while we closed: not waiting for it",
			 bf->fe, bf->be);
	else if (r < 0)
		log_error("vbd %s: backend %s is %s, not %s, after %u ms (%s)",
			  bf->fe, bf->be, xbus_state_name(st), xbus_state_name(want),
			  bf->cfg.timeout_ms, strerror(-r));
	return r;
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
	ft_fail_all(bf, NULL);
	if (!handshake)
		goto teardown;

	/* a backend that is gone will not answer: no 30 s waits for it */
	if (ft_backend_gone(xbus_read_uint(bf->xs, XBT_NULL, bf->be, "state", 0, &st))) {
		log_info("vbd %s: backend %s is gone: not waiting for it to close",
			 bf->fe, bf->be);
		goto teardown;
	}
	/* Linux: Closing; backend Closing; Closed; backend Closed. */
	if (switch_state(bf, XenbusStateClosing) == 0 &&
	    close_wait(bf, xbus_ge, XenbusStateClosing) == -ENOENT)
		goto teardown;
	if (switch_state(bf, XenbusStateClosed) == 0 &&
	    close_wait(bf, xbus_eq, XenbusStateClosed) == 0)
		for (i = 0; i < bf->nq; i++)
			check_unmapped(bf, &bf->q[i]);
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

static bool
initwait_or_closing(unsigned int state, unsigned int initwait)
{
	return state == initwait || state == XenbusStateClosing;
}

static bool
not_closing(unsigned int state, unsigned int unused)
{
	(void)unused;
	return state != XenbusStateClosing;
}

/*
 * Wait for the backend's answer to our Initialising: InitWait, or a
 * refusal, which is Closing with an error node that says why (a backing
 * it cannot open), seen at once rather than after the whole timeout.
 * Closing without one is a backend still finishing an earlier
 * connection's requests: waited for.  Closed is no answer: after
 * reset_backend the backend is Closed until it sees our Initialising.
 * 0 with *st the last state seen, or -errno (-ETIMEDOUT).
 */
static int
wait_initwait(blkfront_t *bf, unsigned int *st)
{
	uint64_t deadline = ft_now_ns() + (uint64_t)bf->cfg.timeout_ms * 1000000ull;
	int r;

	for (;;) {
		uint64_t now = ft_now_ns();
		unsigned int left = now < deadline ? (unsigned int)((deadline - now) / 1000000) : 0;
		char *err;

		r = xbus_wait(bf->xs, bf->be, "state", initwait_or_closing, XenbusStateInitWait,
			      left, st);
		if (r || *st == XenbusStateInitWait)
			return r;
		err = xbus_read(bf->xs, XBT_NULL, bf->be, "error");
		free(err);
		if (err)
			return 0;	/* refused: the caller quotes the node */
		now = ft_now_ns();
		left = now < deadline ? (unsigned int)((deadline - now) / 1000000) : 0;
		r = xbus_wait(bf->xs, bf->be, "state", not_closing, 0, left, st);
		if (r)
			return r;
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

	r = wait_initwait(bf, &st);
	if (r || st != XenbusStateInitWait) {
		log_backend_error(bf, "waiting for InitWait", st);
		/* Closing (at once), or Closed after the whole wait: it
		 * refused the device */
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
		r = pthread_create(&bf->thread, NULL, ft_completion_thread, bf);
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

void
blkfront_get_stats(blkfront_t *bf, struct blkfront_stats *st)
{
	pthread_mutex_lock(&bf->stats_lock);
	*st = bf->stats;
	pthread_mutex_unlock(&bf->stats_lock);
}
