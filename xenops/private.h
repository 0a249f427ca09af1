/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * private.h: libxenops internals shared by xenops.c (dispatch) and the
 * transports xenops-sim.c and xenops-xen.c (the osdep pattern of Xen's
 * tools/libs: a generic handle plus an ops table per platform).
 */
#ifndef XENOPS_PRIVATE_H
#define XENOPS_PRIVATE_H

#include "xenops.h"

/*
 * One transport.  Every slot is Required.  Arguments are already checked
 * by xenops.c (count ranges, domid range, NULL pointers); the slots
 * follow the contracts of include/xenops.h and return 0/-errno (pointer
 * slots: NULL with errno).
 */
struct xenops_ops {
	/* Fill x->priv (and x->domid / x->xs_path); 0 or -errno, logs why. */
	int (*open)(xenops_t *x, const struct xenops_config *cfg);
	void (*close)(xenops_t *x);

	void *(*map_grefs)(xenops_t *x, uint32_t domid, unsigned int count,
			   const grant_ref_t *refs, bool writable);
	int (*unmap)(xenops_t *x, void *addr, unsigned int count);
	int (*grant_copy)(xenops_t *x, uint32_t domid, bool to_guest,
			  unsigned int count, struct xenops_copy_seg *segs);
	void *(*share_pages)(xenops_t *x, uint32_t domid, unsigned int count,
			     bool writable, grant_ref_t *refs_out);
	int (*unshare_pages)(xenops_t *x, void *addr, unsigned int count);
	int (*end_access)(xenops_t *x, void *addr, unsigned int count);
	int (*grant_again)(xenops_t *x, void *addr, unsigned int count);

	/* Fill e->priv and e->fd; 0 or -errno. */
	int (*evtchn_open)(xenops_evtchn_t *e);
	void (*evtchn_close)(xenops_evtchn_t *e);
	int (*evtchn_bind_interdomain)(xenops_evtchn_t *e, uint32_t domid,
				       uint32_t remote_port);
	int (*evtchn_bind_unbound)(xenops_evtchn_t *e, uint32_t remote_domid);
	int (*evtchn_notify)(xenops_evtchn_t *e, uint32_t port);
	int (*evtchn_pending)(xenops_evtchn_t *e);
	int (*evtchn_unmask)(xenops_evtchn_t *e, uint32_t port);
	int (*evtchn_unbind)(xenops_evtchn_t *e, uint32_t port);

	int (*domain_alive)(xenops_t *x, uint32_t domid);
};

struct xenops {
	const struct xenops_ops *ops;
	enum xenops_transport transport;
	uint32_t domid;		/* our own */
	char *xs_path;		/* XENSTORED_PATH for this domain, or NULL */
	void *priv;		/* the transport's state */
};

struct xenops_evtchn {
	xenops_t *x;
	int fd;			/* pollable, owned by the transport */
	void *priv;		/* the transport's state */
};

extern const struct xenops_ops xenops_sim_ops;
extern const struct xenops_ops xenops_xen_ops;

#endif /* XENOPS_PRIVATE_H */
