/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.c: the one checked dispatch between blkbackd and its storage
 * drivers (store.h).
 *
 * Everything above the drivers calls them through here: opening and
 * closing a layer, queues, submit and reap.  This file checks the
 * contract of store.h on each call, so that a driver may rely on it and
 * a caller that breaks it hears of it (once per queue) instead of
 * corrupting a backing:
 *  - at open: the driver's table has the ops of its kind, a wrapper has
 *    a store below it, the features hang together (size a multiple of
 *    512; emulated FUA is a write and a flush, so it needs can_flush;
 *    secure discard needs discard; read-only as asked);
 *  - at submit: every io against the layer's features (store.h
 *    bk_store_submit());
 *  - at reap: a short READ/WRITE becomes -EIO, and a failed FLUSH marks
 *    the store failed (sticky).
 * Synchronous drivers (an io op, no queue ops) get the default queue
 * below: io() runs inside bk_store_submit() and the completions wait in
 * a per-queue ring whose eventfd polls readable while it is not empty.
 *
 * Also here: the driver registry, the helpers drivers use to fail an
 * open and to parse "SIZE[,OPTION...]", and the walks over a stack's
 * layers (bk_stack_close, bk_stack_power_cut).  Params, opening a stack
 * and the claims are in store-stack.c.
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "store.h"

struct bk_store {
	const struct bk_store_driver *drv;
	void *priv;			/* the driver's handle */
	struct bk_store_features f;	/* as probed at open, checked */
	struct bk_store *lower;		/* the layer below (wrappers), or NULL */
	bool failed;			/* atomic: a FLUSH failed (sticky) */
	unsigned int nqueues;		/* atomic: queues open on this layer */
};

struct bk_store_queue {
	struct bk_store *s;
	void *qpriv;			/* the driver's queue (asynchronous drivers) */
	unsigned int inflight;		/* submitted, not yet reaped */
	bool warned;			/* a contract violation was logged */

	/* The default queue (synchronous drivers): completed I/Os waiting
	 * to be reaped, in submission order. */
	int efd;			/* readable exactly while count > 0 */
	struct bk_io **done;		/* ring of cap entries */
	unsigned int cap, head, count;
};

/* ---------------------------------------------------------------- */
/* The driver registry.                                               */
/* ---------------------------------------------------------------- */

static const struct bk_store_driver *const drivers[] = {
	&bk_store_file_driver,
	&bk_store_memory_driver,
	&bk_store_null_driver,
	&bk_store_record_driver,
	&bk_store_volatile_driver,
	&bk_store_disk2008_driver,
};

/* The modules this project builds, and the package that has each. */
static const struct { const char *name, *package; } known_modules[] = {
	{ "rbd", "blkbackd-rbd" },
	{ "nbd", "blkbackd-nbd" },
};

/* Modules loaded so far (never unloaded: their drivers' tables are
 * referenced by open stores). */
static struct {
	pthread_mutex_t lock;
	unsigned int n;
	struct { char name[16]; const struct bk_store_driver *drv; } m[8];
} modules = { .lock = PTHREAD_MUTEX_INITIALIZER };

const struct bk_store_driver *
bk_store_lookup(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(drivers); i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

/* bk_store_param_drivers()'s string, built once */
static char param_drivers[128];
static pthread_once_t param_drivers_once = PTHREAD_ONCE_INIT;

static void
param_drivers_build(void)
{
	size_t i, n = 0;

	for (i = 0; i < ARRAY_SIZE(drivers); i++)
		if (!drivers[i]->wrapper && n < sizeof(param_drivers))
			n += (size_t)snprintf(param_drivers + n, sizeof(param_drivers) - n,
					      "%s%s", n ? "|" : "", drivers[i]->name);
	for (i = 0; i < ARRAY_SIZE(known_modules); i++)
		if (n < sizeof(param_drivers))
			n += (size_t)snprintf(param_drivers + n, sizeof(param_drivers) - n,
					      "|%s", known_modules[i].name);
}

const char *
bk_store_param_drivers(void)
{
	pthread_once(&param_drivers_once, param_drivers_build);
	return param_drivers;
}

static const char *
module_package(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(known_modules); i++)
		if (!strcmp(known_modules[i].name, name))
			return known_modules[i].package;
	return NULL;
}

