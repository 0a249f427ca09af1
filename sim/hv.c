/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hv.c: xensim's simulated hypervisor: domain memory, v1 grant tables and
 * event channels (sim.h; the layout and protocol are in hv-proto.h).
 *
 * This module owns, per domain, the four memfds (ram, gnt, act, evt), the
 * authoritative event channel port table and the domain's hv.sock
 * listener; per client connection, its fd, (for an event channel
 * handle) its eventfd and (for a dom0 process's handle) its pin ledger,
 * whose pins it releases when the connection closes.  It runs on the
 * loop thread only.
 *
 * The daemon is on the control path alone: it hands out fds and brokers
 * event channel binding.  Grant map/copy/share and evtchn notify/pending/
 * unmask happen in the clients on shared memory (xenops/xenops-sim.c).
 * Nothing a client writes to shared memory is trusted here: the port
 * table of record is struct hv_port, mirrored into the evt memfd.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "hv-proto.h"
#include "sim.h"

struct hv_conn;
struct hv;

/* A listening socket: DIR/hv.sock (dom0) or DIR/dom<N>/hv.sock. */
struct hv_listener {
	struct hv *hv;
	uint32_t domid;
	int fd;				/* -1 when not listening */
};

struct hv_port {
	enum hv_evtchn_state state;
	uint32_t gen;			/* bumped on every state change */
	uint32_t remote_dom;
	uint32_t remote_port;
	struct hv_conn *owner;		/* the handle it is bound through */
	uint64_t since;			/* hv->seq when it entered this state */
};

struct hv_dom {
	struct hv *hv;
	uint32_t domid;
	int ram_fd, gnt_fd, act_fd, evt_fd;
	struct hv_gnt *gnt;		/* our mapping, to publish "dying" */
	struct hv_active *act;		/* our mapping, to release ledger pins */
	struct hv_evtchn *evt;		/* our mapping, to publish port state */
	struct hv_port ports[HV_NR_PORTS];
	struct hv_listener li;		/* unused (fd -1) for dom0 */
	char *sock_path;		/* NULL for dom0 */
	struct hv_dom *next;
};

struct hv_conn {
	struct hv *hv;
	int fd;
	uint32_t domid;
	bool hello;
	int eventfd;			/* >= 0 once an evtchn handle */
	int ledger_fd;			/* >= 0 once it gave a pin ledger */
	uint32_t token;			/* its ledger's, in the act owner half */
	uint64_t serial;		/* hv->conns_made at its accept: never reused */
	pid_t pid;			/* its peer's (SO_PEERCRED at accept), or 0 */
	struct hv_conn *next;
};

struct hv {
	struct sim_loop *loop;
	char *dir;
	struct hv_listener li0;		/* dir/hv.sock: dom0 */
	char *sock_path;
	struct hv_dom *doms;
	struct hv_conn *conns;
	uint64_t conns_made;		/* connections accepted so far */
	uint64_t seq;			/* port state changes so far */
};

static struct hv_dom *
hv_dom_find(struct hv *hv, uint32_t domid)
{
	struct hv_dom *d;

	for (d = hv->doms; d; d = d->next)
		if (d->domid == domid)
			return d;
	return NULL;
}

/* ---- listening sockets ---- */

static int
hv_listen(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_error("hv: socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, 64) < 0) {
		int e = errno;

		log_error("hv: listen on %s: %m", path);
		close(fd);
		return -e;
	}
	return fd;
}

static void hv_conn_cb(void *opaque, uint32_t events);
static void hv_conn_free(struct hv_conn *c);

static void
hv_accept_cb(void *opaque, uint32_t events)
{
	struct hv_listener *li = opaque;
	struct hv *hv = li->hv;
	struct hv_conn *c;
	int fd;

	fd = accept4(li->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			log_error("hv: accept (dom%u): %m", li->domid);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return;
	}
	c->hv = hv;
	c->fd = fd;
	c->domid = li->domid;
	c->eventfd = -1;
	c->ledger_fd = -1;
	c->serial = ++hv->conns_made;
	{
		struct ucred cr;
		socklen_t crl = sizeof(cr);

		/* for the ledger's readers (xensim-ctl evtchn, maps) only */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0)
			c->pid = cr.pid;
	}
	if (sim_loop_add(hv->loop, fd, EPOLLIN, hv_conn_cb, c) < 0) {
		close(fd);
		free(c);
		return;
	}
	c->next = hv->conns;
	hv->conns = c;
}

/* ---- event channel ports ---- */

/* Publish port p of d into shared memory. */
static void
hv_port_publish(struct hv_dom *d, uint32_t p, bool reset_bits)
{
	struct hv_port *hp = &d->ports[p];
	struct hv_evtchn *ev = &d->evt[p];

	WRITE_ONCE(ev->remote_dom, hp->remote_dom);
	WRITE_ONCE(ev->remote_port, hp->remote_port);
	if (reset_bits) {
		WRITE_ONCE(ev->pending, 0);
		WRITE_ONCE(ev->masked, 0);
	}
	/* Pairs with smp_load_acquire(&sg) in the client's notify/pending:
	 * the fields above are visible before the new state. */
	smp_store_release(&ev->sg, HV_SG(hp->gen & 0x3fffffffu, hp->state));
}

