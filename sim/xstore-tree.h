/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-tree.h: the xenstore node tree of xensim (private to sim/).
 *
 * A plain tree: every node owns its name (one path component), its value
 * (arbitrary bytes), its permission list and an array of children kept in
 * creation order (the order C xenstored lists them in).  Lookups walk the
 * path component by component; trees are small (hundreds of nodes), so a
 * linear scan of the children is the simple, obviously correct choice.
 *
 * Each node carries a generation: a store-wide counter value taken each
 * time the node is created, its value or permissions change, or a child is
 * added or removed.  Transactions compare generations to detect conflicts
 * (see xstore-txn.c).  Generation 0 is never used: it means "absent".
 *
 * Paths passed here are canonical and absolute ("/", "/a/b"), validated by
 * the caller (xstore-perm.c).  Pointer-returning functions return NULL and
 * set errno; int-returning ones return 0 or -errno.  Single-threaded.
 */
#ifndef SIM_XSTORE_TREE_H
#define SIM_XSTORE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Permission bits, as in <xenstore_lib.h> XS_PERM_READ/WRITE. */
#define XT_PERM_NONE	0u
#define XT_PERM_READ	1u
#define XT_PERM_WRITE	2u

/*
 * One entry of a node's ACL.  Entry 0: id = owner, perms = what every
 * domain not listed later gets.  Entries 1..: per-domain permissions.
 */
struct xt_perm {
	uint32_t id;
	uint32_t perms;		/* XT_PERM_* */
};

struct xnode {
	char *name;			/* one component; "" for the root */
	struct xnode *parent;		/* NULL for the root */
	char *value;			/* owned, may be NULL when len == 0 */
	uint32_t len;
	struct xt_perm *perms;		/* owned, nperms >= 1 */
	uint32_t nperms;
	struct xnode **child;		/* owned, creation order */
	uint32_t nchild;
	uint32_t cap;
	uint64_t gen;
};

/* A new root node "/" with perms {owner 0, none} and generation gen. */
struct xnode *xtree_new_root(uint64_t gen);
/* Free n and its whole subtree (n must already be unlinked or the root). */
void xtree_free(struct xnode *n);
/* Deep copy of the tree under root (generations preserved). */
struct xnode *xtree_clone(const struct xnode *root);

/*
 * Walk path from root.  Returns the node, or NULL when it does not exist;
 * then, if deepest is not NULL, *deepest is the deepest existing ancestor
 * and *deepest_len the length of its path (0 for the root: "" + "/...").
 */
struct xnode *xtree_walk(struct xnode *root, const char *path,
			 struct xnode **deepest, size_t *deepest_len);

/*
 * Add a child called name[0..namelen) under parent, with a copy of perms.
 * Bumps parent->gen to gen too.  The child must not exist yet.
 */
struct xnode *xtree_add_child(struct xnode *parent, const char *name,
			      size_t namelen, const struct xt_perm *perms,
			      uint32_t nperms, uint64_t gen);
/* Unlink n from its parent (parent->gen = gen) and free its subtree. */
void xtree_remove(struct xnode *n, uint64_t gen);
/* Replace the value (copied) / the ACL (copied); node gen = gen. */
int xtree_set_value(struct xnode *n, const void *value, uint32_t len,
		    uint64_t gen);
int xtree_set_perms(struct xnode *n, const struct xt_perm *perms,
		    uint32_t nperms, uint64_t gen);
/* Number of nodes under (and including) n whose owner is domid. */
size_t xtree_count_owned(const struct xnode *n, uint32_t domid);

#endif /* SIM_XSTORE_TREE_H */
