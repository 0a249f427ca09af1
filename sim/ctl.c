/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.c: domain life cycle and the control socket of xensim (see ctl.h).
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <xen/xen.h>
#include <xen/io/xs_wire.h>

#include "compiler.h"
#include "ctl.h"
#include "log.h"
#include "sim.h"
#include "xstore.h"

#define CTL_LINE_MAX	256

struct sim_domain {
	struct sim_domain *next;
	uint32_t domid;
	char *name;
};

struct ctl_conn {
	struct ctl *c;
	struct ctl_conn *next;
	int fd;
	size_t have;
	char buf[CTL_LINE_MAX];
};

struct ctl {
	struct sim_loop *l;
	char *dir;
	char *path;			/* dir/ctl.sock */
	int fd;
	struct hv *hv;
	struct xstore *s;
	struct xsock *x;
	struct sim_domain *domains;	/* dom0 last */
	struct ctl_conn *conns;
	uint32_t next_domid;
};

static struct sim_domain *
find_domain(struct ctl *c, uint32_t domid)
{
	for (struct sim_domain *d = c->domains; d; d = d->next)
		if (d->domid == domid)
			return d;
	return NULL;
}

static bool
valid_name(const char *name)
{
	size_t len = strlen(name);

	return len > 0 && len < 64 &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789_.-") == len;
}

static char *
domain_dir(struct ctl *c, uint32_t domid)
{
	char *p;

	if (asprintf(&p, "%s/dom%" PRIu32, c->dir, domid) < 0)
		return NULL;
	return p;
}

static int
domain_setup(struct ctl *c, uint32_t domid, const char *name)
{
	struct sim_domain *d = calloc(1, sizeof(*d));
	char *dir = NULL;
	int e;

	if (!d || !(d->name = strdup(name))) {
		free(d);
		return -ENOMEM;
	}
	d->domid = domid;
	if (domid != 0) {
		dir = domain_dir(c, domid);
		if (!dir) {
			e = -ENOMEM;
			goto fail;
		}
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			e = -errno;
			log_error("mkdir %s: %m", dir);
			goto fail;
		}
	}
	e = hv_domain_create(c->hv, domid);
	if (e < 0) {
		log_error("domain %u: hv_domain_create: %s", domid, strerror(-e));
		goto fail_dir;
	}
	e = xsock_listen(c->x, domid);
	if (e < 0)
		goto fail_hv;
	e = xstore_domain_introduce(c->s, domid, name);
	if (e < 0) {
		log_error("domain %u: xenstore introduce: %s", domid,
			  strerror(-e));
		goto fail_sock;
	}
	d->next = c->domains;
	c->domains = d;
	free(dir);
	log_info("domain %u (%s) created", domid, name);
	return 0;

fail_sock:
	xsock_close_domain(c->x, domid);
fail_hv:
	hv_domain_destroy(c->hv, domid);
fail_dir:
	if (dir)
		rmdir(dir);
fail:
	free(dir);
	free(d->name);
	free(d);
	return e;
}

int
ctl_domain_create(struct ctl *c, const char *name, uint32_t *domid)
{
	uint32_t id = c->next_domid;

	if (!valid_name(name))
		return -EINVAL;
	for (struct sim_domain *d = c->domains; d; d = d->next)
		if (!strcmp(d->name, name))
			return -EEXIST;
	/* Next free id, increasing, wrapping below DOMID_FIRST_RESERVED. */
	for (uint32_t tries = 0; find_domain(c, id) || id == 0; tries++) {
		if (tries >= DOMID_FIRST_RESERVED)
			return -ENOSPC;
		id = id + 1 >= DOMID_FIRST_RESERVED ? 1 : id + 1;
	}
	int e = domain_setup(c, id, name);

	if (e < 0)
		return e;
	c->next_domid = id + 1 >= DOMID_FIRST_RESERVED ? 1 : id + 1;
	*domid = id;
	return 0;
}

int
ctl_domain_destroy(struct ctl *c, uint32_t domid)
{
	struct sim_domain **pp, *d;
	char *dir;
	int e;

	if (domid == 0)
		return -EPERM;
	for (pp = &c->domains; (d = *pp); pp = &d->next)
		if (d->domid == domid)
			break;
	if (!d)
		return -ENOENT;
	*pp = d->next;
	e = hv_domain_destroy(c->hv, domid);
	if (e < 0)
		log_error("domain %u: hv_domain_destroy: %s", domid,
			  strerror(-e));
	xsock_close_domain(c->x, domid);
	e = xstore_domain_release(c->s, domid);
	if (e < 0)
		log_error("domain %u: xenstore release: %s", domid,
			  strerror(-e));
	dir = domain_dir(c, domid);
	if (dir && rmdir(dir) < 0)
		log_error("rmdir %s: %m", dir);
	free(dir);
	log_info("domain %u (%s) destroyed", domid, d->name);
	free(d->name);
	free(d);
	return 0;
}

