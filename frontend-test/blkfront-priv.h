/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkfront-priv.h: libblkfront's insides, shared by its three files:
 *   blkfront-dev.c      a device's life: rings, the xenbus handshake,
 *                   open/close/reconnect (Linux xen-blkfront's
 *                   talk_to_blkback, blkfront_connect)
 *   blkfront-io.c   requests: submission, the completion thread and
 *                   polling, the guest log, a broken device
 *                   (blkif_queue_request, blkif_interrupt)
 *   blkfront-raw.c  raw mode: the ring handed to scripts as it is
 * Ownership: struct blkfront owns its queues; each queue (struct ft_queue)
 * owns its shared ring pages, its event channel handle, its data page
 * pool and its slots, all under q->lock.  The completion thread is the
 * only reader of responses; submitters are the only writers of requests.
 */
#ifndef BLKFRONT_PRIV_H
#define BLKFRONT_PRIV_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <xenstore.h>

#include "blkfront.h"
#include "pollwin.h"

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

/* blkfront-dev.c: write one queue's ring-ref(s) and event-channel under dir
 * (the frontend directory, or its queue-N/), in transaction t.  0/-errno. */
int ft_write_ring_nodes(blkfront_t *bf, xs_transaction_t t, const char *dir,
			struct ft_queue *q);

/* blkfront-io.c: the device is broken: every request in flight and every
 * later one fails; msg logged once (NULL: quiet, e.g. on close).  Any
 * thread that holds no queue lock. */
void ft_fail_all(blkfront_t *bf, const char *msg);
/* blkfront-io.c: does xenstore error r on the backend's state say its
 * directory is gone (ENOENT, or EACCES once its parent went too)? */
bool ft_backend_gone(int r);
/* blkfront-io.c: the completion thread (pthread_create's start routine;
 * opaque is the blkfront_t). */
void *ft_completion_thread(void *opaque);

#endif /* BLKFRONT_PRIV_H */