static void
hv_port_set(struct hv_dom *d, uint32_t p, enum hv_evtchn_state st,
	    uint32_t rdom, uint32_t rport, struct hv_conn *owner)
{
	struct hv_port *hp = &d->ports[p];
	bool fresh = hp->state == HV_ECS_FREE;

	hp->state = st;
	hp->gen++;
	hp->remote_dom = rdom;
	hp->remote_port = rport;
	hp->owner = owner;
	hp->since = ++d->hv->seq;
	hv_port_publish(d, p, fresh);
}

static int
hv_port_alloc(struct hv_dom *d)
{
	for (uint32_t p = 1; p < HV_NR_PORTS; p++)
		if (d->ports[p].state == HV_ECS_FREE)
			return p;
	return -ENOSPC;
}

/*
 * Close port p of d, as Xen's evtchn_close(): its interdomain peer (if
 * still connected to it) goes back to UNBOUND, offered to d, so that d
 * can bind it again (a restarted backend binding the guest's port);
 * meanwhile notify there gives -ENOTCONN.  The peer keeps its handle.
 */
static void
hv_port_close(struct hv *hv, struct hv_dom *d, uint32_t p)
{
	struct hv_port *hp = &d->ports[p];

	if (hp->state == HV_ECS_INTERDOMAIN) {
		struct hv_dom *r = hv_dom_find(hv, hp->remote_dom);

		if (r && hp->remote_port < HV_NR_PORTS) {
			struct hv_port *rp = &r->ports[hp->remote_port];

			if (rp->state == HV_ECS_INTERDOMAIN &&
			    rp->remote_dom == d->domid && rp->remote_port == p)
				hv_port_set(r, hp->remote_port,
					    HV_ECS_UNBOUND, d->domid, 0,
					    rp->owner);
		}
	}
	hv_port_set(d, p, HV_ECS_FREE, 0, 0, NULL);
}

/* ---- requests ---- */

static int
hv_send(struct hv_conn *c, const struct hv_rsp *rsp, const int *fds)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * HV_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)rsp, .iov_len = sizeof(*rsp) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (rsp->nfds) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * rsp->nfds);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * rsp->nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * rsp->nfds);
	}
	if (sendmsg(c->fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		return -errno;
	return 0;
}

/* Is fd an eventfd?  Only eventfds are written by the peers' notify. */
static bool
is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "anon_inode:[eventfd]") == 0;
}

/* A ledger token no live connection has (1..HV_OWN_TOKEN_MAX), or 0. */
static uint32_t
hv_token_alloc(struct hv *hv)
{
	static uint8_t used[HV_OWN_TOKEN_MAX + 1];
	struct hv_conn *c;
	uint32_t t;

	memset(used, 0, sizeof(used));
	for (c = hv->conns; c; c = c->next)
		if (c->ledger_fd >= 0 && c->token <= HV_OWN_TOKEN_MAX)
			used[c->token] = 1;
	for (t = 1; t <= HV_OWN_TOKEN_MAX; t++)
		if (!used[t])
			return t;
	return 0;
}

/* Is fd a memfd (or another shmem file)?  Only those support F_GET_SEALS;
 * reading them never blocks the loop, and pread() past a truncated end
 * returns short rather than faulting as a mapping would. */
static bool
is_shmem(int fd)
{
	return fcntl(fd, F_GET_SEALS) >= 0;
}

static void
hv_op_get_domain(struct hv_conn *c, const struct hv_req *req,
		 struct hv_rsp *rsp, int *fds)
{
	struct hv_dom *d;

	if (c->domid != 0 && req->domid != c->domid) {
		rsp->ret = -EPERM;
		return;
	}
	d = hv_dom_find(c->hv, req->domid);
	if (!d) {
		rsp->ret = -ESRCH;
		return;
	}
	fds[0] = d->gnt_fd;
	fds[1] = d->ram_fd;
	fds[2] = d->evt_fd;
	rsp->nfds = 3;
	if (c->domid == 0)
		fds[rsp->nfds++] = d->act_fd;
	rsp->domid = d->domid;
	rsp->arg = HV_NR_FRAMES;
}

static void
hv_op_bind_unbound(struct hv_conn *c, const struct hv_req *req,
		   struct hv_rsp *rsp)
{
	struct hv_dom *d = hv_dom_find(c->hv, c->domid);
	int p;

	if (req->domid > HV_MAX_DOMID) {
		rsp->ret = -EINVAL;
		return;
	}
	if (!hv_dom_find(c->hv, req->domid)) {
		rsp->ret = -ESRCH;
		return;
	}
	p = hv_port_alloc(d);
	if (p < 0) {
		rsp->ret = p;
		return;
	}
	hv_port_set(d, p, HV_ECS_UNBOUND, req->domid, 0, c);
	rsp->port = p;
}

