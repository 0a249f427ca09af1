/*
 * xenops-stub.c: STUB so everything links before the real xenops lands.
 * Every call fails with ENOSYS.  Replaced by xenops.c, xenops-sim.c and
 * xenops-xen.c.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "xenops.h"

int xenops_transport_parse(const char *name, enum xenops_transport *out)
{
	if (strcmp(name, "xen") == 0) { *out = XENOPS_XEN; return 0; }
	if (strcmp(name, "sim") == 0) { *out = XENOPS_SIM; return 0; }
	return -EINVAL;
}
int xenops_transport_default(enum xenops_transport *out) { return -ENODEV; }
xenops_t *xenops_open(const struct xenops_config *cfg) { errno = ENOSYS; return NULL; }
void xenops_close(xenops_t *x) { }
uint32_t xenops_self_domid(const xenops_t *x) { return 0; }
const char *xenops_xenstore_path(const xenops_t *x) { return NULL; }
void *xenops_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
		       const grant_ref_t *refs, bool writable) { errno = ENOSYS; return NULL; }
int xenops_unmap(xenops_t *x, void *addr, unsigned int count) { return -ENOSYS; }
int xenops_grant_copy(xenops_t *x, uint32_t domid, bool to_guest,
		      unsigned int count, struct xenops_copy_seg *segs) { return -ENOSYS; }
void *xenops_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
			 bool writable, grant_ref_t *refs_out) { errno = ENOSYS; return NULL; }
int xenops_unshare_pages(xenops_t *x, void *addr, unsigned int count) { return -ENOSYS; }
xenops_evtchn_t *xenops_evtchn_open(xenops_t *x) { errno = ENOSYS; return NULL; }
void xenops_evtchn_close(xenops_evtchn_t *e) { }
int xenops_evtchn_fd(const xenops_evtchn_t *e) { return -ENOSYS; }
int xenops_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
				   uint32_t remote_port) { return -ENOSYS; }
int xenops_evtchn_bind_unbound(xenops_evtchn_t *e, uint32_t remote_domid) { return -ENOSYS; }
int xenops_evtchn_notify(xenops_evtchn_t *e, uint32_t port) { return -ENOSYS; }
int xenops_evtchn_pending(xenops_evtchn_t *e) { return -ENOSYS; }
int xenops_evtchn_unmask(xenops_evtchn_t *e, uint32_t port) { return -ENOSYS; }
int xenops_evtchn_unbind(xenops_evtchn_t *e, uint32_t port) { return -ENOSYS; }
int xenops_domain_alive(xenops_t *x, uint32_t domid) { return -ENOSYS; }
