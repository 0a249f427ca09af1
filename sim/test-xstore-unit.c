/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-xstore-unit.c: the xenstore protocol engine (xstore*.c), driven with
 * byte buffers, no sockets.  Every reply is checked byte for byte.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xen/io/xs_wire.h>

#include "compiler.h"
#include "xstore.h"

/* One message as the client sees it. */
struct t_msg {
	struct xsd_sockmsg h;
	char data[XENSTORE_PAYLOAD_MAX + 1];
};

/* A client connection with its received-but-unread messages. */
struct t_conn {
	struct xstore_conn *c;
	struct t_msg q[256];
	unsigned int n;
};

static int failures;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s: check failed: %s\n",	\
			__FILE__, __LINE__, __func__, #cond);		\
		failures++;						\
		return -1;						\
	}								\
} while (0)

static void
t_drain(struct t_conn *tc)
{
	size_t len;
	const char *p = xstore_conn_output(tc->c, &len);

	while (len >= sizeof(struct xsd_sockmsg)) {
		struct t_msg *m = &tc->q[tc->n++];

		assert(tc->n <= ARRAY_SIZE(tc->q));
		memcpy(&m->h, p, sizeof(m->h));
		assert(m->h.len <= XENSTORE_PAYLOAD_MAX);
		assert(len >= sizeof(m->h) + m->h.len);
		memcpy(m->data, p + sizeof(m->h), m->h.len);
		m->data[m->h.len] = '\0';
		xstore_conn_consume(tc->c, sizeof(m->h) + m->h.len);
		p = xstore_conn_output(tc->c, &len);
	}
	assert(len == 0);
}

static struct t_conn *
t_conn(struct xstore *s, uint32_t domid)
{
	struct t_conn *tc = calloc(1, sizeof(*tc));

	assert(tc);
	tc->c = xstore_conn_new(s, domid, NULL, NULL);
	assert(tc->c);
	return tc;
}

static void
t_close(struct t_conn *tc)
{
	xstore_conn_free(tc->c);
	free(tc);
}

/* Pop the first message that is (events=true) or is not a watch event. */
static bool
t_pop(struct t_conn *tc, bool events, struct t_msg *out)
{
	t_drain(tc);
	for (unsigned int i = 0; i < tc->n; i++) {
		if ((tc->q[i].h.type == XS_WATCH_EVENT) != events)
			continue;
		*out = tc->q[i];
		memmove(&tc->q[i], &tc->q[i + 1],
			(tc->n - i - 1) * sizeof(tc->q[0]));
		tc->n--;
		return true;
	}
	return false;
}

static uint32_t req_id = 100;

/* Send a request; the reply must have type rtype and payload exp[0..elen). */
static int
t_req(struct t_conn *tc, uint32_t type, uint32_t tx, const void *payload,
      size_t len, uint32_t rtype, const void *exp, size_t elen)
{
	char buf[sizeof(struct xsd_sockmsg) + XENSTORE_PAYLOAD_MAX];
	struct xsd_sockmsg h = {
		.type = type, .req_id = ++req_id, .tx_id = tx,
		.len = (uint32_t)len,
	};
	struct t_msg m;

	assert(len <= XENSTORE_PAYLOAD_MAX);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), payload, len);
	/* Byte by byte for the first half: the parser must reassemble. */
	for (size_t i = 0; i < (sizeof(h) + len) / 2; i++)
		xstore_conn_input(tc->c, buf + i, 1);
	xstore_conn_input(tc->c, buf + (sizeof(h) + len) / 2,
			  sizeof(h) + len - (sizeof(h) + len) / 2);
	if (!t_pop(tc, false, &m)) {
		fprintf(stderr, "no reply to type %u\n", type);
		return -1;
	}
	if (m.h.type != rtype || m.h.req_id != req_id || m.h.tx_id != tx ||
	    m.h.len != elen || memcmp(m.data, exp, elen) != 0) {
		fprintf(stderr, "type %u: got reply type %u req %u tx %u len %u "
			"'%.*s', wanted type %u len %zu '%.*s'\n", type,
			m.h.type, m.h.req_id, m.h.tx_id, m.h.len, (int)m.h.len,
			m.data, rtype, elen, (int)elen, (const char *)exp);
		return -1;
	}
	return 0;
}

/* A payload of NUL-terminated strings from a literal: S("a\0b") = "a\0b\0". */
#define S(lit)	lit, sizeof(lit)

static int
t_ok(struct t_conn *tc, uint32_t type, uint32_t tx, const void *p, size_t len)
{
	return t_req(tc, type, tx, p, len, type, "OK", 3);
}

static int
t_err(struct t_conn *tc, uint32_t type, uint32_t tx, const void *p,
      size_t len, const char *err)
{
	return t_req(tc, type, tx, p, len, XS_ERROR, err, strlen(err) + 1);
}