static void
hv_op_bind_interdomain(struct hv_conn *c, const struct hv_req *req,
		       struct hv_rsp *rsp)
{
	struct hv_dom *d = hv_dom_find(c->hv, c->domid);
	struct hv_dom *r = hv_dom_find(c->hv, req->domid);
	struct hv_port *rp;
	int p;

	if (!r) {
		rsp->ret = -ESRCH;
		return;
	}
	if (req->port == 0 || req->port >= HV_NR_PORTS) {
		rsp->ret = -EINVAL;
		return;
	}
	rp = &r->ports[req->port];
	/* Xen evtchn_bind_interdomain(): the remote port must be unbound
	 * and offered to us. */
	if (rp->state != HV_ECS_UNBOUND || rp->remote_dom != c->domid) {
		rsp->ret = -EINVAL;
		return;
	}
	p = hv_port_alloc(d);
	if (p < 0) {
		rsp->ret = p;
		return;
	}
	hv_port_set(d, p, HV_ECS_INTERDOMAIN, r->domid, req->port, c);
	hv_port_set(r, req->port, HV_ECS_INTERDOMAIN, d->domid, p, rp->owner);
	rsp->port = p;
}

static void
hv_op_peer(struct hv_conn *c, const struct hv_req *req, struct hv_rsp *rsp,
	   int *fds)
{
	struct hv_dom *d = hv_dom_find(c->hv, c->domid);
	struct hv_port *hp;
	struct hv_dom *r;
	struct hv_port *rp;

	if (req->port == 0 || req->port >= HV_NR_PORTS ||
	    d->ports[req->port].owner != c) {
		rsp->ret = -EINVAL;
		return;
	}
	hp = &d->ports[req->port];
	if (hp->state != HV_ECS_INTERDOMAIN) {
		rsp->ret = -ENOTCONN;
		return;
	}
	r = hv_dom_find(c->hv, hp->remote_dom);
	if (!r) {
		rsp->ret = -ENOTCONN;
		return;
	}
	rp = &r->ports[hp->remote_port];
	if (!rp->owner || rp->owner->eventfd < 0) {
		rsp->ret = -ENOTCONN;
		return;
	}
	fds[0] = r->evt_fd;
	fds[1] = rp->owner->eventfd;
	rsp->nfds = 2;
	rsp->domid = r->domid;
	rsp->port = hp->remote_port;
	rsp->arg = hp->gen & 0x3fffffffu;
}

static void
hv_op_unbind(struct hv_conn *c, const struct hv_req *req, struct hv_rsp *rsp)
{
	struct hv_dom *d = hv_dom_find(c->hv, c->domid);

	if (req->port == 0 || req->port >= HV_NR_PORTS ||
	    d->ports[req->port].owner != c ||
	    d->ports[req->port].state == HV_ECS_FREE) {
		rsp->ret = -EINVAL;
		return;
	}
	hv_port_close(c->hv, d, req->port);
}

/*
 * Handle one request.  Returns false if the connection must be dropped
 * (malformed request, protocol violation, send failure).
 */
static bool
hv_handle(struct hv_conn *c, const struct hv_req *req, int rfd)
{
	struct hv_rsp rsp = { 0 };
	int fds[HV_MAX_FDS];
	struct hv_dom *d = hv_dom_find(c->hv, c->domid);

	if (!d)
		return false;	/* our domain is gone */
	if (!c->hello) {
		if (req->op != HV_OP_HELLO || rfd >= 0)
			return false;
		if (req->arg != HV_PROTO_VERSION)
			rsp.ret = -EPROTO;
		else if (req->domid != c->domid)
			rsp.ret = -EACCES;
		else
			c->hello = true;
		rsp.domid = c->domid;
		return hv_send(c, &rsp, fds) == 0 && c->hello;
	}
	if (rfd >= 0 && req->op != HV_OP_EVTCHN_REGISTER &&
	    req->op != HV_OP_PIN_LEDGER)
		return false;

	switch (req->op) {
	case HV_OP_GET_DOMAIN:
		hv_op_get_domain(c, req, &rsp, fds);
		break;
	case HV_OP_DOMAIN_ALIVE:
		rsp.ret = hv_dom_find(c->hv, req->domid) ? 1 : 0;
		break;
	case HV_OP_EVTCHN_REGISTER:
		if (rfd < 0 || c->eventfd >= 0 || !is_eventfd(rfd)) {
			if (rfd >= 0)
				close(rfd);
			return false;
		}
		c->eventfd = rfd;
		break;
	case HV_OP_PIN_LEDGER:
		if (rfd < 0 || !is_shmem(rfd)) {
			if (rfd >= 0)
				close(rfd);
			return false;
		}
		if (c->domid != 0 || c->ledger_fd >= 0) {
			close(rfd);
			rsp.ret = c->domid != 0 ? -EPERM : -EEXIST;
			break;
		}
		/* The lowest token no live connection has: a closed one's
		 * BUSY bits are all settled before its token is free. */
		c->token = hv_token_alloc(c->hv);
		if (c->token == 0) {
			close(rfd);
			rsp.ret = -EUSERS;
			break;
		}
		c->ledger_fd = rfd;
		rsp.arg = c->token;
		break;
	case HV_OP_BIND_UNBOUND:
	case HV_OP_BIND_INTERDOMAIN:
	case HV_OP_PEER:
	case HV_OP_UNBIND:
		if (c->eventfd < 0)
			return false;
		if (req->op == HV_OP_BIND_UNBOUND)
			hv_op_bind_unbound(c, req, &rsp);
		else if (req->op == HV_OP_BIND_INTERDOMAIN)
			hv_op_bind_interdomain(c, req, &rsp);
		else if (req->op == HV_OP_PEER)
			hv_op_peer(c, req, &rsp, fds);
		else
			hv_op_unbind(c, req, &rsp);
		break;
	default:
		return false;
	}
	bk_dbg(BK_DBG_SIM, "hv: dom%u op %u dom %u port %u -> %d",
	       c->domid, req->op, req->domid, req->port, rsp.ret);
	return hv_send(c, &rsp, fds) == 0;
}

