/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-domain.c: the store of xensim's xenstore engine and who is in
 * it (see xstore-int.h): the store's life (new, clone, free, the change
 * hook), its connections' life (each of one domain), and the domains
 * introduced and released, with the /local/domain/<domid> directory
 * libxl makes for each.
 *
 * Owns struct xstore (its connection list, domain list and change hook;
 * its tree only when making or copying a whole store) and the life of
 * each struct xstore_conn (whose parts belong to the files xstore-int.h
 * names).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "xstore-int.h"

/* ------------------------------------------------------------------ */
/* connections */

struct xstore_conn *
xstore_conn_new(struct xstore *s, uint32_t domid, void (*kick)(void *opaque),
		void *opaque)
{
	struct xstore_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	/* not zeroed: clearing 4 KiB was a sixth of the fuzzer's time */
	c->in = malloc(HDR_SIZE + XENSTORE_PAYLOAD_MAX);
	if (!c->in) {
		free(c);
		return NULL;
	}
	c->s = s;
	c->domid = domid;
	c->priv = domid == 0;
	c->kick = kick;
	c->opaque = opaque;
	c->next_txid = 1;
	c->next = s->conns;
	s->conns = c;
	return c;
}

void
xstore_conn_free(struct xstore_conn *c)
{
	struct xstore_conn **pp;

	if (!c)
		return;
	for (pp = &c->s->conns; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	xwatch_free_all(c);
	xtx_free_all(c);
	free(c->out);
	free(c->in);
	free(c);
}

uint32_t
xstore_conn_domid(const struct xstore_conn *c)
{
	return c->domid;
}

void
xstore_conn_set_tag(struct xstore_conn *c, uint64_t tag)
{
	c->tag = tag;
}

uint64_t
xstore_conn_tag(const struct xstore_conn *c)
{
	return c->tag;
}

void
xstore_set_change_hook(struct xstore *s,
		       void (*fn)(void *opaque, const struct xstore_conn *by, uint64_t gen,
				  const char *path, const void *value, size_t len,
				  bool removed),
		       void *opaque)
{
	s->change = fn;
	s->change_opaque = opaque;
}

/* ------------------------------------------------------------------ */
/* the store and its domains */

static struct xview
admin_view(struct xstore *s)
{
	struct xview v = {
		.s = s, .root = s->root, .domid = 0, .priv = true,
		.check = false,
	};

	return v;
}

struct xstore *
xstore_new(void)
{
	struct xstore *s = calloc(1, sizeof(*s));
	struct xview v;

	if (!s)
		return NULL;
	s->root = xtree_new_root(++s->gen);
	if (!s->root) {
		free(s);
		return NULL;
	}
	v = admin_view(s);
	if (xview_write(&v, DOMAIN_ROOT, NULL, 0, true) < 0) {
		xstore_free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

struct xstore *
xstore_clone(const struct xstore *s)
{
	struct xstore *c = calloc(1, sizeof(*c));

	assert(!s->conns);
	if (!c)
		return NULL;
	c->gen = s->gen;
	c->root = xtree_clone(s->root);
	if (s->ndomains)
		c->domains = malloc(s->ndomains * sizeof(*c->domains));
	if (!c->root || (s->ndomains && !c->domains)) {
		xtree_free(c->root);
		free(c->domains);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	if (s->ndomains)
		memcpy(c->domains, s->domains, s->ndomains * sizeof(*c->domains));
	c->ndomains = c->capdomains = s->ndomains;
	return c;
}

void
xstore_free(struct xstore *s)
{
	if (!s)
		return;
	assert(!s->conns);
	xtree_free(s->root);
	free(s->domains);
	free(s);
}

bool
xstore_domain_introduced(const struct xstore *s, uint32_t domid)
{
	for (size_t i = 0; i < s->ndomains; i++)
		if (s->domains[i] == domid)
			return true;
	return false;
}

static int
mk(struct xview *v, const char *dom, const char *rel, const char *value,
   const struct xt_perm *perms, uint32_t nperms)
{
	char path[XENSTORE_ABS_PATH_MAX + 1];
	int e;

	snprintf(path, sizeof(path), "%s%s%s", dom, *rel ? "/" : "", rel);
	e = xview_write(v, path, value, value ? (uint32_t)strlen(value) : 0,
			value == NULL);
	if (e == 0 && perms)
		e = xview_set_perms(v, path, perms, nperms);
	return e;
}

int
xstore_domain_introduce(struct xstore *s, uint32_t domid, const char *name)
{
	struct xview v = admin_view(s);
	char dom[64], id[16];
	/* libxl__domain_make: roperm for the domain's own directory... */
	const struct xt_perm ro[2] = {
		{ .id = 0, .perms = XT_PERM_NONE },
		{ .id = domid, .perms = XT_PERM_READ },
	};
	/* ...and rwperm (owned by the domain) for what it writes itself. */
	const struct xt_perm rw[1] = { { .id = domid, .perms = XT_PERM_NONE } };
	static const char *const ro_dirs[] = {
		"cpu", "memory", "device", "control",
	};
	static const char *const rw_dirs[] = {
		"control/shutdown", "control/feature-poweroff",
		"control/feature-reboot", "control/feature-suspend",
		"control/sysrq", "device/suspend/event-channel",
		"data", "drivers", "feature", "attr", "error",
	};
	static const char *const features[] = {
		"control/platform-feature-multiprocessor-suspend",
		"control/platform-feature-xs_reset_watches",
	};
	uint32_t *d;
	int e = 0;

	if (xstore_domain_introduced(s, domid))
		return -EEXIST;
	if (s->ndomains == s->capdomains) {
		size_t cap = s->capdomains ? s->capdomains * 2 : 8;

		d = realloc(s->domains, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		s->domains = d;
		s->capdomains = cap;
	}
	snprintf(dom, sizeof(dom), DOMAIN_ROOT "/%" PRIu32, domid);
	snprintf(id, sizeof(id), "%" PRIu32, domid);
	if (domid == 0) {
		/* Like xen-init-dom0: everything inherits "/" (n0). */
		e = mk(&v, dom, "", NULL, NULL, 0);
		if (!e)
			e = mk(&v, dom, "name", name ? name : "Domain-0", NULL, 0);
		if (!e)
			e = mk(&v, dom, "domid", id, NULL, 0);
	} else {
		xview_rm(&v, dom);
		e = mk(&v, dom, "", NULL, ro, 2);
		if (!e)
			e = mk(&v, dom, "name", name, NULL, 0);
		if (!e)
			e = mk(&v, dom, "domid", id, NULL, 0);
		for (size_t i = 0; i < ARRAY_SIZE(ro_dirs) && !e; i++)
			e = mk(&v, dom, ro_dirs[i], NULL, ro, 2);
		for (size_t i = 0; i < ARRAY_SIZE(rw_dirs) && !e; i++)
			e = mk(&v, dom, rw_dirs[i], NULL, rw, 1);
		for (size_t i = 0; i < ARRAY_SIZE(features) && !e; i++)
			e = mk(&v, dom, features[i], "1", NULL, 0);
	}
	if (e < 0) {
		xview_rm(&v, dom);
		return e;
	}
	s->domains[s->ndomains++] = domid;
	xwatch_fire(s, "@introduceDomain", NULL, 0, false);
	return 0;
}

int
xstore_domain_release(struct xstore *s, uint32_t domid)
{
	struct xview v = admin_view(s);
	char dom[64];
	size_t i;

	for (i = 0; i < s->ndomains; i++)
		if (s->domains[i] == domid)
			break;
	if (i == s->ndomains)
		return -ENOENT;
	s->domains[i] = s->domains[--s->ndomains];
	snprintf(dom, sizeof(dom), DOMAIN_ROOT "/%" PRIu32, domid);
	xview_rm(&v, dom);
	xwatch_fire(s, "@releaseDomain", NULL, 0, false);
	return 0;
}
