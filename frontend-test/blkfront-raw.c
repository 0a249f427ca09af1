/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkfront-raw.c: libblkfront's raw mode (blkfront.h): the ring and its
 * pages handed to a script as they are, for requests no well-behaved
 * frontend would send.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "xbus.h"
#include "blkfront.h"
#include "blkfront-priv.h"

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
		return ft_write_ring_nodes(bf, t, dir, q);
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
