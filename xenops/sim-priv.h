/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim-priv.h: the XENOPS_SIM transport's insides, shared by its files:
 *   xenops-sim.c         the control connections to xensim, the domains'
 *                        tables (mapped once, refcounted), open/close
 *   xenops-sim-grant.c   grant tables: mapping (Xen's _set_status_v1),
 *                        the pin ledger, map/unmap/copy, share/unshare
 *   xenops-sim-evtchn.c  event channels
 * Layout and protocol of xensim's side: sim/hv-proto.h.
 */
#ifndef XENOPS_SIM_PRIV_H
#define XENOPS_SIM_PRIV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "hv-proto.h"
#include "private.h"

#define GNT_SIZE	sizeof(struct hv_gnt)
#define ACT_SIZE	(sizeof(struct hv_active) * HV_NR_GRANTS)
#define EVT_SIZE	(sizeof(struct hv_evtchn) * HV_NR_PORTS)

/* One domain's tables as seen by this process. */
struct sim_dom {
	uint32_t domid;
	unsigned int refs;		/* under sim->lock */
	bool cached;			/* in sim->doms (under sim->lock) */
	int ram_fd;
	struct hv_gnt *gnt;
	struct hv_active *act;		/* dom0 only */
	struct hv_evtchn *evt;
	uint8_t *ram;			/* dom0 only: all of it, for copy */
	struct sim_dom *next;
};

/* A range from map_grefs. */
struct sim_map {
	void *addr;
	unsigned int count;
	bool writable;
	struct sim_dom *dom;		/* holds a ref */
	struct sim_map *next;
	uint32_t *slots;		/* [count] ledger slots, after refs */
	grant_ref_t refs[];
};

/*
 * This process's pin ledger (hv-proto.h "pin ledger"), dom0 only: the
 * shared slots xensim reads when our connection closes, and which of
 * them are free.  Slots are handed out under lock (a map takes all of
 * its slots at once, a copy one); each slot is then written by its
 * holder alone, so recording and un-recording need no lock.
 */
struct sim_ledger {
	struct hv_ledger *map;
	uint32_t token;			/* xensim's name for our connection */
	uint32_t nslots;		/* usable: HV_LEDGER_SLOTS or the test limit */
	pthread_mutex_t lock;		/* the fields below */
	uint32_t used;			/* as map->hdr.used */
	uint32_t *free;			/* stack of freed slots, [cap] */
	uint32_t nfree, cap;		/* nfree <= used <= cap */
};

/* A range from share_pages. */
struct sim_share {
	void *addr;
	unsigned int count;
	uint32_t word;			/* the grant entries' (domid << 16) | flags */
	struct sim_share *next;
	grant_ref_t *refs;
	uint32_t *frames;
};

struct sim {
	char *dir;
	pthread_mutex_t lock;		/* conn, doms, maps, shares */
	int conn;
	struct sim_dom *self;		/* our domain (never dying under us) */
	struct sim_dom *doms;		/* other domains, dom0 only */
	struct sim_map *maps;
	struct sim_share *shares;
	uint32_t alloc_hint;		/* spreads bitmap scans (relaxed) */
	struct sim_ledger *ledger;	/* dom0 only */
};

/* Per event channel handle. */
struct sim_port {
	bool bound;			/* through this handle */
	uint32_t gen;			/* of the cached peer below */
	uint32_t remote_port;
	int peer_efd;			/* -1 until fetched */
	struct hv_evtchn *peer_evt;	/* the remote domain's table */
};

struct sim_evtchn {
	int conn;
	int efd;
	struct hv_evtchn *own;		/* our domain's table */
	struct sim_port *ports;		/* [HV_NR_PORTS] */
	uint32_t *bound;		/* ports bound here, for pending() */
	unsigned int nbound;
	unsigned int rr;		/* round-robin start of pending() */
};

static inline struct sim *
to_sim(xenops_t *x)
{
	return x->priv;
}

/* xenops-sim-conn.c: the control connections and the domains. */
/*
 * One request/response.  fds_out receives up to *nfds fds (the caller
 * owns them); sfd >= 0 is passed along with the request.
 * Returns rsp->ret, or -errno if the exchange itself failed
 * (-ESRCH once xensim has dropped us: our domain is gone).
 */
int sim_call(int conn, const struct hv_req *req, struct hv_rsp *rsp, int sfd,
		int *fds_out, unsigned int *nfds);
/* Connect and say hello as domid.  Returns the fd or -errno. */
int sim_open_conn(const char *dir, uint32_t domid);
/* mmap the first size bytes of one of xensim's memfds, MAP_SHARED;
 * NULL with errno (EPROTO: the memfd is shorter). */
void *sim_map_fd(int fd, size_t size, int prot);
/*
 * A reference on domid's tables for map/copy.  Only dom0 may map
 * another domain's grants (DIR/hv.sock is the privileged one).
 * Returns 0 or -ESRCH (no such domain, or dying), -EPERM (not dom0).
 */
int sim_dom_get(xenops_t *x, uint32_t domid, struct sim_dom **out);
/*
 * Drop a reference.  A dying domain also leaves the cache, so that its
 * memory goes as soon as the last mapping does (a long-running backend
 * must not pin the RAM of every guest it ever served).
 */
void sim_dom_put(struct sim *sim, struct sim_dom *d);
/* For open and close (xenops-sim.c): fetch and map domid's tables
 * (sim->lock held; 0/-errno); free a sim_dom and its mappings; take d
 * out of the cache (sim->lock held). */
int sim_dom_fetch(struct sim *sim, uint32_t self, uint32_t domid, struct sim_dom **out);
void sim_dom_free(struct sim_dom *d);
void sim_dom_uncache_locked(struct sim *sim, struct sim_dom *d);

/* xenops-sim-grant.c: the pin ledger and the grant ops (xenops_sim_ops). */
/*
 * Create the ledger and hand it to xensim on our control connection
 * (dom0 only).  XENOPS_SIM_LEDGER_SLOTS (1..HV_LEDGER_SLOTS) lowers the
 * capacity, for tests of a full ledger.
 */
int sim_ledger_open(struct sim *sim);
void sim_ledger_close(struct sim_ledger *l);
void *sim_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
		const grant_ref_t *refs, bool writable);
int sim_unmap(xenops_t *x, void *addr, unsigned int count);
int sim_grant_copy(xenops_t *x, uint32_t domid, bool to_guest, unsigned int count,
		struct xenops_copy_seg *segs);
void *sim_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
		bool writable, grant_ref_t *refs_out);
int sim_end_access(xenops_t *x, void *addr, unsigned int count);
int sim_grant_again(xenops_t *x, void *addr, unsigned int count);
int sim_unshare_pages(xenops_t *x, void *addr, unsigned int count);

/* xenops-sim-evtchn.c: the event channel ops (xenops_sim_ops). */
int sim_evtchn_open(xenops_evtchn_t *e);
void sim_evtchn_close(xenops_evtchn_t *e);
int sim_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
		uint32_t remote_port);
int sim_evtchn_bind_unbound(xenops_evtchn_t *e, uint32_t remote_domid);
int sim_evtchn_notify(xenops_evtchn_t *e, uint32_t port);
int sim_evtchn_pending(xenops_evtchn_t *e);
int sim_evtchn_unmask(xenops_evtchn_t *e, uint32_t port);
int sim_evtchn_unbind(xenops_evtchn_t *e, uint32_t port);

#endif /* XENOPS_SIM_PRIV_H */
