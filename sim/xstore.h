/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore.h: xensim's xenstore server, without sockets (private to sim/).
 *
 * Two layers:
 *   - struct xstore: the store proper.  The node tree, the connections
 *     with their watches and transactions, the introduced domains, and
 *     the request dispatcher (xstore.c and the parts xstore-int.h lists).
 *     It never touches a file descriptor, so the fuzzer and the unit
 *     tests drive it with plain byte buffers.
 *   - struct xsock (xstore-sock.c): unix sockets on the sim_loop, one
 *     listener per domain, feeding bytes into xstore connections.
 *
 * Protocol: <xen/io/xs_wire.h> and docs/misc/xenstore.txt; semantics
 * follow C xenstored (tools/xenstore) where this file says nothing:
 *   - permissions: entry 0 = owner + default for everybody else, entries
 *     1.. per domain; the owner and dom0 always have full access; a new
 *     node inherits its parent's ACL, owned by its creator when the
 *     creator is unprivileged;
 *   - a missing node reads as ENOENT if its deepest existing ancestor is
 *     readable (writable, for a write) by the caller, else EACCES;
 *   - watches: the initial event on registration, then one event per
 *     change at or below the watched path and when the watched path or an
 *     ancestor is removed; only to connections that may read the node;
 *     paths not starting with '/' are relative to /local/domain/<domid>;
 *     @introduceDomain and @releaseDomain reach privileged connections;
 *   - transactions: reads see the live tree until the transaction's
 *     first change, then its own copy; commit fails with EAGAIN when any
 *     node the transaction looked at changed since it looked;
 *   - limits as C xenstored's defaults: payload XENSTORE_PAYLOAD_MAX,
 *     paths XENSTORE_ABS_PATH_MAX / XENSTORE_REL_PATH_MAX, 1000 nodes and
 *     values of 2048 bytes per unprivileged domain, 128 watches and 10
 *     transactions per connection.
 * A malformed message (payload longer than XENSTORE_PAYLOAD_MAX, unknown
 * or server-only type, arguments not NUL-terminated or of the wrong
 * count) gets XS_ERROR "EINVAL" and the connection is marked broken: the
 * owner flushes the output and closes it.
 *
 * Everything runs on one thread (the loop's).  0/-errno; pointers
 * NULL + errno.  Client errors are answered, never logged (a guest must
 * not flood the log): requests show under bk_dbg(BK_DBG_SIM); only a
 * commit failing half-way for lack of memory is logged.  xsock_* logs
 * socket failures, and connections under -v (log_verbose).
 */
#ifndef SIM_XSTORE_H
#define SIM_XSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sim_loop;
struct xstore;
struct xstore_conn;

/* Limits (C xenstored defaults). */
#define XSTORE_MAX_NODES_PER_DOMAIN	1000
#define XSTORE_MAX_VALUE_UNPRIV		2048
#define XSTORE_MAX_WATCHES		128
#define XSTORE_MAX_TRANSACTIONS		10
#define XSTORE_MAX_PERMS		64
/* Pending output beyond this marks a connection broken (it stopped reading). */
#define XSTORE_MAX_OUTPUT		(8u << 20)

/*
 * A store holding "/", "/local" and "/local/domain" (all owned by dom0,
 * no access for others).  Free with xstore_free() after every connection.
 */
struct xstore *xstore_new(void);
void xstore_free(struct xstore *s);
/*
 * An exact copy of s (tree, generations, introduced domains), which must
 * have no connection: the fuzzer builds its starting store once and
 * copies it for every input.  NULL with errno ENOMEM.
 */
struct xstore *xstore_clone(const struct xstore *s);

/*
 * Domain life cycle.  introduce: creates /local/domain/<domid> as libxl's
 * libxl__domain_make does (owner 0 with no access for others, read for
 * the domain; name, domid; cpu, memory, device, control read-only for the
 * domain; data, drivers, feature, attr, error, control/shutdown,
 * control/sysrq and device/suspend/event-channel owned by the domain),
 * marks the domain introduced and fires @introduceDomain.  dom0 (domid 0)
 * gets name "Domain-0" and inherits the root's ACL.  -EEXIST if already
 * introduced.
 * release: removes /local/domain/<domid> (firing watches), marks it gone
 * and fires @releaseDomain; its connections stay until the caller frees
 * them.  -ENOENT if not introduced.
 */
int xstore_domain_introduce(struct xstore *s, uint32_t domid,
			    const char *name);
int xstore_domain_release(struct xstore *s, uint32_t domid);
bool xstore_domain_introduced(const struct xstore *s, uint32_t domid);

/*
 * A connection of domain domid (0 = privileged).  kick(opaque) is called
 * when output becomes pending on it outside xstore_conn_input() on that
 * same connection (a watch event caused by another connection): the owner
 * should arrange to write it out.  kick must not free any connection.
 */
struct xstore_conn *xstore_conn_new(struct xstore *s, uint32_t domid,
				    void (*kick)(void *opaque), void *opaque);
/* A number of the owner's for c (xstore-sock: its peer's pid), 0 until set;
 * only the change hook shows it. */
void xstore_conn_set_tag(struct xstore_conn *c, uint64_t tag);
uint64_t xstore_conn_tag(const struct xstore_conn *c);
/*
 * fn(opaque, by, gen, path, value, len, removed) on every change of a
 * node's value in the live tree, in the order they are made, before any
 * watch fires for it or the request is answered: a write (value, len:
 * the node's value now) or a removal (removed: the path and all below
 * it; value NULL), by a request of connection by (NULL: the store's own
 * set-up, a domain's introduction).  A transaction's changes come at its
 * commit.  mkdir of a new node is a write of "".  fn must not call into
 * the store.  NULL turns it off.
 */
void xstore_set_change_hook(struct xstore *s,
			    void (*fn)(void *opaque, const struct xstore_conn *by,
				       uint64_t gen, const char *path, const void *value,
				       size_t len, bool removed),
			    void *opaque);
/* Drop the connection: its watches and transactions go with it. */
void xstore_conn_free(struct xstore_conn *c);
uint32_t xstore_conn_domid(const struct xstore_conn *c);

/*
 * Feed len bytes read from the client.  Complete messages are answered at
 * once (replies and watch events queue as output).  Returns 0, or -EPROTO
 * once the connection is broken (malformed message, output overflow):
 * the caller then writes out the pending output and frees it.
 */
int xstore_conn_input(struct xstore_conn *c, const void *buf, size_t len);
bool xstore_conn_broken(const struct xstore_conn *c);
/* Pending output: pointer + length (0: nothing); valid until the next call. */
const void *xstore_conn_output(const struct xstore_conn *c, size_t *len);
/* n bytes of the pending output were written. */
void xstore_conn_consume(struct xstore_conn *c, size_t n);

/* ---- sockets (xstore-sock.c) ---- */
struct xsock;

/* Serve store s on loop l; sockets live under dir. */
struct xsock *xsock_new(struct sim_loop *l, struct xstore *s, const char *dir);
/* Close every connection and listener, unlink the sockets. */
void xsock_free(struct xsock *x);
/*
 * Listen for domain domid: dir/xenstore.sock for 0, else
 * dir/dom<domid>/xenstore.sock (the directory must exist).
 */
int xsock_listen(struct xsock *x, uint32_t domid);
/* Stop listening for domid, unlink its socket, close its connections. */
void xsock_close_domain(struct xsock *x, uint32_t domid);

#endif /* SIM_XSTORE_H */