/* dlopen store-NAME.so; modules.lock held.  NULL with why->msg. */
static const struct bk_store_driver *
module_load(const char *name, struct bk_store_why *why)
{
	const char *dir = getenv("BLKBACKD_STORE_DIR"), *pkg = module_package(name);
	const struct bk_store_driver *const *drv;
	const unsigned int *abi;
	char path[PATH_MAX];
	void *h;

	if (!dir || !*dir)
		dir = BK_STORE_MODULE_DIR;
	snprintf(path, sizeof(path), "%s/store-%s.so", dir, name);
	if (access(path, F_OK) < 0) {
		if (pkg)
			snprintf(why->msg, sizeof(why->msg), "the \"%s\" storage driver is not "
				 "installed (%.72s: package %s; from a build tree, "
				 "BLKBACKD_STORE_DIR=backend/.libs)", name, path, pkg);
		return NULL;	/* not a module either: the caller says "unknown" */
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why->msg, sizeof(why->msg), "the \"%s\" storage driver cannot be "
			 "loaded: %.120s", name, dlerror());
		log_error("store: %s", why->msg);
		return NULL;
	}
	abi = dlsym(h, "bk_store_module_abi");
	drv = dlsym(h, "bk_store_module_driver");
	if (!abi || !drv || *abi != BK_STORE_ABI || !*drv || strcmp((*drv)->name, name)) {
		snprintf(why->msg, sizeof(why->msg), "%.80s is not a blkbackd storage driver "
			 "module for this blkbackd (module ABI %d, want %d)", path,
			 abi ? (int)*abi : -1, BK_STORE_ABI);
		log_error("store: %s", why->msg);
		dlclose(h);
		return NULL;
	}
	log_info("store: loaded the \"%s\" storage driver from %s", name, path);
	return *drv;
}

const struct bk_store_driver *
bk_store_find(const char *name, struct bk_store_why *why)
{
	const struct bk_store_driver *drv = bk_store_lookup(name);
	unsigned int i;
	const char *c;

	why->msg[0] = '\0';
	if (drv)
		return drv;
	/* a file name of ours: lower-case letters and digits only */
	for (c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9')))
			return NULL;
	if (!*name || strlen(name) >= sizeof(modules.m[0].name))
		return NULL;
	pthread_mutex_lock(&modules.lock);
	for (i = 0; i < modules.n && !drv; i++)
		if (!strcmp(modules.m[i].name, name))
			drv = modules.m[i].drv;
	if (!drv && modules.n < ARRAY_SIZE(modules.m)) {
		drv = module_load(name, why);
		if (drv && !drv->wrapper) {
			snprintf(modules.m[modules.n].name, sizeof(modules.m[0].name), "%s", name);
			modules.m[modules.n++].drv = drv;
		} else {
			drv = NULL;
		}
	}
	pthread_mutex_unlock(&modules.lock);
	return drv;
}

/* ---------------------------------------------------------------- */
/* Helpers for drivers' open().                                       */
/* ---------------------------------------------------------------- */

int
bk_store_fail(const struct bk_store_config *cfg, int err, const char *who,
	      const char *fmt, ...)
{
	int saved = errno;
	char msg[sizeof(cfg->why->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);	/* %m: errno is still the caller's */
	va_end(ap);
	log_error("%s: %s", who, msg);
	if (cfg->why)
		snprintf(cfg->why->msg, sizeof(cfg->why->msg), "%s", msg);
	errno = saved;
	return err;
}

int
bk_store_bad_arg(const struct bk_store_config *cfg, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;

	if (cfg->why) {
		va_start(ap, fmt);
		vsnprintf(cfg->why->msg, sizeof(cfg->why->msg), fmt, ap);
		va_end(ap);
		cfg->why->bad_arg = true;
	}
	errno = saved;
	return -EINVAL;
}

int
bk_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case '\0': break;
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	default: return -EINVAL;
	}
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

static const char *
opt_find(const char *opts, const char *key, size_t klen)
{
	const char *p = opts;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 &&
		    (p[klen] == '\0' || p[klen] == ',' || p[klen] == '='))
			return p;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return NULL;
}

