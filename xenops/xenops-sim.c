/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops-sim.c: the XENOPS_SIM transport, a client of xensim's simulated
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

static struct sim *
to_sim(xenops_t *x)
{
	return x->priv;
}

/* ---------------------------------------------------------------- */
/* Control connection                                               */
/* ---------------------------------------------------------------- */

static int
sim_connect(const char *dir, uint32_t domid)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, n;

	if (domid == 0)
		n = snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/hv.sock", dir);
	else
		n = snprintf(sun.sun_path, sizeof(sun.sun_path),
			     "%s/dom%u/hv.sock", dir, domid);
	if (n < 0 || (size_t)n >= sizeof(sun.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int e = errno;

		close(fd);
		/* No socket for a domU: no such domain. */
		if (domid != 0 && e == ENOENT)
			return -ESRCH;
		return -e;
	}
	return fd;
}

/*
 * One request/response.  fds_out receives up to *nfds fds (the caller
 * owns them); sfd >= 0 is passed along with the request.
 * Returns rsp->ret, or -errno if the exchange itself failed
 * (-ESRCH once xensim has dropped us: our domain is gone).
 */
static int
sim_call(int conn, const struct hv_req *req, struct hv_rsp *rsp, int sfd,
	 int *fds_out, unsigned int *nfds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HV_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)req, .iov_len = sizeof(*req) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	unsigned int want = nfds ? *nfds : 0, got = 0;
	ssize_t n;

	if (sfd >= 0) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &sfd, sizeof(int));
	}
	do
		n = sendmsg(conn, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EPIPE || errno == ECONNRESET ? -ESRCH : -errno;

	iov.iov_base = rsp;
	iov.iov_len = sizeof(*rsp);
	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = u.buf;
	msg.msg_controllen = sizeof(u.buf);
	do
		n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n == 0)
		return -ESRCH;
	if (n < 0)
		return errno == ECONNRESET ? -ESRCH : -errno;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (got < want)
				fds_out[got++] = fd;
			else
				close(fd);
		}
	}
	if (nfds)
		*nfds = got;
	if (n != (ssize_t)sizeof(*rsp) || (msg.msg_flags & MSG_CTRUNC)) {
		for (unsigned int i = 0; i < got; i++)
			close(fds_out[i]);
		if (nfds)
			*nfds = 0;
		return -EPROTO;
	}
	if (rsp->ret < 0 || rsp->nfds != got) {
		for (unsigned int i = 0; i < got; i++)
			close(fds_out[i]);
		if (nfds)
			*nfds = 0;
		return rsp->ret < 0 ? rsp->ret : -EPROTO;
	}
	return rsp->ret;
}

