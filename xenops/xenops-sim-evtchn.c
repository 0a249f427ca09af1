/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops-sim-evtchn.c: event channels over xensim (sim-priv.h): binding
 * through a control connection of the handle's own, notify by the peer
 * port's pending bit and its handle's eventfd, pending and unmask.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "sim-priv.h"

/* ---------------------------------------------------------------- */
/* Event channels                                                   */
/* ---------------------------------------------------------------- */

static struct sim_evtchn *
to_sev(xenops_evtchn_t *e)
{
	return e->priv;
}

static void
port_drop_peer(struct sim_port *sp)
{
	if (sp->peer_efd >= 0)
		close(sp->peer_efd);
	if (sp->peer_evt)
		munmap(sp->peer_evt, EVT_SIZE);
	sp->peer_efd = -1;
	sp->peer_evt = NULL;
}


int
sim_evtchn_open(xenops_evtchn_t *e)
{
	struct sim *sim = to_sim(e->x);
	struct hv_req req = { .op = HV_OP_EVTCHN_REGISTER };
	struct hv_rsp rsp;
	struct sim_evtchn *se;
	int rc;

	se = calloc(1, sizeof(*se));
	if (!se)
		return -ENOMEM;
	se->conn = se->efd = -1;
	se->ports = calloc(HV_NR_PORTS, sizeof(*se->ports));
	se->bound = calloc(HV_NR_PORTS, sizeof(*se->bound));
	if (!se->ports || !se->bound) {
		rc = -ENOMEM;
		goto fail;
	}
	for (unsigned int p = 0; p < HV_NR_PORTS; p++)
		se->ports[p].peer_efd = -1;
	se->own = sim->self->evt;
	se->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (se->efd < 0) {
		rc = -errno;
		goto fail;
	}
	rc = sim_open_conn(sim->dir, e->x->domid);
	if (rc < 0)
		goto fail;
	se->conn = rc;
	rc = sim_call(se->conn, &req, &rsp, se->efd, NULL, NULL);
	if (rc < 0)
		goto fail;
	e->priv = se;
	e->fd = se->efd;
	return 0;
fail:
	if (se->conn >= 0)
		close(se->conn);
	if (se->efd >= 0)
		close(se->efd);
	free(se->ports);
	free(se->bound);
	free(se);
	return rc;
}

void
sim_evtchn_close(xenops_evtchn_t *e)
{
	struct sim_evtchn *se = to_sev(e);

	/*
	 * Unbind explicitly, so that the peers see -ENOTCONN as soon as we
	 * return; closing the connection would do it too, but
	 * asynchronously (that is what covers a crashed process).
	 */
	while (se->nbound)
		if (sim_evtchn_unbind(e, se->bound[0]) < 0)
			break;	/* xensim is gone: nothing left to unbind */
	close(se->conn);
	for (unsigned int i = 0; i < se->nbound; i++)
		port_drop_peer(&se->ports[se->bound[i]]);
	close(se->efd);
	free(se->ports);
	free(se->bound);
	free(se);
}

static void
port_track(struct sim_evtchn *se, uint32_t port)
{
	struct sim_port *sp = &se->ports[port];

	sp->bound = true;
	sp->gen = 0;
	sp->peer_efd = -1;
	sp->peer_evt = NULL;
	se->bound[se->nbound++] = port;
}

static int
sim_evtchn_bind(xenops_evtchn_t *e, struct hv_req *req)
{
	struct sim_evtchn *se = to_sev(e);
	struct hv_rsp rsp;
	int rc;

	rc = sim_call(se->conn, req, &rsp, -1, NULL, NULL);
	if (rc < 0)
		return rc;
	if (rsp.port == 0 || rsp.port >= HV_NR_PORTS || se->ports[rsp.port].bound)
		return -EPROTO;
	port_track(se, rsp.port);
	bk_dbg(BK_DBG_EVTCHN, "xenops-sim: op %u dom%u port %u -> local port %u",
	       req->op, req->domid, req->port, rsp.port);
	return rsp.port;
}

int
sim_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
			    uint32_t remote_port)
{
	struct hv_req req = { .op = HV_OP_BIND_INTERDOMAIN, .domid = domid,
			      .port = remote_port };

	return sim_evtchn_bind(e, &req);
}

int
sim_evtchn_bind_unbound(xenops_evtchn_t *e, uint32_t remote_domid)
{
	struct hv_req req = { .op = HV_OP_BIND_UNBOUND, .domid = remote_domid };

	return sim_evtchn_bind(e, &req);
}