bool
bk_opt_has(const char *opts, const char *word)
{
	const char *p = opt_find(opts, word, strlen(word));

	return p && (p[strlen(word)] == '\0' || p[strlen(word)] == ',');
}

const char *
bk_opt_get(const char *opts, const char *key, char *buf, size_t len)
{
	size_t klen = strlen(key), n;
	const char *p = opt_find(opts, key, klen), *e;

	if (!p || p[klen] != '=')
		return NULL;
	p += klen + 1;
	e = strchr(p, ',');
	n = e ? (size_t)(e - p) : strlen(p);
	if (n >= len)
		n = 0;		/* too long: "", which no caller accepts */
	memcpy(buf, p, n);
	buf[n] = '\0';
	return buf;
}

/*
 * A word of opts that is not in known (NULL-terminated, or NULL for
 * none), up to its comma, into *len; NULL when every word is known.  A
 * word may carry "=value": only the key is compared.  Options a driver
 * does not know are a typo the admin must hear about, never ignored.
 */
static const char *
unknown_option(const char *const *known, const char *opts, size_t *len)
{
	const char *p = opts;

	while (p && *p) {
		size_t n = strcspn(p, ","), k = strcspn(p, ",=");
		unsigned int i;
		bool ok = false;

		for (i = 0; known && known[i]; i++)
			if (strlen(known[i]) == k && !strncmp(p, known[i], k))
				ok = true;
		if (!ok) {
			*len = n;
			return p;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	return NULL;
}

int
bk_store_parse_sized(const struct bk_store_config *cfg, const char *driver,
		     const char *const *known, uint64_t *size, const char **opts)
{
	const char *arg = cfg->arg ? cfg->arg : "";
	const char *comma = strchr(arg, ','), *bad;
	char *sizestr;
	size_t n;
	int rc;

	sizestr = strndup(arg, comma ? (size_t)(comma - arg) : strlen(arg));
	if (!sizestr)
		return -ENOMEM;
	rc = bk_parse_size(sizestr, size);
	if (rc < 0)
		rc = bk_store_bad_arg(cfg, "bad size \"%s\" for driver %s "
				      "(bytes, or with K/M/G/T)", sizestr, driver);
	free(sizestr);
	if (rc < 0)
		return rc;
	*opts = comma ? comma + 1 : NULL;
	bad = unknown_option(known, *opts, &n);
	if (bad)
		return bk_store_bad_arg(cfg, "unknown option \"%.*s\" for driver %s in \"%s\"",
					(int)n, bad, driver, arg);
	return 0;
}

/* ---------------------------------------------------------------- */
/* Opening and closing one layer.                                     */
/* ---------------------------------------------------------------- */

/* A driver or its open() broke the contract: log it, say it in why. */
static int open_violation(const struct bk_store_config *cfg, const char *fmt, ...)
	ATTRIBUTE_FORMAT_PRINTF(2, 3);

static int
open_violation(const struct bk_store_config *cfg, const char *fmt, ...)
{
	static const char prefix[] = "store contract: ";
	char *msg = cfg->why->msg;
	va_list ap;

	memcpy(msg, prefix, sizeof(prefix));
	va_start(ap, fmt);
	vsnprintf(msg + sizeof(prefix) - 1, sizeof(cfg->why->msg) - (sizeof(prefix) - 1),
		  fmt, ap);
	va_end(ap);
	log_error("%s", msg);
	return -EINVAL;
}

/* The table has the ops of its kind, and a wrapper has a lower store. */
static int
driver_check(const struct bk_store_driver *drv, const struct bk_store_config *cfg)
{
	bool async = drv->queue_open && drv->queue_close && drv->queue_fd &&
		     drv->submit && drv->reap;
	bool any_queue_op = drv->queue_open || drv->queue_close || drv->queue_fd ||
			    drv->submit || drv->reap || drv->poll;

	if (!drv->open || !drv->close)
		return open_violation(cfg, "%s driver: no open or close op", drv->name);
	if (drv->io ? any_queue_op : !async)
		return open_violation(cfg, "%s driver: needs an io op or all the queue ops, "
				      "not both", drv->name);
	if (!drv->queue_wait_setup != !drv->queue_wait)
		return open_violation(cfg, "%s driver: queue_wait_setup and queue_wait "
				      "go together", drv->name);
	if (drv->size && drv->wrapper)
		return open_violation(cfg, "%s driver: a wrapper with a size op", drv->name);
	if (drv->wrapper != (cfg->lower != NULL))
		return open_violation(cfg, "%s driver: %s", drv->name, drv->wrapper ?
				      "a wrapper opened without a store below" :
				      "not a wrapper, opened on a store below");
	return 0;
}

static const char *
fua_name(enum bk_fua fua)
{
	return fua == BK_FUA_NATIVE ? "native" : fua == BK_FUA_EMULATED ? "emulated" : "none";
}

/* Do the features the driver reported hang together? */
static int
features_check(const struct bk_store_driver *drv, const struct bk_store_config *cfg,
	       const struct bk_store_features *f)
{
	if (f->size % 512)
		return open_violation(cfg, "%s store: size %" PRIu64 " is not a multiple of 512",
				      drv->name, f->size);
	if (f->fua == BK_FUA_EMULATED && !f->can_flush)
		return open_violation(cfg, "%s store: fua %s without can_flush", drv->name,
				      fua_name(f->fua));
	if (f->fua != BK_FUA_NONE && f->fua != BK_FUA_EMULATED && f->fua != BK_FUA_NATIVE)
		return open_violation(cfg, "%s store: fua %d is not a bk_fua", drv->name,
				      (int)f->fua);
	if (f->can_secure_discard && !f->can_discard)
		return open_violation(cfg, "%s store: can_secure_discard without can_discard",
				      drv->name);
	if (f->read_only != cfg->read_only)
		return open_violation(cfg, "%s store: opened %s, reports read_only=%d", drv->name,
				      cfg->read_only ? "read-only" : "read-write", f->read_only);
	return 0;
}

int
bk_store_open(const struct bk_store_driver *drv, const struct bk_store_config *cfg,
	      struct bk_store **out, struct bk_store_why *why)
{
	struct bk_store_config c = *cfg;
	struct bk_store *s = NULL;
	int rc;

	*out = NULL;
	memset(why, 0, sizeof(*why));
	c.why = why;
	rc = driver_check(drv, &c);
	if (rc == 0) {
		s = calloc(1, sizeof(*s));
		rc = s ? 0 : -ENOMEM;
	}
	if (rc == 0) {
		rc = drv->open(&c, &s->priv, &s->f);
		if (rc > 0)
			rc = open_violation(&c, "%s driver: open returned %d", drv->name, rc);
		else if (rc == 0 && (rc = features_check(drv, &c, &s->f)) < 0)
			drv->close(s->priv);
	}
	if (rc < 0) {
		free(s);
		if (!why->msg[0])
			snprintf(why->msg, sizeof(why->msg), "%s", strerror(-rc));
		return rc;
	}
	s->drv = drv;
	s->lower = cfg->lower;
	*out = s;
	return 0;
}

void
bk_store_close(struct bk_store *s)
{
	unsigned int n;

	if (!s)
		return;
	n = __atomic_load_n(&s->nqueues, __ATOMIC_ACQUIRE);
	if (n)
		log_error("store contract: %s store closed with %u queue%s still open",
			  s->drv->name, n, n == 1 ? "" : "s");
	s->drv->close(s->priv);
	free(s);
}

const struct bk_store_features *
bk_store_features(const struct bk_store *s)
{
	return &s->f;
}

const char *
bk_store_name(const struct bk_store *s)
{
	return s->drv->name;
}

int
bk_store_size(struct bk_store *s, uint64_t *bytes)
{
	uint64_t now;
	int rc;

	/* a wrapper on top keeps the size it was opened with */
	if (!s->drv->size)
		return -EOPNOTSUPP;
	rc = s->drv->size(s->priv, &now);
	if (rc > 0)
		rc = -EIO;
	if (rc < 0)
		return rc;
	if (now % 512) {
		log_error("store contract: %s store: size %" PRIu64 " is not a multiple of 512",
			  s->drv->name, now);
		now &= ~(uint64_t)511;
	}
	/* growth only: queue threads read it in io_violation() */
	if (now > s->f.size)
		__atomic_store_n(&s->f.size, now, __ATOMIC_RELAXED);
	*bytes = now;
	return 0;
}

uint64_t
bk_store_size_now(const struct bk_store *s)
{
	return __atomic_load_n(&s->f.size, __ATOMIC_RELAXED);
}

bool
bk_store_failed(const struct bk_store *s)
{
	/* paired with the release in bk_store_reap */
	return smp_load_acquire(&s->failed);
}

void
bk_stack_close(struct bk_store *top)
{
	while (top) {
		struct bk_store *lower = top->lower;

		bk_store_close(top);
		top = lower;
	}
}

const char *
bk_stack_engine(const struct bk_store *top)
{
	for (; top; top = top->lower)
		if (top->f.engine)
			return top->f.engine;
	return NULL;
}

int
bk_io_engine_parse(const char *s, enum bk_io_engine *out)
{
	static const enum bk_io_engine all[] = {
		BK_IO_ENGINE_AUTO, BK_IO_ENGINE_LIBAIO, BK_IO_ENGINE_URING,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(all); i++)
		if (!strcmp(s, bk_io_engine_name(all[i]))) {
			*out = all[i];
			return 0;
		}
	return -EINVAL;
}

const char *
bk_io_engine_name(enum bk_io_engine e)
{
	switch (e) {
	case BK_IO_ENGINE_LIBAIO:
		return "libaio";
	case BK_IO_ENGINE_URING:
		return "io_uring";
	default:
		return "auto";
	}
}

void
bk_stack_power_cut(struct bk_store *top)
{
	/* top first: a cache above writes what survives through the layers
	 * below before they are cut (a recorder then marks its log last) */
	for (; top; top = top->lower)
		if (top->drv->power_cut)
			top->drv->power_cut(top->priv);
}

/* ---------------------------------------------------------------- */
/* The default queue of synchronous drivers.                          */
/* ---------------------------------------------------------------- */

static int
dq_open(struct bk_store_queue *q, unsigned int depth)
{
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0)
		return -errno;
	q->cap = depth;
	q->done = calloc(depth, sizeof(*q->done));
	return q->done ? 0 : -ENOMEM;
}

static void
dq_close(struct bk_store_queue *q)
{
	if (q->efd >= 0)
		close(q->efd);
	free(q->done);
}

static int
dq_submit(struct bk_store_queue *q, struct bk_io **ios, unsigned int n)
{
	struct bk_store *s = q->s;
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < n && q->count < q->cap; i++) {
		s->drv->io(s->priv, ios[i]);
		q->done[(q->head + q->count) % q->cap] = ios[i];
		/* Readable from the first completion on: the counter is 0
		 * here (dq_reap reads it empty), so the write cannot fail. */
		if (q->count++ == 0 && write(q->efd, &one, sizeof(one)) != sizeof(one))
			log_error("%s store: default queue eventfd: %m", s->drv->name);
	}
	return i ? (int)i : -EAGAIN;
}