static int
t_write(struct t_conn *tc, uint32_t tx, const char *path, const char *value,
	const char *err)
{
	char buf[XENSTORE_PAYLOAD_MAX];
	size_t pl = strlen(path) + 1, vl = strlen(value);

	memcpy(buf, path, pl);
	memcpy(buf + pl, value, vl);
	if (err)
		return t_err(tc, XS_WRITE, tx, buf, pl + vl, err);
	return t_ok(tc, XS_WRITE, tx, buf, pl + vl);
}

static int
t_read(struct t_conn *tc, uint32_t tx, const char *path, const char *value)
{
	return t_req(tc, XS_READ, tx, path, strlen(path) + 1, XS_READ, value,
		     strlen(value));
}

static int
t_read_err(struct t_conn *tc, uint32_t tx, const char *path, const char *err)
{
	return t_err(tc, XS_READ, tx, path, strlen(path) + 1, err);
}

static int
t_event(struct t_conn *tc, const char *path, const char *token)
{
	struct t_msg m;
	size_t pl = strlen(path) + 1;

	if (!t_pop(tc, true, &m)) {
		fprintf(stderr, "no watch event, wanted %s %s\n", path, token);
		return -1;
	}
	if (m.h.len != pl + strlen(token) + 1 || strcmp(m.data, path) ||
	    strcmp(m.data + pl, token) || m.h.req_id || m.h.tx_id) {
		fprintf(stderr, "watch event '%s' '%s', wanted '%s' '%s'\n",
			m.data, m.data + strlen(m.data) + 1, path, token);
		return -1;
	}
	return 0;
}

static int
t_no_event(struct t_conn *tc)
{
	struct t_msg m;

	if (t_pop(tc, true, &m)) {
		fprintf(stderr, "unexpected watch event '%s'\n", m.data);
		return -1;
	}
	return 0;
}

static struct xstore *
t_store(void)
{
	struct xstore *s = xstore_new();

	assert(s);
	assert(xstore_domain_introduce(s, 0, "Domain-0") == 0);
	assert(xstore_domain_introduce(s, 1, "guest1") == 0);
	assert(xstore_domain_introduce(s, 2, "guest2") == 0);
	return s;
}

static int
test_basic(void)
{
	struct xstore *s = t_store();
	struct t_conn *d0 = t_conn(s, 0);

	CHECK(t_write(d0, 0, "/a/b/c", "hello", NULL) == 0);
	CHECK(t_read(d0, 0, "/a/b/c", "hello") == 0);
	CHECK(t_read(d0, 0, "/a/b", "") == 0);
	CHECK(t_write(d0, 0, "/a/b/c", "", NULL) == 0);
	CHECK(t_read(d0, 0, "/a/b/c", "") == 0);
	CHECK(t_read_err(d0, 0, "/a/nope", "ENOENT") == 0);
	CHECK(t_ok(d0, XS_MKDIR, 0, S("/a/d")) == 0);
	CHECK(t_ok(d0, XS_MKDIR, 0, S("/a/d")) == 0);
	CHECK(t_write(d0, 0, "/a/e", "1", NULL) == 0);
	CHECK(t_req(d0, XS_DIRECTORY, 0, S("/a"), XS_DIRECTORY,
		    S("b\0d\0e")) == 0);
	CHECK(t_req(d0, XS_DIRECTORY, 0, S("/a/e"), XS_DIRECTORY, "", 0) == 0);
	CHECK(t_err(d0, XS_DIRECTORY, 0, S("/zz"), "ENOENT") == 0);
	/* recursive rm; rm of a missing node is fine if its parent exists */
	CHECK(t_ok(d0, XS_RM, 0, S("/a/b")) == 0);
	CHECK(t_read_err(d0, 0, "/a/b/c", "ENOENT") == 0);
	CHECK(t_ok(d0, XS_RM, 0, S("/a/b")) == 0);
	CHECK(t_err(d0, XS_RM, 0, S("/a/b/c"), "ENOENT") == 0);
	CHECK(t_err(d0, XS_RM, 0, S("/"), "EINVAL") == 0);
	CHECK(t_req(d0, XS_DIRECTORY, 0, S("/a"), XS_DIRECTORY,
		    S("d\0e")) == 0);
	/* path syntax, as xenstored's is_valid_nodename() */
	CHECK(t_read_err(d0, 0, "/a//e", "EINVAL") == 0);
	CHECK(t_read_err(d0, 0, "/a/", "EINVAL") == 0);
	CHECK(t_read_err(d0, 0, "/a e", "EINVAL") == 0);
	CHECK(t_read_err(d0, 0, "", "EINVAL") == 0);
	CHECK(t_write(d0, 0, "/a*", "x", "EINVAL") == 0);
	CHECK(t_write(d0, 0, "@releaseDomain", "x", "EINVAL") == 0);
	CHECK(t_err(d0, XS_GET_PERMS, 0, S("@releaseDomain"), "EINVAL") == 0);
	/* relative paths: under /local/domain/<domid> */
	CHECK(t_write(d0, 0, "rel/x", "7", NULL) == 0);
	CHECK(t_read(d0, 0, "/local/domain/0/rel/x", "7") == 0);
	CHECK(t_read(d0, 0, "name", "Domain-0") == 0);
	CHECK(t_req(d0, XS_GET_DOMAIN_PATH, 0, S("5"), XS_GET_DOMAIN_PATH,
		    S("/local/domain/5")) == 0);
	CHECK(t_err(d0, XS_GET_DOMAIN_PATH, 0, S("x5"), "EINVAL") == 0);
	CHECK(t_req(d0, XS_IS_DOMAIN_INTRODUCED, 0, S("1"),
		    XS_IS_DOMAIN_INTRODUCED, S("T")) == 0);
	CHECK(t_req(d0, XS_IS_DOMAIN_INTRODUCED, 0, S("9"),
		    XS_IS_DOMAIN_INTRODUCED, S("F")) == 0);
	/* values are bytes: NULs inside are kept */
	CHECK(t_req(d0, XS_WRITE, 0, S("/bin\0a\0b"), XS_WRITE, S("OK")) == 0);
	CHECK(t_req(d0, XS_READ, 0, S("/bin"), XS_READ, S("a\0b")) == 0);
	t_close(d0);
	xstore_free(s);
	return 0;
}

