/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops.h: the one interface between blkbackd/blkfront-test and the
 * hypervisor, as QEMU's xen_backend_ops lets the same xen-block code run
 * on real Xen and on emulated Xen (DESIGN-NOTES.md "xenops").
 *
 * Two implementations, chosen at run time:
 *   XENOPS_XEN  libxengnttab + libxengntshr, libxenevtchn, libxenctrl
 *               (/dev/xen/gntdev, /dev/xen/gntalloc, /dev/xen/evtchn,
 *               /dev/xen/privcmd).
 *   XENOPS_SIM  xensim (sim/): each domain's "RAM" is a memfd owned by
 *               xensim, its grant table is a shared array of
 *               grant_entry_v1_t, event channels are eventfds brokered by
 *               xensim.  Grant map/copy never goes through the daemon:
 *               the mapping side checks and updates the shared grant
 *               entry exactly as Xen does (GTF_permit_access, domid,
 *               GTF_readonly, GTF_reading/GTF_writing while mapped).
 *
 * xenstore is NOT behind this interface: everybody uses the real
 * libxenstore.  Under the simulator, xenops_xenstore_path() gives the
 * socket to put in XENSTORED_PATH for this handle's domain.
 *
 * Conventions (as everywhere in the project):
 *   - functions returning int return >= 0 on success, -errno on failure;
 *   - functions returning a pointer return NULL and set errno;
 *   - the Xen libraries' -1/errno is converted once, in xenops-xen.c.
 * Errors a guest can provoke (bad gref, wrong domid, read-only grant)
 * are returned, never logged: the caller decides (a guest must not be
 * able to flood the log).  Failures of the platform itself (cannot open
 * /dev/xen/gntdev, xensim not running) are logged once with log_error.
 *
 * Error classes (exact on XENOPS_SIM; see below for what the Linux
 * drivers let XENOPS_XEN report):
 *   -EINVAL  gref out of range of the granting domain's table, entry not
 *            GTF_permit_access, or granted to another domain;
 *   -EPERM   writable map/copy-into of a GTF_readonly grant; XENOPS_SIM:
 *            a domU asking to map/copy another domain's grants (only dom0
 *            is privileged);
 *   -ESRCH   no such domain (or it is dying);
 *   -EBUSY   end-access of a grant still mapped by the other side;
 *   -ENOMEM  out of address space; -ENOSPC out of grant entries or frames;
 *            XENOPS_SIM: map/copy with HV_LEDGER_SLOTS (1048576) pins
 *            already held by this xenops_t (its pin ledger is full).
 *
 * XENOPS_XEN differences, imposed by Xen and the Linux drivers:
 *   - gntdev reports any failed map as EINVAL (the per-ref GNTST_ status
 *     is not passed up), so a r/o grant mapped writable is -EINVAL there;
 *     grant copy does return per-segment status, but Xen reports both a
 *     wrong domid and a write to a r/o grant as GNTST_general_error
 *     (-EINVAL); GNTST_permission_denied is -EPERM.
 *   - gntalloc does not refuse unshare while mapped: it defers freeing
 *     until the peer unmaps, and xenops_unshare_pages() returns 0.
 *   - Xen silently drops a notify on an unbound port, and a port whose
 *     peer closed becomes unbound, so notify returns 0 where the
 *     simulator says -ENOTCONN.  Detect a dead peer through xenstore
 *     (the other end's state, @releaseDomain) on both transports.
 *
 * XENOPS_SIM specifics: each domain has 256 MiB of RAM (65536 frames) and
 * 8192 grant entries (refs 0..7 reserved, as GNTTAB_NR_RESERVED_ENTRIES);
 * event channel ports are 1..1023 per domain.  Refs and frames of a
 * process that dies without xenops_unshare_pages() stay allocated (and
 * granted) until the domain is destroyed.  A dom0 handle records its
 * pins (maps, and copies in progress) in a pin ledger that xensim
 * holds; when the handle's xensim connection closes (xenops_close, exit,
 * SIGKILL, exec), xensim releases what is still recorded, as gntdev
 * unmaps a dead process's grants on real Xen, so a killed backend
 * leaves no grant flagged in use, whatever instant it was killed at
 * (a map or unmap it died in is finished or undone: no pin leaks, none
 * is released twice).  A forked child that keeps the connection open
 * (no exec) delays this until it exits, as an inherited gntdev fd
 * would.
 * Isolation: a domU sees only its own memory and grant
 * table, and only dom0 sees the pin counts; but a process with an event
 * channel to domain D has D's port table mapped (to set pending bits),
 * so a hostile simulated guest can spoil D's event delivery.  The
 * simulator confines grants and memory, not event channel state.
 *
 * Units: grant pages are 4096 bytes (XEN_PAGE_SIZE), offsets and lengths
 * in bytes.  Domain ids are Xen domids (0..0x7FEF).
 *
 * Threads: one xenops_t may be used by several threads at once for the
 * grant functions.  An xenops_evtchn_t belongs to one thread at a time
 * (each dataplane queue opens its own, like a libxenevtchn handle).
 *
 * fork(): a child must not use its parent's xenops_t or event channel
 * handles (as with the Xen libraries); it opens its own.  XENOPS_SIM:
 * the child has no mapping of its parent's pin ledger (MADV_DONTFORK).
 *
 * Lifetimes: a mapping from xenops_map_grefs() stays valid until
 * xenops_unmap(), even if the granting domain dies (as on Xen).
 * Pages from xenops_share_pages() stay valid until xenops_unshare_pages().
 * xenops_close() requires that every mapping, shared page set and event
 * channel handle of this xenops_t has been released first.
 */
