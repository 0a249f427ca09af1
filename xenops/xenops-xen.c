/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops-xen.c: the XENOPS_XEN transport, over Xen's own libraries:
 * libxengnttab (map/unmap/copy), libxengntshr (share), libxenevtchn,
 * libxenctrl (domain liveness) and libxenstore (our domid).
 *
 * This is the only file that sees the libraries' -1/errno convention; it
 * converts to -errno once, at each call.  Handles other than the event
 * channel ones are opened lazily, on first use, because a backend domain
 * and a guest need different devices (a domU has no /dev/xen/privcmd
 * rights for xc_domain_getinfolist, a dom0 backend never uses gntalloc).
 *
 * Differences from the simulator that the Linux drivers impose (see
 * include/xenops.h): gntdev reports every failed map as EINVAL (the
 * per-entry GNTST_ status is not returned), gntalloc defers end-access
 * instead of refusing it (unshare never returns -EBUSY), and Xen silently
 * drops a notify on an unbound port (no -ENOTCONN).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xenctrl.h>
#include <xenevtchn.h>
#include <xengnttab.h>
#include <xenstore.h>

#include "compiler.h"
#include "log.h"
#include "private.h"

/* Grant copy segments per ioctl (stack array; gntdev splits them into
 * hypercalls of its own): the dataplane batches a whole ring pass. */
#define XEN_COPY_BATCH	256

struct xen {
	pthread_mutex_t lock;		/* lazy opens below */
	xengnttab_handle *gt;
	xengntshr_handle *gs;
	xc_interface *xc;
};

static struct xen *
to_xen(xenops_t *x)
{
	return x->priv;
}

static xengnttab_handle *
xen_gt(xenops_t *x)
{
	struct xen *xn = to_xen(x);
	xengnttab_handle *h;

	pthread_mutex_lock(&xn->lock);
	if (!xn->gt) {
		xn->gt = xengnttab_open(NULL, 0);
		if (!xn->gt)
			log_error("xenops: xengnttab_open (/dev/xen/gntdev): %m");
	}
	h = xn->gt;
	pthread_mutex_unlock(&xn->lock);
	return h;
}

static xengntshr_handle *
xen_gs(xenops_t *x)
{
	struct xen *xn = to_xen(x);
	xengntshr_handle *h;

	pthread_mutex_lock(&xn->lock);
	if (!xn->gs) {
		xn->gs = xengntshr_open(NULL, 0);
		if (!xn->gs)
			log_error("xenops: xengntshr_open (/dev/xen/gntalloc): %m");
	}
	h = xn->gs;
	pthread_mutex_unlock(&xn->lock);
	return h;
}

static xc_interface *
xen_xc(xenops_t *x)
{
	struct xen *xn = to_xen(x);
	xc_interface *h;

	pthread_mutex_lock(&xn->lock);
	if (!xn->xc) {
		xn->xc = xc_interface_open(NULL, NULL, 0);
		if (!xn->xc)
			log_error("xenops: xc_interface_open (/dev/xen/privcmd): %m");
	}
	h = xn->xc;
	pthread_mutex_unlock(&xn->lock);
	return h;
}

/* Our domid from xenstore ("domid" relative to our home); 0 if absent. */
static uint32_t
xen_read_domid(void)
{
	struct xs_handle *xs = xs_open(XS_OPEN_READONLY);
	uint32_t domid = 0;
	unsigned int len;
	char *v, *end;

	if (!xs)
		return 0;
	v = xs_read(xs, XBT_NULL, "domid", &len);
	if (v) {
		unsigned long d = strtoul(v, &end, 10);

		if (end != v && *end == '\0' && d < DOMID_FIRST_RESERVED)
			domid = d;
		free(v);
	}
	xs_close(xs);
	return domid;
}

static int
xen_open(xenops_t *x, const struct xenops_config *cfg)
{
	struct xen *xn;

	if (access("/dev/xen/evtchn", F_OK) < 0) {
		int e = errno;

		log_error("xenops: transport xen: /dev/xen/evtchn: %m "
			  "(not running on Xen? use the sim transport with xensim)");
		return -e;
	}
	xn = calloc(1, sizeof(*xn));
	if (!xn)
		return -ENOMEM;
	pthread_mutex_init(&xn->lock, NULL);
	x->priv = xn;
	x->domid = xen_read_domid();
	x->xs_path = NULL;	/* libxenstore's default */
	return 0;
}

static void
xen_close(xenops_t *x)
{
	struct xen *xn = to_xen(x);

	if (xn->gt)
		xengnttab_close(xn->gt);
	if (xn->gs)
		xengntshr_close(xn->gs);
	if (xn->xc)
		xc_interface_close(xn->xc);
	pthread_mutex_destroy(&xn->lock);
	free(xn);
}

