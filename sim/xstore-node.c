/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-node.c: the node operations of xensim's xenstore engine (see
 * xstore-int.h): find, write, mkdir, rm and set-perms on a view (the
 * live tree, or a transaction's copy), with the permission and quota
 * checks, the transaction's record and log, the change hook and the
 * watch events each one implies; and a commit's replay of a
 * transaction's log on the live tree.
 *
 * Owns no state of its own: it changes the tree of the view it is given
 * (the only way the live tree changes after set-up) and hands out the
 * store's generations for it; a commit's replay owns its view's fired
 * set.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "xstore-int.h"

int
xview_get(struct xview *v, const char *path, uint32_t perm, struct xnode **out)
{
	struct xnode *deep;
	size_t dlen;
	struct xnode *n = xtree_walk(v->root, path, &deep, &dlen);

	xtx_note(v, path, strlen(path), n);
	*out = n;
	if (n)
		return (xperm_view(v, n) & perm) == perm ? 0 : -EACCES;
	xtx_note(v, dlen ? path : "/", dlen ? dlen : 1, deep);
	return (xperm_view(v, deep) & perm) == perm ? -ENOENT : -EACCES;
}

/* Create the missing nodes of path (its deepest ancestor exists). */
static int
create_path(struct xview *v, const char *path, struct xnode **out)
{
	struct xt_perm perms[XSTORE_MAX_PERMS];
	struct xnode *deep, *n, *first = NULL;
	size_t dlen;
	const char *p;
	size_t count = 0;

	n = xtree_walk(v->root, path, &deep, &dlen);
	assert(!n);
	p = path + dlen;
	for (const char *q = p; *q; q++)
		count += *q == '/';
	if (v->check && !v->priv &&
	    xtree_count_owned(v->root, v->domid) + count >
	    XSTORE_MAX_NODES_PER_DOMAIN)
		return -ENOSPC;
	n = deep;
	while (*p == '/') {
		const char *name = p + 1;
		const char *slash = strchr(name, '/');
		size_t len = slash ? (size_t)(slash - name) : strlen(name);
		struct xnode *child;

		assert(n->nperms <= XSTORE_MAX_PERMS);
		memcpy(perms, n->perms, n->nperms * sizeof(perms[0]));
		if (!v->priv)
			perms[0].id = v->domid;
		xtx_note(v, path, (size_t)(name + len - path), NULL);
		child = xtree_add_child(n, name, len, perms, n->nperms,
					++v->s->gen);
		if (!child) {
			if (first)
				xtree_remove(first, ++v->s->gen);
			return -ENOMEM;
		}
		if (!first)
			first = child;
		n = child;
		p = name + len;
	}
	*out = n;
	return 0;
}

int
xview_write(struct xview *v, const char *path, const void *value, uint32_t len,
	    bool mkdir)
{
	struct xnode *n;
	int r;

	if (v->check && !v->priv && len > XSTORE_MAX_VALUE_UNPRIV)
		return -ENOSPC;
	if ((r = xtx_own_tree(v)) < 0)
		return r;
	r = xview_get(v, path, XT_PERM_WRITE, &n);
	if (r == 0 && mkdir)
		return 0;		/* exists: nothing changes, no event */
	if (r == -ENOENT)
		r = create_path(v, path, &n);
	if (r < 0)
		return r;
	if (!mkdir) {
		r = xtree_set_value(n, value, len, ++v->s->gen);
		if (r < 0) {
			/* the path may have been created: the copy has a
			 * change the log has not */
			if (v->tx)
				v->tx->poisoned = true;
			return r;
		}
	}
	if (v->tx)
		return xtx_log(v, mkdir ? XOP_MKDIR : XOP_WRITE, path, value,
			       len, NULL, 0);
	if (v->s->change)
		v->s->change(v->s->change_opaque, v->by, v->s->gen, path,
			     n->value, n->len, false);
	xwatch_fire_node(v, path, n);
	return 0;
}

int
xview_rm(struct xview *v, const char *path)
{
	struct xt_perm perms[XSTORE_MAX_PERMS];
	const char *slash = strrchr(path, '/');
	size_t plen = slash == path ? 1 : (size_t)(slash - path);
	struct xnode *n, *parent;
	uint32_t nperms;
	int r;

	if (strcmp(path, "/") == 0)
		return -EINVAL;
	if ((r = xtx_own_tree(v)) < 0)
		return r;
	r = xview_get(v, path, XT_PERM_WRITE, &n);
	if (r == -ENOENT) {
		/* Not there: fine if its parent exists (xenstored's do_rm). */
		char parent_path[XENSTORE_ABS_PATH_MAX + 1];

		memcpy(parent_path, path, plen);
		parent_path[plen] = '\0';
		parent = xtree_walk(v->root, parent_path, NULL, NULL);
		xtx_note(v, parent_path, plen, parent);
		return parent ? 0 : -ENOENT;
	}
	if (r < 0)
		return r;
	parent = n->parent;
	xtx_note(v, path, plen, parent);
	if (v->tx) {
		char buf[XENSTORE_ABS_PATH_MAX + 1];

		strcpy(buf, path);
		xtx_note_subtree(v, buf, strlen(buf), n);
	}
	nperms = n->nperms;
	memcpy(perms, n->perms, nperms * sizeof(perms[0]));
	xtree_remove(n, ++v->s->gen);
	if (v->tx)
		return xtx_log(v, XOP_RM, path, NULL, 0, NULL, 0);
	if (v->s->change)
		v->s->change(v->s->change_opaque, v->by, v->s->gen, path, NULL, 0, true);
	if (!xwatch_fired_before(v, path, true))
		xwatch_fire(v->s, path, perms, nperms, true);
	return 0;
}

int
xview_set_perms(struct xview *v, const char *path, const struct xt_perm *perms,
		uint32_t nperms)
{
	struct xnode *n;
	int r;

	if ((r = xtx_own_tree(v)) < 0)
		return r;
	r = xview_get(v, path, XT_PERM_WRITE, &n);
	if (r < 0)
		return r;
	if (v->check && !v->priv) {
		/* Only the owner, and it may not give the node away. */
		if (n->perms[0].id != v->domid)
			return -EACCES;
		if (perms[0].id != v->domid)
			return -EPERM;
	}
	r = xtree_set_perms(n, perms, nperms, ++v->s->gen);
	if (r < 0)
		return r;
	if (v->tx)
		return xtx_log(v, XOP_SETPERMS, path, NULL, 0, perms, nperms);
	xwatch_fire_node(v, path, n);
	return 0;
}

int
xview_commit(struct xstore_conn *c, const struct xtx *tx)
{
	struct xview v = {
		.s = c->s, .root = c->s->root, .tx = NULL,
		.domid = c->domid, .priv = c->priv, .check = false, .by = c,
	};
	int e = 0;

	/* fired[0] unused: a non-NULL array turns deduplication on */
	v.fired = calloc(1, sizeof(*v.fired));
	for (size_t i = 0; i < tx->nops && e == 0; i++) {
		const struct xop *op = &tx->ops[i];

		switch (op->type) {
		case XOP_WRITE:
			e = xview_write(&v, op->path, op->value, op->len,
					false);
			break;
		case XOP_MKDIR:
			e = xview_write(&v, op->path, NULL, 0, true);
			break;
		case XOP_RM:
			e = xview_rm(&v, op->path);
			break;
		case XOP_SETPERMS:
			e = xview_set_perms(&v, op->path, op->perms,
					    op->nperms);
			break;
		}
	}
	for (size_t i = 1; v.fired && i <= v.nfired; i++)
		free(v.fired[i]);
	free(v.fired);
	return e;
}