static int
test_domain_nodes(void)
{
	struct xstore *s = t_store();
	struct t_conn *d0 = t_conn(s, 0);

	/* as libxl__domain_make: owner dom0, read for the domain */
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/local/domain/1"), XS_GET_PERMS,
		    S("n0\0r1")) == 0);
	CHECK(t_read(d0, 0, "/local/domain/1/name", "guest1") == 0);
	CHECK(t_read(d0, 0, "/local/domain/1/domid", "1") == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/local/domain/1/data"),
		    XS_GET_PERMS, S("n1")) == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/local/domain/1/device"),
		    XS_GET_PERMS, S("n0\0r1")) == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/local/domain/1/control/shutdown"),
		    XS_GET_PERMS, S("n1")) == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/"), XS_GET_PERMS, S("n0")) == 0);
	CHECK(xstore_domain_introduce(s, 1, "again") == -EEXIST);
	CHECK(xstore_domain_release(s, 1) == 0);
	CHECK(t_read_err(d0, 0, "/local/domain/1", "ENOENT") == 0);
	CHECK(xstore_domain_release(s, 1) == -ENOENT);
	t_close(d0);
	xstore_free(s);
	return 0;
}

static int
test_perms(void)
{
	struct xstore *s = t_store();
	struct t_conn *d0 = t_conn(s, 0), *d1 = t_conn(s, 1), *d2 = t_conn(s, 2);

	/* a domU cannot read dom0's nodes, nor learn whether they exist */
	CHECK(t_read_err(d1, 0, "/local/domain/0/name", "EACCES") == 0);
	CHECK(t_read_err(d1, 0, "/local/domain/0/nothing", "EACCES") == 0);
	CHECK(t_err(d1, XS_DIRECTORY, 0, S("/local/domain/0"), "EACCES") == 0);
	CHECK(t_read_err(d1, 0, "/local/domain/2/name", "EACCES") == 0);
	/* ...reads its own, and writes where libxl lets it */
	CHECK(t_read(d1, 0, "/local/domain/1/name", "guest1") == 0);
	CHECK(t_read(d1, 0, "name", "guest1") == 0);
	CHECK(t_read_err(d1, 0, "data/nothing", "ENOENT") == 0);
	CHECK(t_write(d1, 0, "/local/domain/1/data/x", "42", NULL) == 0);
	CHECK(t_read(d1, 0, "data/x", "42") == 0);
	CHECK(t_req(d1, XS_GET_PERMS, 0, S("data/x"), XS_GET_PERMS,
		    S("n1")) == 0);
	/* new nodes under a dom0-owned dir the domU may write: owned by it */
	CHECK(t_write(d0, 0, "/shared", "", NULL) == 0);
	CHECK(t_ok(d0, XS_SET_PERMS, 0, S("/shared\0n0\0b1")) == 0);
	CHECK(t_write(d1, 0, "/shared/k/v", "1", NULL) == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/shared/k/v"), XS_GET_PERMS,
		    S("n1\0b1")) == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/shared/k"), XS_GET_PERMS,
		    S("n1\0b1")) == 0);
	/* dom0-created nodes inherit the parent's ACL unchanged */
	CHECK(t_write(d0, 0, "/local/domain/1/data/y", "0", NULL) == 0);
	CHECK(t_req(d0, XS_GET_PERMS, 0, S("/local/domain/1/data/y"),
		    XS_GET_PERMS, S("n1")) == 0);
	/* no writing outside */
	CHECK(t_write(d1, 0, "/local/domain/1/name", "evil", "EACCES") == 0);
	CHECK(t_write(d1, 0, "/local/domain/1/new", "x", "EACCES") == 0);
	CHECK(t_write(d1, 0, "/local/domain/2/data/x", "x", "EACCES") == 0);
	CHECK(t_write(d1, 0, "/local/domain/0/x", "x", "EACCES") == 0);
	CHECK(t_write(d1, 0, "/top", "x", "EACCES") == 0);
	CHECK(t_err(d1, XS_RM, 0, S("/local/domain/1"), "EACCES") == 0);
	CHECK(t_err(d1, XS_MKDIR, 0, S("/local/domain/2/data/q"),
		    "EACCES") == 0);
	CHECK(t_read(d0, 0, "/local/domain/1/name", "guest1") == 0);
	/* per-domain entries; owner keeps full access */
	CHECK(t_ok(d1, XS_SET_PERMS, 0, S("data/x\0n1\0r2")) == 0);
	CHECK(t_read(d2, 0, "/local/domain/1/data/x", "42") == 0);
	CHECK(t_write(d2, 0, "/local/domain/1/data/x", "1", "EACCES") == 0);
	CHECK(t_ok(d1, XS_SET_PERMS, 0, S("data/x\0n1\0w2")) == 0);
	CHECK(t_read_err(d2, 0, "/local/domain/1/data/x", "EACCES") == 0);
	CHECK(t_write(d2, 0, "/local/domain/1/data/x", "2", NULL) == 0);
	CHECK(t_read(d1, 0, "data/x", "2") == 0);
	/* default permission for others in entry 0 */
	CHECK(t_ok(d1, XS_SET_PERMS, 0, S("data/x\0r1")) == 0);
	CHECK(t_read(d2, 0, "/local/domain/1/data/x", "2") == 0);
	/* an unprivileged owner may not give its node away, others may not
	 * change the ACL at all; bad perm strings are EINVAL */
	CHECK(t_err(d1, XS_SET_PERMS, 0, S("data/x\0n2"), "EPERM") == 0);
	CHECK(t_err(d2, XS_SET_PERMS, 0, S("/local/domain/1/data/x\0n2"),
		    "EACCES") == 0);
	CHECK(t_err(d0, XS_SET_PERMS, 0, S("/shared\0x0"), "EINVAL") == 0);
	CHECK(t_err(d0, XS_SET_PERMS, 0, S("/shared\0r"), "EINVAL") == 0);
	CHECK(t_err(d0, XS_SET_PERMS, 0, S("/nope\0r0"), "ENOENT") == 0);
	/* dom0 may give nodes away */
	CHECK(t_ok(d0, XS_SET_PERMS, 0, S("/local/domain/1/data/x\0n2")) == 0);
	CHECK(t_read(d2, 0, "/local/domain/1/data/x", "2") == 0);
	CHECK(t_read_err(d1, 0, "data/x", "EACCES") == 0);
	/* privileged-only requests */
	CHECK(t_err(d1, XS_INTRODUCE, 0, S("3\0" "0\0" "0"), "EACCES") == 0);
	CHECK(t_ok(d0, XS_RELEASE, 0, S("1")) == 0);
	t_close(d0);
	t_close(d1);
	t_close(d2);
	xstore_free(s);
	return 0;
}

