/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd-backing.c: a vbd's backing and its claim on it (vbd-int.h): the
 * store stack opened for the vbd (store-stack.c), taken only when the
 * claims (d->claims) say that another vbd's use of the same backing
 * allows it -- shared only read-only, or by two frontends of one VM (a
 * migration), and waited for while a draining vbd still writes it.
 * vbd.c calls it and decides what follows; a refusal comes back as a
 * struct bk_fault (negotiate.h), as negotiate.c's do, so nothing here
 * calls back into vbd.c.  Control thread only, except the opener
 * thread below, which touches its struct bk_open and nothing else, and
 * the closer threads further down (their struct bk_close, the count
 * d->closes under its lock).
 *
 * The store's open runs on a thread of its own (struct bk_open): a
 * store may wait on the network for seconds (an NBD server that
 * accepts and never answers holds the handshake for its 10 s bound; a
 * Ceph monitor that is down), and on the control thread that wait held
 * every other vbd's handshake, the control socket and SIGTERM.  Linux
 * blkback opens its backing in the xenwatch thread, which all xenbus
 * devices share; its backings are local block devices, ours may be a
 * server's.  Lifetime: dev->open is the control thread's; the thread
 * is detached and, once it has written its result, hands the object
 * back (done) and writes d->report_efd.  An open the vbd no longer
 * wants while it is out (the vbd went, or wants another open) is
 * abandoned: the thread closes what it opened and frees the object.
 */
#include <config.h>

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#include "fnv.h"
#include "log.h"
#include "negotiate.h"
#include "vbd-int.h"
#include "vbd.h"
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

/* One open of a store stack, on the opener thread. */
struct bk_open {
	pthread_mutex_t lock;
	bool done;			/* lock: the thread has finished */
	bool abandoned;			/* lock: nobody will take the result */
	int report_efd;			/* written once done (not abandoned) */
	/* what to open: copies, the vbd may change or go meanwhile */
	struct bk_params params;
	struct bk_stack_config sc;
	bool check_only;
	/* the result: the thread's until done, then the control thread's */
	int id_rc;			/* bk_claim_id(): 0 with id, or -errno */
	char id[sizeof(((struct bk_claim *)0)->id)];
	int rc;
	struct bk_store *store;
	struct bk_store_why why;
};

static void
open_free(struct bk_open *o)
{
	bk_stack_close(o->store);
	bk_params_free(&o->params);
	pthread_mutex_destroy(&o->lock);
	free(o);
}

static void *
opener(void *arg)
{
	struct bk_open *o = arg;
	uint64_t one = 1;
	bool abandoned;
	int efd = o->report_efd;

	/* the claims' key first: for a file a stat(), which waits as long
	 * as its file system does */
	o->id_rc = bk_claim_id(&o->params, o->id, sizeof(o->id));
	o->rc = bk_stack_open(&o->params, &o->sc, o->check_only, &o->store, &o->why);
	pthread_mutex_lock(&o->lock);
	o->done = true;
	abandoned = o->abandoned;
	pthread_mutex_unlock(&o->lock);
	if (abandoned)
		open_free(o);
	else if (write(efd, &one, sizeof(one)) < 0)
		log_error("store open: waking the control thread: %m");
	return NULL;
}

/* Run fn(arg) on a detached thread with every signal blocked (signals
 * are the control thread's, through its signalfd).  0/-errno. */