/* ------------------------------------------------------------------ */
/* control socket */

static const char *
err_name(int e)
{
	for (size_t i = 0; i < ARRAY_SIZE(xsd_errors); i++)
		if (xsd_errors[i].errnum == e)
			return xsd_errors[i].errstring;
	return "EIO";
}

static void
ctl_conn_close(struct ctl_conn *cc)
{
	struct ctl_conn **pp;

	for (pp = &cc->c->conns; *pp != cc; pp = &(*pp)->next)
		;
	*pp = cc->next;
	sim_loop_del(cc->c->l, cc->fd);
	close(cc->fd);
	free(cc);
}

/* Append to a growing reply; on ENOMEM the reply is cut short. */
static void ATTRIBUTE_FORMAT_PRINTF(3, 4)
out_printf(char **out, size_t *len, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	char *p = realloc(*out, *len + (size_t)n + 1);

	if (p) {
		memcpy(p + *len, s, (size_t)n + 1);
		*out = p;
		*len += (size_t)n;
	}
	free(s);
}

struct grants_out {
	char **out;
	size_t *len;
};

/* "grants ID": one line per grant in use, "REF pins=N writable=W by=DOMID" */
static void
grant_line(void *opaque, uint32_t ref, unsigned int pins, unsigned int wpins, uint32_t by)
{
	struct grants_out *g = opaque;

	out_printf(g->out, g->len, "%" PRIu32 " pins=%u writable=%u by=%" PRIu32 "\n",
		   ref, pins, wpins, by);
}

/* "evtchn ID": "PORT interdomain|unbound remote=DOM:PORT pid=P conn=C since=S" */
static void
port_line(void *opaque, const struct hv_port_info *pi)
{
	struct grants_out *g = opaque;

	out_printf(g->out, g->len, "%" PRIu32 " %s remote=%" PRIu32 ":%" PRIu32
		   " pid=%ld conn=%" PRIu64 " since=%" PRIu64 "\n",
		   pi->port, pi->interdomain ? "interdomain" : "unbound",
		   pi->remote_dom, pi->remote_port, (long)pi->pid, pi->conn, pi->since);
}

/* "maps ID": "REF pid=P conn=C writable=W" per ledger entry */
static void
map_line(void *opaque, uint32_t ref, bool writable, pid_t pid, uint64_t conn)
{
	struct grants_out *g = opaque;

	out_printf(g->out, g->len, "%" PRIu32 " pid=%ld conn=%" PRIu64 " writable=%d\n",
		   ref, (long)pid, conn, writable);
}

static void
handle_line(struct ctl *c, char *line, char **out, size_t *len)
{
	char *arg = strchr(line, ' ');
	uint32_t domid;
	int e;

	if (arg)
		*arg++ = '\0';
	if (!strcmp(line, "create-domain") && arg) {
		e = ctl_domain_create(c, arg, &domid);
		if (e == 0) {
			out_printf(out, len, "OK\n%" PRIu32 "\n", domid);
			return;
		}
		out_printf(out, len, "ERR %s cannot create domain \"%s\": %s\n",
			   err_name(-e), arg, strerror(-e));
	} else if (!strcmp(line, "destroy-domain") && arg) {
		char *end;
		unsigned long id;

		errno = 0;
		id = strtoul(arg, &end, 10);
		if (errno || *end || !*arg || id > UINT16_MAX)
			e = -EINVAL;
		else
			e = ctl_domain_destroy(c, (uint32_t)id);
		if (e == 0)
			out_printf(out, len, "OK\n");
		else
			out_printf(out, len,
				   "ERR %s cannot destroy domain %s: %s\n",
				   err_name(-e), arg, strerror(-e));
	} else if ((!strcmp(line, "grants") || !strcmp(line, "evtchn") ||
		    !strcmp(line, "maps")) && arg) {
		struct grants_out g = { out, len };
		char *end;
		unsigned long id;

		errno = 0;
		id = strtoul(arg, &end, 10);
		e = errno || *end || !*arg || id > UINT16_MAX ? -EINVAL : 0;
		if (e == 0) {
			out_printf(out, len, "OK\n");
			if (line[0] == 'g')
				e = hv_domain_grants_in_use(c->hv, (uint32_t)id, grant_line, &g);
			else if (line[0] == 'e')
				e = hv_domain_ports(c->hv, (uint32_t)id, port_line, &g);
			else
				e = hv_domain_maps(c->hv, (uint32_t)id, map_line, &g);
			if (e < 0) {	/* no such domain: the OK goes */
				free(*out);
				*out = NULL;
				*len = 0;
			}
		}
		if (e < 0)
			out_printf(out, len, "ERR %s no %s of domain %s: %s\n",
				   err_name(-e), line, arg, strerror(-e));
	} else if (!strcmp(line, "list") && !arg) {
		struct sim_domain *d, *last = NULL;

		out_printf(out, len, "OK\n");
		/* In creation order: the list is newest first. */
		while (last != c->domains) {
			for (d = c->domains; d->next != last; d = d->next)
				;
			out_printf(out, len, "%" PRIu32 " %s\n", d->domid,
				   d->name);
			last = d;
		}
	} else {
		out_printf(out, len, "ERR EINVAL unknown request \"%s\"\n",
			   line);
	}
}

