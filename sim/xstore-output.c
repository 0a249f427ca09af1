/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xstore-output.c: a connection's output queue (the bottom of xensim's
 * xenstore engine, see xstore-int.h): every reply, error reply and watch
 * event is queued here, and the owner of the connection writes it out
 * through xstore_conn_output()/xstore_conn_consume().
 *
 * Owns the out, out_off, out_len and out_cap of each struct xstore_conn,
 * and breaks a connection whose pending output grows past
 * XSTORE_MAX_OUTPUT (it stopped reading).
 */
#include <config.h>

#include <errno.h>	/* before xs_wire.h: its xsd_errors table */
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "log.h"
#include "xstore-int.h"

static void
conn_overflow(struct xstore_conn *c)
{
	bk_dbg(BK_DBG_SIM, "xenstore: domain %u connection stopped reading: dropped",
	       c->domid);
	free(c->out);
	c->out = NULL;
	c->out_off = c->out_len = c->out_cap = 0;
	c->broken = true;
}

void
xconn_queue(struct xstore_conn *c, uint32_t type, uint32_t req_id,
	    uint32_t tx_id, const void *a, size_t alen, const void *b,
	    size_t blen)
{
	struct xsd_sockmsg h = {
		.type = type, .req_id = req_id, .tx_id = tx_id,
		.len = (uint32_t)(alen + blen),
	};
	size_t need = HDR_SIZE + alen + blen;

	if (c->broken)
		return;		/* its last message (the error) is queued */
	if (c->out_off && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len - c->out_off + need > XSTORE_MAX_OUTPUT) {
		conn_overflow(c);
		return;
	}
	if (c->out_off && c->out_len + need > c->out_cap) {
		memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
		c->out_len -= c->out_off;
		c->out_off = 0;
	}
	if (c->out_len + need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *p;

		while (cap < c->out_len + need)
			cap *= 2;
		p = realloc(c->out, cap);
		if (!p) {
			conn_overflow(c);
			return;
		}
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, &h, HDR_SIZE);
	if (alen)
		memcpy(c->out + c->out_len + HDR_SIZE, a, alen);
	if (blen)
		memcpy(c->out + c->out_len + HDR_SIZE + alen, b, blen);
	c->out_len += need;
	if (!c->serving && c->kick)
		c->kick(c->opaque);
}

static const char *
errno_name(int err)
{
	for (size_t i = 0; i < ARRAY_SIZE(xsd_errors); i++)
		if (xsd_errors[i].errnum == err)
			return xsd_errors[i].errstring;
	return "EINVAL";
}

void
xconn_error(struct xstore_conn *c, const struct xsd_sockmsg *req, int err)
{
	const char *name = errno_name(err);

	xconn_queue(c, XS_ERROR, req->req_id, req->tx_id, name,
		    strlen(name) + 1, NULL, 0);
}

bool
xstore_conn_broken(const struct xstore_conn *c)
{
	return c->broken;
}

const void *
xstore_conn_output(const struct xstore_conn *c, size_t *len)
{
	*len = c->out_len - c->out_off;
	return c->out ? c->out + c->out_off : "";
}

void
xstore_conn_consume(struct xstore_conn *c, size_t n)
{
	assert(n <= c->out_len - c->out_off);
	c->out_off += n;
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
}
