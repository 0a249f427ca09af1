/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-tree.c: the xenstore node tree (see xstore-tree.h).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "xstore-tree.h"

static struct xnode *
node_alloc(const char *name, size_t namelen, const struct xt_perm *perms,
	   uint32_t nperms, uint64_t gen)
{
	struct xnode *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->name = strndup(name, namelen);
	n->perms = malloc(nperms * sizeof(*perms));
	if (!n->name || !n->perms) {
		free(n->name);
		free(n->perms);
		free(n);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(n->perms, perms, nperms * sizeof(*perms));
	n->nperms = nperms;
	n->gen = gen;
	return n;
}

struct xnode *
xtree_new_root(uint64_t gen)
{
	static const struct xt_perm none0 = { .id = 0, .perms = XT_PERM_NONE };

	return node_alloc("", 0, &none0, 1, gen);
}

void
xtree_free(struct xnode *n)
{
	if (!n)
		return;
	for (uint32_t i = 0; i < n->nchild; i++)
		xtree_free(n->child[i]);
	free(n->child);
	free(n->perms);
	free(n->value);
	free(n->name);
	free(n);
}

static int
add_to_parent(struct xnode *parent, struct xnode *n)
{
	if (parent->nchild == parent->cap) {
		uint32_t cap = parent->cap ? parent->cap * 2 : 4;
		struct xnode **c = realloc(parent->child, cap * sizeof(*c));

		if (!c)
			return -ENOMEM;
		parent->child = c;
		parent->cap = cap;
	}
	parent->child[parent->nchild++] = n;
	n->parent = parent;
	return 0;
}

static struct xnode *
clone_rec(const struct xnode *src)
{
	struct xnode *n = node_alloc(src->name, strlen(src->name), src->perms,
				     src->nperms, src->gen);

	if (!n)
		return NULL;
	if (src->len) {
		n->value = malloc(src->len);
		if (!n->value)
			goto fail;
		memcpy(n->value, src->value, src->len);
		n->len = src->len;
	}
	for (uint32_t i = 0; i < src->nchild; i++) {
		struct xnode *c = clone_rec(src->child[i]);

		if (!c)
			goto fail;
		if (add_to_parent(n, c) < 0) {
			xtree_free(c);
			goto fail;
		}
	}
	return n;
fail:
	xtree_free(n);
	errno = ENOMEM;
	return NULL;
}

struct xnode *
xtree_clone(const struct xnode *root)
{
	return clone_rec(root);
}

static struct xnode *
find_child(struct xnode *n, const char *name, size_t len)
{
	for (uint32_t i = 0; i < n->nchild; i++) {
		struct xnode *c = n->child[i];

		if (strncmp(c->name, name, len) == 0 && c->name[len] == '\0')
			return c;
	}
	return NULL;
}

struct xnode *
xtree_walk(struct xnode *root, const char *path, struct xnode **deepest,
	   size_t *deepest_len)
{
	struct xnode *n = root;
	const char *p = path;
	size_t n_len = 0;

	assert(path[0] == '/');
	p++;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		struct xnode *c = find_child(n, p, len);

		if (!c) {
			if (deepest)
				*deepest = n;
			if (deepest_len)
				*deepest_len = n_len;
			return NULL;
		}
		n = c;
		n_len = (size_t)(p - path) + len;
		p += len;
		if (*p == '/')
			p++;
	}
	if (deepest)
		*deepest = n;
	if (deepest_len)
		*deepest_len = n_len;
	return n;
}

struct xnode *
xtree_add_child(struct xnode *parent, const char *name, size_t namelen,
		const struct xt_perm *perms, uint32_t nperms, uint64_t gen)
{
	struct xnode *n = node_alloc(name, namelen, perms, nperms, gen);

	if (!n)
		return NULL;
	if (add_to_parent(parent, n) < 0) {
		xtree_free(n);
		errno = ENOMEM;
		return NULL;
	}
	parent->gen = gen;
	return n;
}

void
xtree_remove(struct xnode *n, uint64_t gen)
{
	struct xnode *p = n->parent;

	assert(p);
	for (uint32_t i = 0; i < p->nchild; i++) {
		if (p->child[i] != n)
			continue;
		memmove(&p->child[i], &p->child[i + 1],
			(p->nchild - i - 1) * sizeof(p->child[0]));
		p->nchild--;
		break;
	}
	p->gen = gen;
	n->parent = NULL;
	xtree_free(n);
}

int
xtree_set_value(struct xnode *n, const void *value, uint32_t len, uint64_t gen)
{
	char *v = NULL;

	if (len) {
		v = malloc(len);
		if (!v)
			return -ENOMEM;
		memcpy(v, value, len);
	}
	free(n->value);
	n->value = v;
	n->len = len;
	n->gen = gen;
	return 0;
}

int
xtree_set_perms(struct xnode *n, const struct xt_perm *perms, uint32_t nperms,
		uint64_t gen)
{
	struct xt_perm *p;

	if (nperms == 0)
		return -EINVAL;
	p = malloc(nperms * sizeof(*p));
	if (!p)
		return -ENOMEM;
	memcpy(p, perms, nperms * sizeof(*p));
	free(n->perms);
	n->perms = p;
	n->nperms = nperms;
	n->gen = gen;
	return 0;
}

size_t
xtree_count_owned(const struct xnode *n, uint32_t domid)
{
	size_t count = n->perms[0].id == domid;

	for (uint32_t i = 0; i < n->nchild; i++)
		count += xtree_count_owned(n->child[i], domid);
	return count;
}
