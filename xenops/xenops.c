/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops.c: the transport-independent half of libxenops: argument checks
 * and dispatch to the transport's ops table (private.h).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "private.h"

int
xenops_transport_parse(const char *name, enum xenops_transport *out)
{
	if (!name)
		return -EINVAL;
	if (strcmp(name, "xen") == 0) {
		*out = XENOPS_XEN;
		return 0;
	}
	if (strcmp(name, "sim") == 0) {
		*out = XENOPS_SIM;
		return 0;
	}
	return -EINVAL;
}

int
xenops_transport_default(enum xenops_transport *out)
{
	if (access("/dev/xen/evtchn", F_OK) == 0) {
		*out = XENOPS_XEN;
		return 0;
	}
	return -ENODEV;
}

xenops_t *
xenops_open(const struct xenops_config *cfg)
{
	xenops_t *x;
	int rc;

	if (!cfg) {
		errno = EINVAL;
		return NULL;
	}
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->transport = cfg->transport;
	switch (cfg->transport) {
	case XENOPS_XEN:
		x->ops = &xenops_xen_ops;
		break;
	case XENOPS_SIM:
		x->ops = &xenops_sim_ops;
		break;
	default:
		free(x);
		errno = EINVAL;
		return NULL;
	}
	rc = x->ops->open(x, cfg);
	if (rc < 0) {
		free(x);
		errno = -rc;
		return NULL;
	}
	return x;
}

void
xenops_close(xenops_t *x)
{
	if (!x)
		return;
	x->ops->close(x);
	free(x->xs_path);
	free(x);
}

uint32_t
xenops_self_domid(const xenops_t *x)
{
	return x->domid;
}

const char *
xenops_xenstore_path(const xenops_t *x)
{
	return x->xs_path;
}

static bool
domid_ok(uint32_t domid)
{
	return domid < DOMID_FIRST_RESERVED;
}

void *
xenops_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
		 const grant_ref_t *refs, bool writable)
{
	if (!domid_ok(domid) || count == 0 || count > XENOPS_MAX_MAP_BATCH ||
	    !refs) {
		errno = EINVAL;
		return NULL;
	}
	return x->ops->map_grefs(x, domid, count, refs, writable);
}

int
xenops_unmap(xenops_t *x, void *addr, unsigned int count)
{
	if (!addr || count == 0 || count > XENOPS_MAX_MAP_BATCH)
		return -EINVAL;
	return x->ops->unmap(x, addr, count);
}

int
xenops_grant_copy(xenops_t *x, uint32_t domid, bool to_guest,
		  unsigned int count, struct xenops_copy_seg *segs)
{
	int rc = 0;

	if (!domid_ok(domid) || (count && !segs))
		return -EINVAL;
	/* Segments with bad geometry fail on their own, like GNTST_bad_copy_arg. */
	for (unsigned int i = 0; i < count; i++) {
		struct xenops_copy_seg *s = &segs[i];

		s->status = 0;
		if (s->len == 0 || s->offset >= XEN_PAGE_SIZE ||
		    s->len > XEN_PAGE_SIZE - s->offset || !s->local)
			s->status = -EINVAL;
	}
	if (count)
		rc = x->ops->grant_copy(x, domid, to_guest, count, segs);
	for (unsigned int i = 0; i < count && rc == 0; i++)
		rc = segs[i].status;
	return rc;
}

void *
xenops_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
		   bool writable, grant_ref_t *refs_out)
{
	if (!domid_ok(domid) || count == 0 || count > XENOPS_MAX_MAP_BATCH ||
	    !refs_out) {
		errno = EINVAL;
		return NULL;
	}
	return x->ops->share_pages(x, domid, count, writable, refs_out);
}

int
xenops_unshare_pages(xenops_t *x, void *addr, unsigned int count)
{
	if (!addr || count == 0 || count > XENOPS_MAX_MAP_BATCH)
		return -EINVAL;
	return x->ops->unshare_pages(x, addr, count);
}

int
xenops_end_access(xenops_t *x, void *addr, unsigned int count)
{
	if (!addr || count == 0 || count > XENOPS_MAX_MAP_BATCH)
		return -EINVAL;
	return x->ops->end_access(x, addr, count);
}

int
xenops_grant_again(xenops_t *x, void *addr, unsigned int count)
{
	if (!addr || count == 0 || count > XENOPS_MAX_MAP_BATCH)
		return -EINVAL;
	return x->ops->grant_again(x, addr, count);
}

xenops_evtchn_t *
xenops_evtchn_open(xenops_t *x)
{
	xenops_evtchn_t *e = calloc(1, sizeof(*e));
	int rc;

	if (!e)
		return NULL;
	e->x = x;
	e->fd = -1;
	rc = x->ops->evtchn_open(e);
	if (rc < 0) {
		free(e);
		errno = -rc;
		return NULL;
	}
	return e;
}

void
xenops_evtchn_close(xenops_evtchn_t *e)
{
	if (!e)
		return;
	e->x->ops->evtchn_close(e);
	free(e);
}

int
xenops_evtchn_fd(const xenops_evtchn_t *e)
{
	return e->fd;
}

int
xenops_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
			       uint32_t remote_port)
{
	if (!domid_ok(domid) || remote_port == 0)
		return -EINVAL;
	return e->x->ops->evtchn_bind_interdomain(e, domid, remote_port);
}

int
xenops_evtchn_bind_unbound(xenops_evtchn_t *e, uint32_t remote_domid)
{
	if (!domid_ok(remote_domid))
		return -EINVAL;
	return e->x->ops->evtchn_bind_unbound(e, remote_domid);
}

int
xenops_evtchn_notify(xenops_evtchn_t *e, uint32_t port)
{
	return e->x->ops->evtchn_notify(e, port);
}

int
xenops_evtchn_pending(xenops_evtchn_t *e)
{
	return e->x->ops->evtchn_pending(e);
}

int
xenops_evtchn_unmask(xenops_evtchn_t *e, uint32_t port)
{
	return e->x->ops->evtchn_unmask(e, port);
}

int
xenops_evtchn_unbind(xenops_evtchn_t *e, uint32_t port)
{
	return e->x->ops->evtchn_unbind(e, port);
}

int
xenops_domain_alive(xenops_t *x, uint32_t domid)
{
	if (!domid_ok(domid))
		return -EINVAL;
	return x->ops->domain_alive(x, domid);
}
