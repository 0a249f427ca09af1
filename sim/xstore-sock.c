/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-sock.c: xenstore unix sockets of xensim (see xstore.h).
 *
 * One listening socket per domain; the domain a connection belongs to is
 * the socket it came through.  Each connection is non-blocking, read on
 * EPOLLIN and written as soon as output is pending; EPOLLOUT is armed
 * only while the kernel buffer is full.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "sim.h"
#include "xstore.h"

/* Connections one unprivileged domain may hold open at once. */
#define XSOCK_MAX_CONNS	128

struct xsock_conn {
	struct xsock *x;
	struct xsock_listener *ls;	/* came through it; outlives us */
	struct xsock_conn *next;
	int fd;
	uint32_t domid;
	struct xstore_conn *sc;
	bool out_armed;			/* EPOLLOUT requested */
	bool dead;			/* write failed: close from the loop */
};

struct xsock_listener {
	struct xsock *x;
	struct xsock_listener *next;
	uint32_t domid;
	int fd;
	char *path;
	unsigned int nconns;		/* open connections of this domain */
	bool warned;			/* logged hitting the limit once */
};

struct xsock {
	struct sim_loop *l;
	struct xstore *s;
	char *dir;
	struct xsock_listener *listeners;
	struct xsock_conn *conns;
};

static void
conn_close(struct xsock_conn *xc)
{
	struct xsock_conn **pp;

	for (pp = &xc->x->conns; *pp != xc; pp = &(*pp)->next)
		;
	*pp = xc->next;
	if (xc->ls)
		xc->ls->nconns--;
	sim_loop_del(xc->x->l, xc->fd);
	close(xc->fd);
	if (log_verbose)
		log_info("xenstore: domain %u: connection %d closed%s", xc->domid,
			 xc->fd, xstore_conn_broken(xc->sc) ?
			 " (protocol error or stopped reading)" : "");
	xstore_conn_free(xc->sc);
	free(xc);
}

/* Write what the socket takes.  Never frees: marks dead instead. */
static void
conn_flush(struct xsock_conn *xc)
{
	size_t len;
	const char *p;
	bool want_out;

	while (!xc->dead) {
		ssize_t n;

		p = xstore_conn_output(xc->sc, &len);
		if (!len)
			break;
		n = send(xc->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				xc->dead = true;
			break;
		}
		xstore_conn_consume(xc->sc, (size_t)n);
	}
	xstore_conn_output(xc->sc, &len);
	/* Dead or broken connections are closed from their loop callback. */
	want_out = len || xc->dead || xstore_conn_broken(xc->sc);
	if (want_out != xc->out_armed) {
		if (sim_loop_mod(xc->x->l, xc->fd,
				 EPOLLIN | (want_out ? EPOLLOUT : 0)) == 0)
			xc->out_armed = want_out;
	}
}

static void
conn_kick(void *opaque)
{
	conn_flush(opaque);
}

static void
conn_event(void *opaque, uint32_t events)
{
	struct xsock_conn *xc = opaque;
	char buf[8192];
	size_t len;

	/* Bounded reads per wake-up, so one client cannot starve the rest. */
	for (int i = 0; i < 16 && !xc->dead &&
	     !xstore_conn_broken(xc->sc); i++) {
		ssize_t n = recv(xc->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			xc->dead = true;	/* EOF or error */
			break;
		}
		xstore_conn_input(xc->sc, buf, (size_t)n);
	}
	conn_flush(xc);
	xstore_conn_output(xc->sc, &len);
	if (xc->dead || (xstore_conn_broken(xc->sc) && !len) ||
	    (events & EPOLLERR))
		conn_close(xc);
}

