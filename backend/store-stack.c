/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-stack.c: what a vbd's "params" opens (store.h "Stacks") and the
 * claims that keep one writer per backing (store.h "Claims").
 *
 * Uses only the public functions of store.h: a stack is a base driver
 * opened with bk_store_open() and the blkcrash wrappers opened on it,
 * each with the layer below as cfg->lower.  The messages written here
 * go to the device's xenstore error node after "params: ".
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "store.h"

/* why->msg = the formatted line, cut to fit (a long path is cut). */
static void why_set(struct bk_store_why *why, const char *fmt, ...)
	ATTRIBUTE_FORMAT_PRINTF(2, 3);

static void
why_set(struct bk_store_why *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why->msg, sizeof(why->msg), fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- */
/* params.                                                            */
/* ---------------------------------------------------------------- */

int
bk_params_parse(const char *params, struct bk_params *out, struct bk_store_why *why)
{
	const struct bk_store_driver *drv = NULL;
	const char *colon = strchr(params, ':'), *arg = params;

	memset(out, 0, sizeof(*out));
	memset(why, 0, sizeof(*why));
	if (colon) {
		char name[16];
		size_t n = (size_t)(colon - params);

		if (n < sizeof(name)) {
			memcpy(name, params, n);
			name[n] = '\0';
			/* libxl's prefixes for a file or a block device */
			if (!strcmp(name, "phy") || !strcmp(name, "aio") || !strcmp(name, "raw"))
				drv = &bk_store_file_driver;
			else
				drv = bk_store_find(name, why);
		}
		/* a wrapper stacks on a store: blkbackd's options choose it */
		if (!drv || drv->wrapper) {
			if (!drv && why->msg[0])	/* a module's trouble */
				return -EINVAL;
			why_set(why, "unknown storage driver in \"%s\"", params);
			return -EINVAL;
		}
		arg = colon + 1;
	} else {
		drv = &bk_store_file_driver;
	}
	out->arg = strdup(arg);
	if (!out->arg) {
		why_set(why, "out of memory");
		return -ENOMEM;
	}
	out->driver = drv;
	return 0;
}

void
bk_params_free(struct bk_params *p)
{
	free(p->arg);
	memset(p, 0, sizeof(*p));
}

/* ---------------------------------------------------------------- */
/* Stacks.                                                            */
/* ---------------------------------------------------------------- */

int
bk_stack_open(const struct bk_params *p, const struct bk_stack_config *c,
	      bool check_only, struct bk_store **top, struct bk_store_why *why)
{
	struct bk_store_config base = {
		.arg = p->arg,
		.read_only = c->read_only,
		.writethrough = c->writethrough,
		/* a stack with wrappers does not follow a resize (store.h) */
		.notify_efd = c->record_path || c->volatile_cache ? NULL : c->notify_efd,
		.state_dir = c->state_dir,
		.io_engine = c->io_engine,
	};
	const struct bk_store_driver *wrappers[2];
	struct bk_store_why w;
	struct bk_store *s;
	unsigned int nw = 0, i;
	uint64_t size;
	int rc;

	*top = NULL;
	memset(why, 0, sizeof(*why));
	rc = bk_store_open(p->driver, &base, &s, &w);
	if (rc < 0) {
		if (w.bad_arg)	/* the driver's words name the driver and arg */
			*why = w;
		else
			why_set(why, "cannot open %s store \"%s\": %s",
				p->driver->name, p->arg, w.msg);
		return rc;
	}
	size = bk_store_features(s)->size;
	if (size < 512) {
		bk_store_close(s);
		why_set(why, "%s store \"%s\" is empty (%llu bytes): nothing to serve",
			p->driver->name, p->arg, (unsigned long long)size);
		return -EINVAL;
	}
	if (check_only) {
		bk_store_close(s);
		return 0;
	}

	/* blkcrash: record(base), then volatile(record(base)) */
	if (c->record_path)
		wrappers[nw++] = &bk_store_record_driver;
	if (c->volatile_cache)
		wrappers[nw++] = &bk_store_volatile_driver;
	for (i = 0; i < nw; i++) {
		struct bk_store_config wc = {
			.read_only = c->read_only,
			.writethrough = c->writethrough,
			.lower = s,
			.record_path = c->record_path,
		};
		struct bk_store *up;

		rc = bk_store_open(wrappers[i], &wc, &up, &w);
		if (rc < 0) {
			why_set(why, "cannot stack the %s store: %s", wrappers[i]->name,
				w.msg);
			bk_stack_close(s);
			return rc;
		}
		s = up;
	}
	*top = s;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Claims.                                                            */
/* ---------------------------------------------------------------- */

int
bk_claim_id(const struct bk_params *p, char *id, size_t len)
{
	if (!p->driver->identify)
		return -EOPNOTSUPP;	/* RAM, nothing: no backing to share */
	return p->driver->identify(p->arg, id, len);
}

int
bk_claim_check(const struct bk_claims *reg, const struct bk_params *p,
	       bool read_only, const struct bk_claim **holder)
{
	return bk_claim_check_shared(reg, p, read_only, NULL, NULL, holder);
}

int
bk_claim_check_shared(const struct bk_claims *reg, const struct bk_params *p, bool read_only,
		      bool (*may_share)(const struct bk_claim *c, void *arg), void *arg,
		      const struct bk_claim **holder)
{
	char id[sizeof(reg->head->id)];

	if (bk_claim_id(p, id, sizeof(id)) < 0) {
		if (holder)
			*holder = NULL;
		return 0;	/* the open says why */
	}
	return bk_claim_check_id(reg, id, read_only, may_share, arg, holder);
}

int
bk_claim_check_id(const struct bk_claims *reg, const char *id, bool read_only,
		  bool (*may_share)(const struct bk_claim *c, void *arg), void *arg,
		  const struct bk_claim **holder)
{
	const struct bk_claim *c, *draining = NULL;

	if (holder)
		*holder = NULL;
	if (!id)
		return 0;	/* not identified: the open says why */
	for (c = reg->head; c; c = c->next) {
		/* a closing store may still write (a cache's write-back):
		 * waited for even by the vbd's own next connection, whose
		 * frontend is the same VM */
		if (strcmp(c->id, id) || (c->read_only && read_only) ||
		    (may_share && !c->closing && may_share(c, arg)))
			continue;
		if (!c->draining) {
			/* a connected user: a refusal, whatever else drains */
			if (holder)
				*holder = c;
			return -EBUSY;
		}
		if (!draining)
			draining = c;
	}
	if (!draining)
		return 0;
	if (holder)
		*holder = draining;
	return -EINPROGRESS;
}

struct bk_claim *
bk_claim_take(struct bk_claims *reg, const struct bk_params *p, bool read_only,
	      const char *owner)
{
	char id[sizeof(reg->head->id)];

	if (bk_claim_id(p, id, sizeof(id)) < 0)
		return NULL;
	return bk_claim_take_id(reg, id, read_only, owner);
}

struct bk_claim *
bk_claim_take_id(struct bk_claims *reg, const char *id, bool read_only, const char *owner)
{
	struct bk_claim *c;

	if (!id || strlen(id) >= sizeof(c->id) || !(c = calloc(1, sizeof(*c))))
		return NULL;
	memcpy(c->id, id, strlen(id) + 1);
	c->read_only = read_only;
	snprintf(c->owner, sizeof(c->owner), "%s", owner ? owner : "");
	c->next = reg->head;
	reg->head = c;
	return c;
}

void
bk_claim_release(struct bk_claims *reg, struct bk_claim *c)
{
	struct bk_claim **pp;

	if (!c)
		return;
	for (pp = &reg->head; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	free(c);
}