static void
hv_conn_cb(void *opaque, uint32_t events)
{
	struct hv_conn *c = opaque;
	union {
		char buf[CMSG_SPACE(sizeof(int) * HV_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct hv_req req;
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	int rfd = -1, nrfd = 0;
	ssize_t n;
	bool ok;

	n = recvmsg(c->fd, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	/* Collect passed fds; more than one is a protocol violation. */
	for (cm = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL; cm;
	     cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		     i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (nrfd++ == 0)
				rfd = fd;
			else
				close(fd);
		}
	}
	ok = n == (ssize_t)sizeof(req) && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
	     nrfd <= 1;
	if (ok)
		ok = hv_handle(c, &req, rfd);
	else if (rfd >= 0)
		close(rfd);
	if (!ok) {
		if (n > 0)
			bk_dbg(BK_DBG_SIM, "hv: dom%u: dropping client", c->domid);
		hv_conn_free(c);
	}
}

int
hv_domain_grants_in_use(struct hv *hv, uint32_t domid,
			void (*fn)(void *opaque, uint32_t ref, unsigned int pins,
				   unsigned int wpins, uint32_t by),
			void *opaque)
{
	struct hv_dom *d = hv_dom_find(hv, domid);
	uint32_t ref;

	if (!d)
		return -ENOENT;
	for (ref = 0; ref < HV_NR_GRANTS; ref++) {
		/* mappers change it on shared memory: one atomic snapshot */
		uint32_t p = HV_PIN(__atomic_load_n(&d->act[ref].pin, __ATOMIC_ACQUIRE));

		if (p & HV_PIN_MASK)
			fn(opaque, ref, p & HV_PIN_MASK, (p & HV_PIN_W_MASK) / HV_PIN_W_ONE,
			   d->act[ref].domid);
	}
	return 0;
}

int
hv_domain_ports(struct hv *hv, uint32_t domid,
		void (*fn)(void *opaque, const struct hv_port_info *pi),
		void *opaque)
{
	struct hv_dom *d = hv_dom_find(hv, domid);

	if (!d)
		return -ENOENT;
	for (uint32_t p = 1; p < HV_NR_PORTS; p++) {
		const struct hv_port *hp = &d->ports[p];
		struct hv_port_info pi = {
			.port = p,
			.interdomain = hp->state == HV_ECS_INTERDOMAIN,
			.remote_dom = hp->remote_dom,
			.remote_port = hp->remote_port,
			.since = hp->since,
		};

		if (hp->state == HV_ECS_FREE)
			continue;
		if (hp->owner) {
			pi.pid = hp->owner->pid;
			pi.conn = hp->owner->serial;
		}
		fn(opaque, &pi);
	}
	return 0;
}

int
hv_domain_maps(struct hv *hv, uint32_t domid,
	       void (*fn)(void *opaque, uint32_t ref, bool writable, pid_t pid,
			  uint64_t conn),
	       void *opaque)
{
	struct hv_conn *c;
	uint32_t buf[1024];

	if (!hv_dom_find(hv, domid))
		return -ENOENT;
	for (c = hv->conns; c; c = c->next) {
		struct hv_ledger_hdr hdr;
		uint32_t used;

		if (c->ledger_fd < 0 ||
		    pread(c->ledger_fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
		    hdr.magic != HV_LEDGER_MAGIC)
			continue;
		/* Pairs with the client raising "used" before it writes a
		 * slot there; a slot read mid-change is either state, and
		 * only settled entries (no TRANS) are reported. */
		used = hdr.used < HV_LEDGER_SLOTS ? hdr.used : HV_LEDGER_SLOTS;
		for (uint32_t i = 0; i < used; i += ARRAY_SIZE(buf)) {
			size_t want = used - i < ARRAY_SIZE(buf) ? used - i : ARRAY_SIZE(buf);
			ssize_t n = pread(c->ledger_fd, buf, want * sizeof(buf[0]),
					  offsetof(struct hv_ledger, slot) +
					  (off_t)i * sizeof(buf[0]));

			if (n <= 0)
				break;
			for (size_t k = 0; k < (size_t)n / sizeof(buf[0]); k++) {
				uint32_t e = buf[k];

				if (!(e & HV_LEDGER_VALID) || (e & HV_LEDGER_TRANS) ||
				    ((e >> HV_LEDGER_DOMID_SHIFT) & HV_LEDGER_DOMID_MASK) != domid ||
				    (e & HV_LEDGER_REF_MASK) >= HV_NR_GRANTS)
					continue;
				fn(opaque, e & HV_LEDGER_REF_MASK,
				   e & HV_LEDGER_WRITABLE, c->pid, c->serial);
			}
		}
	}
	return 0;
}

/* ---- pin ledgers ---- */

/* ~1 s of waiting for another mapper's BUSY transition (as pin_backoff in
 * xenops-sim.c): a holder killed mid-transition must not hang xensim. */
static bool
hv_busy_wait(unsigned int *spins, const struct timespec *t0)
{
	struct timespec now;

	if (++*spins < 64) {
		cpu_relax();
		return true;
	}
	sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000000000L +
	       (now.tv_nsec - t0->tv_nsec) < 1000000000L;
}

/* The GTF flags that must go from ref's entry once pin p remains. */
static uint32_t
hv_flags_to_clear(uint32_t p)
{
	if (!(p & HV_PIN_MASK))
		return GTF_reading | GTF_writing;
	if (!(p & HV_PIN_W_MASK))
		return GTF_writing;
	return 0;
}

/* Does pin p hold a pin of this kind (writable, or read-only)? */
static bool
hv_pin_has(uint32_t p, bool writable)
{
	uint32_t all = p & HV_PIN_MASK, w = (p & HV_PIN_W_MASK) >> 15;

	/* never below zero either way */
	return w <= all && (writable ? w != 0 : all - w != 0);
}

/*
 * Release one pin of ref in d as the client's gnt_release does (the
 * same BUSY protocol on the 0 <-> 1 transitions, flags cleared on the
 * last pin / last writable pin), after checking that the active table
 * holds such a pin: 0, -ENOENT (no such pin: nothing done), -EDEADLK
 * (BUSY held for a second: left alone).
 */
static int
hv_pin_release(struct hv_dom *d, uint32_t ref, bool writable)
{
	struct hv_active *act = &d->act[ref];
	uint32_t *word = (uint32_t *)&d->gnt->table[ref];
	uint32_t dec = HV_PIN_ONE | (writable ? HV_PIN_W_ONE : 0);
	unsigned int spins = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		/* Pairs with the mappers' smp_store_release(&act->pin). */
		uint64_t v = smp_load_acquire(&act->pin);
		uint32_t p = HV_PIN(v), np, clear;

		if (p & HV_PIN_BUSY) {
			if (!hv_busy_wait(&spins, &t0))
				return -EDEADLK;
			continue;
		}
		if (!hv_pin_has(p, writable))
			return -ENOENT;
		np = p - dec;
		clear = hv_flags_to_clear(np) & (writable ? ~0u : ~(uint32_t)GTF_writing);
		if (!clear) {
			/* Release: pairs with the mappers' acquire of pin. */
			if (__atomic_compare_exchange_n(&act->pin, &v, (uint64_t)np,
							false, __ATOMIC_RELEASE,
							__ATOMIC_RELAXED))
				return 0;
			continue;
		}
		if (!__atomic_compare_exchange_n(&act->pin, &v,
						 HV_PIN_WORD(p | HV_PIN_BUSY,
							     HV_OWNER_XENSIM),
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		/* Pairs with the guest's acquire in end-access: the page is
		 * the guest's again once it sees the flags clear. */
		__atomic_fetch_and(word, ~clear, __ATOMIC_RELEASE);
		/* Pairs with smp_load_acquire(&act->pin) in gnt_acquire. */
		smp_store_release(&act->pin, (uint64_t)np);
		return 0;
	}
}

/* A ledger slot of a closed connection, or 0 if it cannot be read. */
static uint32_t
hv_ledger_slot(int fd, uint32_t slot)
{
	uint32_t e;

	if (pread(fd, &e, sizeof(e), offsetof(struct hv_ledger, slot) +
		  (off_t)slot * sizeof(e)) != (ssize_t)sizeof(e))
		return 0;
	return e;
}

/*
 * ref's pin word is BUSY with a closed connection's token: its process
 * died inside a take or a release (hv-proto.h "pin ledger").  Finish or
 * undo it from what the slot the owner names says, so that the word is
 * consistent and free again.  Nobody else changes the word while that
 * BUSY is set.  Returns the slot if this settles its entry for good (a
 * release: the pass over the ledger must not release it again), else
 * HV_LEDGER_SLOTS.
 */
static uint32_t
hv_pin_recover(struct hv_dom *d, uint32_t ref, uint64_t v, int fd, bool *bad)
{
	struct hv_active *act = &d->act[ref];
	uint32_t *word = (uint32_t *)&d->gnt->table[ref];
	uint32_t own = HV_PIN_OWNER(v), slot = own & HV_OWN_SLOT_MASK;
	bool done = own & HV_OWN_DONE;
	uint32_t p = HV_PIN(v) & ~HV_PIN_BUSY, np = p, e = hv_ledger_slot(fd, slot);
	bool w = e & HV_LEDGER_WRITABLE, trans = e & HV_LEDGER_TRANS;
	bool rel = e & HV_LEDGER_RELEASING;
	uint32_t dec = HV_PIN_ONE | (w ? HV_PIN_W_ONE : 0), settled = HV_LEDGER_SLOTS;

	if (e != 0 && (!(e & HV_LEDGER_VALID) ||
		       ((e >> HV_LEDGER_DOMID_SHIFT) & HV_LEDGER_DOMID_MASK) != d->domid ||
		       (e & HV_LEDGER_REF_MASK) != ref)) {
		*bad = true;	/* not what it was doing: just let go */
	} else if (trans && !rel) {
		/* a take: not counted yet (undo), or counted and not
		 * recorded (release it) */
		if (done && hv_pin_has(p, w))
			np = p - dec;
	} else if (trans && rel) {
		/* a release: finish it, or it is counted already */
		if (!done && hv_pin_has(p, w))
			np = p - dec;
		settled = slot;
	}
	/* else a recorded take (the ledger pass releases it) or a release
	 * whose slot is clear (over): only BUSY goes. */
	/* A take may have set the flags for a pin it never counted; a
	 * release may not have cleared them yet. */
	__atomic_fetch_and(word, ~hv_flags_to_clear(np), __ATOMIC_RELEASE);
	/* Pairs with the mappers' smp_load_acquire(&act->pin). */
	smp_store_release(&act->pin, (uint64_t)np);
	return settled;
}

/*
 * The connection of a dom0 process closed: finish or undo the pin
 * operations it died in, then release every pin its ledger still
 * records (hv-proto.h "pin ledger").  Reads the ledger with pread, so
 * a ledger shrunk or rewritten under us costs entries, never xensim.
 */
static void
hv_ledger_release(struct hv *hv, int fd, uint32_t token)
{
	struct hv_ledger_hdr hdr;
	uint32_t buf[1024], used, done = 0, bad = 0, gone = 0, stuck = 0;
	uint32_t recovered = 0, *settled = NULL, nsettled = 0;
	struct hv_dom *d;

	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return;		/* never written: nothing recorded */
	if (hdr.magic != HV_LEDGER_MAGIC) {
		log_error("hv: a pin ledger with a bad magic (%#x): ignored",
			  hdr.magic);
		return;
	}
	/* The operations it died in: BUSY with its token, anywhere. */
	for (d = hv->doms; d; d = d->next) {
		for (uint32_t ref = 0; ref < HV_NR_GRANTS; ref++) {
			/* Pairs with the holder's compare-exchange. */
			uint64_t v = smp_load_acquire(&d->act[ref].pin);
			bool b = false;
			uint32_t s, *ns;

			if (!(HV_PIN(v) & HV_PIN_BUSY) ||
			    HV_PIN_OWNER(v) == HV_OWNER_XENSIM ||
			    HV_OWN_TOKEN(HV_PIN_OWNER(v)) != token)
				continue;
			s = hv_pin_recover(d, ref, v, fd, &b);
			recovered++;
			bad += b;
			if (s == HV_LEDGER_SLOTS)
				continue;
			ns = realloc(settled, sizeof(*ns) * (nsettled + 1));
			if (ns) {
				settled = ns;
				settled[nsettled++] = s;
			}
		}
	}
	used = hdr.used < HV_LEDGER_SLOTS ? hdr.used : HV_LEDGER_SLOTS;
	for (uint32_t i = 0; i < used; i += ARRAY_SIZE(buf)) {
		size_t want = used - i < ARRAY_SIZE(buf) ? used - i : ARRAY_SIZE(buf);
		ssize_t n = pread(fd, buf, want * sizeof(buf[0]),
				  offsetof(struct hv_ledger, slot) +
				  (off_t)i * sizeof(buf[0]));

		if (n <= 0)
			break;
		for (size_t k = 0; k < (size_t)n / sizeof(buf[0]); k++) {
			uint32_t e = buf[k], domid, ref;
			bool trans = e & HV_LEDGER_TRANS;
			bool rel = e & HV_LEDGER_RELEASING, skip = false;
			int rc;

			/* entry|TRANS: a take not counted (or settled above) */
			if (e == 0 || (trans && !rel))
				continue;
			domid = (e >> HV_LEDGER_DOMID_SHIFT) & HV_LEDGER_DOMID_MASK;
			ref = e & HV_LEDGER_REF_MASK;
			if (!(e & HV_LEDGER_VALID) || (rel && !trans) ||
			    ref >= HV_NR_GRANTS) {
				bad++;
				continue;
			}
			for (uint32_t j = 0; j < nsettled; j++)
				if (settled[j] == i + k)
					skip = true;
			if (skip)
				continue;
			d = hv_dom_find(hv, domid);
			if (!d) {
				/* destroyed: its tables went with it */
				gone++;
				continue;
			}
			/* a pin held, or one whose release had not begun */
			rc = hv_pin_release(d, ref, e & HV_LEDGER_WRITABLE);
			if (rc == 0)
				done++;
			else if (rc == -EDEADLK)
				stuck++;
			else
				bad++;
		}
		if ((size_t)n < want * sizeof(buf[0]))
			break;
	}
	free(settled);
	if (bad)
		log_error("hv: a closed dom0 connection's pin ledger had %u "
			  "entries without such a pin: skipped", bad);
	if (stuck)
		log_error("hv: %u ledger pins left: their entries stayed busy "
			  "(a mapper without a ledger died mid-transition?)", stuck);
	if (done || gone || recovered)
		bk_dbg(BK_DBG_SIM, "hv: released %u pins of a closed dom0 "
		       "connection, finished or undid %u operations it died "
		       "in (%u entries of destroyed domains skipped)",
		       done, recovered, gone);
}

/* Unbind the handle's ports, release its ledger's pins, unlink and free it. */
static void
hv_conn_free(struct hv_conn *c)
{
	struct hv *hv = c->hv;
	struct hv_conn **pp;
	struct hv_dom *d = hv_dom_find(hv, c->domid);

	if (d && c->eventfd >= 0) {
		for (uint32_t p = 1; p < HV_NR_PORTS; p++)
			if (d->ports[p].owner == c &&
			    d->ports[p].state != HV_ECS_FREE)
				hv_port_close(hv, d, p);
	}
	for (pp = &hv->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	sim_loop_del(hv->loop, c->fd);
	close(c->fd);
	if (c->eventfd >= 0)
		close(c->eventfd);
	if (c->ledger_fd >= 0) {
		/* After close(c->fd): nothing more comes from this client. */
		hv_ledger_release(hv, c->ledger_fd, c->token);
		close(c->ledger_fd);
	}
	free(c);
}

/* ---- domains ---- */

static int
hv_memfd(const char *name, uint32_t domid, size_t size)
{
	char n[64];
	int fd;

	snprintf(n, sizeof(n), "xensim-dom%u-%s", domid, name);
	fd = memfd_create(n, MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

static void
hv_dom_free(struct hv_dom *d)
{
	struct hv *hv = d->hv;

	if (d->li.fd >= 0) {
		sim_loop_del(hv->loop, d->li.fd);
		close(d->li.fd);
	}
	if (d->sock_path)
		unlink(d->sock_path);
	free(d->sock_path);
	if (d->gnt)
		munmap(d->gnt, sizeof(struct hv_gnt));
	if (d->act)
		munmap(d->act, sizeof(struct hv_active) * HV_NR_GRANTS);
	if (d->evt)
		munmap(d->evt, sizeof(struct hv_evtchn) * HV_NR_PORTS);
	if (d->ram_fd >= 0)
		close(d->ram_fd);
	if (d->gnt_fd >= 0)
		close(d->gnt_fd);
	if (d->act_fd >= 0)
		close(d->act_fd);
	if (d->evt_fd >= 0)
		close(d->evt_fd);
	free(d);
}

int
hv_domain_create(struct hv *hv, uint32_t domid)
{
	struct hv_dom *d;
	int rc;

	if (domid > HV_MAX_DOMID)
		return -EINVAL;
	if (hv_dom_find(hv, domid))
		return -EEXIST;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->hv = hv;
	d->domid = domid;
	d->li.hv = hv;
	d->li.domid = domid;
	d->li.fd = d->ram_fd = d->gnt_fd = d->act_fd = d->evt_fd = -1;

	rc = d->ram_fd = hv_memfd("ram", domid, HV_RAM_SIZE);
	if (rc < 0)
		goto err;
	rc = d->gnt_fd = hv_memfd("gnt", domid, sizeof(struct hv_gnt));
	if (rc < 0)
		goto err;
	rc = d->act_fd = hv_memfd("act", domid,
				  sizeof(struct hv_active) * HV_NR_GRANTS);
	if (rc < 0)
		goto err;
	rc = d->evt_fd = hv_memfd("evt", domid,
				  sizeof(struct hv_evtchn) * HV_NR_PORTS);
	if (rc < 0)
		goto err;
	d->gnt = mmap(NULL, sizeof(struct hv_gnt), PROT_READ | PROT_WRITE,
		      MAP_SHARED, d->gnt_fd, 0);
	if (d->gnt == MAP_FAILED) {
		d->gnt = NULL;
		rc = -errno;
		goto err;
	}
	d->act = mmap(NULL, sizeof(struct hv_active) * HV_NR_GRANTS,
		      PROT_READ | PROT_WRITE, MAP_SHARED, d->act_fd, 0);
	if (d->act == MAP_FAILED) {
		d->act = NULL;
		rc = -errno;
		goto err;
	}
	d->evt = mmap(NULL, sizeof(struct hv_evtchn) * HV_NR_PORTS,
		      PROT_READ | PROT_WRITE, MAP_SHARED, d->evt_fd, 0);
	if (d->evt == MAP_FAILED) {
		d->evt = NULL;
		rc = -errno;
		goto err;
	}
	/* Nobody else has these fds yet: plain stores suffice. */
	d->gnt->hdr.magic = HV_GNT_MAGIC;
	d->gnt->hdr.version = HV_PROTO_VERSION;
	d->gnt->hdr.domid = domid;
	d->gnt->hdr.nr_frames = HV_NR_FRAMES;
	d->gnt->hdr.nr_grants = HV_NR_GRANTS;
	d->gnt->gref_map[0] = (1ull << GNTTAB_NR_RESERVED_ENTRIES) - 1;

	if (domid != 0) {
		char dirpath[PATH_MAX];

		/* DIR/dom<N> is made by the domain life cycle (ctl.c). */
		snprintf(dirpath, sizeof(dirpath), "%s/dom%u", hv->dir, domid);
		if (asprintf(&d->sock_path, "%s/hv.sock", dirpath) < 0) {
			d->sock_path = NULL;
			rc = -ENOMEM;
			goto err;
		}
		rc = d->li.fd = hv_listen(d->sock_path);
		if (rc < 0) {
			d->li.fd = -1;
			free(d->sock_path);
			d->sock_path = NULL;
			goto err;
		}
		rc = sim_loop_add(hv->loop, d->li.fd, EPOLLIN,
				  hv_accept_cb, &d->li);
		if (rc < 0) {
			close(d->li.fd);
			d->li.fd = -1;
			goto err;
		}
	}
	d->next = hv->doms;
	hv->doms = d;
	bk_dbg(BK_DBG_SIM, "hv: dom%u created", domid);
	return 0;
err:
	hv_dom_free(d);
	return rc;
}

int
hv_domain_destroy(struct hv *hv, uint32_t domid)
{
	struct hv_dom *d = hv_dom_find(hv, domid), **pp;
	struct hv_conn *c, *next;

	if (!d)
		return -ESRCH;
	/* Pairs with READ_ONCE(hdr.dying) in the mappers: new maps and
	 * copies of this domain's grants fail with -ESRCH from now on. */
	smp_store_release(&d->gnt->hdr.dying, 1);
	for (uint32_t p = 1; p < HV_NR_PORTS; p++)
		if (d->ports[p].state != HV_ECS_FREE)
			hv_port_close(hv, d, p);
	/* Stop serving its processes. */
	for (c = hv->conns; c; c = next) {
		next = c->next;
		if (c->domid == domid)
			hv_conn_free(c);
	}
	for (pp = &hv->doms; *pp; pp = &(*pp)->next) {
		if (*pp == d) {
			*pp = d->next;
			break;
		}
	}
	/* DIR/dom<N> itself belongs to the domain life cycle (ctl.c). */
	/*
	 * Mappings held by other processes keep the memfds alive (as Xen
	 * keeps the pages of a dying domain until the last unmap).
	 */
	hv_dom_free(d);
	bk_dbg(BK_DBG_SIM, "hv: dom%u destroyed", domid);
	return 0;
}

/* ---- the module ---- */

/* ---- the module ---- */

struct hv *
hv_new(struct sim_loop *l, const char *dir)
{
	struct hv *hv = calloc(1, sizeof(*hv));
	int rc;

	if (!hv)
		return NULL;
	hv->loop = l;
	hv->li0.hv = hv;
	hv->li0.domid = 0;
	hv->li0.fd = -1;
	hv->dir = strdup(dir);
	if (!hv->dir || asprintf(&hv->sock_path, "%s/hv.sock", dir) < 0) {
		hv->sock_path = NULL;
		rc = -ENOMEM;
		goto err;
	}
	rc = hv->li0.fd = hv_listen(hv->sock_path);
	if (rc < 0) {
		hv->li0.fd = -1;
		goto err;
	}
	rc = sim_loop_add(l, hv->li0.fd, EPOLLIN, hv_accept_cb, &hv->li0);
	if (rc < 0)
		goto err;
	return hv;
err:
	if (hv->li0.fd >= 0) {
		close(hv->li0.fd);
		unlink(hv->sock_path);
	}
	free(hv->sock_path);
	free(hv->dir);
	free(hv);
	errno = -rc;
	return NULL;
}

void
hv_free(struct hv *hv)
{
	if (!hv)
		return;
	while (hv->doms)
		hv_domain_destroy(hv, hv->doms->domid);
	while (hv->conns)
		hv_conn_free(hv->conns);
	sim_loop_del(hv->loop, hv->li0.fd);
	close(hv->li0.fd);
	unlink(hv->sock_path);
	free(hv->sock_path);
	free(hv->dir);
	free(hv);
}
