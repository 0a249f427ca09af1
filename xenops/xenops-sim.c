/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops-sim.c: the XENOPS_SIM transport (sim-priv.h), a client of xensim's simulated
 * hypervisor (sim/hv.c; layout and protocol in sim/hv-proto.h).
 *
 * Control path: one SOCK_SEQPACKET connection per xenops_t (domain fds,
 * liveness; serialised by sim->lock) and one per event channel handle
 * (binding; its lifetime is the handle's, so a crashed process's ports
 * are closed by xensim).
 *
 * Data path, no daemon involved:
 *   share    atomic bitmaps in the domain's gnt memfd allocate refs and
 *            frames; the entry is filled as Linux gnttab_update_entry_v1
 *            does (domid+frame, then flags with release).
 *   map/copy (dom0) the granting domain's ram/gnt/act memfds, mapped once
 *            and cached per domain (struct sim_dom, refcounted); each ref
 *            is pinned in the act table and its entry flagged GTF_reading
 *            (/GTF_writing) with compare-exchange, exactly as Xen's
 *            _set_status_v1 checks GTF_permit_access, domid, GTF_readonly.
 *            Every pin is also recorded in this process's pin ledger
 *            (struct sim_ledger), a memfd xensim got at open and reads
 *            when our connection closes, to release what a killed
 *            process held (gntdev's unmap on close).
 *   notify   set the peer port's pending bit in its domain's evt memfd and,
 *            if it was clear and the port is unmasked, write the peer
 *            handle's eventfd (which xensim gave us with HV_OP_PEER).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "hv-proto.h"
#include "private.h"
#include "sim-priv.h"

/* ---------------------------------------------------------------- */
/* Open / close / domains                                           */
/* ---------------------------------------------------------------- */

static int
sim_open(xenops_t *x, const struct xenops_config *cfg)
{
	const char *dir = cfg->sim_dir ? cfg->sim_dir : getenv("XENSIM_DIR");
	struct sim *sim;
	int rc;

	if (!dir || !*dir) {
		log_error("xenops: transport sim needs xensim's directory "
			  "(--sim-dir or $XENSIM_DIR)");
		return -EINVAL;
	}
	if (cfg->domid > HV_MAX_DOMID) {
		log_error("xenops: domid %u out of range", cfg->domid);
		return -EINVAL;
	}
	sim = calloc(1, sizeof(*sim));
	if (!sim)
		return -ENOMEM;
	pthread_mutex_init(&sim->lock, NULL);
	sim->conn = -1;
	sim->dir = strdup(dir);
	if (!sim->dir) {
		rc = -ENOMEM;
		goto fail;
	}
	x->domid = cfg->domid;
	rc = sim_open_conn(dir, cfg->domid);
	if (rc < 0) {
		errno = -rc;
		if (rc == -ESRCH)
			log_error("xenops: xensim at %s has no domain %u",
				  dir, cfg->domid);
		else
			log_error("xenops: cannot reach xensim at %s/%s%.0u%shv.sock: %m",
				  dir, cfg->domid ? "dom" : "", cfg->domid,
				  cfg->domid ? "/" : "");
		goto fail;
	}
	sim->conn = rc;
	rc = sim_dom_fetch(sim, cfg->domid, cfg->domid, &sim->self);
	if (rc < 0) {
		errno = -rc;
		log_error("xenops: fetching dom%u's tables from xensim at %s: %m",
			  cfg->domid, dir);
		goto fail;
	}
	sim->self->refs = 1;
	if (cfg->domid == 0) {
		/* Only dom0 maps and copies, so only dom0 pins. */
		rc = sim_ledger_open(sim);
		if (rc < 0) {
			errno = -rc;
			log_error("xenops: handing xensim at %s a pin ledger: %m",
				  dir);
			goto fail;
		}
	}
	if (cfg->domid == 0)
		rc = asprintf(&x->xs_path, "%s/xenstore.sock", dir);
	else
		rc = asprintf(&x->xs_path, "%s/dom%u/xenstore.sock", dir,
			      cfg->domid);
	if (rc < 0) {
		x->xs_path = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	x->priv = sim;
	return 0;
fail:
	sim_ledger_close(sim->ledger);
	if (sim->self)
		sim_dom_free(sim->self);
	if (sim->conn >= 0)
		close(sim->conn);
	pthread_mutex_destroy(&sim->lock);
	free(sim->dir);
	free(sim);
	return rc;
}

static void
sim_close(xenops_t *x)
{
	struct sim *sim = to_sim(x);

	if (sim->maps || sim->shares)
		log_error("xenops: close with grants still mapped or shared "
			  "(they are released now)");
	while (sim->maps)
		sim_unmap(x, sim->maps->addr, sim->maps->count);
	while (sim->shares) {
		struct sim_share *s = sim->shares;

		if (sim_unshare_pages(x, s->addr, s->count) < 0) {
			/* Still mapped by the peer: leave the grant, drop ours. */
			sim->shares = s->next;
			munmap(s->addr, (size_t)s->count * HV_PAGE_SIZE);
			free(s->refs);
			free(s->frames);
			free(s);
		}
	}
	while (sim->doms)
		sim_dom_uncache_locked(sim, sim->doms);
	sim_dom_free(sim->self);
	/* Our ledger is empty now; xensim reads it once it sees the close. */
	close(sim->conn);
	sim_ledger_close(sim->ledger);
	pthread_mutex_destroy(&sim->lock);
	free(sim->dir);
	free(sim);
}

static int
sim_domain_alive(xenops_t *x, uint32_t domid)
{
	struct sim *sim = to_sim(x);
	struct hv_req req = { .op = HV_OP_DOMAIN_ALIVE, .domid = domid };
	struct hv_rsp rsp;
	int rc;

	pthread_mutex_lock(&sim->lock);
	rc = sim_call(sim->conn, &req, &rsp, -1, NULL, NULL);
	if (rc == 0) {
		struct sim_dom *d;

		/* Gone: forget its tables (freed with the last mapping). */
		for (d = sim->doms; d; d = d->next)
			if (d->domid == domid)
				break;
		if (d)
			sim_dom_uncache_locked(sim, d);
	}
	pthread_mutex_unlock(&sim->lock);
	return rc;
}

const struct xenops_ops xenops_sim_ops = {
	.open = sim_open,
	.close = sim_close,
	.map_grefs = sim_map_grefs,
	.unmap = sim_unmap,
	.grant_copy = sim_grant_copy,
	.share_pages = sim_share_pages,
	.unshare_pages = sim_unshare_pages,
	.end_access = sim_end_access,
	.grant_again = sim_grant_again,
	.evtchn_open = sim_evtchn_open,
	.evtchn_close = sim_evtchn_close,
	.evtchn_bind_interdomain = sim_evtchn_bind_interdomain,
	.evtchn_bind_unbound = sim_evtchn_bind_unbound,
	.evtchn_notify = sim_evtchn_notify,
	.evtchn_pending = sim_evtchn_pending,
	.evtchn_unmask = sim_evtchn_unmask,
	.evtchn_unbind = sim_evtchn_unbind,
	.domain_alive = sim_domain_alive,
};
