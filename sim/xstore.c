/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore.c: the input side of xensim's xenstore engine (the top of the
 * parts xstore-int.h lists): reads messages off a connection's byte
 * stream, checks their form (type, argument count and termination),
 * finds the transaction they name, and answers each request through the
 * parts below (node operations, watches, transactions, domains).  A
 * malformed message breaks the connection (xstore.h).
 *
 * Owns the input side of each struct xstore_conn (in, hdr, in_have,
 * serving) and the struct xview of each request while it runs.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "log.h"
#include "xstore-int.h"

struct req {
	struct xstore_conn *c;
	struct xsd_sockmsg hdr;
	const char *data;
	uint32_t len;
	const char *argv[3];		/* first NUL-terminated strings */
	unsigned int argc;		/* number of NUL-terminated strings */
	struct xview v;
};

static void
reply(struct req *r, const void *data, size_t len)
{
	xconn_queue(r->c, r->hdr.type, r->hdr.req_id, r->hdr.tx_id, data, len,
		    NULL, 0);
}

static void
reply_ok(struct req *r)
{
	reply(r, "OK", 3);
}

static int
req_path(struct req *r, const char *in, char *out)
{
	return xpath_canonicalize(r->v.domid, in, out,
				  XENSTORE_ABS_PATH_MAX + 1, NULL);
}

static int
do_read(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	struct xnode *n;
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = xview_get(&r->v, path, XT_PERM_READ, &n)) < 0)
		return e;
	reply(r, n->value, n->len);
	return 0;
}

static int
do_write(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	size_t plen = strlen(r->argv[0]) + 1;
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = xview_write(&r->v, path, r->data + plen,
			     (uint32_t)(r->len - plen), false)) < 0)
		return e;
	reply_ok(r);
	return 0;
}

static int
do_mkdir(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = xview_write(&r->v, path, NULL, 0, true)) < 0)
		return e;
	reply_ok(r);
	return 0;
}

static int
do_rm(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = xview_rm(&r->v, path)) < 0)
		return e;
	reply_ok(r);
	return 0;
}

/* Children names, each NUL-terminated, into buf; returns the length. */
static size_t
children(const struct xnode *n, char *buf, size_t size)
{
	size_t len = 0;

	for (uint32_t i = 0; i < n->nchild; i++) {
		size_t l = strlen(n->child[i]->name) + 1;

		if (len + l <= size)
			memcpy(buf + len, n->child[i]->name, l);
		len += l;
	}
	return len;
}

static int
do_directory(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	char buf[XENSTORE_PAYLOAD_MAX];
	struct xnode *n;
	size_t len;
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = xview_get(&r->v, path, XT_PERM_READ, &n)) < 0)
		return e;
	len = children(n, buf, sizeof(buf));
	if (len > sizeof(buf))
		return -E2BIG;
	reply(r, buf, len);
	return 0;
}

static int
parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/*
 * XS_DIRECTORY_PART: args path, byte offset into the children list.
 * Reply: the node's generation as a decimal string, NUL, then the whole
 * names that fit from the offset; an extra NUL marks the end of the list
 * (xenstored's do_directory_part, as libxenstore's xs_directory_part
 * expects).
 */
static int
do_directory_part(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	char out[XENSTORE_PAYLOAD_MAX];
	struct xnode *n;
	unsigned long off;
	size_t len, glen, chunk = 0;
	char *list;
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = parse_uint(r->argv[1], UINT32_MAX, &off)) < 0 ||
	    (e = xview_get(&r->v, path, XT_PERM_READ, &n)) < 0)
		return e;
	len = children(n, NULL, 0);
	list = malloc(len + 1);
	if (!list)
		return -ENOMEM;
	children(n, list, len);
	if (off > len || (off > 0 && list[off - 1] != '\0')) {
		free(list);
		return -EINVAL;
	}
	glen = (size_t)snprintf(out, sizeof(out), "%" PRIu64, n->gen) + 1;
	while (off + chunk < len) {
		size_t l = strlen(list + off + chunk) + 1;

		if (glen + chunk + l > sizeof(out))
			break;
		chunk += l;
	}
	memcpy(out + glen, list + off, chunk);
	free(list);
	/* The end marker; if it does not fit, the next call sends it. */
	if (off + chunk == len && glen + chunk < sizeof(out))
		out[glen + chunk++] = '\0';
	reply(r, out, glen + chunk);
	return 0;
}

static int
do_get_perms(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	char buf[XENSTORE_PAYLOAD_MAX];
	static const char letter[] = "nrwb";
	struct xnode *n;
	size_t len = 0;
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0 ||
	    (e = xview_get(&r->v, path, XT_PERM_READ, &n)) < 0)
		return e;
	for (uint32_t i = 0; i < n->nperms; i++) {
		int l = snprintf(buf + len, sizeof(buf) - len, "%c%" PRIu32,
				 letter[n->perms[i].perms & 3], n->perms[i].id);

		if (l < 0 || (size_t)l + 1 > sizeof(buf) - len)
			return -E2BIG;
		len += (size_t)l + 1;
	}
	reply(r, buf, len);
	return 0;
}