#ifndef BLK_XENOPS_H
#define BLK_XENOPS_H

#include <stdbool.h>
#include <stdint.h>
#include <xen/xen.h>
#include <xen/grant_table.h>	/* grant_ref_t */

typedef struct xenops xenops_t;
typedef struct xenops_evtchn xenops_evtchn_t;

enum xenops_transport {
	XENOPS_XEN = 0,		/* real hypervisor */
	XENOPS_SIM = 1,		/* xensim */
};

struct xenops_config {
	enum xenops_transport transport;
	/*
	 * XENOPS_SIM only: xensim's directory (the --dir given to xensim).
	 * NULL means $XENSIM_DIR.
	 */
	const char *sim_dir;
	/*
	 * XENOPS_SIM only: the domain this process acts as.  0 = dom0
	 * (privileged: may map other domains' grants, query any domain);
	 * a domU process gets its domid from "xensim-ctl create-domain".
	 * XENOPS_XEN: ignored (the kernel knows who we are).
	 */
	uint32_t domid;
};

/*
 * Parse "xen" or "sim".  Returns 0, or -EINVAL for anything else.
 */
int xenops_transport_parse(const char *name, enum xenops_transport *out);

/*
 * Choose the default transport: XENOPS_XEN when /dev/xen/evtchn exists.
 * Otherwise returns -ENODEV (callers print a hint to use
 * --transport=sim with a running xensim).
 */
int xenops_transport_default(enum xenops_transport *out);

/*
 * Open a handle.  Returns NULL with errno set (and logs why) if the
 * platform is not usable: the /dev/xen devices missing, xensim not running at
 * sim_dir, or domid unknown to xensim (ESRCH).
 */
xenops_t *xenops_open(const struct xenops_config *cfg);

/* Release the handle.  Everything obtained from it must be released first. */
void xenops_close(xenops_t *x);

/* Our own domid (sim: cfg->domid; xen: read from xenstore "domid", 0 default). */
uint32_t xenops_self_domid(const xenops_t *x);

/*
 * The xenstored socket for this handle's domain, for XENSTORED_PATH.
 * XENOPS_SIM: "<dir>/xenstore.sock" for dom0, "<dir>/dom<N>/xenstore.sock"
 * otherwise.  XENOPS_XEN: NULL (libxenstore's default applies).
 * The string is owned by the handle.
 */
const char *xenops_xenstore_path(const xenops_t *x);

/* ------------------------------------------------------------------ */
/* Grant tables, mapping side (backend).                              */
/* ------------------------------------------------------------------ */

/*
 * Map count (1..XENOPS_MAX_MAP_BATCH) grant refs of domain domid into one
 * contiguous range of count*4096 bytes, read-only or writable.
 * All-or-nothing, like xengnttab_map_domain_grant_refs(): on any failure
 * nothing stays mapped and no grant entry is left marked in use.
 * Marks each grant entry GTF_reading (and GTF_writing if writable) until
 * xenops_unmap().  Returns the address, or NULL with errno as above.
 */
#define XENOPS_MAX_MAP_BATCH 1024
void *xenops_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
		       const grant_ref_t *refs, bool writable);

/*
 * Unmap a range returned by xenops_map_grefs() (same addr and count).
 * Clears GTF_reading/GTF_writing.  Returns 0 or -EINVAL if addr/count do
 * not match a mapping.
 */
int xenops_unmap(xenops_t *x, void *addr, unsigned int count);

/*
 * Grant copy: one segment copies len bytes between local memory and
 * offset..offset+len-1 of the granted page (offset + len <= 4096).
 * Like GNTTABOP_copy: each segment is checked and done on its own; the
 * grant entry is held (GTF_reading/GTF_writing) only for the copy.
 */
struct xenops_copy_seg {
	grant_ref_t gref;	/* in: granting domain's ref */
	uint16_t offset;	/* in: byte offset in the granted page */
	uint16_t len;		/* in: bytes, 1..4096 - offset */
	void *local;		/* in: our buffer, len bytes */
	int16_t status;		/* out: 0 or -errno (class as above) */
};