static int
test_watch(void)
{
	struct xstore *s = t_store();
	struct t_conn *d0 = t_conn(s, 0), *o = t_conn(s, 0), *d1 = t_conn(s, 1);

	CHECK(t_ok(d0, XS_WATCH, 0, S("/w\0tok")) == 0);
	CHECK(t_event(d0, "/w", "tok") == 0);
	CHECK(t_no_event(d0) == 0);
	CHECK(t_err(d0, XS_WATCH, 0, S("/w\0tok"), "EEXIST") == 0);
	CHECK(t_write(o, 0, "/w/a", "1", NULL) == 0);
	CHECK(t_event(d0, "/w/a", "tok") == 0);
	CHECK(t_no_event(d0) == 0);
	CHECK(t_write(o, 0, "/wx", "1", NULL) == 0);
	CHECK(t_write(o, 0, "/x/w", "1", NULL) == 0);
	CHECK(t_no_event(d0) == 0);
	/* mkdir of an existing node changes nothing */
	CHECK(t_ok(o, XS_MKDIR, 0, S("/w/a")) == 0);
	CHECK(t_no_event(d0) == 0);
	CHECK(t_ok(o, XS_SET_PERMS, 0, S("/w/a\0r0")) == 0);
	CHECK(t_event(d0, "/w/a", "tok") == 0);
	/* a watch below a removed node fires with its own path */
	CHECK(t_ok(d0, XS_WATCH, 0, S("/w/a/deep\0t2")) == 0);
	CHECK(t_event(d0, "/w/a/deep", "t2") == 0);
	CHECK(t_ok(o, XS_RM, 0, S("/w")) == 0);
	CHECK(t_event(d0, "/w", "tok") == 0);
	CHECK(t_event(d0, "/w/a/deep", "t2") == 0);
	CHECK(t_no_event(d0) == 0);
	CHECK(t_ok(d0, XS_UNWATCH, 0, S("/w/a/deep\0t2")) == 0);
	CHECK(t_err(d0, XS_UNWATCH, 0, S("/w/a/deep\0t2"), "ENOENT") == 0);
	CHECK(t_write(o, 0, "/w/a/deep", "1", NULL) == 0);
	CHECK(t_event(d0, "/w/a/deep", "tok") == 0);
	CHECK(t_no_event(d0) == 0);

	/* relative watches report relative paths */
	CHECK(t_ok(d1, XS_WATCH, 0, S("data\0rel")) == 0);
	CHECK(t_event(d1, "data", "rel") == 0);
	CHECK(t_write(o, 0, "/local/domain/1/data/k", "v", NULL) == 0);
	CHECK(t_event(d1, "data/k", "rel") == 0);
	/* no events for nodes the watcher may not read */
	CHECK(t_ok(d1, XS_WATCH, 0, S("/local/domain/0\0spy")) == 0);
	CHECK(t_event(d1, "/local/domain/0", "spy") == 0);
	CHECK(t_write(o, 0, "/local/domain/0/secret", "s", NULL) == 0);
	CHECK(t_no_event(d1) == 0);
	CHECK(t_ok(o, XS_SET_PERMS, 0, S("/local/domain/1/data/k\0n0")) == 0);
	CHECK(t_no_event(d1) == 0);

	/* special watches: privileged connections only */
	CHECK(t_ok(d0, XS_WATCH, 0, S("@releaseDomain\0rel")) == 0);
	CHECK(t_event(d0, "@releaseDomain", "rel") == 0);
	CHECK(t_ok(d0, XS_WATCH, 0, S("@introduceDomain\0intro")) == 0);
	CHECK(t_event(d0, "@introduceDomain", "intro") == 0);
	CHECK(t_ok(d1, XS_WATCH, 0, S("@releaseDomain\0rel")) == 0);
	CHECK(t_event(d1, "@releaseDomain", "rel") == 0);
	CHECK(t_err(d0, XS_WATCH, 0, S("@bogus\0x"), "EINVAL") == 0);
	CHECK(xstore_domain_introduce(s, 7, "seven") == 0);
	CHECK(t_event(d0, "@introduceDomain", "intro") == 0);
	CHECK(t_no_event(d0) == 0);
	CHECK(xstore_domain_release(s, 2) == 0);
	CHECK(t_event(d0, "@releaseDomain", "rel") == 0);
	CHECK(t_no_event(d0) == 0);
	CHECK(t_no_event(d1) == 0);

	/* reset drops every watch */
	CHECK(t_ok(d0, XS_RESET_WATCHES, 0, "", 0) == 0);
	CHECK(t_write(o, 0, "/w/z", "1", NULL) == 0);
	CHECK(xstore_domain_release(s, 7) == 0);
	CHECK(t_no_event(d0) == 0);
	t_close(d0);
	t_close(o);
	t_close(d1);
	xstore_free(s);
	return 0;
}