static int
parse_perm(const char *s, struct xt_perm *p)
{
	unsigned long id;

	switch (s[0]) {
	case 'n': p->perms = XT_PERM_NONE; break;
	case 'r': p->perms = XT_PERM_READ; break;
	case 'w': p->perms = XT_PERM_WRITE; break;
	case 'b': p->perms = XT_PERM_READ | XT_PERM_WRITE; break;
	default: return -EINVAL;
	}
	if (parse_uint(s + 1, UINT16_MAX, &id) < 0)
		return -EINVAL;
	p->id = (uint32_t)id;
	return 0;
}

static int
do_set_perms(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	struct xt_perm perms[XSTORE_MAX_PERMS];
	uint32_t n = 0;
	const char *p;
	int e;

	if ((e = req_path(r, r->argv[0], path)) < 0)
		return e;
	if (r->argc - 1 > XSTORE_MAX_PERMS)
		return -ENOSPC;
	p = r->argv[0] + strlen(r->argv[0]) + 1;
	for (; p < r->data + r->len; p += strlen(p) + 1)
		if ((e = parse_perm(p, &perms[n++])) < 0)
			return e;
	if ((e = xview_set_perms(&r->v, path, perms, n)) < 0)
		return e;
	reply_ok(r);
	return 0;
}

static int
do_watch(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	const struct xwatch *w;
	size_t strip;
	int e;

	if ((e = xwatch_path(r->v.domid, r->argv[0], path, &strip)) < 0 ||
	    (e = xwatch_add(r->c, path, strip, r->argv[1], &w)) < 0)
		return e;
	reply_ok(r);
	/* We fire once up front, as xenstored does. */
	xwatch_event(r->c, w, w->path);
	return 0;
}

static int
do_unwatch(struct req *r)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	size_t strip;
	int e;

	if ((e = xwatch_path(r->v.domid, r->argv[0], path, &strip)) < 0 ||
	    (e = xwatch_remove(r->c, path, r->argv[1])) < 0)
		return e;
	reply_ok(r);
	return 0;
}

static int
do_transaction_start(struct req *r)
{
	char buf[16];
	uint32_t id;
	int e;

	if (r->hdr.tx_id)
		return -EBUSY;
	if ((e = xtx_start(r->c, &id)) < 0)
		return e;
	snprintf(buf, sizeof(buf), "%" PRIu32, id);
	reply(r, buf, strlen(buf) + 1);
	return 0;
}

static int
do_transaction_end(struct req *r)
{
	struct xstore_conn *c = r->c;
	struct xtx *tx = r->v.tx;
	bool commit;
	int e = 0;

	if (!tx)
		return -ENOENT;
	if (!strcmp(r->argv[0], "T"))
		commit = true;
	else if (!strcmp(r->argv[0], "F"))
		commit = false;
	else
		return -EINVAL;
	xtx_unlink(c, tx);
	if (commit)
		e = xtx_check(c->s, tx);
	if (commit && !e) {
		e = xview_commit(c, tx);
		if (e < 0)
			log_error("xenstore: domain %u transaction %u: "
				  "commit failed half-way: %s",
				  c->domid, tx->id, strerror(-e));
	}
	xtx_free(tx);
	if (e < 0)
		return e;
	reply_ok(r);
	return 0;
}

static int
do_get_domain_path(struct req *r)
{
	char buf[64];
	unsigned long domid;

	if (parse_uint(r->argv[0], UINT16_MAX, &domid) < 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), DOMAIN_ROOT "/%lu", domid);
	reply(r, buf, strlen(buf) + 1);
	return 0;
}

static int
do_is_domain_introduced(struct req *r)
{
	unsigned long domid;

	if (parse_uint(r->argv[0], UINT16_MAX, &domid) < 0)
		return -EINVAL;
	reply(r, xstore_domain_introduced(r->c->s, (uint32_t)domid) ?
		 "T" : "F", 2);
	return 0;
}

/*
 * INTRODUCE, RELEASE, RESUME: the simulator's domains come and go with
 * xensim-ctl, so for a known domain these are acknowledged no-ops.
 */
static int
do_domain_noop(struct req *r)
{
	unsigned long domid;

	if (!r->c->priv)
		return -EACCES;
	if (parse_uint(r->argv[0], UINT16_MAX, &domid) < 0)
		return -EINVAL;
	if (!xstore_domain_introduced(r->c->s, (uint32_t)domid))
		return -ENOENT;
	reply_ok(r);
	return 0;
}

static int
do_not_supported(struct req *r)
{
	return r->c->priv ? -ENOSYS : -EACCES;
}

static int
do_reset_watches(struct req *r)
{
	xwatch_free_all(r->c);
	xtx_free_all(r->c);
	reply_ok(r);
	return 0;
}

/* nargs: exact number of NUL-terminated strings; -1: at least one (the
 * rest is raw data: WRITE) or at least two (SET_PERMS); -2: anything. */
