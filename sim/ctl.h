/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.h: xensim's domain life cycle and its control socket (private to
 * sim/).
 *
 * The control socket DIR/ctl.sock speaks one request per connection, one
 * line of text each way and then data lines (xensim-ctl is the client):
 *   "create-domain NAME\n"  -> "OK\n<domid>\n"
 *   "destroy-domain ID\n"   -> "OK\n"
 *   "list\n"                -> "OK\n" then "<domid> <name>\n" per domain
 * or "ERR <ERRNO-NAME> <message>\n" (e.g. "ERR ENOENT no domain 7").
 *
 * Creating domain N: DIR/dom<N>/, hv_domain_create, the xenstore socket
 * DIR/dom<N>/xenstore.sock, then xstore_domain_introduce
 * (/local/domain/<N>, @introduceDomain).  Destroying it, in this order:
 * hv_domain_destroy (so that whoever reacts to @releaseDomain sees it
 * dead), its xenstore connections closed, xstore_domain_release
 * (/local/domain/<N> removed, @releaseDomain), DIR/dom<N>/ removed.
 * Domain ids are handed out increasing from 1 and not reused before
 * wrapping at DOMID_FIRST_RESERVED.  Loop thread only; 0/-errno.
 */
#ifndef SIM_CTL_H
#define SIM_CTL_H

#include <stdint.h>

struct sim_loop;
struct hv;
struct xstore;
struct xsock;
struct ctl;

/* Creates dom0 and listens on dir/ctl.sock. */
struct ctl *ctl_new(struct sim_loop *l, const char *dir, struct hv *hv,
		    struct xstore *s, struct xsock *x);
/* Destroys every domain but dom0, closes and unlinks dir/ctl.sock. */
void ctl_free(struct ctl *c);

/* Name: 1..63 characters of [A-Za-z0-9_.-], unique (-EEXIST). */
int ctl_domain_create(struct ctl *c, const char *name, uint32_t *domid);
/* -ENOENT unknown, -EPERM for dom0. */
int ctl_domain_destroy(struct ctl *c, uint32_t domid);

#endif /* SIM_CTL_H */