/* Connect and say hello as domid.  Returns the fd or -errno. */
static int
sim_open_conn(const char *dir, uint32_t domid)
{
	struct hv_req req = { .op = HV_OP_HELLO, .domid = domid,
			      .arg = HV_PROTO_VERSION };
	struct hv_rsp rsp;
	int fd, rc;

	fd = sim_connect(dir, domid);
	if (fd < 0)
		return fd;
	rc = sim_call(fd, &req, &rsp, -1, NULL, NULL);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

/* ---------------------------------------------------------------- */
/* Domains                                                          */
/* ---------------------------------------------------------------- */

static void *
map_fd(int fd, size_t size, int prot)
{
	struct stat st;
	void *p;

	if (fstat(fd, &st) < 0)
		return NULL;
	if ((uint64_t)st.st_size < size) {
		errno = EPROTO;
		return NULL;
	}
	p = mmap(NULL, size, prot, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void
sim_dom_free(struct sim_dom *d)
{
	if (d->gnt)
		munmap(d->gnt, GNT_SIZE);
	if (d->act)
		munmap(d->act, ACT_SIZE);
	if (d->evt)
		munmap(d->evt, EVT_SIZE);
	if (d->ram)
		munmap(d->ram, HV_RAM_SIZE);
	if (d->ram_fd >= 0)
		close(d->ram_fd);
	free(d);
}

/* Fetch and map domid's tables.  Called with sim->lock held. */
static int
sim_dom_fetch(struct sim *sim, uint32_t self, uint32_t domid,
	      struct sim_dom **out)
{
	struct hv_req req = { .op = HV_OP_GET_DOMAIN, .domid = domid };
	struct hv_rsp rsp;
	int fds[HV_MAX_FDS];
	unsigned int nfds = HV_MAX_FDS;
	struct sim_dom *d;
	int rc;

	rc = sim_call(sim->conn, &req, &rsp, -1, fds, &nfds);
	if (rc < 0)
		return rc;
	if (nfds < 3 || (self == 0 && nfds < 4) || rsp.arg != HV_NR_FRAMES) {
		rc = -EPROTO;
		goto out_close;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		rc = -ENOMEM;
		goto out_close;
	}
	d->domid = domid;
	d->ram_fd = fds[1];
	fds[1] = -1;
	d->gnt = map_fd(fds[0], GNT_SIZE, PROT_READ | PROT_WRITE);
	d->evt = map_fd(fds[2], EVT_SIZE, PROT_READ | PROT_WRITE);
	if (!d->gnt || !d->evt)
		goto out_errno;
	if (self == 0) {
		/* The mapping side: pins and all of RAM, for grant copy. */
		d->act = map_fd(fds[3], ACT_SIZE, PROT_READ | PROT_WRITE);
		d->ram = map_fd(d->ram_fd, HV_RAM_SIZE, PROT_READ | PROT_WRITE);
		if (!d->act || !d->ram)
			goto out_errno;
	}
	if (READ_ONCE(d->gnt->hdr.magic) != HV_GNT_MAGIC ||
	    READ_ONCE(d->gnt->hdr.nr_grants) != HV_NR_GRANTS ||
	    READ_ONCE(d->gnt->hdr.domid) != domid) {
		rc = -EPROTO;
		sim_dom_free(d);
		goto out_close;
	}
	*out = d;
	rc = 0;
	goto out_close;
out_errno:
	rc = -errno;
	sim_dom_free(d);
out_close:
	for (unsigned int i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

static bool
sim_dom_dying(const struct sim_dom *d)
{
	/* Pairs with smp_store_release(&hdr.dying) in hv_domain_destroy(). */
	return smp_load_acquire(&d->gnt->hdr.dying) != 0;
}

/* Drop a reference; called with sim->lock held. */
static void
sim_dom_put_locked(struct sim_dom *d)
{
	if (--d->refs == 0)
		sim_dom_free(d);
}

static void
sim_dom_uncache_locked(struct sim *sim, struct sim_dom *d)
{
	struct sim_dom **pp;

	for (pp = &sim->doms; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			d->cached = false;
			sim_dom_put_locked(d);
			return;
		}
	}
}

/*
 * A reference on domid's tables for map/copy.  Only dom0 may map
 * another domain's grants (DIR/hv.sock is the privileged one).
 * Returns 0 or -ESRCH (no such domain, or dying), -EPERM (not dom0).
 */
static int
sim_dom_get(xenops_t *x, uint32_t domid, struct sim_dom **out)
{
	struct sim *sim = to_sim(x);
	struct sim_dom *d;
	int rc = 0;

	if (x->domid != 0)
		return -EPERM;
	pthread_mutex_lock(&sim->lock);
	for (d = sim->doms; d; d = d->next)
		if (d->domid == domid)
			break;
	if (d && sim_dom_dying(d)) {
		sim_dom_uncache_locked(sim, d);
		d = NULL;
		rc = -ESRCH;
	} else if (!d) {
		rc = sim_dom_fetch(sim, x->domid, domid, &d);
		if (rc == 0) {
			d->refs = 1;
			d->cached = true;
			d->next = sim->doms;
			sim->doms = d;
		}
	}
	if (d)
		d->refs++;
	pthread_mutex_unlock(&sim->lock);
	*out = d;
	return rc;
}

/*
 * Drop a reference.  A dying domain also leaves the cache, so that its
 * memory goes as soon as the last mapping does (a long-running backend
 * must not pin the RAM of every guest it ever served).
 */
static void
sim_dom_put(struct sim *sim, struct sim_dom *d)
{
	pthread_mutex_lock(&sim->lock);
	if (d->cached && sim_dom_dying(d))
		sim_dom_uncache_locked(sim, d);
	sim_dom_put_locked(d);
	pthread_mutex_unlock(&sim->lock);
}

/* ---------------------------------------------------------------- */
/* Grant entries: the mapping side (Xen's _set_status_v1 and friends) */
/* ---------------------------------------------------------------- */

static uint32_t *
gnt_word(grant_entry_v1_t *e)
{
	/* flags (low 16 bits) and domid (high 16), accessed as one word. */
	return (uint32_t *)e;
}

/*
 * Wait while another mapper holds HV_PIN_BUSY (it is between two atomic
 * operations).  Bounded: a holder killed in that window would otherwise
 * hang us; after ~a second of yielding give up with -EDEADLK.
 */
static int
pin_backoff(unsigned int *spins)
{
	if (++*spins < 64) {
		cpu_relax();
		return 0;
	}
	if (*spins < (1u << 20)) {
		sched_yield();
		return 0;
	}
	return -EDEADLK;
}

/*
 * Set GTF_reading (and GTF_writing) in the guest's entry after checking it
 * as Xen does.  The caller holds HV_PIN_BUSY for this entry.
 */
static int
gnt_set_status(uint32_t *word, uint32_t mapper, bool writable)
{
	/* Pairs with the guest's smp_store_release of the word in share. */
	uint32_t old = smp_load_acquire(word);

	/* Like Xen, give up if the guest keeps changing it under us. */
	for (int retries = 0; retries < 16; retries++) {
		uint32_t flags = old & 0xffff, dom = old >> 16, nw;

		if ((flags & GTF_type_mask) != GTF_permit_access ||
		    dom != mapper)
			return -EINVAL;
		if (writable && (flags & GTF_readonly))
			return -EPERM;
		nw = old | GTF_reading | (writable ? GTF_writing : 0);
		/* Acquire pairs with the guest's release: we read frame after. */
		if (__atomic_compare_exchange_n(word, &old, nw, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 0;
	}
	return -EINVAL;
}

/*
 * Take ref's BUSY for the operation recorded in our ledger slot (owner
 * HV_OWN(token, slot, 0), in the same compare-exchange): *p receives the
 * counts.  0, or -EDEADLK if another holder keeps it for ~a second.
 */
static int
pin_busy(struct hv_active *act, uint32_t own, uint32_t *p)
{
	unsigned int spins = 0;

	for (;;) {
		/* Pairs with the holders' smp_store_release(&act->pin):
		 * act->frame/domid are valid when the count != 0. */
		uint64_t v = smp_load_acquire(&act->pin);
		int rc;

		if (HV_PIN(v) & HV_PIN_BUSY) {
			rc = pin_backoff(&spins);
			if (rc < 0)
				return rc;
			continue;
		}
		if (__atomic_compare_exchange_n(&act->pin, &v,
						HV_PIN_WORD(HV_PIN(v) | HV_PIN_BUSY, own),
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			*p = HV_PIN(v);
			return 0;
		}
	}
}

/*
 * Pin ref of d for mapper, recorded in ledger slot `slot` (hv-proto.h
 * "pin ledger": every step of it, so that xensim can finish or undo it
 * whenever we die): on success *frame is the granted frame and the
 * entry is flagged in use until gnt_release().
 */
static int
gnt_acquire(struct sim_dom *d, grant_ref_t ref, uint32_t mapper,
	    bool writable, struct sim_ledger *l, uint32_t slot, uint32_t *frame)
{
	struct hv_active *act;
	uint32_t *word, *ls = &l->map->slot[slot];
	uint32_t inc = HV_PIN_ONE | (writable ? HV_PIN_W_ONE : 0);
	uint32_t e, p;
	int rc;

	if (ref >= HV_NR_GRANTS)
		return -EINVAL;
	act = &d->act[ref];
	word = gnt_word(&d->gnt->table[ref]);
	e = HV_LEDGER_ENTRY(d->domid, ref, writable);
	/* Each ledger store is a release: ordered before the act step
	 * that follows it, for xensim reading both after our death. */
	smp_store_release(ls, e | HV_LEDGER_TRANS);
	rc = pin_busy(act, HV_OWN(l->token, slot, false), &p);
	if (rc < 0) {
		smp_store_release(ls, 0);
		return rc;
	}
	/* We own ref's pin word until the last store_release below. */
	if ((p & HV_PIN_MASK) && (!writable || (p & HV_PIN_W_MASK))) {
		/* Already flagged as we need: just count the pin. */
		if (READ_ONCE(act->domid) != mapper)
			rc = -EINVAL;
		else if ((p & HV_PIN_MASK) == HV_PIN_MASK ||
			 (p & HV_PIN_W_MASK) == HV_PIN_W_MASK)
			rc = -ENOSPC;
	} else if ((p & HV_PIN_MASK) == HV_PIN_MASK) {
		rc = -ENOSPC;
	} else {
		rc = gnt_set_status(word, mapper, writable);
		if (rc == 0 && !(p & HV_PIN_MASK)) {
			/* Ordered after the acquire in gnt_set_status. */
			uint32_t f = READ_ONCE(d->gnt->table[ref].frame);

			if (f >= HV_NR_FRAMES) {
				/* Not a frame of the granting domain. */
				__atomic_fetch_and(word,
						   ~(uint32_t)(GTF_reading | GTF_writing),
						   __ATOMIC_RELEASE);
				rc = -EINVAL;
			} else {
				WRITE_ONCE(act->frame, f);
				WRITE_ONCE(act->domid, mapper);
			}
		} else if (rc == 0 && READ_ONCE(act->domid) != mapper) {
			rc = -EINVAL;	/* cannot happen: one mapper domain */
		}
	}
	if (rc < 0) {
		/* Pairs with the acquire in pin_busy: nothing changed. */
		smp_store_release(&act->pin, (uint64_t)p);
		smp_store_release(ls, 0);
		return rc;
	}
	*frame = READ_ONCE(act->frame);
	/* Counted (still ours, marked done), recorded, then let go: frame
	 * and domid are published with the count (pairs with pin_busy). */
	smp_store_release(&act->pin, HV_PIN_WORD((p + inc) | HV_PIN_BUSY,
						 HV_OWN(l->token, slot, true)));
	smp_store_release(ls, e);
	smp_store_release(&act->pin, (uint64_t)(p + inc));
	return 0;
}

/* Undo one gnt_acquire() recorded in ledger slot `slot`; clears the
 * guest-visible flags on the last pin.  The slot is free again after. */
static void
gnt_release(struct sim_dom *d, grant_ref_t ref, bool writable,
	    struct sim_ledger *l, uint32_t slot)
{
	struct hv_active *act = &d->act[ref];
	uint32_t *word = gnt_word(&d->gnt->table[ref]), *ls = &l->map->slot[slot];
	uint32_t dec = HV_PIN_ONE | (writable ? HV_PIN_W_ONE : 0);
	uint32_t p, np, clear = 0;

	smp_store_release(ls, HV_LEDGER_ENTRY(d->domid, ref, writable) |
			      HV_LEDGER_TRANS | HV_LEDGER_RELEASING);
	if (pin_busy(act, HV_OWN(l->token, slot, false), &p) < 0) {
		/* Another holder died without a ledger: leave the pin. */
		log_error("xenops-sim: dom%u gref %u: pin stuck busy",
			  d->domid, ref);
		smp_store_release(ls, 0);
		return;
	}
	if ((p & HV_PIN_MASK) == 0 || (writable && (p & HV_PIN_W_MASK) == 0)) {
		smp_store_release(&act->pin, (uint64_t)p);
		smp_store_release(ls, 0);
		log_error("xenops-sim: dom%u gref %u: release without pin",
			  d->domid, ref);
		return;
	}
	np = p - dec;
	if (!(np & HV_PIN_MASK))
		clear = GTF_reading | GTF_writing;
	else if (writable && !(np & HV_PIN_W_MASK))
		clear = GTF_writing;
	/* Pairs with the guest's acquire load/cmpxchg in end-access: all
	 * our accesses to the page happen before it sees the flags clear
	 * and reuses the page. */
	if (clear)
		__atomic_fetch_and(word, ~clear, __ATOMIC_RELEASE);
	/* Counted (still ours, marked done), unrecorded, then let go;
	 * pairs with the acquire in pin_busy. */
	smp_store_release(&act->pin, HV_PIN_WORD(np | HV_PIN_BUSY,
						 HV_OWN(l->token, slot, true)));
	smp_store_release(ls, 0);
	smp_store_release(&act->pin, (uint64_t)np);
}

/* ---------------------------------------------------------------- */
/* The pin ledger                                                    */
/* ---------------------------------------------------------------- */

/*
 * Create the ledger and hand it to xensim on our control connection
 * (dom0 only).  XENOPS_SIM_LEDGER_SLOTS (1..HV_LEDGER_SLOTS) lowers the
 * capacity, for tests of a full ledger.
 */
static int
ledger_open(struct sim *sim)
{
	struct hv_req req = { .op = HV_OP_PIN_LEDGER };
	struct hv_rsp rsp;
	struct sim_ledger *l;
	const char *lim = getenv("XENOPS_SIM_LEDGER_SLOTS");
	int fd, rc;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->nslots = HV_LEDGER_SLOTS;
	if (lim && *lim) {
		unsigned long v = strtoul(lim, NULL, 10);

		if (v >= 1 && v < HV_LEDGER_SLOTS)
			l->nslots = (uint32_t)v;
	}
	fd = memfd_create("xenops-pin-ledger", MFD_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(l);
		return rc;
	}
	if (ftruncate(fd, sizeof(struct hv_ledger)) < 0) {
		rc = -errno;
		goto fail;
	}
	l->map = mmap(NULL, sizeof(struct hv_ledger), PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		rc = -errno;
		goto fail;
	}
	/* A child of fork() must not write its parent's ledger: it has no
	 * copy of it (and may not use the parent's handle anyway). */
	madvise(l->map, sizeof(struct hv_ledger), MADV_DONTFORK);
	l->map->hdr.magic = HV_LEDGER_MAGIC;
	l->map->hdr.version = HV_PROTO_VERSION;
	rc = sim_call(sim->conn, &req, &rsp, fd, NULL, NULL);
	if (rc < 0)
		goto fail;
	if (rsp.arg == 0 || rsp.arg > HV_OWN_TOKEN_MAX) {
		rc = -EPROTO;
		goto fail;
	}
	l->token = rsp.arg;
	close(fd);	/* xensim has its own */
	pthread_mutex_init(&l->lock, NULL);
	sim->ledger = l;
	return 0;
fail:
	if (l->map)
		munmap(l->map, sizeof(struct hv_ledger));
	close(fd);
	free(l);
	return rc;
}

static void
ledger_close(struct sim_ledger *l)
{
	if (!l)
		return;
	munmap(l->map, sizeof(struct hv_ledger));
	pthread_mutex_destroy(&l->lock);
	free(l->free);
	free(l);
}

/* Hand out n free slots into slots[]: 0, -ENOSPC (full), -ENOMEM. */
static int
ledger_get(struct sim_ledger *l, unsigned int n, uint32_t *slots)
{
	unsigned int i = 0;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (n > l->nfree + (l->nslots - l->used)) {
		rc = -ENOSPC;
		goto out;
	}
	if (n > l->nfree && l->cap < l->used + (n - l->nfree)) {
		/* The free stack can hold every slot ever handed out, so
		 * that ledger_put never allocates. */
		uint32_t cap = l->used + (n - l->nfree);
		uint32_t *f;

		if (cap < 2 * l->cap)
			cap = 2 * l->cap < l->nslots ? 2 * l->cap : l->nslots;
		f = realloc(l->free, sizeof(*f) * cap);
		if (!f) {
			rc = -ENOMEM;
			goto out;
		}
		l->free = f;
		l->cap = cap;
	}
	for (; i < n && l->nfree; i++)
		slots[i] = l->free[--l->nfree];
	if (i < n) {
		for (; i < n; i++)
			slots[i] = l->used++;
		/* Pairs with xensim's pread of "used" once we are gone: the
		 * new slots are covered before anything is stored in them. */
		smp_store_release(&l->map->hdr.used, l->used);
	}
out:
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* Take back n slots whose entries are clear. */
static void
ledger_put(struct sim_ledger *l, unsigned int n, const uint32_t *slots)
{
	pthread_mutex_lock(&l->lock);
	for (unsigned int i = 0; i < n; i++)
		l->free[l->nfree++] = slots[i];
	pthread_mutex_unlock(&l->lock);
}

/* Take a pin, recorded in our ledger slot (gnt_acquire). */
static int
pin_take(struct sim *sim, struct sim_dom *d, uint32_t slot, grant_ref_t ref,
	 bool writable, uint32_t *frame)
{
	/* mapper 0: only dom0 maps (sim_dom_get) */
	return gnt_acquire(d, ref, 0, writable, sim->ledger, slot, frame);
}

/* Release a pin and its ledger slot's entry (gnt_release). */
static void
pin_drop(struct sim *sim, struct sim_dom *d, uint32_t slot, grant_ref_t ref,
	 bool writable)
{
	gnt_release(d, ref, writable, sim->ledger, slot);
}

/* ---------------------------------------------------------------- */
/* map / unmap / copy                                               */
/* ---------------------------------------------------------------- */

/* mmap frames[0..count) of fd at addr, coalescing contiguous runs. */
static int
map_frames(void *addr, int fd, const uint32_t *frames, unsigned int count,
	   int prot)
{
	unsigned int i = 0;

	while (i < count) {
		unsigned int n = 1;

		while (i + n < count && frames[i + n] == frames[i] + n)
			n++;
		if (mmap((uint8_t *)addr + (size_t)i * HV_PAGE_SIZE,
			 (size_t)n * HV_PAGE_SIZE, prot, MAP_SHARED | MAP_FIXED,
			 fd, (off_t)frames[i] * HV_PAGE_SIZE) == MAP_FAILED)
			return -errno;
		i += n;
	}
	return 0;
}

static void *
reserve_va(unsigned int count)
{
	void *p = mmap(NULL, (size_t)count * HV_PAGE_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void *
sim_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
	      const grant_ref_t *refs, bool writable)
{
	struct sim *sim = to_sim(x);
	struct sim_map *m = NULL;
	struct sim_dom *d;
	uint32_t *frames = NULL;
	unsigned int pinned = 0;
	bool have_slots = false;
	void *va = NULL;
	int rc;

	rc = sim_dom_get(x, domid, &d);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	m = malloc(sizeof(*m) + (sizeof(grant_ref_t) + sizeof(uint32_t)) * count);
	frames = malloc(sizeof(*frames) * count);
	if (!m || !frames) {
		rc = -ENOMEM;
		goto fail;
	}
	m->slots = (uint32_t *)(m->refs + count);
	rc = ledger_get(sim->ledger, count, m->slots);
	if (rc < 0)
		goto fail;
	have_slots = true;
	for (pinned = 0; pinned < count; pinned++) {
		rc = pin_take(sim, d, m->slots[pinned], refs[pinned], writable,
			      &frames[pinned]);
		if (rc < 0)
			goto fail;
	}
	va = reserve_va(count);
	if (!va) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = map_frames(va, d->ram_fd, frames, count,
			PROT_READ | (writable ? PROT_WRITE : 0));
	if (rc < 0)
		goto fail;
	m->addr = va;
	m->count = count;
	m->writable = writable;
	m->dom = d;
	memcpy(m->refs, refs, sizeof(grant_ref_t) * count);
	pthread_mutex_lock(&sim->lock);
	m->next = sim->maps;
	sim->maps = m;
	pthread_mutex_unlock(&sim->lock);
	free(frames);
	bk_dbg(BK_DBG_GRANT, "xenops-sim: mapped %u grefs of dom%u at %p",
	       count, domid, va);
	return va;
fail:
	/* All or nothing: unmap, then unpin what we pinned. */
	if (va)
		munmap(va, (size_t)count * HV_PAGE_SIZE);
	while (pinned--)
		pin_drop(sim, d, m->slots[pinned], refs[pinned], writable);
	if (have_slots)
		ledger_put(sim->ledger, count, m->slots);
	free(frames);
	free(m);
	sim_dom_put(sim, d);
	errno = -rc;
	return NULL;
}

static int
sim_unmap(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct sim_map **pp, *m;

	pthread_mutex_lock(&sim->lock);
	for (pp = &sim->maps; (m = *pp); pp = &m->next)
		if (m->addr == addr)
			break;
	if (!m || m->count != count) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	*pp = m->next;
	pthread_mutex_unlock(&sim->lock);

	/* The pages go before the flags: the guest may reuse them then. */
	munmap(addr, (size_t)count * HV_PAGE_SIZE);
	for (unsigned int i = 0; i < count; i++)
		pin_drop(sim, m->dom, m->slots[i], m->refs[i], m->writable);
	ledger_put(sim->ledger, count, m->slots);
	sim_dom_put(sim, m->dom);
	free(m);
	return 0;
}

static int
sim_grant_copy(xenops_t *x, uint32_t domid, bool to_guest, unsigned int count,
	       struct xenops_copy_seg *segs)
{
	struct sim *sim = to_sim(x);
	struct sim_dom *d;
	uint32_t slot;
	int rc;

	rc = sim_dom_get(x, domid, &d);
	if (rc == 0) {
		/* One slot: each segment's pin is held only for its copy. */
		rc = ledger_get(sim->ledger, 1, &slot);
		if (rc < 0)
			sim_dom_put(sim, d);
	}
	if (rc < 0) {
		for (unsigned int i = 0; i < count; i++)
			if (segs[i].status == 0)
				segs[i].status = rc;
		return rc;
	}
	for (unsigned int i = 0; i < count; i++) {
		struct xenops_copy_seg *s = &segs[i];
		uint32_t frame;
		uint8_t *page;

		if (s->status != 0)
			continue;	/* bad geometry, set by xenops.c */
		rc = pin_take(sim, d, slot, s->gref, to_guest, &frame);
		if (rc < 0) {
			s->status = rc;
			continue;
		}
		page = d->ram + (size_t)frame * HV_PAGE_SIZE;
		if (to_guest)
			memcpy(page + s->offset, s->local, s->len);
		else
			memcpy(s->local, page + s->offset, s->len);
		pin_drop(sim, d, slot, s->gref, to_guest);
	}
	ledger_put(sim->ledger, 1, &slot);
	sim_dom_put(sim, d);
	return 0;
}

/* ---------------------------------------------------------------- */
/* share / unshare (granting side)                                  */
/* ---------------------------------------------------------------- */

/* Take a free bit of map[0..nbits) with compare-exchange; index or -ENOSPC. */
static int
bitmap_alloc(uint64_t *map, unsigned int nbits, unsigned int hint)
{
	unsigned int nwords = nbits / 64;

	for (unsigned int k = 0; k < nwords; k++) {
		uint64_t *w = &map[(hint + k) % nwords];
		uint64_t v = READ_ONCE(*w);

		while (~v) {
			unsigned int bit = __builtin_ctzll(~v);

			/* Relaxed suffices: the bit only guards ownership;
			 * the entry itself is published with release. */
			if (__atomic_compare_exchange_n(w, &v, v | (1ull << bit),
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return (int)(((hint + k) % nwords) * 64 + bit);
		}
	}
	return -ENOSPC;
}

static void
bitmap_free(uint64_t *map, unsigned int bit)
{
	/* Release: our last use of the ref/frame comes before its reuse,
	 * pairs with the acquire cmpxchg in bitmap_alloc. */
	__atomic_fetch_and(&map[bit / 64], ~(1ull << (bit % 64)),
			   __ATOMIC_RELEASE);
}

static void
share_free_ids(struct hv_gnt *g, grant_ref_t *refs, uint32_t *frames,
	       unsigned int nrefs, unsigned int nframes)
{
	for (unsigned int i = 0; i < nframes; i++)
		bitmap_free(g->frame_map, frames[i]);
	for (unsigned int i = 0; i < nrefs; i++)
		bitmap_free(g->gref_map, refs[i]);
}

/* Give the frames back to the memfd (they read as zero when reused). */
static void
punch_frames(int fd, const uint32_t *frames, unsigned int count)
{
	for (unsigned int i = 0; i < count;) {
		unsigned int n = 1;

		while (i + n < count && frames[i + n] == frames[i] + n)
			n++;
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)frames[i] * HV_PAGE_SIZE,
			      (off_t)n * HV_PAGE_SIZE) < 0)
			log_error("xenops-sim: punch hole in dom RAM: %m");
		i += n;
	}
}

static void *
sim_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
		bool writable, grant_ref_t *refs_out)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share *s;
	unsigned int nrefs = 0, nframes = 0, hint;
	void *va = NULL;
	int rc;

	s = calloc(1, sizeof(*s));
	if (s) {
		s->refs = malloc(sizeof(*s->refs) * count);
		s->frames = malloc(sizeof(*s->frames) * count);
	}
	if (!s || !s->refs || !s->frames) {
		rc = -ENOMEM;
		goto fail;
	}
	hint = __atomic_fetch_add(&sim->alloc_hint, 1, __ATOMIC_RELAXED);
	for (; nrefs < count; nrefs++) {
		rc = bitmap_alloc(g->gref_map, HV_NR_GRANTS, hint);
		if (rc < 0)
			goto fail;
		s->refs[nrefs] = rc;
	}
	/* Frames from a per-process place in RAM so runs stay contiguous. */
	hint = (uint32_t)getpid() * 7 + hint;
	for (; nframes < count; nframes++) {
		rc = bitmap_alloc(g->frame_map, HV_NR_FRAMES, hint);
		if (rc < 0)
			goto fail;
		s->frames[nframes] = rc;
	}
	va = reserve_va(count);
	if (!va) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = map_frames(va, sim->self->ram_fd, s->frames, count,
			PROT_READ | PROT_WRITE);
	if (rc < 0)
		goto fail;
	s->word = (domid << 16) | GTF_permit_access | (writable ? 0 : GTF_readonly);
	for (unsigned int i = 0; i < count; i++) {
		grant_entry_v1_t *e = &g->table[s->refs[i]];
		uint32_t flags = GTF_permit_access | (writable ? 0 : GTF_readonly);

		WRITE_ONCE(e->frame, s->frames[i]);
		/* Pairs with the mapper's smp_load_acquire in
		 * gnt_set_status: frame is visible before the grant
		 * (Linux gnttab_update_entry_v1's wmb()). */
		smp_store_release(gnt_word(e), (domid << 16) | flags);
		refs_out[i] = s->refs[i];
	}
	s->addr = va;
	s->count = count;
	pthread_mutex_lock(&sim->lock);
	s->next = sim->shares;
	sim->shares = s;
	pthread_mutex_unlock(&sim->lock);
	bk_dbg(BK_DBG_GRANT, "xenops-sim: shared %u pages with dom%u, first gref %u",
	       count, domid, refs_out[0]);
	return va;
fail:
	if (va)
		munmap(va, (size_t)count * HV_PAGE_SIZE);
	if (s && s->refs && s->frames)
		share_free_ids(g, s->refs, s->frames, nrefs, nframes);
	if (s) {
		free(s->refs);
		free(s->frames);
		free(s);
	}
	errno = rc == -ENOSPC ? ENOSPC : -rc;
	return NULL;
}

/*
 * End access to one entry (Linux gnttab_end_foreign_access_ref_v1):
 * refused while the mapper has GTF_reading/GTF_writing set.
 * *old receives the previous word for a rollback.
 */
static int
gnt_end_access(grant_entry_v1_t *e, uint32_t *old)
{
	uint32_t *word = gnt_word(e);
	/* Pairs with the mapper's release fetch_and in gnt_release. */
	uint32_t v = smp_load_acquire(word);

	do {
		if (v & (GTF_reading | GTF_writing))
			return -EBUSY;
		*old = v;
	} while (!__atomic_compare_exchange_n(word, &v, 0, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return 0;
}

/* The share holding [addr, addr + count pages), and addr's index in it
 * (sim->lock held). */
static struct sim_share *
share_find(struct sim *sim, void *addr, unsigned int count, unsigned int *first)
{
	struct sim_share *s;

	for (s = sim->shares; s; s = s->next) {
		char *base = s->addr;
		size_t off;

		if ((char *)addr < base ||
		    (char *)addr >= base + (size_t)s->count * HV_PAGE_SIZE)
			continue;
		off = (size_t)((char *)addr - base);
		if (off % HV_PAGE_SIZE || off / HV_PAGE_SIZE + count > s->count)
			return NULL;
		*first = (unsigned int)(off / HV_PAGE_SIZE);
		return s;
	}
	return NULL;
}

static int
sim_end_access(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share *s;
	unsigned int first, ended;
	uint32_t *old;
	int rc = 0;

	old = malloc(sizeof(*old) * count);
	if (!old)
		return -ENOMEM;
	pthread_mutex_lock(&sim->lock);
	s = share_find(sim, addr, count, &first);
	if (!s) {
		pthread_mutex_unlock(&sim->lock);
		free(old);
		return -EINVAL;
	}
	for (ended = 0; ended < count; ended++) {
		rc = gnt_end_access(&g->table[s->refs[first + ended]], &old[ended]);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		/* change nothing (as sim_unshare_pages) */
		while (ended--)
			smp_store_release(gnt_word(&g->table[s->refs[first + ended]]),
					  old[ended]);
	pthread_mutex_unlock(&sim->lock);
	free(old);
	return rc;
}

static int
sim_grant_again(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share *s;
	unsigned int first, i;

	pthread_mutex_lock(&sim->lock);
	s = share_find(sim, addr, count, &first);
	if (!s) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	for (i = 0; i < count; i++) {
		uint32_t *word = gnt_word(&g->table[s->refs[first + i]]);
		uint32_t v = smp_load_acquire(word);

		/* An entry still granted (and maybe mapped: its flags are the
		 * mapper's) stays as it is.  The release pairs with the
		 * mapper's smp_load_acquire in gnt_set_status: our writes to
		 * the page come before the grant. */
		while (!(v & GTF_permit_access) &&
		       !__atomic_compare_exchange_n(word, &v, s->word, false,
						    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			;
	}
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

static int
sim_unshare_pages(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share **pp, *s;
	uint32_t *old;
	unsigned int ended;
	int rc = 0;

	pthread_mutex_lock(&sim->lock);
	for (pp = &sim->shares; (s = *pp); pp = &s->next)
		if (s->addr == addr)
			break;
	if (!s || s->count != count) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	old = malloc(sizeof(*old) * count);
	if (!old) {
		pthread_mutex_unlock(&sim->lock);
		return -ENOMEM;
	}
	for (ended = 0; ended < count; ended++) {
		rc = gnt_end_access(&g->table[s->refs[ended]], &old[ended]);
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		/* Change nothing: grant the ended ones again.  Nobody can
		 * have pinned an entry whose flags we cleared to 0. */
		while (ended--)
			/* Pairs with the mapper's acquire in gnt_set_status. */
			smp_store_release(gnt_word(&g->table[s->refs[ended]]),
					  old[ended]);
		pthread_mutex_unlock(&sim->lock);
		free(old);
		return rc;
	}
	*pp = s->next;
	pthread_mutex_unlock(&sim->lock);
	free(old);

	munmap(addr, (size_t)count * HV_PAGE_SIZE);
	punch_frames(sim->self->ram_fd, s->frames, count);
	share_free_ids(g, s->refs, s->frames, count, count);
	free(s->refs);
	free(s->frames);
	free(s);
	return 0;
}

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

static int sim_evtchn_unbind(xenops_evtchn_t *e, uint32_t port);

static int
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

static void
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

static int
sim_evtchn_bind_interdomain(xenops_evtchn_t *e, uint32_t domid,
			    uint32_t remote_port)
{
	struct hv_req req = { .op = HV_OP_BIND_INTERDOMAIN, .domid = domid,
			      .port = remote_port };

	return sim_evtchn_bind(e, &req);
}

static int
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
	sp->peer_evt = map_fd(fds[0], EVT_SIZE, PROT_READ | PROT_WRITE);
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

static int
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

static int
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

static int
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

static int
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
		rc = ledger_open(sim);
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
	ledger_close(sim->ledger);
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
	ledger_close(sim->ledger);
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