static int
test_transactions(void)
{
	struct xstore *s = t_store();
	struct t_conn *a = t_conn(s, 0), *b = t_conn(s, 0), *w = t_conn(s, 0);

	CHECK(t_write(a, 0, "/t/x", "0", NULL) == 0);
	CHECK(t_ok(w, XS_WATCH, 0, S("/t\0tw")) == 0);
	CHECK(t_event(w, "/t", "tw") == 0);

	/* isolation, then commit */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("1")) == 0);
	CHECK(t_write(a, 1, "/t/x", "first", NULL) == 0);
	CHECK(t_write(a, 1, "/t/new/y", "2", NULL) == 0);
	CHECK(t_write(a, 1, "/t/x", "1", NULL) == 0);	/* one event at commit */
	CHECK(t_read(a, 1, "/t/x", "1") == 0);
	CHECK(t_read(a, 0, "/t/x", "0") == 0);
	CHECK(t_read(b, 0, "/t/x", "0") == 0);
	CHECK(t_read_err(b, 0, "/t/new/y", "ENOENT") == 0);
	CHECK(t_no_event(w) == 0);
	CHECK(t_ok(a, XS_TRANSACTION_END, 1, S("T")) == 0);
	CHECK(t_read(b, 0, "/t/x", "1") == 0);
	CHECK(t_read(b, 0, "/t/new/y", "2") == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);
	CHECK(t_event(w, "/t/new/y", "tw") == 0);
	CHECK(t_no_event(w) == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 1, S("T"), "ENOENT") == 0);

	/* a conflicting commit gets EAGAIN; the retry commits */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("2")) == 0);
	CHECK(t_read(a, 2, "/t/x", "1") == 0);
	CHECK(t_write(a, 2, "/t/x", "from-a", NULL) == 0);
	CHECK(t_write(b, 0, "/t/x", "from-b", NULL) == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 2, S("T"), "EAGAIN") == 0);
	CHECK(t_read(b, 0, "/t/x", "from-b") == 0);
	CHECK(t_no_event(w) == 0);
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("3")) == 0);
	CHECK(t_read(a, 3, "/t/x", "from-b") == 0);
	CHECK(t_write(a, 3, "/t/x", "from-a", NULL) == 0);
	CHECK(t_ok(a, XS_TRANSACTION_END, 3, S("T")) == 0);
	CHECK(t_read(b, 0, "/t/x", "from-a") == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);

	/* creating a node another transaction also created: conflict */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("4")) == 0);
	CHECK(t_req(b, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("1")) == 0);
	CHECK(t_write(a, 4, "/t/c", "a", NULL) == 0);
	CHECK(t_write(b, 1, "/t/c", "b", NULL) == 0);
	CHECK(t_ok(b, XS_TRANSACTION_END, 1, S("T")) == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 4, S("T"), "EAGAIN") == 0);
	CHECK(t_read(a, 0, "/t/c", "b") == 0);
	CHECK(t_event(w, "/t/c", "tw") == 0);

	/* unrelated changes elsewhere do not conflict */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("5")) == 0);
	CHECK(t_read(a, 5, "/t/x", "from-a") == 0);
	CHECK(t_write(a, 5, "/t/x", "5", NULL) == 0);
	CHECK(t_write(b, 0, "/elsewhere", "1", NULL) == 0);
	CHECK(t_ok(a, XS_TRANSACTION_END, 5, S("T")) == 0);
	CHECK(t_read(b, 0, "/t/x", "5") == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);
	CHECK(t_no_event(w) == 0);

	/* abort: nothing happened */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("6")) == 0);
	CHECK(t_ok(a, XS_RM, 6, S("/t")) == 0);
	CHECK(t_read_err(a, 6, "/t/x", "ENOENT") == 0);
	CHECK(t_ok(a, XS_TRANSACTION_END, 6, S("F")) == 0);
	CHECK(t_read(a, 0, "/t/x", "5") == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 0, S("T"), "ENOENT") == 0);
	CHECK(t_read_err(a, 99, "/t/x", "ENOENT") == 0);
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("7")) == 0);
	CHECK(t_err(a, XS_TRANSACTION_START, 7, S(""), "EBUSY") == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 7, S("X"), "EINVAL") == 0);
	/* rm inside a transaction commits as a removal */
	CHECK(t_ok(a, XS_RM, 7, S("/t/new")) == 0);
	CHECK(t_ok(a, XS_TRANSACTION_END, 7, S("T")) == 0);
	CHECK(t_read_err(b, 0, "/t/new/y", "ENOENT") == 0);
	CHECK(t_event(w, "/t/new", "tw") == 0);
	CHECK(t_no_event(w) == 0);
	/* removing a subtree conflicts with a change deep inside it */
	CHECK(t_write(b, 0, "/t/sub/a/b", "0", NULL) == 0);
	CHECK(t_event(w, "/t/sub/a/b", "tw") == 0);
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("8")) == 0);
	CHECK(t_ok(a, XS_RM, 8, S("/t/sub")) == 0);
	CHECK(t_write(b, 0, "/t/sub/a/b", "1", NULL) == 0);
	CHECK(t_event(w, "/t/sub/a/b", "tw") == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 8, S("T"), "EAGAIN") == 0);
	CHECK(t_read(b, 0, "/t/sub/a/b", "1") == 0);
	CHECK(t_no_event(w) == 0);
	/* until its first change a transaction reads the live tree: a change
	 * made before it looks is seen, and is no conflict... */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("9")) == 0);
	CHECK(t_write(b, 0, "/t/x", "live", NULL) == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);
	CHECK(t_read(a, 9, "/t/x", "live") == 0);
	CHECK(t_ok(a, XS_TRANSACTION_END, 9, S("T")) == 0);
	/* ...one made after it looked fails the commit, also when its first
	 * change copied the tree in between */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("10")) == 0);
	CHECK(t_read(a, 10, "/t/x", "live") == 0);
	CHECK(t_write(b, 0, "/t/x", "later", NULL) == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);
	CHECK(t_write(a, 10, "/t/y", "1", NULL) == 0);
	CHECK(t_read(a, 10, "/t/y", "1") == 0);
	CHECK(t_read_err(a, 0, "/t/y", "ENOENT") == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 10, S("T"), "EAGAIN") == 0);
	CHECK(t_read_err(b, 0, "/t/y", "ENOENT") == 0);
	CHECK(t_read(b, 0, "/t/x", "later") == 0);
	CHECK(t_no_event(w) == 0);
	/* a transaction that only read, never copied: the same conflict */
	CHECK(t_req(a, XS_TRANSACTION_START, 0, S(""), XS_TRANSACTION_START,
		    S("11")) == 0);
	CHECK(t_read(a, 11, "/t/x", "later") == 0);
	CHECK(t_write(b, 0, "/t/x", "last", NULL) == 0);
	CHECK(t_event(w, "/t/x", "tw") == 0);
	CHECK(t_err(a, XS_TRANSACTION_END, 11, S("T"), "EAGAIN") == 0);
	t_close(a);
	t_close(b);
	t_close(w);
	xstore_free(s);
	return 0;
}

