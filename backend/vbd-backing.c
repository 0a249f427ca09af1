/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd-backing.c: a vbd's backing and its claim on it (vbd-int.h): the
 * store stack opened for the vbd (store-stack.c), after the claims
 * (d->claims) say whether another vbd's use of the same backing allows
 * it -- shared only read-only, or by two frontends of one VM (a
 * migration), and waited for while a draining vbd still writes it.
 * vbd.c calls it and decides what follows; a refusal comes back as a
 * struct bk_fault (negotiate.h), as negotiate.c's do, so nothing here
 * calls back into vbd.c.  Control thread only.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "log.h"
#include "negotiate.h"
#include "vbd-int.h"
#include "xbus.h"

/* /local/domain/<domid>/<key>: a malloc'd string or NULL. */
static char *
dom_read(struct bk_daemon *d, uint32_t domid, const char *key)
{
	char dir[48];

	snprintf(dir, sizeof(dir), "/local/domain/%u", domid);
	return xbus_read(d->xs, XBT_NULL, dir, key);
}

/* The vm path of the domain domid targets (a stub domain's), or NULL. */
static char *
target_vm(struct bk_daemon *d, uint32_t domid)
{
	char *t = dom_read(d, domid, "target"), *end, *vm = NULL;
	unsigned long target;

	if (!t)
		return NULL;
	errno = 0;
	target = strtoul(t, &end, 10);
	if (!errno && end != t && !*end && target <= UINT32_MAX)
		vm = dom_read(d, (uint32_t)target, "vm");
	free(t);
	return vm;
}

static bool
streq(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/*
 * May dev share its backing with the vbd holding claim c?  Xen's block
 * hotplug script (check_sharing, same_vm) lets two writers share a
 * device when both frontends belong to the same VM: a localhost
 * migration's source and target domains, which have the same
 * /local/domain/N/vm path and never run at once.  Compared like the
 * script: each domain's vm and its target's vm (a device model stub
 * domain), any pair equal.  Unlike the script a missing vm path never
 * matches (it pretended a vanished domain was the same VM).
 */
static bool
same_vm(const struct bk_claim *c, void *arg)
{
	struct bk_dev *dev = arg;
	struct bk_daemon *d = dev->d;
	unsigned long other;
	char *vm, *tvm, *ovm, *otvm, *end;
	bool same;

	errno = 0;
	other = strtoul(c->owner, &end, 10);
	if (errno || *end != '/' || other > UINT32_MAX)
		return false;
	vm = dom_read(d, dev->frontid, "vm");
	tvm = target_vm(d, dev->frontid);
	ovm = dom_read(d, (uint32_t)other, "vm");
	otvm = target_vm(d, (uint32_t)other);
	same = streq(vm, ovm) || streq(tvm, ovm) || streq(vm, otvm) || streq(tvm, otvm);
	if (same)
		log_info("vbd %s: shares \"%s\" with vbd %s: both frontends are VM %s",
			 dev->name, c->id, c->owner, streq(vm, ovm) ? vm : ovm ? ovm : otvm);
	free(vm);
	free(tvm);
	free(ovm);
	free(otvm);
	return same;
}

/* (vbd-int.h) */
int
bk_vbd_backing_open(struct bk_dev *dev, bool check_only, struct bk_fault *f)
{
	struct bk_daemon *d = dev->d;
	const struct bk_dev_config *c = &dev->cfg;
	const struct bk_stack_config sc = {
		.read_only = c->read_only,
		.writethrough = c->writethrough,
		.record_path = d->opt.record_path,
		.volatile_cache = d->opt.volatile_cache,
		/* a resize from the cluster (rbd) wakes the control loop,
		 * which asks the sizes (bk_xenbus_check_sizes) */
		.notify_efd = &d->size_efd,
		/* rbd: the image lock's owner, for a takeover after a crash */
		.state_dir = d->opt.state_dir,
		/* the vbd's io-engine key, else --io-engine */
		.io_engine = c->io_engine_set ? c->io_engine : d->opt.io_engine,
	};
	const struct bk_claim *holder = NULL;
	struct bk_store_why why;
	int r;

	r = bk_claim_check_shared(&d->claims, &c->params, c->read_only, same_vm, dev, &holder);
	if (r == -EINPROGRESS) {
		if (!dev->backing_wait)
			log_info("vbd %s: \"%s\" is still written by vbd %s, which is "
				 "finishing its requests in flight; waiting for it",
				 dev->name, c->params.arg, holder->owner);
		dev->backing_wait = true;
		return r;
	}
	dev->backing_wait = false;
	if (r == -EBUSY) {
		snprintf(f->key, sizeof(f->key), "params");
		snprintf(f->msg, sizeof(f->msg), "\"%s\" is already served by vbd %s%s; "
			 "a backing is shared only when every vbd has mode=r, "
			 "or every frontend is the same VM (a migration)",
			 c->params.arg, holder->owner,
			 holder->read_only ? " (read-only)" : " read-write");
		return r;
	}
	r = bk_stack_open(&c->params, &sc, check_only, &dev->store, &why);
	if (r < 0) {
		snprintf(f->key, sizeof(f->key), "params");
		snprintf(f->msg, sizeof(f->msg), "%s", why.msg);
		return r;
	}
	if (!check_only)
		dev->claim = bk_claim_take(&d->claims, &c->params, c->read_only, dev->name);
	return 0;
}