/*
 * Copy count segments (any number; implementations batch internally).
 * to_guest=true writes our buffers into the guest's pages (needs a
 * writable grant: -EPERM for GTF_readonly); false reads guest pages.
 * A segment with len 0, offset + len > 4096 or local NULL fails alone
 * with -EINVAL (GNTST_bad_copy_arg).
 * Returns 0 when every segment succeeded, else the first failing
 * segment's -errno (every segment's status is filled either way).
 * Never logs.  XENOPS_SIM: no xensim round trip (after the first use of
 * a domain): per segment each way, a compare-exchange and two stores on
 * the pin word, two stores into the pin ledger (one slot taken per
 * call), and a compare-exchange on the grant entry when its flags
 * change; then memcpy.
 */
int xenops_grant_copy(xenops_t *x, uint32_t domid, bool to_guest,
		      unsigned int count, struct xenops_copy_seg *segs);

/* ------------------------------------------------------------------ */
/* Grant tables, granting side (guest / blkfront-test).               */
/* ------------------------------------------------------------------ */

/*
 * Allocate count pages of our own memory, grant them to domid
 * (read-only if !writable), and map them here contiguously.
 * refs_out receives count grant refs.  Like xengntshr_share_pages().
 * Returns the address or NULL with errno (-ENOMEM/ENOSPC: table full).
 */
void *xenops_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
			 bool writable, grant_ref_t *refs_out);

/*
 * End access to count pages of a set from xenops_share_pages(), starting
 * at addr (any page of the set), and keep them and their grant refs:
 * Linux gnttab_try_end_foreign_access() on each, as a frontend without
 * persistent grants does when a request completes.  Returns -EBUSY (and
 * changes nothing) if the other side still has any of them mapped,
 * -EINVAL if the range is not inside one set.  Ending access to a page
 * whose access is ended already is fine.  xenops_grant_again() grants
 * the same pages again, with the same refs, domain and access.
 * XENOPS_XEN: gntalloc can neither end access without freeing nor tell
 * whether the peer maps a page, so both return 0 and change nothing.
 */
int xenops_end_access(xenops_t *x, void *addr, unsigned int count);
int xenops_grant_again(xenops_t *x, void *addr, unsigned int count);

/*
 * End access to pages from xenops_share_pages() and free them.
 * Returns -EBUSY (and changes nothing) if the other side still has any
 * of them mapped, as gnttab_end_foreign_access_ref() refuses on Xen.
 */
int xenops_unshare_pages(xenops_t *x, void *addr, unsigned int count);

/* ------------------------------------------------------------------ */
/* Event channels.                                                    */
/* ------------------------------------------------------------------ */

/*
 * Open an event channel handle (like xenevtchn_open()).  It has one fd
 * (xenops_evtchn_fd) that becomes readable when any port bound through it
 * is pending.  Returns NULL with errno.
 */
xenops_evtchn_t *xenops_evtchn_open(xenops_t *x);
/* Unbinds every port still bound through it (synchronously, like
 * xenops_evtchn_unbind), then frees it. */
void xenops_evtchn_close(xenops_evtchn_t *e);
/* The fd to poll for POLLIN / EPOLLIN.  Owned by the handle. */
int xenops_evtchn_fd(const xenops_evtchn_t *e);

/*
 * Bind to remote_port of domain domid (which must have allocated it
 * unbound for us).  Returns the local port (> 0) or -errno
 * (-EINVAL: no such unbound port for us; -ESRCH: no such domain).
 */
int xenops_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
				   uint32_t remote_port);
/* Allocate an unbound port that domain remote_domid may bind.  Port or -errno. */
int xenops_evtchn_bind_unbound(xenops_evtchn_t *e, uint32_t remote_domid);
/*
 * Notify the other end.  0, or -EINVAL for a port not bound through e,
 * -ENOTCONN if it is still unbound or the other end has closed it
 * (XENOPS_SIM; real Xen drops the event and returns 0).  Does not block;
 * XENOPS_SIM: no xensim round trip except the first notify after a
 * (re)binding.
 */
int xenops_evtchn_notify(xenops_evtchn_t *e, uint32_t port);
/*
 * Return the next pending port and mask it (as xenevtchn_pending does);
 * -EAGAIN when none is pending.  Call after the fd polls readable; the
 * caller must xenops_evtchn_unmask() the port when it has consumed the
 * work, then re-check the ring (the final check) to close the race.
 */
int xenops_evtchn_pending(xenops_evtchn_t *e);
/* Unmask; if an event arrived while masked, the fd becomes readable again. */
int xenops_evtchn_unmask(xenops_evtchn_t *e, uint32_t port);
/* Close a port (the other end sees -ENOTCONN on notify); -EINVAL if
 * not bound through e.  Synchronous: done when it returns. */
int xenops_evtchn_unbind(xenops_evtchn_t *e, uint32_t port);

/* ------------------------------------------------------------------ */
/* Domains.                                                           */
/* ------------------------------------------------------------------ */

/*
 * 1 if domain domid exists and is running, 0 if it is dying or gone,
 * -errno if the question cannot be answered.
 */
int xenops_domain_alive(xenops_t *x, uint32_t domid);

#endif /* BLK_XENOPS_H */
