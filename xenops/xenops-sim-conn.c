/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops-sim-conn.c: the XENOPS_SIM transport's lowest layer (sim-priv.h):
 * the control connection to xensim's simulated hypervisor (one request,
 * one response, fds passed along: sim_call) and the per-domain cache of
 * a granting domain's mapped ram/gnt/act memfds (struct sim_dom,
 * refcounted; sim_dom_get / sim_dom_put, under sim->lock).
 *
 * xenops-sim.c (open, close, the ops table), xenops-sim-grant.c and
 * xenops-sim-evtchn.c sit above it and call into it; it calls none of
 * them.
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
#include "sim-priv.h"

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
int
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
int
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

void *
sim_map_fd(int fd, size_t size, int prot)
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

void
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
int
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
	d->gnt = sim_map_fd(fds[0], GNT_SIZE, PROT_READ | PROT_WRITE);
	d->evt = sim_map_fd(fds[2], EVT_SIZE, PROT_READ | PROT_WRITE);
	if (!d->gnt || !d->evt)
		goto out_errno;
	if (self == 0) {
		/* The mapping side: pins and all of RAM, for grant copy. */
		d->act = sim_map_fd(fds[3], ACT_SIZE, PROT_READ | PROT_WRITE);
		d->ram = sim_map_fd(d->ram_fd, HV_RAM_SIZE, PROT_READ | PROT_WRITE);
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

void
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
int
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
void
sim_dom_put(struct sim *sim, struct sim_dom *d)
{
	pthread_mutex_lock(&sim->lock);
	if (d->cached && sim_dom_dying(d))
		sim_dom_uncache_locked(sim, d);
	sim_dom_put_locked(d);
	pthread_mutex_unlock(&sim->lock);
}