static int
dq_reap(struct bk_store_queue *q, struct bk_io **done, unsigned int max)
{
	unsigned int n = 0;
	uint64_t v;

	while (n < max && q->count) {
		done[n++] = q->done[q->head];
		q->head = (q->head + 1) % q->cap;
		q->count--;
	}
	/* Not readable once nothing waits (EAGAIN: it was not). */
	if (q->count == 0 && read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN && n == 0)
		return -errno;
	return (int)n;
}

/* ---------------------------------------------------------------- */
/* Queues and I/O.                                                    */
/* ---------------------------------------------------------------- */

int
bk_store_queue_open(struct bk_store *s, unsigned int depth, struct bk_store_queue **out)
{
	struct bk_store_queue *q;
	int rc;

	*out = NULL;
	if (depth == 0)
		return -EINVAL;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->s = s;
	q->efd = -1;
	if (s->drv->io) {
		rc = dq_open(q, depth);
		if (rc < 0)
			dq_close(q);
	} else {
		rc = s->drv->queue_open(s->priv, depth, &q->qpriv);
	}
	if (rc < 0) {
		free(q);
		return rc;
	}
	__atomic_add_fetch(&s->nqueues, 1, __ATOMIC_RELEASE);
	*out = q;
	return 0;
}

void
bk_store_queue_close(struct bk_store_queue *q)
{
	if (!q)
		return;
	if (q->s->drv->io)
		dq_close(q);	/* nothing in flight: io() ran in submit */
	else
		q->s->drv->queue_close(q->qpriv);
	__atomic_sub_fetch(&q->s->nqueues, 1, __ATOMIC_RELEASE);
	free(q);
}