static int
start_detached(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int r;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = -pthread_create(&t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return r;
}

/* Start opening c's params on an opener thread: dev->open.  0/-errno. */
static int
open_start(struct bk_dev *dev, const struct bk_stack_config *sc, bool check_only)
{
	struct bk_open *o = calloc(1, sizeof(*o));
	int r;

	if (!o)
		return -ENOMEM;
	o->params.driver = dev->cfg.params.driver;
	o->params.arg = strdup(dev->cfg.params.arg);
	if (!o->params.arg) {
		free(o);
		return -ENOMEM;
	}
	pthread_mutex_init(&o->lock, NULL);
	o->report_efd = dev->d->report_efd;
	o->sc = *sc;
	o->check_only = check_only;
	r = start_detached(opener, o);
	if (r < 0) {
		open_free(o);
		return r;
	}
	dev->open = o;
	return 0;
}

/* (vbd-int.h) */
bool
bk_vbd_backing_opening(const struct bk_dev *dev)
{
	bool done;

	if (!dev->open)
		return false;
	pthread_mutex_lock(&dev->open->lock);
	done = dev->open->done;
	pthread_mutex_unlock(&dev->open->lock);
	return !done;
}

/* (vbd-int.h) */
bool
bk_vbd_backing_opened(const struct bk_dev *dev)
{
	return dev->open && !bk_vbd_backing_opening(dev);
}

/* (vbd-int.h) */
void
bk_vbd_backing_drop(struct bk_dev *dev)
{
	struct bk_open *o = dev->open;
	bool done;

	if (!o)
		return;
	dev->open = NULL;
	pthread_mutex_lock(&o->lock);
	done = o->done;
	o->abandoned = true;
	pthread_mutex_unlock(&o->lock);
	if (done) {	/* else the thread frees it */
		bk_vbd_store_close(dev->d, o->store, NULL);
		o->store = NULL;
		open_free(o);
	}
}

/*
 * Closes off the control thread.  A store's close may wait on what
 * backs it: rbd_close hands the image's exclusive lock back through the
 * cluster (and waits while its OSDs are down), a FUSE file's close(2)
 * sends FLUSH to its daemon, blkcrash's volatile cache writes back what
 * it holds.  On the control thread that wait held every other guest's
 * handshake, the control socket and SIGTERM, as the open did.  A store
 * is closed only once its queues are joined: no request is out and
 * nothing else holds it, so a detached thread closes it.
 *
 * The vbd's claim on the backing goes with the close and stays
 * draining until the close is over: a reconnecting guest, or another
 * vbd on the same backing, waits for it (claim_check: -EINPROGRESS) as
 * it waits for requests in flight, so it never reads under writes still
 * going down, nor has its writes overwritten by them.  Linux blkback
 * too lets go of its block device only after it has written Closed.
 * The closer marks its struct bk_close done and writes report_efd; the
 * control thread then releases the claim and frees the object
 * (bk_vbd_closes_reap).  Shutdown waits for every close (d->closes.out
 * reaching 0), so that an exit or an upgrade's exec never cuts a close
 * short (an rbd image's lock would be left to its owner's blocklisting).
 */
struct bk_close {
	struct bk_close *next;		/* closes->lock */
	struct bk_closes *closes;
	struct bk_claim *claim;		/* the control thread's; NULL: none */
	int report_efd;
	/* busy: held by the closer while it closes, by a power cut while
	 * it cuts; store is NULL once closed */
	pthread_mutex_t busy;
	struct bk_store *store;
	bool done;			/* closes->lock: the closer is finished */
};

static void *
closer(void *arg)
{
	struct bk_close *c = arg;
	struct bk_closes *cl = c->closes;
	uint64_t one = 1;
	int efd = c->report_efd;

	pthread_mutex_lock(&c->busy);
	bk_stack_close(c->store);
	c->store = NULL;
	pthread_mutex_unlock(&c->busy);
	/* what the close freed goes back to the system: this thread's
	 * malloc arena is no longer the control thread's, and a store's
	 * client (librados: megabytes a connection) would leave its memory
	 * in an arena only another closer may use again.  Not under ASan,
	 * whose allocator is not glibc's: glibc's malloc_trim then walks
	 * arenas nobody set up (SEGV in mtrim, seen in make check). */
#ifndef __SANITIZE_ADDRESS__
	malloc_trim(0);
#endif
	/* c is the control thread's once unlocked (it may free it at
	 * once).  The eventfd is written under the lock, before out falls:
	 * shutdown closes it once out is 0 (main.c teardown) */
	pthread_mutex_lock(&cl->lock);
	c->done = true;
	if (efd >= 0 && write(efd, &one, sizeof(one)) != sizeof(one)) {
		/* the eventfd's counter is full: it is readable anyway */
	}
	if (--cl->out == 0)
		pthread_cond_broadcast(&cl->done);
	pthread_mutex_unlock(&cl->lock);
	return NULL;
}

/* (vbd-int.h) */
void
bk_vbd_store_close(struct bk_daemon *d, struct bk_store *s, struct bk_claim *claim)
{
	struct bk_close *c;
	int r = -ENOMEM;

	if (!s) {
		bk_vbd_claim_release(d, claim);
		return;
	}
	if (claim)
		claim->draining = claim->closing = true;
	c = calloc(1, sizeof(*c));
	if (c) {
		c->store = s;
		c->claim = claim;
		c->closes = &d->closes;
		c->report_efd = d->report_efd;
		pthread_mutex_init(&c->busy, NULL);
		pthread_mutex_lock(&d->closes.lock);
		d->closes.out++;
		c->next = d->closes.list;
		d->closes.list = c;
		pthread_mutex_unlock(&d->closes.lock);
		r = start_detached(closer, c);
		if (r == 0)
			return;
		pthread_mutex_lock(&d->closes.lock);
		d->closes.out--;
		d->closes.list = c->next;	/* nothing else adds: the control thread's */
		pthread_mutex_unlock(&d->closes.lock);
		pthread_mutex_destroy(&c->busy);
		free(c);
	}
	log_error("closing a store on the control thread: no thread for it: %s", strerror(-r));
	bk_stack_close(s);
	bk_vbd_claim_release(d, claim);
}

/* (vbd-int.h) */
void
bk_vbd_claim_release(struct bk_daemon *d, struct bk_claim *claim)
{
	if (!claim)
		return;
	/* a vbd may wait for this backing (backing_wait): look again once
	 * the control thread is done with this event (xenbus.c) */
	if (claim->draining)
		d->rescan_waiters = true;
	bk_claim_release(&d->claims, claim);
}

/* (vbd.h) */
void
bk_vbd_closes_reap(struct bk_daemon *d)
{
	struct bk_closes *cl = &d->closes;
	struct bk_close **pp, *c, *done = NULL;

	pthread_mutex_lock(&cl->lock);
	for (pp = &cl->list; (c = *pp) != NULL;) {
		if (c->done) {
			*pp = c->next;
			c->next = done;
			done = c;
		} else {
			pp = &c->next;
		}
	}
	pthread_mutex_unlock(&cl->lock);
	while ((c = done) != NULL) {
		done = c->next;
		bk_vbd_claim_release(d, c->claim);
		pthread_mutex_destroy(&c->busy);
		free(c);
	}
}

/* (vbd.h) */
void
bk_vbd_closes_power_cut(struct bk_daemon *d)
{
	struct bk_closes *cl = &d->closes;
	struct bk_close *c;

	/* A close not yet begun is cut here (it then writes nothing); one
	 * in progress is not waited for: it may hang (a FUSE daemon that
	 * stopped, an rbd close with its OSDs down), and the caller's
	 * _exit cuts it off where it is, which a power cut may (what it
	 * had not written is lost).  Lock order: closes->lock, then busy,
	 * only tried (the closer takes busy alone). */
	pthread_mutex_lock(&cl->lock);
	for (c = cl->list; c; c = c->next) {
		if (pthread_mutex_trylock(&c->busy))
			continue;
		if (c->store)
			bk_stack_power_cut(c->store);
		pthread_mutex_unlock(&c->busy);
	}
	pthread_mutex_unlock(&cl->lock);
}

/* Shutdown: how long the closes out are waited for before it is said. */
#define CLOSES_SLOW_S 10

/* (vbd.h) */
void
bk_vbd_closes_wait(struct bk_daemon *d)
{
	struct bk_closes *cl = &d->closes;
	struct timespec until;
	bool said = false;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CLOSES_SLOW_S;
	pthread_mutex_lock(&cl->lock);
	while (cl->out && !said) {
		if (pthread_cond_timedwait(&cl->done, &cl->lock, &until) == ETIMEDOUT) {
			log_error("stopping: still closing %u store%s after %d s (a backing that "
				  "hangs?); every vbd is done", cl->out, cl->out == 1 ? "" : "s",
				  CLOSES_SLOW_S);
			said = true;
		}
	}
	while (cl->out)
		pthread_cond_wait(&cl->done, &cl->lock);
	pthread_mutex_unlock(&cl->lock);
	bk_vbd_closes_reap(d);
}

static bool
same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Would opening p with sc now open what o opened? */
static bool
same_open(const struct bk_open *o, const struct bk_params *p, const struct bk_stack_config *sc)
{
	const struct bk_stack_config *a = &o->sc;

	return o->params.driver == p->driver && !strcmp(o->params.arg, p->arg) &&
	       a->read_only == sc->read_only && a->writethrough == sc->writethrough &&
	       same_str(a->record_path, sc->record_path) &&
	       a->volatile_cache == sc->volatile_cache && a->notify_efd == sc->notify_efd &&
	       same_str(a->state_dir, sc->state_dir) && a->io_engine == sc->io_engine;
}

/* Which backing a wait was for: its driver and arg. */
static uint64_t
params_hash(const struct bk_params *p)
{
	uint64_t h = blk_fnv1a64(p->arg, strlen(p->arg));

	return blk_fnv1a64_update(h, p->driver->name, strlen(p->driver->name));
}

/* Claims: may dev use its backing (id, NULL when not identified) now?
 * 0; -EINPROGRESS while a draining vbd still writes it; -EBUSY with *f. */
static int
claim_check(struct bk_dev *dev, const char *id, struct bk_fault *f)
{
	struct bk_daemon *d = dev->d;
	const struct bk_dev_config *c = &dev->cfg;
	const struct bk_claim *holder = NULL;
	int r;

	r = bk_claim_check_id(&d->claims, id, c->read_only, same_vm, dev, &holder);
	if (r == -EINPROGRESS) {
		snprintf(dev->backing_wait_id, sizeof(dev->backing_wait_id), "%s", id);
		dev->backing_wait_params = params_hash(&c->params);
		if (!dev->backing_wait && !strcmp(holder->owner, dev->name))
			log_info("vbd %s: \"%s\" is still being closed after its last "
				 "connection; waiting for it", dev->name, c->params.arg);
		else if (!dev->backing_wait)
			log_info("vbd %s: \"%s\" is still written by vbd %s, which is "
				 "finishing its requests in flight or closing it; waiting "
				 "for it",
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
	}
	return r;
}

/*
 * Take a finished open's result.  The claims first, as they stand now
 * (another vbd may have claimed the backing while this one opened; a
 * refusal says whose it is, whatever the open found): -EBUSY with *f,
 * or -EINPROGRESS while a draining vbd still writes it (opened again
 * once it is free).  Then the open's: 0 (dev->store, and the claim,
 * when not check_only) or -errno with *f.
 */
static int
open_take(struct bk_dev *dev, struct bk_fault *f)
{
	struct bk_open *o = dev->open;
	int r = claim_check(dev, o->id_rc == 0 ? o->id : NULL, f);

	if (r == 0 && o->rc < 0) {
		r = o->rc;
		snprintf(f->key, sizeof(f->key), "params");
		snprintf(f->msg, sizeof(f->msg), "%s", o->why.msg);
	}
	if (r == 0 && !o->check_only) {
		dev->store = o->store;
		o->store = NULL;
		dev->claim = o->id_rc == 0 ? bk_claim_take_id(&dev->d->claims, o->id,
							      dev->cfg.read_only, dev->name) : NULL;
		if (o->params.driver->process_lifetime) {
			/* what was opened, to be taken again at the next
			 * connection (bk_vbd_backing_keep) */
			dev->open = NULL;
			dev->kept = o;
			return 0;
		}
	}
	bk_vbd_backing_drop(dev);
	return r;
}

/* (vbd-int.h) */
bool
bk_vbd_backing_keep(struct bk_dev *dev)
{
	if (!dev->kept || !dev->store)
		return false;
	dev->kept->store = dev->store;
	dev->store = NULL;
	return true;
}

/* (vbd-int.h) */
void
bk_vbd_backing_drop_kept(struct bk_dev *dev)
{
	struct bk_open *o = dev->kept;

	if (!o)
		return;
	dev->kept = NULL;
	bk_vbd_store_close(dev->d, o->store, NULL);
	o->store = NULL;
	open_free(o);
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
	struct bk_open *o = dev->open;
	int r;

	/* the store this vbd's last connection had, for a connection of the
	 * same backing with the same knobs: taken as a finished open (and
	 * a check that it opens needs none).  Only between connections:
	 * while connected the store is dev->store's and stays so */
	if (dev->kept && dev->kept->store) {
		if (same_open(dev->kept, &c->params, &sc)) {
			if (check_only)
				return 0;
			bk_vbd_backing_drop(dev);	/* any other open */
			dev->open = dev->kept;
			dev->kept = NULL;
			return open_take(dev, f);
		}
		/* params or knobs rewritten: a new disk */
		bk_vbd_backing_drop_kept(dev);
	}
	/* waiting for a draining or closing vbd's claim (claim_check): no
	 * new open while it holds, or every event of the wait (the last
	 * open's own end among them) opened and closed the backing again,
	 * a busy loop for as long as a close lasts; the claim's release
	 * rescans the vbd (scan_backing_waiters) */
	if (!o && dev->backing_wait && dev->backing_wait_params == params_hash(&c->params) &&
	    bk_claim_check_id(&d->claims, dev->backing_wait_id, c->read_only, same_vm, dev,
			      NULL) == -EINPROGRESS)
		return -EINPROGRESS;
	if (o) {
		if (bk_vbd_backing_opening(dev))
			return -EINPROGRESS;
		/* finished: the open wanted now, with the knobs as they are
		 * now (params rewritten meanwhile: a CD-ROM's media change)? */
		if (o->check_only == check_only && same_open(o, &c->params, &sc))
			return open_take(dev, f);
		bk_vbd_backing_drop(dev);
	}
	/* the claims are checked when the result is taken: asking what the
	 * backing is (a file's stat) may wait as long as opening it */
	r = open_start(dev, &sc, check_only);
	if (r < 0) {
		snprintf(f->key, sizeof(f->key), "params");
		snprintf(f->msg, sizeof(f->msg), "no thread to open it: %s", strerror(-r));
		return r;
	}
	return -EINPROGRESS;
}