/* (Re)fetch the peer of port: its domain's table and its handle's eventfd. */
static int
port_fetch_peer(struct sim_evtchn *se, uint32_t port)
{
	struct sim_port *sp = &se->ports[port];
	struct hv_req req = { .op = HV_OP_PEER, .port = port };
	struct hv_rsp rsp;
	int fds[2];
	unsigned int nfds = 2;
	int rc;

	rc = sim_call(se->conn, &req, &rsp, -1, fds, &nfds);
	if (rc < 0)
		return rc;
	if (nfds != 2 || rsp.port == 0 || rsp.port >= HV_NR_PORTS) {
		rc = -EPROTO;
		goto out;
	}
	port_drop_peer(sp);
	sp->peer_evt = sim_map_fd(fds[0], EVT_SIZE, PROT_READ | PROT_WRITE);
	if (!sp->peer_evt) {
		rc = -errno;
		goto out;
	}
	sp->peer_efd = fds[1];
	fds[1] = -1;
	sp->remote_port = rsp.port;
	sp->gen = rsp.arg;
	rc = 0;
out:
	for (unsigned int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

static int
efd_signal(int fd)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is saturated, so it is readable anyway. */
	if (write(fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		return -errno;
	return 0;
}

int
sim_evtchn_notify(xenops_evtchn_t *e, uint32_t port)
{
	struct sim_evtchn *se = to_sev(e);
	struct sim_port *sp;
	struct hv_evtchn *rev;
	uint32_t sg;

	if (port == 0 || port >= HV_NR_PORTS || !se->ports[port].bound)
		return -EINVAL;
	sp = &se->ports[port];
	/* Pairs with smp_store_release(&sg) in hv_port_publish(). */
	sg = smp_load_acquire(&se->own[port].sg);
	if (HV_SG_STATE(sg) != HV_ECS_INTERDOMAIN)
		return HV_SG_STATE(sg) == HV_ECS_FREE ? -EINVAL : -ENOTCONN;
	if (unlikely(sp->peer_efd < 0 || sp->gen != HV_SG_GEN(sg))) {
		int rc = port_fetch_peer(se, port);

		if (rc < 0)
			return rc;
	}
	rev = &sp->peer_evt[sp->remote_port];
	/* Set pending, then look at the mask; the full barrier pairs with
	 * the one in sim_evtchn_unmask() (masked=0; mb; read pending), so
	 * either we see it unmasked or the unmasker sees pending. */
	if (__atomic_exchange_n(&rev->pending, 1, __ATOMIC_SEQ_CST))
		return 0;	/* already pending: one event delivers both */
	smp_mb();
	if (READ_ONCE(rev->masked))
		return 0;
	return efd_signal(sp->peer_efd);
}

int
sim_evtchn_pending(xenops_evtchn_t *e)
{
	struct sim_evtchn *se = to_sev(e);
	uint64_t cnt;
	int found = -EAGAIN;
	bool more = false;
	unsigned int start = se->rr;

	/* Consume the wakeup first: a notify after this read writes again. */
	if (read(se->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		return -errno;
	smp_mb();	/* pairs with the notifier's pending-then-eventfd order */
	for (unsigned int k = 0; k < se->nbound; k++) {
		uint32_t port = se->bound[(start + k) % se->nbound];
		struct hv_evtchn *ev = &se->own[port];

		if (!READ_ONCE(ev->pending) || READ_ONCE(ev->masked))
			continue;
		if (found >= 0) {
			more = true;
			break;
		}
		/* Mask before clearing pending (xenevtchn_pending semantics:
		 * the port stays masked until unmask). */
		WRITE_ONCE(ev->masked, 1);
		if (__atomic_exchange_n(&ev->pending, 0, __ATOMIC_SEQ_CST)) {
			found = port;
			se->rr = (start + k + 1) % se->nbound;
		} else {
			WRITE_ONCE(ev->masked, 0);
		}
	}
	if (more && efd_signal(se->efd) < 0)
		return -errno;
	return found;
}

int
sim_evtchn_unmask(xenops_evtchn_t *e, uint32_t port)
{
	struct sim_evtchn *se = to_sev(e);
	struct hv_evtchn *ev;

	if (port == 0 || port >= HV_NR_PORTS || !se->ports[port].bound)
		return -EINVAL;
	ev = &se->own[port];
	WRITE_ONCE(ev->masked, 0);
	/* Pairs with the notifier's smp_mb() between setting pending and
	 * reading masked. */
	smp_mb();
	if (READ_ONCE(ev->pending))
		return efd_signal(se->efd);
	return 0;
}

int
sim_evtchn_unbind(xenops_evtchn_t *e, uint32_t port)
{
	struct sim_evtchn *se = to_sev(e);
	struct hv_req req = { .op = HV_OP_UNBIND, .port = port };
	struct hv_rsp rsp;
	int rc;

	if (port == 0 || port >= HV_NR_PORTS || !se->ports[port].bound)
		return -EINVAL;
	rc = sim_call(se->conn, &req, &rsp, -1, NULL, NULL);
	if (rc < 0 && rc != -EINVAL)
		return rc;
	port_drop_peer(&se->ports[port]);
	se->ports[port].bound = false;
	for (unsigned int i = 0; i < se->nbound; i++) {
		if (se->bound[i] == port) {
			se->bound[i] = se->bound[--se->nbound];
			break;
		}
	}
	se->rr = 0;
	return 0;
}