/* Feed raw bytes; the connection must answer EINVAL and be dropped. */
static int
t_malformed(struct xstore *s, const void *buf, size_t len)
{
	struct t_conn *bad = t_conn(s, 1), *good = t_conn(s, 0);
	struct t_msg m;
	int r = 0;

	if (xstore_conn_input(bad->c, buf, len) != -EPROTO ||
	    !xstore_conn_broken(bad->c) || !t_pop(bad, false, &m) ||
	    m.h.type != XS_ERROR || strcmp(m.data, "EINVAL") ||
	    m.h.len != 7 || bad->n != 0 ||
	    xstore_conn_input(bad->c, "x", 1) != -EPROTO) {
		fprintf(stderr, "malformed input not refused\n");
		r = -1;
	}
	/* the daemon goes on serving others */
	if (t_read(good, 0, "/local/domain/0/name", "Domain-0") < 0)
		r = -1;
	t_close(bad);
	t_close(good);
	return r;
}

static int
test_malformed(void)
{
	struct xstore *s = t_store();
	struct {
		struct xsd_sockmsg h;
		char data[XENSTORE_PAYLOAD_MAX + 16];
	} m;

	memset(&m, 0, sizeof(m));
	m.h.type = XS_READ;
	m.h.len = XENSTORE_PAYLOAD_MAX + 1;
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	m.h.len = 0xffffffff;
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	m.h.type = 999;
	m.h.len = 0;
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	m.h.type = XS_WATCH_EVENT;
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	m.h.type = XS_ERROR;
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	m.h.type = XS_SET_TARGET + 1;	/* the removed XS_RESTRICT */
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	/* missing NUL */
	m.h.type = XS_READ;
	m.h.len = 4;
	memcpy(m.data, "/abc", 4);
	CHECK(t_malformed(s, &m, sizeof(m.h) + 4) == 0);
	/* empty payload where a path is needed */
	m.h.len = 0;
	CHECK(t_malformed(s, &m, sizeof(m.h)) == 0);
	/* wrong argument counts */
	m.h.type = XS_WATCH;
	m.h.len = 5;
	memcpy(m.data, "/abc", 5);
	CHECK(t_malformed(s, &m, sizeof(m.h) + 5) == 0);
	m.h.type = XS_READ;
	m.h.len = 4;
	memcpy(m.data, "/a\0b", 4);
	CHECK(t_malformed(s, &m, sizeof(m.h) + 4) == 0);
	m.h.type = XS_WRITE;
	memcpy(m.data, "/abc", 4);
	CHECK(t_malformed(s, &m, sizeof(m.h) + 4) == 0);
	m.h.type = XS_SET_PERMS;
	m.h.len = 5;
	memcpy(m.data, "/abc", 5);
	CHECK(t_malformed(s, &m, sizeof(m.h) + 5) == 0);
	/* a good request before the bad one is still answered */
	{
		struct t_conn *c = t_conn(s, 0);
		char buf[64];
		struct xsd_sockmsg h = { .type = XS_READ, .req_id = 5,
					 .len = 14 };
		struct t_msg r;

		memcpy(buf, &h, sizeof(h));
		memcpy(buf + sizeof(h), "/local/domain", 14);
		h.type = 12345;
		h.len = 0;
		memcpy(buf + sizeof(h) + 14, &h, sizeof(h));
		CHECK(xstore_conn_input(c->c, buf, 2 * sizeof(h) + 14) ==
		      -EPROTO);
		CHECK(t_pop(c, false, &r) && r.h.type == XS_READ &&
		      r.h.req_id == 5 && r.h.len == 0);
		CHECK(t_pop(c, false, &r) && r.h.type == XS_ERROR &&
		      !strcmp(r.data, "EINVAL"));
		t_close(c);
	}
	xstore_free(s);
	return 0;
}