/* how often a grant map interrupted by EINTR is made again */
#define XEN_MAP_EINTR_TRIES 8

static void *
xen_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
	      const grant_ref_t *refs, bool writable)
{
	xengnttab_handle *gt = xen_gt(x);
	unsigned int tries;
	void *addr = NULL;

	if (!gt)
		return NULL;
	/*
	 * The library does not write refs; its prototype lacks the const.
	 * All-or-nothing: it unmaps everything if one ref fails, so a
	 * failed call leaves nothing behind and may be made again.
	 *
	 * The gntdev mmap() that does the mapping can fail with EINTR
	 * though the daemon has no signal handler that could interrupt it:
	 * seen once in about 60 takeovers on a PV dom0 (Linux 6.1, check-xen's
	 * SIGKILL-restart loop), while a fresh blkbackd mapped the rings of
	 * the vbds it took over, just after it had set up io_uring (whose
	 * task-work notification makes kernel waits see a pending signal:
	 * the likeliest cause, not proven).  EINTR says nothing about the
	 * grant: map again, a bounded number of times.
	 */
	for (tries = 0; tries < XEN_MAP_EINTR_TRIES && !addr; tries++) {
		addr = xengnttab_map_domain_grant_refs(gt, count, domid, (uint32_t *)refs,
						       PROT_READ | (writable ? PROT_WRITE : 0));
		if (!addr && errno != EINTR)
			break;
	}
	return addr;
}

static int
xen_unmap(xenops_t *x, void *addr, unsigned int count)
{
	xengnttab_handle *gt = xen_gt(x);

	if (!gt)
		return -errno;
	if (xengnttab_unmap(gt, addr, count) < 0)
		return -errno;
	return 0;
}

/* GNTST_* of one copy segment -> -errno (include/xenops.h error classes). */
static int
gntst_to_errno(int16_t st)
{
	switch (st) {
	case GNTST_okay:
		return 0;
	case GNTST_bad_domain:
		return -ESRCH;
	case GNTST_permission_denied:
		return -EPERM;
	case GNTST_eagain:
		return -EAGAIN;
	case GNTST_no_space:
	case GNTST_no_device_space:
		return -ENOMEM;
	case GNTST_general_error:	/* Xen's code for r/o and wrong domid */
	case GNTST_bad_gntref:
	case GNTST_bad_copy_arg:
	case GNTST_bad_page:
	case GNTST_bad_virt_addr:
		return -EINVAL;
	default:
		return -EIO;
	}
}

static int
xen_grant_copy(xenops_t *x, uint32_t domid, bool to_guest, unsigned int count,
	       struct xenops_copy_seg *segs)
{
	xengnttab_handle *gt = xen_gt(x);
	xengnttab_grant_copy_segment_t op[XEN_COPY_BATCH];
	unsigned int idx[XEN_COPY_BATCH];
	unsigned int i = 0;

	if (!gt) {
		int rc = -errno;

		for (i = 0; i < count; i++)
			if (segs[i].status == 0)
				segs[i].status = rc;
		return rc;
	}
	while (i < count) {
		unsigned int n = 0;

		for (; i < count && n < XEN_COPY_BATCH; i++) {
			struct xenops_copy_seg *s = &segs[i];
			xengnttab_grant_copy_segment_t *o = &op[n];

			if (s->status != 0)
				continue;	/* bad geometry, set by xenops.c */
			memset(o, 0, sizeof(*o));
			if (to_guest) {
				o->source.virt = s->local;
				o->dest.foreign.ref = s->gref;
				o->dest.foreign.offset = s->offset;
				o->dest.foreign.domid = domid;
				o->flags = GNTCOPY_dest_gref;
			} else {
				o->source.foreign.ref = s->gref;
				o->source.foreign.offset = s->offset;
				o->source.foreign.domid = domid;
				o->dest.virt = s->local;
				o->flags = GNTCOPY_source_gref;
			}
			o->len = s->len;
			idx[n++] = i;
		}
		if (n == 0)
			continue;
		if (xengnttab_grant_copy(gt, n, op) < 0) {
			int rc = -errno;

			for (unsigned int k = 0; k < n; k++)
				segs[idx[k]].status = rc;
			continue;
		}
		for (unsigned int k = 0; k < n; k++)
			segs[idx[k]].status = gntst_to_errno(op[k].status);
	}
	return 0;
}

static void *
xen_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
		bool writable, grant_ref_t *refs_out)
{
	xengntshr_handle *gs = xen_gs(x);

	if (!gs)
		return NULL;
	return xengntshr_share_pages(gs, domid, count, refs_out, writable);
}

