/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-txn.c: transactions of xensim's xenstore engine (see
 * xstore-int.h; semantics in xstore.h and DESIGN-NOTES.md): each
 * connection's list of open transactions, the record of every node a
 * transaction looked at with its generation then, its log of changes,
 * its private copy of the tree, and the check at commit.  The replay of
 * the log on the live tree is a node operation (xview_commit in
 * xstore-node.c), which calls this file and not the other way round.
 *
 * Owns the txs, ntxs and next_txid of each struct xstore_conn, and every
 * struct xtx with its record (acc), log (ops) and tree (root).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xstore-int.h"

int
xtx_start(struct xstore_conn *c, uint32_t *id)
{
	struct xtx *tx;

	if (c->ntxs >= XSTORE_MAX_TRANSACTIONS)
		return -ENOSPC;
	tx = calloc(1, sizeof(*tx));
	if (!tx)
		return -ENOMEM;
	do {
		tx->id = c->next_txid++;
		for (struct xtx *t = c->txs; t; t = t->next)
			if (t->id == tx->id)
				tx->id = 0;
	} while (tx->id == 0);
	tx->next = c->txs;
	c->txs = tx;
	c->ntxs++;
	*id = tx->id;
	return 0;
}

struct xtx *
xtx_find(const struct xstore_conn *c, uint32_t id)
{
	struct xtx *tx;

	for (tx = c->txs; tx; tx = tx->next)
		if (tx->id == id)
			break;
	return tx;
}

void
xtx_unlink(struct xstore_conn *c, struct xtx *tx)
{
	struct xtx **pp;

	for (pp = &c->txs; *pp != tx; pp = &(*pp)->next)
		;
	*pp = tx->next;
	c->ntxs--;
}

int
xtx_check(const struct xstore *s, const struct xtx *tx)
{
	if (tx->poisoned)
		return -ENOMEM;
	for (size_t i = 0; i < tx->nacc; i++) {
		struct xnode *n = xtree_walk(s->root, tx->acc[i].path, NULL,
					     NULL);

		if ((n ? n->gen : 0) != tx->acc[i].gen)
			return -EAGAIN;
	}
	return 0;
}

void
xtx_free(struct xtx *tx)
{
	for (size_t i = 0; i < tx->nacc; i++)
		free(tx->acc[i].path);
	for (size_t i = 0; i < tx->nops; i++) {
		free(tx->ops[i].path);
		free(tx->ops[i].value);
		free(tx->ops[i].perms);
	}
	free(tx->acc);
	free(tx->ops);
	xtree_free(tx->root);
	free(tx);
}

void
xtx_free_all(struct xstore_conn *c)
{
	while (c->txs) {
		struct xtx *tx = c->txs;

		c->txs = tx->next;
		xtx_free(tx);
	}
	c->ntxs = 0;
}

void
xtx_note(struct xview *v, const char *path, size_t len, const struct xnode *n)
{
	struct xtx *tx = v->tx;
	struct xaccess *a;

	if (!tx)
		return;
	for (size_t i = 0; i < tx->nacc; i++)
		if (strncmp(tx->acc[i].path, path, len) == 0 &&
		    tx->acc[i].path[len] == '\0')
			return;
	if (tx->nacc == tx->capacc) {
		size_t cap = tx->capacc ? tx->capacc * 2 : 16;

		a = realloc(tx->acc, cap * sizeof(*a));
		if (!a)
			goto oom;
		tx->acc = a;
		tx->capacc = cap;
	}
	a = &tx->acc[tx->nacc];
	a->path = strndup(path, len);
	if (!a->path)
		goto oom;
	a->gen = n ? n->gen : 0;
	tx->nacc++;
	return;
oom:
	/* Without the record the commit could miss a conflict. */
	tx->poisoned = true;
}

/*
 * A transaction removing a subtree looked at every node in it: a change
 * anywhere below by someone else is a conflict (as xenstored, which
 * records each deleted node).  buf[0..len) is n's path; buf is reused.
 */
void
xtx_note_subtree(struct xview *v, char *buf, size_t len, const struct xnode *n)
{
	xtx_note(v, buf, len, n);
	for (uint32_t i = 0; i < n->nchild; i++) {
		const struct xnode *c = n->child[i];
		size_t l = strlen(c->name);

		if (len + 1 + l > XENSTORE_ABS_PATH_MAX)
			continue;	/* cannot exist: paths are checked */
		buf[len] = '/';
		memcpy(buf + len + 1, c->name, l + 1);
		xtx_note_subtree(v, buf, len + 1 + l, c);
	}
	buf[len] = '\0';
}

int
xtx_log(struct xview *v, enum xop_type type, const char *path,
	const void *value, uint32_t len, const struct xt_perm *perms,
	uint32_t nperms)
{
	struct xtx *tx = v->tx;
	struct xop *op;

	if (tx->nops == tx->capops) {
		size_t cap = tx->capops ? tx->capops * 2 : 8;

		op = realloc(tx->ops, cap * sizeof(*op));
		if (!op) {
			tx->poisoned = true;
			return -ENOMEM;
		}
		tx->ops = op;
		tx->capops = cap;
	}
	op = &tx->ops[tx->nops];
	memset(op, 0, sizeof(*op));
	op->type = type;
	op->path = strdup(path);
	if (len) {
		op->value = malloc(len);
		if (op->value)
			memcpy(op->value, value, len);
	}
	if (nperms) {
		op->perms = malloc(nperms * sizeof(*perms));
		if (op->perms)
			memcpy(op->perms, perms, nperms * sizeof(*perms));
	}
	if (!op->path || (len && !op->value) || (nperms && !op->perms)) {
		free(op->path);
		free(op->value);
		free(op->perms);
		/* The copy has the change, the log not: cannot commit. */
		tx->poisoned = true;
		return -ENOMEM;
	}
	op->len = len;
	op->nperms = nperms;
	tx->nops++;
	return 0;
}

/*
 * Copying at the start (and freeing at the end) instead cost half of the
 * fuzzer's time, for transactions that mostly change nothing.  (It still
 * copies before its checks: a refused change copies too, as every
 * TRANSACTION_START did before.)  Reading the live tree until
 * then is safe: every node read was recorded with its generation, so a
 * change by someone else in between fails the commit with EAGAIN, as in
 * C xenstored (which also reads nodes a transaction has not touched from
 * the live database).
 */
int
xtx_own_tree(struct xview *v)
{
	struct xtx *tx = v->tx;

	if (!tx || tx->root)
		return 0;
	tx->root = xtree_clone(v->s->root);
	if (!tx->root)
		return -ENOMEM;
	v->root = tx->root;
	return 0;
}