static void
listener_event(void *opaque, uint32_t events)
{
	struct xsock_listener *ls = opaque;
	struct xsock *x = ls->x;

	/* Bounded, so a client reconnecting at once cannot starve the rest. */
	for (int n = 0; n < 16; n++) {
		struct xsock_conn *xc;
		int fd = accept4(ls->fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				log_error("accept %s: %m", ls->path);
			return;
		}
		if (ls->domid != 0 && ls->nconns >= XSOCK_MAX_CONNS) {
			/* A guest must not exhaust the daemon's memory. */
			if (!ls->warned)
				log_error("xenstore: domain %u has %u connections: "
					  "refusing more", ls->domid, ls->nconns);
			ls->warned = true;
			close(fd);
			continue;
		}
		xc = calloc(1, sizeof(*xc));
		if (!xc)
			goto fail;
		xc->x = x;
		xc->ls = ls;
		xc->fd = fd;
		xc->domid = ls->domid;
		xc->sc = xstore_conn_new(x->s, ls->domid, conn_kick, xc);
		if (!xc->sc)
			goto fail;
		{
			struct ucred cr;
			socklen_t crl = sizeof(cr);

			/* who made each change, for --xs-changes */
			if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl) == 0)
				xstore_conn_set_tag(xc->sc, (uint64_t)cr.pid);
		}
		if (sim_loop_add(x->l, fd, EPOLLIN, conn_event, xc) < 0) {
			xstore_conn_free(xc->sc);
			goto fail;
		}
		xc->next = x->conns;
		x->conns = xc;
		ls->nconns++;
		if (log_verbose)
			log_info("xenstore: domain %u: connection %d opened",
				 ls->domid, fd);
		continue;
fail:
		log_error("xenstore: cannot accept a connection on %s: "
			  "out of memory", ls->path);
		free(xc);
		close(fd);
	}
}

struct xsock *
xsock_new(struct sim_loop *l, struct xstore *s, const char *dir)
{
	struct xsock *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->l = l;
	x->s = s;
	x->dir = strdup(dir);
	if (!x->dir) {
		free(x);
		errno = ENOMEM;
		return NULL;
	}
	return x;
}

static void
listener_free(struct xsock_listener *ls)
{
	sim_loop_del(ls->x->l, ls->fd);
	close(ls->fd);
	unlink(ls->path);
	free(ls->path);
	free(ls);
}

int
xsock_listen(struct xsock *x, uint32_t domid)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct xsock_listener *ls;
	char *path;
	int fd, e;

	if (domid == 0)
		e = asprintf(&path, "%s/xenstore.sock", x->dir);
	else
		e = asprintf(&path, "%s/dom%" PRIu32 "/xenstore.sock", x->dir,
			     domid);
	if (e < 0)
		return -ENOMEM;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_error("%s: path too long for a unix socket", path);
		free(path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		log_error("socket: %m");
		free(path);
		return e;
	}
	/* A stale socket of a dead xensim goes; a live one is not stolen. */
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0 ||
	    errno == EAGAIN) {
		log_error("%s: another xensim is serving it", path);
		close(fd);
		free(path);
		return -EADDRINUSE;
	}
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = -errno;
		log_error("socket: %m");
		free(path);
		return e;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(fd, 64) < 0) {
		e = -errno;
		log_error("listen on %s: %m", path);
		close(fd);
		free(path);
		return e;
	}
	ls = calloc(1, sizeof(*ls));
	if (!ls) {
		e = -ENOMEM;
		goto fail;
	}
	ls->x = x;
	ls->domid = domid;
	ls->fd = fd;
	ls->path = path;
	e = sim_loop_add(x->l, fd, EPOLLIN, listener_event, ls);
	if (e < 0) {
		free(ls);
		goto fail;
	}
	ls->next = x->listeners;
	x->listeners = ls;
	return 0;
fail:
	close(fd);
	unlink(path);
	free(path);
	return e;
}

void
xsock_close_domain(struct xsock *x, uint32_t domid)
{
	struct xsock_listener **pp = &x->listeners, *ls;
	struct xsock_conn *xc, *next;

	for (xc = x->conns; xc; xc = next) {
		next = xc->next;
		if (xc->domid == domid)
			conn_close(xc);
	}
	while ((ls = *pp)) {
		if (ls->domid != domid) {
			pp = &ls->next;
			continue;
		}
		*pp = ls->next;
		listener_free(ls);
	}
}

void
xsock_free(struct xsock *x)
{
	if (!x)
		return;
	while (x->conns)
		conn_close(x->conns);
	while (x->listeners) {
		struct xsock_listener *ls = x->listeners;

		x->listeners = ls->next;
		listener_free(ls);
	}
	free(x->dir);
	free(x);
}