int
bk_store_queue_fd(const struct bk_store_queue *q)
{
	return q->s->drv->io ? q->efd : q->s->drv->queue_fd(q->qpriv);
}

bool
bk_store_queue_edge(struct bk_store_queue *q)
{
	const struct bk_store_driver *drv = q->s->drv;

	if (drv->io || !drv->queue_edge)
		return false;
	return drv->queue_edge(q->qpriv);
}

int
bk_store_queue_wait_setup(struct bk_store_queue *q, const int *fds, unsigned int n)
{
	const struct bk_store_driver *drv = q->s->drv;

	if (drv->io || !drv->queue_wait_setup || !drv->queue_wait)
		return -EOPNOTSUPP;
	if (n > BK_STORE_WAIT_FDS || (n && q->inflight))
		return -EINVAL;
	return drv->queue_wait_setup(q->qpriv, fds, n);
}

int
bk_store_wait(struct bk_store_queue *q, bool block, unsigned int *fired)
{
	*fired = 0;
	return q->s->drv->queue_wait(q->qpriv, block, fired);
}

static const char *
op_name(enum bk_io_op op)
{
	switch (op) {
	case BK_IO_READ: return "READ";
	case BK_IO_WRITE: return "WRITE";
	case BK_IO_FLUSH: return "FLUSH";
	case BK_IO_DISCARD: return "DISCARD";
	}
	return "?";
}