static int
xen_unshare_pages(xenops_t *x, void *addr, unsigned int count)
{
	xengntshr_handle *gs = xen_gs(x);

	if (!gs)
		return -errno;
	if (xengntshr_unshare(gs, addr, count) < 0)
		return -errno;
	return 0;
}

/* gntalloc has no "end access but keep the page": see xenops.h. */
static int
xen_end_access(xenops_t *x, void *addr, unsigned int count)
{
	(void)x;
	(void)addr;
	(void)count;
	return 0;
}

static xenevtchn_handle *
to_xce(xenops_evtchn_t *e)
{
	return e->priv;
}

static int
xen_evtchn_open(xenops_evtchn_t *e)
{
	xenevtchn_handle *xce = xenevtchn_open(NULL, 0);
	int fd, fl;

	if (!xce) {
		int rc = -errno;

		log_error("xenops: xenevtchn_open (/dev/xen/evtchn): %m");
		return rc;
	}
	/* Non-blocking, so that pending() returns -EAGAIN instead of
	 * sleeping when nothing is pending. */
	fd = xenevtchn_fd(xce);
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int rc = -errno;

		log_error("xenops: O_NONBLOCK on the evtchn fd: %m");
		xenevtchn_close(xce);
		return rc;
	}
	e->priv = xce;
	e->fd = fd;
	return 0;
}

static void
xen_evtchn_close(xenops_evtchn_t *e)
{
	/* Closing the device unbinds every port of the handle. */
	xenevtchn_close(to_xce(e));
}

static int
xen_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
			    uint32_t remote_port)
{
	xenevtchn_port_or_error_t p;

	p = xenevtchn_bind_interdomain(to_xce(e), domid, remote_port);
	return p < 0 ? -errno : p;
}

static int
xen_evtchn_bind_unbound(xenops_evtchn_t *e, uint32_t remote_domid)
{
	xenevtchn_port_or_error_t p;

	p = xenevtchn_bind_unbound_port(to_xce(e), remote_domid);
	return p < 0 ? -errno : p;
}

static int
xen_evtchn_notify(xenops_evtchn_t *e, uint32_t port)
{
	return xenevtchn_notify(to_xce(e), port) < 0 ? -errno : 0;
}

static int
xen_evtchn_pending(xenops_evtchn_t *e)
{
	xenevtchn_port_or_error_t p = xenevtchn_pending(to_xce(e));

	return p < 0 ? -errno : p;
}

static int
xen_evtchn_unmask(xenops_evtchn_t *e, uint32_t port)
{
	return xenevtchn_unmask(to_xce(e), port) < 0 ? -errno : 0;
}

static int
xen_evtchn_unbind(xenops_evtchn_t *e, uint32_t port)
{
	return xenevtchn_unbind(to_xce(e), port) < 0 ? -errno : 0;
}

static int
xen_domain_alive(xenops_t *x, uint32_t domid)
{
	xc_interface *xc = xen_xc(x);
	xc_domaininfo_t info;
	int n;

	if (!xc)
		return -errno;
	/*
	 * xc_domain_getinfolist, not xc_domain_getinfo (gone in Xen 4.18)
	 * nor xc_domain_getinfo_single (new in 4.18): the one call both
	 * ends of our supported range have.  It returns the first domain
	 * >= domid: check it is the one asked.
	 */
	n = xc_domain_getinfolist(xc, domid, 1, &info);
	if (n < 0)
		return -errno;
	if (n == 0 || info.domain != domid)
		return 0;
	/* Dying, or shut down and waiting to be destroyed: not alive. */
	return !(info.flags & (XEN_DOMINF_dying | XEN_DOMINF_shutdown));
}

const struct xenops_ops xenops_xen_ops = {
	.open = xen_open,
	.close = xen_close,
	.map_grefs = xen_map_grefs,
	.unmap = xen_unmap,
	.grant_copy = xen_grant_copy,
	.share_pages = xen_share_pages,
	.unshare_pages = xen_unshare_pages,
	.end_access = xen_end_access,
	.grant_again = xen_end_access,
	.evtchn_open = xen_evtchn_open,
	.evtchn_close = xen_evtchn_close,
	.evtchn_bind_interdomain = xen_evtchn_bind_interdomain,
	.evtchn_bind_unbound = xen_evtchn_bind_unbound,
	.evtchn_notify = xen_evtchn_notify,
	.evtchn_pending = xen_evtchn_pending,
	.evtchn_unmask = xen_evtchn_unmask,
	.evtchn_unbind = xen_evtchn_unbind,
	.domain_alive = xen_domain_alive,
};