static void
ctl_conn_event(void *opaque, uint32_t events)
{
	struct ctl_conn *cc = opaque;
	struct timeval tv = { .tv_sec = 2 };
	char *nl, *out = NULL;
	size_t len = 0, off = 0;
	ssize_t n;

	n = recv(cc->fd, cc->buf + cc->have, sizeof(cc->buf) - 1 - cc->have,
		 MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		ctl_conn_close(cc);
		return;
	}
	cc->have += (size_t)n;
	cc->buf[cc->have] = '\0';
	nl = strchr(cc->buf, '\n');
	if (!nl) {
		if (cc->have < sizeof(cc->buf) - 1)
			return;
		out_printf(&out, &len, "ERR EINVAL request too long\n");
	} else {
		*nl = '\0';
		handle_line(cc->c, cc->buf, &out, &len);
	}
	/* Small replies: a blocking send with a timeout is enough. */
	setsockopt(cc->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (out && off < len) {
		n = send(cc->fd, out + off, len - off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(out);
	ctl_conn_close(cc);
}

static void
ctl_accept(void *opaque, uint32_t events)
{
	struct ctl *c = opaque;

	for (int n = 0; n < 16; n++) {	/* bounded: others get their turn */
		int fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
		struct ctl_conn *cc;

		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				log_error("accept %s: %m", c->path);
			return;
		}
		cc = calloc(1, sizeof(*cc));
		if (!cc || sim_loop_add(c->l, fd, EPOLLIN, ctl_conn_event,
					cc) < 0) {
			log_error("%s: cannot take a connection", c->path);
			free(cc);
			close(fd);
			continue;
		}
		cc->c = c;
		cc->fd = fd;
		cc->next = c->conns;
		c->conns = cc;
	}
}

struct ctl *
ctl_new(struct sim_loop *l, const char *dir, struct hv *hv, struct xstore *s,
	struct xsock *x)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct ctl *c = calloc(1, sizeof(*c));
	int e;

	if (!c)
		return NULL;
	c->l = l;
	c->hv = hv;
	c->s = s;
	c->x = x;
	c->fd = -1;
	c->next_domid = 1;
	c->dir = strdup(dir);
	if (!c->dir || asprintf(&c->path, "%s/ctl.sock", dir) < 0) {
		c->path = NULL;
		e = ENOMEM;
		goto fail;
	}
	e = -domain_setup(c, 0, "Domain-0");
	if (e)
		goto fail;
	if (strlen(c->path) >= sizeof(sun.sun_path)) {
		log_error("%s: path too long for a unix socket", c->path);
		e = ENAMETOOLONG;
		goto fail;
	}
	strcpy(sun.sun_path, c->path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		e = errno;
		goto fail;
	}
	unlink(c->path);
	if (bind(c->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    listen(c->fd, 16) < 0) {
		e = errno;
		log_error("listen on %s: %m", c->path);
		goto fail;
	}
	e = -sim_loop_add(l, c->fd, EPOLLIN, ctl_accept, c);
	if (e)
		goto fail;
	return c;
fail:
	ctl_free(c);
	errno = e;
	return NULL;
}

void
ctl_free(struct ctl *c)
{
	if (!c)
		return;
	while (c->conns)
		ctl_conn_close(c->conns);
	if (c->fd >= 0) {
		sim_loop_del(c->l, c->fd);
		close(c->fd);
		unlink(c->path);
	}
	while (c->domains) {
		struct sim_domain *d = c->domains;

		if (d->domid != 0) {
			ctl_domain_destroy(c, d->domid);
			continue;
		}
		c->domains = d->next;
		xsock_close_domain(c->x, 0);
		xstore_domain_release(c->s, 0);
		hv_domain_destroy(c->hv, 0);
		free(d->name);
		free(d);
	}
	free(c->path);
	free(c->dir);
	free(c);
}