/*
 * Does io break the contract on a store with features f?  False, or
 * true with what it breaks in why (for the log).  In the order of
 * store.h bk_store_submit().
 */
static bool
io_violation(const struct bk_store_features *f, const struct bk_io *io, char *why,
	     size_t len)
{
	const char *op = op_name(io->op);

	if (io->op != BK_IO_READ && io->op != BK_IO_WRITE && io->op != BK_IO_FLUSH &&
	    io->op != BK_IO_DISCARD) {
		snprintf(why, len, "unknown op %d", (int)io->op);
		return true;
	}
	if (io->op == BK_IO_READ || io->op == BK_IO_WRITE) {
		/* grows while queues run (bk_store_size) */
		uint64_t size = __atomic_load_n(&f->size, __ATOMIC_RELAXED), sum = 0;
		int i;

		if (io->len == 0) {
			snprintf(why, len, "%s of 0 bytes at %" PRIu64, op, io->offset);
			return true;
		}
		if ((io->offset | io->len) % 512) {
			snprintf(why, len, "%s of %" PRIu64 " bytes at %" PRIu64
				 ": not a multiple of 512", op, io->len, io->offset);
			return true;
		}
		if (io->len > size || io->offset > size - io->len) {
			snprintf(why, len, "%s of %" PRIu64 " bytes at %" PRIu64 ": past the "
				 "end (%" PRIu64 " bytes)", op, io->len, io->offset, size);
			return true;
		}
		if (!io->iov || io->iovcnt < 1 || io->iovcnt > IOV_MAX) {
			snprintf(why, len, "%s with %d iovecs", op, io->iovcnt);
			return true;
		}
		for (i = 0; i < io->iovcnt && sum <= io->len; i++)
			sum += io->iov[i].iov_len <= io->len ? io->iov[i].iov_len : io->len + 1;
		if (sum != io->len) {
			snprintf(why, len, "%s of %" PRIu64 " bytes with iovecs of %s%" PRIu64
				 " bytes", op, io->len, sum > io->len ? "more than " : "",
				 sum > io->len ? io->len : sum);
			return true;
		}
	}
	if ((io->op == BK_IO_WRITE || io->op == BK_IO_DISCARD) && f->read_only) {
		snprintf(why, len, "%s on a read-only store", op);
		return true;
	}
	if ((io->flags & BK_IO_FUA) && f->fua != BK_FUA_NATIVE) {
		snprintf(why, len, "%s with FUA on a store whose fua is %s", op,
			 fua_name(f->fua));
		return true;
	}
	if (io->op == BK_IO_FLUSH && !f->can_flush) {
		snprintf(why, len, "FLUSH on a store that cannot flush");
		return true;
	}
	if (io->op == BK_IO_DISCARD && !f->can_discard) {
		snprintf(why, len, "DISCARD on a store that cannot discard");
		return true;
	}
	if ((io->flags & BK_IO_SECURE) && !f->can_secure_discard) {
		snprintf(why, len, "%s with SECURE on a store that cannot secure-discard", op);
		return true;
	}
	return false;
}