static int
test_limits(void)
{
	struct xstore *s = t_store();
	struct t_conn *d0 = t_conn(s, 0), *d1 = t_conn(s, 1);
	char path[XENSTORE_ABS_PATH_MAX + 16], val[XSTORE_MAX_VALUE_UNPRIV + 2];
	int i;

	/* watches per connection */
	for (i = 0; i < XSTORE_MAX_WATCHES; i++) {
		char buf[64];
		int n = snprintf(buf, sizeof(buf), "/w/%d", i);

		memcpy(buf + n + 1, "t", 2);
		CHECK(t_ok(d0, XS_WATCH, 0, buf, (size_t)n + 3) == 0);
		CHECK(t_event(d0, buf, "t") == 0);
	}
	CHECK(t_err(d0, XS_WATCH, 0, S("/w/x\0t"), "E2BIG") == 0);
	/* transactions per connection */
	for (i = 1; i <= XSTORE_MAX_TRANSACTIONS; i++) {
		char id[16];

		snprintf(id, sizeof(id), "%d", i);
		CHECK(t_req(d1, XS_TRANSACTION_START, 0, S(""),
			    XS_TRANSACTION_START, id, strlen(id) + 1) == 0);
	}
	CHECK(t_err(d1, XS_TRANSACTION_START, 0, S(""), "ENOSPC") == 0);
	/* value size for unprivileged domains */
	memset(val, 'v', sizeof(val));
	val[XSTORE_MAX_VALUE_UNPRIV] = '\0';
	CHECK(t_write(d1, 0, "data/big", val, NULL) == 0);
	val[XSTORE_MAX_VALUE_UNPRIV] = 'v';
	val[XSTORE_MAX_VALUE_UNPRIV + 1] = '\0';
	CHECK(t_write(d1, 0, "data/big", val, "ENOSPC") == 0);
	CHECK(t_write(d0, 0, "/big", val, NULL) == 0);
	/* path length */
	memset(path, 'p', sizeof(path));
	path[0] = '/';
	path[XENSTORE_ABS_PATH_MAX] = '\0';
	CHECK(t_write(d0, 0, path, "", NULL) == 0);
	path[XENSTORE_ABS_PATH_MAX] = 'p';
	path[XENSTORE_ABS_PATH_MAX + 1] = '\0';
	CHECK(t_write(d0, 0, path, "", "EINVAL") == 0);
	/* nodes per domain: domain 1 owns its rw dirs already */
	for (i = 0;; i++) {
		char buf[64];
		char v[] = "x";
		size_t pl;
		struct t_msg m;
		struct xsd_sockmsg h = { .type = XS_WRITE };

		pl = (size_t)snprintf(buf, sizeof(buf), "data/n%d", i) + 1;
		memcpy(buf + pl, v, 1);
		h.len = (uint32_t)pl + 1;
		xstore_conn_input(d1->c, &h, sizeof(h));
		xstore_conn_input(d1->c, buf, pl + 1);
		CHECK(t_pop(d1, false, &m));
		if (m.h.type == XS_ERROR) {
			CHECK(!strcmp(m.data, "ENOSPC"));
			break;
		}
		CHECK(i < XSTORE_MAX_NODES_PER_DOMAIN);
	}
	CHECK(i > XSTORE_MAX_NODES_PER_DOMAIN - 20);
	/* dom0 is not limited */
	CHECK(t_write(d0, 0, "/local/domain/1/data/by-dom0", "1", NULL) == 0);
	t_close(d0);
	t_close(d1);
	xstore_free(s);
	return 0;
}

