/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-watch.c: watches of xensim's xenstore engine (see xstore-int.h
 * and, for the semantics, xstore.h): each connection's list of watches,
 * and the events a change of the live tree sends to them.
 *
 * Owns the watches and nwatches of each struct xstore_conn, and fills a
 * commit replay's set of changes already fired (struct xview's fired,
 * which the replay in xstore-node.c makes and frees).
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "xstore-int.h"

static bool
is_child(const char *child, const char *parent)
{
	size_t plen = strlen(parent);

	if (strcmp(parent, "/") == 0)
		return child[0] == '/';
	return strncmp(child, parent, plen) == 0 &&
	       (child[plen] == '\0' || child[plen] == '/');
}

/* A special "@..." event name, or a node path. */
int
xwatch_path(uint32_t domid, const char *in, char *out, size_t *strip)
{
	bool relative;
	int e;

	*strip = 0;
	if (in[0] == '@') {
		if (strcmp(in, "@introduceDomain") && strcmp(in, "@releaseDomain"))
			return -EINVAL;
		strcpy(out, in);
		return 0;
	}
	e = xpath_canonicalize(domid, in, out, XENSTORE_ABS_PATH_MAX + 1,
			       &relative);
	if (e < 0)
		return e;
	if (relative)
		*strip = strlen(out) - strlen(in);
	return 0;
}

int
xwatch_add(struct xstore_conn *c, const char *path, size_t strip,
	   const char *token, const struct xwatch **out)
{
	struct xwatch *w, **tail;

	for (tail = &c->watches; (w = *tail); tail = &w->next)
		if (!strcmp(w->path, path) && !strcmp(w->token, token))
			return -EEXIST;
	if (c->nwatches >= XSTORE_MAX_WATCHES)
		return -E2BIG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->path = strdup(path);
	w->token = strdup(token);
	w->strip = strip;
	if (!w->path || !w->token) {
		free(w->path);
		free(w->token);
		free(w);
		return -ENOMEM;
	}
	*tail = w;
	c->nwatches++;
	*out = w;
	return 0;
}

static void
watch_free(struct xwatch *w)
{
	free(w->path);
	free(w->token);
	free(w);
}

int
xwatch_remove(struct xstore_conn *c, const char *path, const char *token)
{
	struct xwatch *w, **pp;

	for (pp = &c->watches; (w = *pp); pp = &w->next) {
		if (strcmp(w->path, path) || strcmp(w->token, token))
			continue;
		*pp = w->next;
		watch_free(w);
		c->nwatches--;
		return 0;
	}
	return -ENOENT;
}

void
xwatch_free_all(struct xstore_conn *c)
{
	while (c->watches) {
		struct xwatch *w = c->watches;

		c->watches = w->next;
		watch_free(w);
	}
	c->nwatches = 0;
}

void
xwatch_event(struct xstore_conn *c, const struct xwatch *w, const char *path)
{
	const char *p = path;

	if (w->strip) {
		assert(strlen(path) >= w->strip);
		p += w->strip;
	}
	/* Never send what a client may not receive (as xenstored). */
	if (strlen(p) + 1 + strlen(w->token) + 1 > XENSTORE_PAYLOAD_MAX)
		return;
	xconn_queue(c, XS_WATCH_EVENT, 0, 0, p, strlen(p) + 1, w->token,
		    strlen(w->token) + 1);
}

/*
 * Watches at or above path get path; when removed, watches below it get
 * their own path.
 */
void
xwatch_fire(struct xstore *s, const char *path, const struct xt_perm *perms,
	    uint32_t nperms, bool removed)
{
	bool special = path[0] == '@';

	for (struct xstore_conn *c = s->conns; c; c = c->next) {
		bool readable;

		if (c->broken)
			continue;
		readable = special ? c->priv :
			   (xperm_of(c->domid, c->priv, perms, nperms) &
			    XT_PERM_READ) != 0;
		if (!readable)
			continue;
		for (struct xwatch *w = c->watches; w; w = w->next) {
			if (special || w->path[0] == '@') {
				if (strcmp(w->path, path) == 0)
					xwatch_event(c, w, path);
			} else if (is_child(path, w->path)) {
				xwatch_event(c, w, path);
			} else if (removed && is_child(w->path, path)) {
				xwatch_event(c, w, w->path);
			}
		}
	}
}

/*
 * A removal also reaches watches below the path, so it is told apart
 * from a change of the node.
 */
bool
xwatch_fired_before(struct xview *v, const char *path, bool removed)
{
	char **f, *key;

	if (!v->fired)
		return false;
	if (asprintf(&key, "%c%s", removed ? 'r' : 'c', path) < 0)
		return false;	/* then it may fire twice: harmless */
	for (size_t i = 1; i <= v->nfired; i++) {
		if (!strcmp(v->fired[i], key)) {
			free(key);
			return true;
		}
	}
	f = realloc(v->fired, (v->nfired + 2) * sizeof(*f));
	if (!f) {
		free(key);
		return false;
	}
	v->fired = f;
	f[++v->nfired] = key;
	return false;
}

void
xwatch_fire_node(struct xview *v, const char *path, const struct xnode *n)
{
	if (!v->tx && !xwatch_fired_before(v, path, false))
		xwatch_fire(v->s, path, n->perms, n->nperms, false);
}