int
bk_store_submit(struct bk_store_queue *q, struct bk_io **ios, unsigned int n)
{
	struct bk_store *s = q->s;
	unsigned int k;
	char why[160];
	int rc;

	for (k = 0; k < n; k++)
		if (io_violation(&s->f, ios[k], why, sizeof(why)))
			break;
	if (k == 0 && n > 0) {
		/* a bug in blkbackd: once per queue, not per request */
		if (!q->warned)
			log_error("store contract: %s store: %s", s->drv->name, why);
		q->warned = true;
		ios[0]->result = -EINVAL;
		ios[0]->host_action = "refused";
		return -EINVAL;
	}
	if (k == 0)
		return 0;
	/* the ios before a violation go in; it is first in the next call */
	rc = s->drv->io ? dq_submit(q, ios, k) : s->drv->submit(q->qpriv, ios, k);
	if (rc > 0)
		q->inflight += (unsigned int)rc;
	return rc;
}

int
bk_store_reap(struct bk_store_queue *q, struct bk_io **done, unsigned int max)
{
	struct bk_store *s = q->s;
	int n, i;

	n = s->drv->io ? dq_reap(q, done, max) : s->drv->reap(q->qpriv, done, max);
	for (i = 0; i < n; i++) {
		struct bk_io *io = done[i];

		if ((io->op == BK_IO_READ || io->op == BK_IO_WRITE) && io->result >= 0 &&
		    (uint64_t)io->result != io->len)
			io->result = -EIO;	/* a short count: never success */
		else if (io->op == BK_IO_FLUSH && io->result < 0 && io->result != -EOPNOTSUPP)
			smp_store_release(&s->failed, true);	/* paired with bk_store_failed */
	}
	if (n > 0)
		q->inflight -= (unsigned int)n < q->inflight ? (unsigned int)n : q->inflight;
	return n;
}

bool
bk_store_poll(struct bk_store_queue *q)
{
	const struct bk_store_driver *drv = q->s->drv;

	if (drv->io)
		return q->count > 0;
	return drv->poll ? drv->poll(q->qpriv) : false;
}

bool
bk_store_can_poll(const struct bk_store *s)
{
	return s->drv->io || s->drv->poll;
}

unsigned int
bk_store_inflight(const struct bk_store_queue *q)
{
	return q->inflight;
}