static int
test_directory_part(void)
{
	struct xstore *s = t_store();
	struct t_conn *d0 = t_conn(s, 0);
	static char want[XENSTORE_PAYLOAD_MAX * 3], got[XENSTORE_PAYLOAD_MAX * 3];
	size_t wlen = 0, glen = 0;
	char gen[32] = "";
	int i;

	for (i = 0; i < 300; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/dir/child-with-a-long-name-%03d", i);
		CHECK(t_write(d0, 0, p, "", NULL) == 0);
		wlen += (size_t)sprintf(want + wlen, "child-with-a-long-name-%03d",
					i) + 1;
	}
	CHECK(t_err(d0, XS_DIRECTORY, 0, S("/dir"), "E2BIG") == 0);
	for (i = 0; i < 10; i++) {
		char req[64];
		int n = snprintf(req, sizeof(req), "/dir%c%zu", '\0', glen);
		struct xsd_sockmsg h = { .type = XS_DIRECTORY_PART,
					 .len = (uint32_t)n + 1 };
		struct t_msg m;
		size_t gl;

		xstore_conn_input(d0->c, &h, sizeof(h));
		xstore_conn_input(d0->c, req, (size_t)n + 1);
		CHECK(t_pop(d0, false, &m) && m.h.type == XS_DIRECTORY_PART);
		gl = strlen(m.data) + 1;
		if (!gen[0])
			strcpy(gen, m.data);
		CHECK(!strcmp(gen, m.data));
		memcpy(got + glen, m.data + gl, m.h.len - gl);
		glen += m.h.len - gl;
		if (glen >= 2 && got[glen - 1] == '\0' && got[glen - 2] == '\0')
			break;
	}
	CHECK(glen == wlen + 1);
	CHECK(memcmp(got, want, wlen) == 0);
	CHECK(t_err(d0, XS_DIRECTORY_PART, 0, S("/dir\0" "3"), "EINVAL") == 0);
	CHECK(t_err(d0, XS_DIRECTORY_PART, 0, S("/dir\0" "99999"),
		    "EINVAL") == 0);
	t_close(d0);
	xstore_free(s);
	return 0;
}

int
main(void)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} tests[] = {
		{ "basic", test_basic },
		{ "domain_nodes", test_domain_nodes },
		{ "perms", test_perms },
		{ "watch", test_watch },
		{ "transactions", test_transactions },
		{ "malformed", test_malformed },
		{ "limits", test_limits },
		{ "directory_part", test_directory_part },
	};
	int failed = 0;

	for (size_t i = 0; i < ARRAY_SIZE(tests); i++) {
		if (tests[i].fn() < 0) {
			fprintf(stderr, "FAIL: %s\n", tests[i].name);
			failed = 1;
		} else {
			printf("PASS: %s\n", tests[i].name);
		}
	}
	return failed || failures;
}
