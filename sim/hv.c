/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hv.c: xensim's simulated hypervisor: domain memory, v1 grant tables and
 * event channels (sim.h; the layout and protocol are in hv-proto.h).
 *
 * This module owns, per domain, the four memfds (ram, gnt, act, evt), the
 * authoritative event channel port table and the domain's hv.sock
 * listener; per client connection, its fd, (for an event channel
 * handle) its eventfd and (for a dom0 process's handle) its pin ledger,
 * whose pins hv-pins.c releases when the connection closes.  It runs on
 * the loop thread only.  The types both files share: hv-int.h.
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
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "hv-int.h"

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
