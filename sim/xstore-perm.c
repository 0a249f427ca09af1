/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-perm.c: paths and permissions of xensim's xenstore engine (see
 * xstore-int.h): which node a name sent by a domain means (relative
 * names are under its /local/domain/<domid>), and what a domain may do
 * on a node, as C xenstored's canonicalize() and perm_for_conn().
 *
 * Owns no state: pure functions of their arguments.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "xstore-int.h"

static int
domain_prefix(uint32_t domid, char *buf, size_t size)
{
	int n = snprintf(buf, size, DOMAIN_ROOT "/%" PRIu32 "/", domid);

	return n < 0 || (size_t)n >= size ? -EINVAL : n;
}

/*
 * As C xenstored's canonicalize() and is_valid_nodename(): relative paths
 * are under /local/domain/<domid>/; only [A-Za-z0-9-/_@]; no "//", no
 * trailing '/' except for "/"; at most XENSTORE_ABS_PATH_MAX
 * (XENSTORE_REL_PATH_MAX for relative input).
 */
int
xpath_canonicalize(uint32_t domid, const char *in, char *out, size_t outsize,
		   bool *relative)
{
	static const char valid[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				    "abcdefghijklmnopqrstuvwxyz0123456789-/_@";
	size_t inlen = strlen(in);
	int plen = 0;

	/* "@..." names special watches, never a node (xenstored too). */
	if (in[0] == '@')
		return -EINVAL;
	if (in[0] != '/') {
		if (inlen > XENSTORE_REL_PATH_MAX)
			return -EINVAL;
		plen = domain_prefix(domid, out, outsize);
		if (plen < 0)
			return plen;
	}
	if (plen + inlen > XENSTORE_ABS_PATH_MAX || plen + inlen + 1 > outsize)
		return -EINVAL;
	memcpy(out + plen, in, inlen + 1);
	if (relative)
		*relative = plen != 0;
	if (strspn(out, valid) != strlen(out) || strstr(out, "//"))
		return -EINVAL;
	if (strcmp(out, "/") != 0 && out[strlen(out) - 1] == '/')
		return -EINVAL;
	return 0;
}

/* perm_for_conn in xenstored: the owner and dom0 may do everything. */
uint32_t
xperm_of(uint32_t domid, bool priv, const struct xt_perm *p, uint32_t n)
{
	if (priv || p[0].id == domid)
		return XT_PERM_READ | XT_PERM_WRITE;
	for (uint32_t i = 1; i < n; i++)
		if (p[i].id == domid)
			return p[i].perms;
	return p[0].perms;
}

uint32_t
xperm_view(const struct xview *v, const struct xnode *n)
{
	if (!v->check)
		return XT_PERM_READ | XT_PERM_WRITE;
	return xperm_of(v->domid, v->priv, n->perms, n->nperms);
}