static const struct handler {
	int (*fn)(struct req *r);
	int nargs;
	bool in_tx;
} handlers[XS_TYPE_COUNT] = {
	[XS_CONTROL]		= { do_not_supported, -2, false },
	[XS_DIRECTORY]		= { do_directory, 1, true },
	[XS_READ]		= { do_read, 1, true },
	[XS_GET_PERMS]		= { do_get_perms, 1, true },
	[XS_WATCH]		= { do_watch, 2, false },
	[XS_UNWATCH]		= { do_unwatch, 2, false },
	[XS_TRANSACTION_START]	= { do_transaction_start, -2, false },
	[XS_TRANSACTION_END]	= { do_transaction_end, 1, true },
	[XS_INTRODUCE]		= { do_domain_noop, 3, false },
	[XS_RELEASE]		= { do_domain_noop, 1, false },
	[XS_GET_DOMAIN_PATH]	= { do_get_domain_path, 1, false },
	[XS_WRITE]		= { do_write, -1, true },
	[XS_MKDIR]		= { do_mkdir, 1, true },
	[XS_RM]			= { do_rm, 1, true },
	[XS_SET_PERMS]		= { do_set_perms, -1, true },
	[XS_IS_DOMAIN_INTRODUCED] = { do_is_domain_introduced, 1, false },
	[XS_RESUME]		= { do_domain_noop, 1, false },
	[XS_SET_TARGET]		= { do_not_supported, 2, false },
	[XS_RESET_WATCHES]	= { do_reset_watches, -2, false },
	[XS_DIRECTORY_PART]	= { do_directory_part, 2, true },
};

static void
malformed(struct xstore_conn *c, const char *why)
{
	bk_dbg(BK_DBG_SIM, "xenstore: domain %u: %s: dropping the connection",
	       c->domid, why);
	xconn_error(c, &c->hdr, EINVAL);
	c->broken = true;
}

static void
dispatch(struct xstore_conn *c)
{
	struct req r = {
		.c = c, .hdr = c->hdr, .data = (const char *)c->in + HDR_SIZE,
		.len = c->hdr.len,
	};
	const struct handler *h;
	bool terminated;
	int e;

	if (c->hdr.type >= XS_TYPE_COUNT || !handlers[c->hdr.type].fn) {
		malformed(c, "unknown message type");
		return;
	}
	h = &handlers[c->hdr.type];
	/* Split the payload into NUL-terminated strings. */
	for (const char *p = r.data, *end = r.data + r.len; p < end;) {
		const char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			break;
		if (r.argc < ARRAY_SIZE(r.argv))
			r.argv[r.argc] = p;
		r.argc++;
		p = nul + 1;
	}
	terminated = r.len > 0 && r.data[r.len - 1] == '\0';
	if (h->nargs >= 0 && (!terminated || r.argc != (unsigned int)h->nargs)) {
		malformed(c, "bad arguments");
		return;
	}
	if (h->nargs == -1 && (r.argc < 1 ||
	    (c->hdr.type == XS_SET_PERMS && (!terminated || r.argc < 2)))) {
		malformed(c, "bad arguments");
		return;
	}
	bk_dbg(BK_DBG_SIM, "xenstore: dom%u req type=%u id=%u tx=%u arg0=%s",
	       c->domid, c->hdr.type, c->hdr.req_id, c->hdr.tx_id,
	       r.argc ? r.argv[0] : "");

	r.v.s = c->s;
	r.v.root = c->s->root;
	r.v.domid = c->domid;
	r.v.priv = c->priv;
	r.v.check = true;
	r.v.by = c;
	if (c->hdr.tx_id) {
		struct xtx *tx = xtx_find(c, c->hdr.tx_id);

		if (c->hdr.type == XS_TRANSACTION_START) {
			xconn_error(c, &c->hdr, EBUSY);
			return;
		}
		if (!tx) {
			xconn_error(c, &c->hdr, ENOENT);
			return;
		}
		if (h->in_tx) {
			r.v.tx = tx;
			if (tx->root)
				r.v.root = tx->root;
		}
	}
	e = h->fn(&r);
	if (e < 0)
		xconn_error(c, &c->hdr, -e);
}

int
xstore_conn_input(struct xstore_conn *c, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	if (c->broken)
		return -EPROTO;
	c->serving = true;
	while (!c->broken) {
		size_t want, take;

		if (c->in_have >= HDR_SIZE &&
		    c->in_have == HDR_SIZE + c->hdr.len) {
			dispatch(c);
			c->in_have = 0;
			continue;
		}
		if (!len)
			break;
		want = c->in_have < HDR_SIZE ? HDR_SIZE - c->in_have :
		       HDR_SIZE + c->hdr.len - c->in_have;
		take = want < len ? want : len;
		memcpy(c->in + c->in_have, p, take);
		c->in_have += take;
		p += take;
		len -= take;
		if (c->in_have == HDR_SIZE) {
			memcpy(&c->hdr, c->in, HDR_SIZE);
			if (c->hdr.len > XENSTORE_PAYLOAD_MAX)
				malformed(c, "payload too long");
		}
	}
	c->serving = false;
	return c->broken ? -EPROTO : 0;
}

