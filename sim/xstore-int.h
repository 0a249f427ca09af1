/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-int.h: what the parts of xensim's xenstore engine share.  Private
 * to sim/xstore*.c: the rest of sim/ (xensim, xstore-sock.c, the tests,
 * the fuzzer) sees xstore.h only.
 *
 * The parts, from the bottom up; each calls only the ones listed before
 * it (and xstore-tree.c), never one after it:
 *   xstore-output.c  a connection's output queue: messages, error replies
 *   xstore-perm.c    paths and permissions: which node a name means for a
 *                    domain, and what a domain may do on a node
 *   xstore-watch.c   watches: a connection's list, and firing events
 *   xstore-txn.c     transactions: a connection's list, the record of what
 *                    each looked at, its change log, the commit's check
 *   xstore-node.c    read, write, mkdir, rm, set-perms on a view (the live
 *                    tree or a transaction's copy), and a commit's replay
 *   xstore-domain.c  the store's life, its connections' life, domains
 *   xstore.c         the input side: framing, argument checks, dispatch
 *
 * Who owns which state (only the owner writes it; others may read it):
 *   struct xstore: made and freed by xstore-domain.c, which also owns its
 *     connection list, its domain list and its change hook.  root (the
 *     live tree) and gen change only through xstore-node.c's operations
 *     (and xstore-domain.c's making and cloning of a whole store).
 *   struct xstore_conn: made and freed by xstore-domain.c; in, hdr,
 *     in_have and serving belong to xstore.c; out* to xstore-output.c;
 *     watches and nwatches to xstore-watch.c; txs, ntxs and next_txid to
 *     xstore-txn.c.  broken is set by xstore-output.c (output overflow)
 *     and xstore.c (a malformed message), never cleared.
 *   struct xwatch: xstore-watch.c.
 *   struct xtx and what hangs off it: xstore-txn.c; xstore-node.c adds to
 *     its record and log through xtx_note()/xtx_log() only.
 *   struct xview: a stack value of whoever runs an operation: xstore.c
 *     (one per request), xstore-domain.c (the store's own set-up),
 *     xstore-node.c (a commit's replay, which owns its fired set;
 *     xstore-watch.c fills it).
 *
 * Single-threaded (the loop's), 0/-errno as xstore.h says.
 */
#ifndef SIM_XSTORE_INT_H
#define SIM_XSTORE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <xen/io/xs_wire.h>

#include "xstore.h"
#include "xstore-tree.h"

#define HDR_SIZE	sizeof(struct xsd_sockmsg)
#define DOMAIN_ROOT	"/local/domain"

struct xwatch {
	struct xwatch *next;
	char *path;		/* canonical absolute path, or "@..." */
	char *token;
	size_t strip;		/* prefix cut from event paths (relative watch) */
};

/* A node a transaction looked at, with its generation then (0 = absent). */
struct xaccess {
	char *path;
	uint64_t gen;
};

enum xop_type { XOP_WRITE, XOP_MKDIR, XOP_RM, XOP_SETPERMS };

/* A change made inside a transaction, replayed on the store at commit. */
struct xop {
	enum xop_type type;
	char *path;
	char *value;
	uint32_t len;
	struct xt_perm *perms;
	uint32_t nperms;
};

struct xtx {
	struct xtx *next;
	uint32_t id;
	/* owned: its own copy of the tree, made at its first change; NULL
	 * until then, and its reads see the live store (see xtx_own_tree) */
	struct xnode *root;
	struct xaccess *acc;
	size_t nacc, capacc;
	struct xop *ops;
	size_t nops, capops;
	bool poisoned;			/* lost track of an access: cannot commit */
};

struct xstore_conn {
	struct xstore *s;
	struct xstore_conn *next;
	uint32_t domid;
	bool priv;
	bool broken;
	bool serving;			/* inside xstore_conn_input() */
	uint64_t tag;			/* xstore_conn_set_tag's, for the change hook */
	void (*kick)(void *opaque);
	void *opaque;
	/* input: one message at a time */
	struct xsd_sockmsg hdr;
	size_t in_have;
	unsigned char *in;		/* owned, HDR_SIZE + XENSTORE_PAYLOAD_MAX */
	/* output: out[out_off..out_len) pending */
	char *out;
	size_t out_off, out_len, out_cap;
	struct xwatch *watches;
	unsigned int nwatches;
	struct xtx *txs;
	unsigned int ntxs;
	uint32_t next_txid;
};

struct xstore {
	struct xnode *root;
	uint64_t gen;			/* last generation handed out */
	struct xstore_conn *conns;
	uint32_t *domains;		/* introduced domains */
	size_t ndomains, capdomains;
	/* xstore_set_change_hook: every change of the live tree */
	void (*change)(void *opaque, const struct xstore_conn *by, uint64_t gen,
		       const char *path, const void *value, size_t len, bool removed);
	void *change_opaque;
};

/*
 * Where an operation runs: the store itself, or a transaction's copy.
 * check=false (commit replay, domain setup) skips permission and quota
 * checks, which were done when the operation was first made.
 */
struct xview {
	struct xstore *s;
	struct xnode *root;
	struct xtx *tx;
	uint32_t domid;
	bool priv;
	bool check;
	/* commit replay: paths already fired, so each fires once */
	char **fired;
	size_t nfired;
	const struct xstore_conn *by;	/* whose request, or NULL (setup) */
};

/* ---- xstore-output.c ---- */

/*
 * Queue one message of type on c: header, then a[0..alen), b[0..blen).
 * Nothing on a broken connection; pending output beyond
 * XSTORE_MAX_OUTPUT (or no memory for it) drops the output and breaks
 * c.  Kicks c's owner unless c is serving its own input.
 */
void xconn_queue(struct xstore_conn *c, uint32_t type, uint32_t req_id,
		 uint32_t tx_id, const void *a, size_t alen, const void *b,
		 size_t blen);
/* Answer req with XS_ERROR and err's name (xsd_errors; EINVAL if none). */
void xconn_error(struct xstore_conn *c, const struct xsd_sockmsg *req,
		 int err);

/* ---- xstore-perm.c ---- */

/*
 * Canonical absolute path of in (for domain domid) into out[0..outsize):
 * 0 or -EINVAL.  *relative (may be NULL) says whether in was relative.
 */
int xpath_canonicalize(uint32_t domid, const char *in, char *out,
		       size_t outsize, bool *relative);
/* XT_PERM_* that domid (priv: privileged) has on a node with ACL p[0..n). */
uint32_t xperm_of(uint32_t domid, bool priv, const struct xt_perm *p,
		  uint32_t n);
/* XT_PERM_* that v's caller has on n (everything when !v->check). */
uint32_t xperm_view(const struct xview *v, const struct xnode *n);

/* ---- xstore-watch.c ---- */

/*
 * Watch name in as domain domid means: "@introduceDomain",
 * "@releaseDomain" or a canonical path, into out (XENSTORE_ABS_PATH_MAX
 * + 1 bytes); *strip = the prefix a relative path got.  0 or -EINVAL.
 */
int xwatch_path(uint32_t domid, const char *in, char *out, size_t *strip);
/*
 * Add watch (path, token) to c: -EEXIST if it has it, -E2BIG beyond
 * XSTORE_MAX_WATCHES, -ENOMEM.  *out: the new watch (c owns it).
 */
int xwatch_add(struct xstore_conn *c, const char *path, size_t strip,
	       const char *token, const struct xwatch **out);
/* Remove watch (path, token) from c: 0 or -ENOENT. */
int xwatch_remove(struct xstore_conn *c, const char *path, const char *token);
/* Remove every watch of c. */
void xwatch_free_all(struct xstore_conn *c);
/* Queue w's event for path on c (nothing if it would not fit). */
void xwatch_event(struct xstore_conn *c, const struct xwatch *w,
		  const char *path);
/*
 * A change at path of the live tree (or a special "@..." event): the
 * events it causes, to every connection of s that may read a node with
 * ACL perms[0..nperms) (the node after the change, or before its removal).
 */
void xwatch_fire(struct xstore *s, const char *path,
		 const struct xt_perm *perms, uint32_t nperms, bool removed);
/*
 * During a commit's replay (v->fired set), has this change fired already?
 * Remembers it if not.  false outside a replay.
 */
bool xwatch_fired_before(struct xview *v, const char *path, bool removed);
/* n at path changed on v: fire, unless v is a transaction's or it fired. */
void xwatch_fire_node(struct xview *v, const char *path,
		      const struct xnode *n);

/* ---- xstore-txn.c ---- */

/*
 * A new transaction of c; *id its number (never 0, unique within c).
 * -ENOSPC beyond XSTORE_MAX_TRANSACTIONS, -ENOMEM.
 */
int xtx_start(struct xstore_conn *c, uint32_t *id);
/* c's transaction id, or NULL. */
struct xtx *xtx_find(const struct xstore_conn *c, uint32_t id);
/* Take tx off c's list (it stays allocated: xtx_free it). */
void xtx_unlink(struct xstore_conn *c, struct xtx *tx);
/*
 * May tx commit on s?  0; -ENOMEM if it lost track of something (no
 * memory for its record or log); -EAGAIN if a node it looked at changed.
 */
int xtx_check(const struct xstore *s, const struct xtx *tx);
void xtx_free(struct xtx *tx);
/* Free every transaction of c. */
void xtx_free_all(struct xstore_conn *c);
/*
 * Record that v's transaction (none: nothing) looked at path[0..len),
 * n (NULL: absent) there.  Without memory it poisons the transaction.
 */
void xtx_note(struct xview *v, const char *path, size_t len,
	      const struct xnode *n);
/* Every node of the subtree n at buf[0..len) (buf: ABS_PATH_MAX + 1). */
void xtx_note_subtree(struct xview *v, char *buf, size_t len,
		      const struct xnode *n);
/* Log a change in v's transaction: 0 or -ENOMEM (then poisoned). */
int xtx_log(struct xview *v, enum xop_type type, const char *path,
	    const void *value, uint32_t len, const struct xt_perm *perms,
	    uint32_t nperms);
/* Give v's transaction its own tree before its first change: 0, -ENOMEM. */
int xtx_own_tree(struct xview *v);

/* ---- xstore-node.c ---- */

/* Find path needing perm: 0, -ENOENT (caller could create it) or -EACCES. */
int xview_get(struct xview *v, const char *path, uint32_t perm,
	      struct xnode **out);
/* WRITE (value[0..len)) or MKDIR (mkdir) path, making missing parents. */
int xview_write(struct xview *v, const char *path, const void *value,
		uint32_t len, bool mkdir);
/* RM path and everything below it. */
int xview_rm(struct xview *v, const char *path);
/* SET_PERMS path to perms[0..nperms). */
int xview_set_perms(struct xview *v, const char *path,
		    const struct xt_perm *perms, uint32_t nperms);
/*
 * Replay tx's change log on c's store's live tree, unchecked, firing
 * each changed node once.  0 or the first failure (-ENOMEM: the log is
 * applied half-way).
 */
int xview_commit(struct xstore_conn *c, const struct xtx *tx);

#endif /* SIM_XSTORE_INT_H */
