/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-rbd.c: the "rbd" storage driver: a Ceph RBD image through
 * librbd's asynchronous C API (store.h).  Built only when configure
 * finds librbd and librados (HAVE_LIBRBD).
 *
 * Its arg is QEMU's spelling: "POOL/IMAGE[@SNAP][:KEY=VALUE]...", where
 * KEY is conf (the ceph.conf to read; default: librados's search path),
 * id (the cephx user without "client.", default admin) or any librados
 * option (rbd_cache=false, ...: set with rados_conf_set before the
 * connection; an option librados does not know is refused).  A snapshot
 * is read-only: it needs mode=r, as does opening the image itself
 * read-only.
 *
 * Probed once at open into struct bk_store_features:
 *   size           rbd_get_size, rounded down to 512
 *   sector sizes   512 / 512
 *   writeback      the image's effective rbd_cache (true) with a
 *                  rbd_cache_policy that acknowledges writes before the
 *                  OSDs have them (writeback, writearound) and
 *                  rbd_cache_max_dirty > 0; blkbackd's cache=writethrough
 *                  sets rbd_cache=false.  Without it every completed
 *                  write is on the OSDs: writeback false.
 *   can_flush      always (rbd_aio_flush; nothing to do without a cache)
 *   fua            writeback: EMULATED (write, then rbd_aio_flush;
 *                  librbd has no per-write FUA); else NATIVE (every
 *                  write is durable on completion)
 *   discard        read-write: rbd_aio_discard (no secure discard), with
 *                  rbd_skip_partial_discard=false unless the arg says
 *                  otherwise: the discarded range reads as zeroes
 * A writable open of an image with the exclusive-lock feature takes the
 * lock explicitly (rbd_lock_acquire), so that librbd does not hand it
 * over when another client asks: a second writer, on this host or any
 * other, is refused at its open, with the holder named, until the first
 * closes.  A writable open also watches the image's header
 * (rbd_update_watch): a resize from any host writes cfg->notify_efd,
 * and the size op reads the new size.
 *
 * Completions: librbd calls rbd_done() on one of its own threads.  It
 * pushes the request's slot onto the queue's lock-free list (one
 * compare-and-swap) and, if the list was empty, writes the queue's
 * eventfd (one system call per batch, not per request); the queue
 * thread reads the eventfd, then takes the whole list with one exchange
 * in reap.  No thread per request, no lock on the data path.
 * identify: "rbd:<fsid>/<pool>/<image>[@snap]", the cluster's fsid from
 * the configuration (no connection), else its mon_host.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <rados/librados.h>
#include <rbd/librbd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "store.h"

#ifndef RBD_FEATURE_EXCLUSIVE_LOCK
#define RBD_FEATURE_EXCLUSIVE_LOCK (1ULL << 2)
#endif

/* The librados options blkbackd sets before any of the admin's: a
 * cluster that does not answer must not hold the vbd's open for
 * librados's default 300 s, nor a guest's request for ever (librados
 * waits for an OSD or a monitor without limit by default): after
 * RBD_OP_TIMEOUT seconds the request fails (-ETIMEDOUT) and the guest
 * gets BLKIF_RSP_ERROR, as a disk that stopped answering would give it.
 * The admin may change both in params (rados_osd_op_timeout=N, ...). */
#define RBD_MOUNT_TIMEOUT "10"
#define RBD_OP_TIMEOUT "30"

/* The arg, split. */
struct rbd_spec {
	char *buf;			/* one copy of arg, cut in place */
	const char *pool, *image, *snap;	/* snap: NULL for the image */
	const char *conf, *id;		/* NULL: librados's defaults */
	char *opts;			/* the other KEY=VALUE words, ':'-separated */
};

struct rbd_store {
	rados_t cluster;
	rados_ioctx_t io;
	rbd_image_t image;
	struct rbd_spec spec;
	bool watching;
	uint64_t watch;
	const int *notify_efd;
	struct bk_store_features f;
	/* a writer holding the lock: its owner string as librbd names it,
	 * and the record of it in the state directory ("" none) */
	char owner[128];
	char owner_path[PATH_MAX];
	struct rbd_store *next_live;	/* live_owners */
};

/* This process's writers holding their image's lock: a recorded owner
 * that is not among them was a previous blkbackd's. */
static pthread_mutex_t live_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct rbd_store *live_owners;

/* One request handed to librbd. */
struct rbd_slot {
	struct rbd_queue *q;
	struct bk_io *io;
	rbd_completion_t c;
	ssize_t ret;			/* rbd_aio_get_return_value, set in rbd_done */
	struct rbd_slot *next;		/* the done list, or the free list */
};

struct rbd_queue {
	struct rbd_store *s;
	int efd;			/* readable: completions on the done list */
	struct rbd_slot *slots;		/* depth entries */
	struct rbd_slot *free;		/* queue thread only */
	struct rbd_slot *ready;		/* taken from done, not yet reaped (FIFO) */
	/* atomic: pushed by librbd's threads, taken by the queue thread */
	struct rbd_slot *done;
	unsigned int inflight;		/* queue thread: handed to librbd, not reaped */
	unsigned int in_cb;		/* atomic: rbd_done calls running */
};

/* ---------------------------------------------------------------- */
/* The arg.                                                           */
/* ---------------------------------------------------------------- */

static void
spec_free(struct rbd_spec *sp)
{
	free(sp->buf);
	free(sp->opts);
	memset(sp, 0, sizeof(*sp));
}

/*
 * Split arg into sp.  0, or -EINVAL through bk_store_bad_arg() naming
 * what is wrong (cfg may have no why: identify), or -ENOMEM.
 */
static int
spec_parse(const struct bk_store_config *cfg, const char *arg, struct rbd_spec *sp)
{
	char *p, *word, *slash, *at;
	size_t olen = 0;

	memset(sp, 0, sizeof(*sp));
	sp->buf = strdup(arg ? arg : "");
	sp->opts = calloc(1, strlen(arg ? arg : "") + 1);
	if (!sp->buf || !sp->opts) {
		spec_free(sp);
		return -ENOMEM;
	}
	p = strchr(sp->buf, ':');
	if (p)
		*p++ = '\0';
	slash = strchr(sp->buf, '/');
	at = strchr(sp->buf, '@');
	if (!slash || slash == sp->buf || !slash[1] || slash[1] == '@' ||
	    strchr(slash + 1, '/') || (at && (at < slash || !at[1]))) {
		bk_store_bad_arg(cfg, "bad image \"%s\" for driver rbd "
				 "(POOL/IMAGE[@SNAP][:conf=PATH][:id=USER][:OPTION=VALUE])",
				 sp->buf);
		spec_free(sp);
		return -EINVAL;
	}
	*slash = '\0';
	sp->pool = sp->buf;
	sp->image = slash + 1;
	if (at) {
		*at = '\0';
		sp->snap = at + 1;
	}
	while (p && *p) {
		char *eq;

		word = p;
		p = strchr(p, ':');
		if (p)
			*p++ = '\0';
		eq = strchr(word, '=');
		if (!eq || eq == word || !eq[1]) {
			bk_store_bad_arg(cfg, "bad option \"%s\" for driver rbd (KEY=VALUE)", word);
			spec_free(sp);
			return -EINVAL;
		}
		if (!strncmp(word, "conf=", 5)) {
			sp->conf = eq + 1;
		} else if (!strncmp(word, "id=", 3)) {
			sp->id = eq + 1;
		} else {
			if (olen)
				sp->opts[olen++] = ':';
			memcpy(sp->opts + olen, word, strlen(word));
			olen += strlen(word);
		}
	}
	return 0;
}

/* Does the arg set librados option name? */
static bool
spec_has_opt(const struct rbd_spec *sp, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = sp->opts; p && *p; p = strchr(p, ':') ? strchr(p, ':') + 1 : NULL)
		if (!strncmp(p, name, n) && p[n] == '=')
			return true;
	return false;
}

/* Is the handle's option name set to value? */
static bool
conf_is(rados_t cl, const char *name, const char *value)
{
	char buf[64];

	return rados_conf_get(cl, name, buf, sizeof(buf)) == 0 && !strcmp(buf, value);
}

/* A librados handle configured from sp (not connected).  0/-errno;
 * *what names the call that failed. */
static int
cluster_create(const struct rbd_spec *sp, bool writethrough, rados_t *out,
	       const char **what, char *bad, size_t badlen)
{
	rados_t cl;
	char *opts, *word, *p;
	int rc;

	*what = "rados_create";
	rc = rados_create(&cl, sp->id);
	if (rc < 0)
		return rc;
	*what = "rados_conf_read_file";
	rc = rados_conf_read_file(cl, sp->conf);
	if (rc < 0 && (sp->conf || rc != -ENOENT))
		goto err;
	*what = "rados_conf_set";
	rc = rados_conf_set(cl, "client_mount_timeout", RBD_MOUNT_TIMEOUT);
	if (rc == 0)
		rc = rados_conf_set(cl, "rados_osd_op_timeout", RBD_OP_TIMEOUT);
	if (rc == 0)
		rc = rados_conf_set(cl, "rados_mon_op_timeout", RBD_OP_TIMEOUT);
	if (rc < 0)
		goto err;
	/* a DISCARD reads back as zeroes, as on files: librbd's default
	 * skips the parts of a discard smaller than
	 * rbd_discard_granularity_bytes (the data stays); the admin's
	 * options below may say otherwise */
	rc = rados_conf_set(cl, "rbd_skip_partial_discard", "false");
	if (rc < 0)
		goto err;
	opts = strdup(sp->opts);
	if (!opts) {
		rc = -ENOMEM;
		goto err;
	}
	for (p = opts; p && *p; ) {
		char *eq;

		word = p;
		p = strchr(p, ':');
		if (p)
			*p++ = '\0';
		eq = strchr(word, '=');
		*eq = '\0';
		rc = rados_conf_set(cl, word, eq + 1);
		if (rc < 0) {
			*eq = '=';
			snprintf(bad, badlen, "%s", word);
			free(opts);
			goto err;
		}
	}
	free(opts);
	/* a lock blkbackd breaks (take_lock) is broken only with its holder
	 * fenced: blocklisted, so that a write the holder still has queued
	 * cannot land later.  librbd's default, set after the admin's
	 * options and ceph.conf: no configuration turns fencing off. */
	rc = rados_conf_set(cl, "rbd_blocklist_on_break_lock", "true");
	if (rc < 0)
		goto err;
	/* blkbackd's cache=writethrough: no librbd cache at all */
	if (writethrough && (rc = rados_conf_set(cl, "rbd_cache", "false")) < 0)
		goto err;
	/* Without librbd's cache, a write's data stays where the guest put
	 * it: librbd takes the iovecs we hand it (the guest's pages,
	 * data.c) without copying them.  librbd's default copies every
	 * write (rbd_disable_zero_copy_writes=true: a buffer changed while
	 * the messenger sends it fails the data CRC, the OSD drops the
	 * message and librados sends it again); a guest that changes a
	 * page it is writing gets either contents, as on a disk.  librbd
	 * blocks the completion until its last reference to the pages is
	 * dropped, so rbd_done means it no longer touches them, and the
	 * request's grants are released only after that.  Not with the
	 * cache on: a writeback or writearound cache makes librbd copy
	 * anyway, and a writethrough one keeps the written buffers as
	 * clean cache, holding the completion back until they are evicted
	 * (a write that never completes).  The admin's own setting wins;
	 * zero_copy_check() looks again at what the image got. */
	if (!spec_has_opt(sp, "rbd_disable_zero_copy_writes") && conf_is(cl, "rbd_cache", "false") &&
	    (rc = rados_conf_set(cl, "rbd_disable_zero_copy_writes", "false")) < 0)
		goto err;
	*out = cl;
	return 0;
err:
	rados_shutdown(cl);
	return rc;
}

/* ---------------------------------------------------------------- */
/* identify, open, close.                                             */
/* ---------------------------------------------------------------- */

static int
rbd_identify(const char *arg, char *id, size_t len)
{
	struct bk_store_config none = { .arg = arg };
	struct rbd_spec sp;
	const char *what;
	char where[128] = "", bad[64];
	rados_t cl;
	int rc, n;

	rc = spec_parse(&none, arg, &sp);
	if (rc < 0)
		return rc;
	rc = cluster_create(&sp, false, &cl, &what, bad, sizeof(bad));
	if (rc == 0) {
		if (rados_conf_get(cl, "fsid", where, sizeof(where)) < 0 || !where[0] ||
		    !strcmp(where, "00000000-0000-0000-0000-000000000000"))
			rc = rados_conf_get(cl, "mon_host", where, sizeof(where));
		rados_shutdown(cl);
	}
	if (rc == 0 && !where[0])
		rc = -ENOENT;
	if (rc == 0) {
		n = snprintf(id, len, "rbd:%s/%s/%s%s%s", where, sp.pool, sp.image,
			     sp.snap ? "@" : "", sp.snap ? sp.snap : "");
		rc = n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
	}
	spec_free(&sp);
	return rc;
}

/* The image's effective value of a librbd option into buf ("" unknown). */
static void
image_option(rbd_image_t image, rados_t cl, const char *name, char *buf, size_t len)
{
	rbd_config_option_t opts[512];
	int n = ARRAY_SIZE(opts), i;

	buf[0] = '\0';
	if (rbd_config_image_list(image, opts, &n) == 0) {
		for (i = 0; i < n; i++)
			if (!strcmp(opts[i].name, name))
				snprintf(buf, len, "%s", opts[i].value);
		rbd_config_image_list_cleanup(opts, n);
	}
	if (!buf[0] && rados_conf_get(cl, name, buf, len) < 0)
		buf[0] = '\0';
}

/* Does the image's librbd cache acknowledge writes the OSDs do not have
 * yet?  Then it needs flushes. */
static bool
cache_is_volatile(struct rbd_store *s)
{
	char on[16], policy[32], dirty[32];

	image_option(s->image, s->cluster, "rbd_cache", on, sizeof(on));
	image_option(s->image, s->cluster, "rbd_cache_policy", policy, sizeof(policy));
	image_option(s->image, s->cluster, "rbd_cache_max_dirty", dirty, sizeof(dirty));
	if (strcmp(on, "true") != 0)
		return false;
	if (!strcmp(policy, "writethrough"))
		return false;
	/* writeback, writearound, or unknown: say volatile (flushes are
	 * cheap where nothing is dirty; a lost flush is not) */
	return strcmp(dirty, "0") != 0;
}

/*
 * Zero-copy writes with librbd's cache on would hold writes back (see
 * cluster_create): the image may have got its cache from the pool's or
 * its own configuration (rbd config pool/image set), or the admin may
 * have asked for both.  Then reopen it with librbd copying the writes,
 * before the lock is taken.  0 or -errno (s->image closed).
 */
static int
zero_copy_check(struct rbd_store *s, const char *name)
{
	char cache[16], nocopy[16];

	image_option(s->image, s->cluster, "rbd_cache", cache, sizeof(cache));
	image_option(s->image, s->cluster, "rbd_disable_zero_copy_writes", nocopy, sizeof(nocopy));
	if (strcmp(cache, "true") != 0 || strcmp(nocopy, "false") != 0)
		return 0;
	log_info("rbd %s: librbd's cache is on: its writes are copied "
		 "(rbd_disable_zero_copy_writes=true)", name);
	rbd_close(s->image);
	if (rados_conf_set(s->cluster, "rbd_disable_zero_copy_writes", "true") < 0)
		return -EINVAL;
	return rbd_open(s->io, s->spec.image, &s->image, NULL);
}

/* librbd's thread: the image's header changed (a resize, a snapshot). */
static void
rbd_watch_cb(void *arg)
{
	struct rbd_store *s = arg;
	uint64_t one = 1;

	if (s->notify_efd && write(*s->notify_efd, &one, sizeof(one)) != sizeof(one)) {
		/* the counter cannot overflow here; nothing to do */
	}
}

/*
 * The lock owner a previous blkbackd of this state directory recorded
 * for the image (rbd_owner_record), into prev ("" none).
 */
static void
owner_record_read(const struct rbd_store *s, char *prev, size_t len)
{
	FILE *f;

	prev[0] = '\0';
	if (!s->owner_path[0] || !(f = fopen(s->owner_path, "re")))
		return;
	if (!fgets(prev, (int)len, f))
		prev[0] = '\0';
	prev[strcspn(prev, "\n")] = '\0';
	fclose(f);
}

/* Is owner held by a store of this process? */
static bool
owner_live(const char *owner)
{
	struct rbd_store *l;
	bool live = false;

	pthread_mutex_lock(&live_mutex);
	for (l = live_owners; l && !live; l = l->next_live)
		live = !strcmp(l->owner, owner);
	pthread_mutex_unlock(&live_mutex);
	return live;
}

/*
 * Does the lock's owner still watch the image header?  A librbd client
 * watches the header of every image it has open and answers the OSD's
 * pings; the OSD drops the watch osd_client_watch_timeout (30 s by
 * default) after the client stops answering -- killed, stopped, cut off.
 * 1 yes, 0 no, -errno.  The owner string and a watcher's addr are both
 * the client's entity address ("IP:PORT/NONCE", one per client instance).
 */
static int
owner_watching(rbd_image_t image, const char *owner)
{
	rbd_image_watcher_t w[32];
	size_t i, n = ARRAY_SIZE(w);
	int rc;

	rc = rbd_watchers_list(image, w, &n);
	if (rc < 0)
		return rc;
	for (i = 0, rc = 0; i < n && !rc; i++)
		rc = w[i].addr && !strcmp(w[i].addr, owner);
	rbd_watchers_list_cleanup(w, n);
	return rc;
}

/* The lock is ours: remember our owner string, in this process and in
 * the state directory (for the next blkbackd, should this one die). */
static void
owner_record(struct rbd_store *s, const char *name)
{
	rbd_lock_mode_t mode;
	char *owners[4], tmp[PATH_MAX + 8];
	size_t nowners = ARRAY_SIZE(owners);
	FILE *f;

	if (rbd_lock_get_owners(s->image, &mode, owners, &nowners) < 0 || !nowners)
		return;
	snprintf(s->owner, sizeof(s->owner), "%s", owners[0]);
	rbd_lock_get_owners_cleanup(owners, nowners);
	pthread_mutex_lock(&live_mutex);
	s->next_live = live_owners;
	live_owners = s;
	pthread_mutex_unlock(&live_mutex);
	if (!s->owner_path[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->owner_path);
	f = fopen(tmp, "we");
	if (!f || fprintf(f, "%s\n", s->owner) < 0 || fclose(f) != 0 ||
	    rename(tmp, s->owner_path) < 0) {
		log_error("rbd %s: cannot record the lock owner in %s: %m; a restarted "
			  "blkbackd will wait for the cluster to expire this one", name,
			  s->owner_path);
		s->owner_path[0] = '\0';
	}
}

/* close: the lock is about to go with rbd_close */
static void
owner_forget(struct rbd_store *s)
{
	struct rbd_store **pp;

	if (!s->owner[0])
		return;
	pthread_mutex_lock(&live_mutex);
	for (pp = &live_owners; *pp; pp = &(*pp)->next_live)
		if (*pp == s) {
			*pp = s->next_live;
			break;
		}
	pthread_mutex_unlock(&live_mutex);
	if (s->owner_path[0])
		unlink(s->owner_path);
}

/*
 * The exclusive lock for a writer, held until close.  0, or -EBUSY with
 * the reason in cfg->why.
 *
 * An image someone holds is refused at once, without rbd_lock_acquire:
 * that would ask the holder to let go and, for a holder that died
 * (its watch on the header lasts osd_client_watch_timeout, 30 s),
 * block this open until the cluster expires it.  Except the
 * holder a previous blkbackd of this state directory recorded (a
 * SIGKILL, a crash, an upgrade's exec): only one blkbackd runs per state
 * directory, so that holder is dead; its lock is broken (which
 * blocklists it: a stale write of its can no longer land) and taken,
 * and the vbd is taken over at once.  And a holder that no longer
 * watches the image (owner_watching): dead or frozen for longer than
 * the OSDs' watch timeout, on any host.  Its lock is broken the same
 * way, blocklist first, as librbd's own lock acquisition and the
 * kernel's rbd driver (rbd_try_lock) break the lock of a holder without
 * a watch; a frozen holder that wakes up finds itself fenced.
 */
static int
take_lock(const struct bk_store_config *cfg, struct rbd_store *s, const char *name)
{
	uint64_t features = 0;
	rbd_lock_mode_t mode;
	char *owners[4], prev[128], fsid[64];
	size_t nowners = ARRAY_SIZE(owners);
	int rc;

	if (rbd_get_features(s->image, &features) < 0 ||
	    !(features & RBD_FEATURE_EXCLUSIVE_LOCK)) {
		log_info("rbd %s: the image has no exclusive-lock feature: other hosts "
			 "may write it at the same time", name);
		return 0;
	}
	if (cfg->state_dir && rados_cluster_fsid(s->cluster, fsid, sizeof(fsid)) >= 0)
		snprintf(s->owner_path, sizeof(s->owner_path), "%s/rbd-owner.%s.%s.%s",
			 cfg->state_dir, fsid, s->spec.pool, s->spec.image);
	owner_record_read(s, prev, sizeof(prev));
	rc = rbd_lock_get_owners(s->image, &mode, owners, &nowners);
	if (rc == 0 && nowners > 0) {
		const char *whose = NULL;
		int watching = 1;

		if (prev[0] && !strcmp(owners[0], prev) && !owner_live(prev))
			whose = "a previous blkbackd of this host";
		else if (!owner_live(owners[0]) &&
			 (watching = owner_watching(s->image, owners[0])) == 0)
			whose = "a writer that no longer watches the image (dead, or frozen "
				"longer than the OSDs' watch timeout)";
		if (!whose) {
			rc = bk_store_fail(cfg, -EBUSY, "rbd store", "image %s is locked by "
					   "another writer (lock owner \"%s\"%s)", name, owners[0],
					   watching < 0 ? "; its watch could not be listed" :
					   ", which still watches the image");
			rbd_lock_get_owners_cleanup(owners, nowners);
			return rc;
		}
		log_info("rbd %s: blocklisting and breaking the lock of %s (owner \"%s\")",
			 name, whose, owners[0]);
		rc = rbd_lock_break(s->image, RBD_LOCK_MODE_EXCLUSIVE, owners[0]);
		if (rc < 0) {
			rc = bk_store_fail(cfg, -EBUSY, "rbd store", "image %s is locked by %s "
					   "(lock owner \"%s\"), and fencing it or breaking its "
					   "lock failed: %s", name, whose, owners[0], strerror(-rc));
			rbd_lock_get_owners_cleanup(owners, nowners);
			return rc;
		}
		rbd_lock_get_owners_cleanup(owners, nowners);
	}
	nowners = ARRAY_SIZE(owners);
	rc = rbd_lock_acquire(s->image, RBD_LOCK_MODE_EXCLUSIVE);
	if (rc == 0) {
		owner_record(s, name);
		return 0;
	}
	if (rbd_lock_get_owners(s->image, &mode, owners, &nowners) == 0 && nowners > 0) {
		rc = bk_store_fail(cfg, -EBUSY, "rbd store", "image %s is locked by another "
				   "writer (lock owner \"%s\"): %s", name, owners[0],
				   strerror(-rc));
		rbd_lock_get_owners_cleanup(owners, nowners);
		return rc;
	}
	return bk_store_fail(cfg, -EBUSY, "rbd store", "cannot take the exclusive lock "
			     "of image %s: %s", name, strerror(-rc));
}

static void
store_free(struct rbd_store *s)
{
	if (s->watching)
		rbd_update_unwatch(s->image, s->watch);
	owner_forget(s);
	if (s->image)
		rbd_close(s->image);	/* releases the lock */
	if (s->io)
		rados_ioctx_destroy(s->io);
	if (s->cluster)
		rados_shutdown(s->cluster);
	spec_free(&s->spec);
	free(s);
}

static int
rbd_store_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	struct rbd_store *s;
	const char *what;
	char name[300], bad[128] = "";
	uint64_t size;
	bool ro;
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rc = spec_parse(cfg, cfg->arg, &s->spec);
	if (rc < 0) {
		free(s);
		return rc;
	}
	snprintf(name, sizeof(name), "%s/%s%s%s", s->spec.pool, s->spec.image,
		 s->spec.snap ? "@" : "", s->spec.snap ? s->spec.snap : "");
	if (s->spec.snap && !cfg->read_only) {
		rc = bk_store_bad_arg(cfg, "snapshot \"%s\" is read-only: it needs mode=r", name);
		goto err;
	}
	ro = cfg->read_only;
	rc = cluster_create(&s->spec, cfg->writethrough, &s->cluster, &what, bad, sizeof(bad));
	if (rc < 0 && bad[0]) {
		rc = bk_store_bad_arg(cfg, "unknown option \"%s\" for driver rbd: %s", bad,
				      strerror(-rc));
		goto err;
	}
	if (rc < 0) {
		rc = bk_store_fail(cfg, rc, "rbd store", "%s (conf %s): %s", what,
				   s->spec.conf ? s->spec.conf : "default", strerror(-rc));
		goto err;
	}
	rc = rados_connect(s->cluster);
	if (rc < 0) {
		rc = bk_store_fail(cfg, rc, "rbd store", "cannot connect to the cluster "
				   "(conf %s, id %s): %s", s->spec.conf ? s->spec.conf : "default",
				   s->spec.id ? s->spec.id : "admin", strerror(-rc));
		goto err;
	}
	rc = rados_ioctx_create(s->cluster, s->spec.pool, &s->io);
	if (rc < 0) {
		s->io = NULL;
		rc = bk_store_fail(cfg, rc, "rbd store", "pool \"%s\": %s", s->spec.pool,
				   strerror(-rc));
		goto err;
	}
	if (ro)
		rc = rbd_open_read_only(s->io, s->spec.image, &s->image, s->spec.snap);
	else
		rc = rbd_open(s->io, s->spec.image, &s->image, NULL);
	if (rc < 0) {
		s->image = NULL;
		rc = bk_store_fail(cfg, rc, "rbd store", "image %s: %s", name, strerror(-rc));
		goto err;
	}
	if (!ro && (rc = zero_copy_check(s, name)) < 0) {
		s->image = NULL;
		rc = bk_store_fail(cfg, rc, "rbd store", "image %s (reopened to copy writes): %s",
				   name, strerror(-rc));
		goto err;
	}
	if (!ro && (rc = take_lock(cfg, s, name)) < 0)
		goto err;
	rc = rbd_get_size(s->image, &size);
	if (rc < 0) {
		rc = bk_store_fail(cfg, rc, "rbd store", "rbd_get_size %s: %s", name,
				   strerror(-rc));
		goto err;
	}
	if (size & 511)
		log_info("rbd %s: size %" PRIu64 " is not a multiple of 512: the last %u "
			 "bytes are not served", name, size, (unsigned int)(size & 511));
	s->f.size = size & ~(uint64_t)511;
	s->f.sector_size = 512;
	s->f.physical_sector_size = 512;
	s->f.read_only = ro;
	s->f.can_flush = true;
	s->f.writeback = cache_is_volatile(s);
	s->f.fua = s->f.writeback ? BK_FUA_EMULATED : BK_FUA_NATIVE;
	s->f.can_discard = !ro;
	s->f.can_secure_discard = false;
	s->f.direct = true;		/* no host page cache on the way */
	/* a snapshot never changes size */
	s->notify_efd = cfg->notify_efd;
	if (!s->spec.snap && s->notify_efd) {
		rc = rbd_update_watch(s->image, &s->watch, rbd_watch_cb, s);
		if (rc < 0)
			log_info("rbd %s: rbd_update_watch: %s; a resize will not reach the "
				 "guest", name, strerror(-rc));
		s->watching = rc == 0;
	}
	log_info("rbd %s: %" PRIu64 " bytes, %s%s", name, s->f.size,
		 s->f.writeback ? "librbd cache writeback (flushes needed)"
				: "no volatile cache (writes durable on completion)",
		 ro ? ", read-only" : "");
	*f = s->f;
	*priv = s;
	return 0;
err:
	store_free(s);
	return rc;
}

static void
rbd_store_close(void *priv)
{
	store_free(priv);
}

static int
rbd_store_size(void *priv, uint64_t *bytes)
{
	struct rbd_store *s = priv;
	uint64_t size;
	int rc;

	rc = rbd_get_size(s->image, &size);
	if (rc < 0)
		return rc;
	*bytes = size & ~(uint64_t)511;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Queues.                                                            */
/* ---------------------------------------------------------------- */

static void
signal_efd(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) != sizeof(one)) {
		/* the counter cannot overflow here; nothing to do */
	}
}

/* librbd's thread: one request is done. */
static void
rbd_done(rbd_completion_t c, void *arg)
{
	struct rbd_slot *sl = arg;
	struct rbd_queue *q = sl->q;
	struct rbd_slot *head;

	/* before the push: queue_close waits for in_cb to drop to 0 after
	 * the last slot was reaped, so q lives until our write is done */
	__atomic_add_fetch(&q->in_cb, 1, __ATOMIC_SEQ_CST);
	sl->ret = rbd_aio_get_return_value(c);
	head = __atomic_load_n(&q->done, __ATOMIC_RELAXED);
	do {
		sl->next = head;
	} while (!__atomic_compare_exchange_n(&q->done, &head, sl, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	/* Only the push onto an empty list wakes the queue thread: a
	 * list that was not empty has had its wake-up, and reap reads the
	 * eventfd before it takes the list, so the list it leaves empty is
	 * one whose next push signals again. */
	if (!head)
		signal_efd(q->efd);
	__atomic_sub_fetch(&q->in_cb, 1, __ATOMIC_SEQ_CST);
}

static int
rbd_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct rbd_queue *q;
	unsigned int i;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->s = priv;
	q->slots = calloc(depth, sizeof(*q->slots));
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!q->slots || q->efd < 0) {
		int rc = q->slots ? -errno : -ENOMEM;

		if (q->efd >= 0)
			close(q->efd);
		free(q->slots);
		free(q);
		return rc;
	}
	for (i = 0; i < depth; i++) {
		q->slots[i].q = q;
		q->slots[i].next = q->free;
		q->free = &q->slots[i];
	}
	*qpriv = q;
	return 0;
}

/* Move what librbd finished onto q->ready, oldest first. */
static void
take_done(struct rbd_queue *q)
{
	struct rbd_slot *list, *rev = NULL, **tail;

	list = __atomic_exchange_n(&q->done, NULL, __ATOMIC_ACQUIRE);
	while (list) {			/* pushed newest first */
		struct rbd_slot *next = list->next;

		list->next = rev;
		rev = list;
		list = next;
	}
	for (tail = &q->ready; *tail; tail = &(*tail)->next)
		;
	*tail = rev;
}

static void
rbd_queue_close(void *qpriv)
{
	struct rbd_queue *q = qpriv;
	struct pollfd pfd = { .fd = q->efd, .events = POLLIN };
	uint64_t v;

	/* Wait for everything in flight (the contract): librbd cannot
	 * cancel, and rbd_done must not find q freed. */
	for (;;) {
		take_done(q);
		while (q->ready) {
			struct rbd_slot *sl = q->ready;

			q->ready = sl->next;
			if (sl->c)
				rbd_aio_release(sl->c);
			q->inflight--;
		}
		if (!q->inflight && !__atomic_load_n(&q->in_cb, __ATOMIC_SEQ_CST))
			break;
		if (poll(&pfd, 1, 100) > 0 && read(q->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: another look */
		}
	}
	close(q->efd);
	free(q->slots);
	free(q);
}

static int
rbd_queue_fd(void *qpriv)
{
	struct rbd_queue *q = qpriv;

	return q->efd;
}

static int
rbd_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct rbd_queue *q = qpriv;
	rbd_image_t image = q->s->image;
	unsigned int i;
	int rc;

	for (i = 0; i < n && q->free; i++) {
		struct bk_io *io = ios[i];
		struct rbd_slot *sl = q->free;

		rc = rbd_aio_create_completion(sl, rbd_done, &sl->c);
		if (rc < 0)
			break;
		q->free = sl->next;
		sl->io = io;
		switch (io->op) {
		case BK_IO_READ:
			io->host_action = "rbd_aio_readv";
			rc = rbd_aio_readv(image, io->iov, io->iovcnt, io->offset, sl->c);
			break;
		case BK_IO_WRITE:
			/* FUA (native only without a volatile cache): every
			 * write is durable on completion */
			io->host_action = "rbd_aio_writev";
			rc = rbd_aio_writev(image, io->iov, io->iovcnt, io->offset, sl->c);
			break;
		case BK_IO_FLUSH:
			io->host_action = "rbd_aio_flush";
			rc = rbd_aio_flush(image, sl->c);
			break;
		case BK_IO_DISCARD:
			io->host_action = "rbd_aio_discard";
			rc = rbd_aio_discard(image, io->offset, io->len, sl->c);
			break;
		default:
			rc = -EOPNOTSUPP;
		}
		q->inflight++;
		if (rc < 0) {
			/* refused before it started: librbd will not call
			 * rbd_done; complete it the same way */
			sl->ret = rc;
			rbd_aio_release(sl->c);
			sl->c = NULL;
			sl->next = q->ready;	/* reaped before anything newer */
			q->ready = sl;
			signal_efd(q->efd);
		}
	}
	return i ? (int)i : (n ? -EAGAIN : 0);
}

static int
rbd_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct rbd_queue *q = qpriv;
	unsigned int n = 0;
	uint64_t v;

	/* clear readiness first, then collect: a later completion re-arms */
	if (read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	take_done(q);
	while (n < max && q->ready) {
		struct rbd_slot *sl = q->ready;
		struct bk_io *io = sl->io;

		q->ready = sl->next;
		if (sl->ret < 0)
			io->result = sl->ret;
		else if (io->op == BK_IO_READ)
			/* librbd reads holes as zeroes: anything short is an error */
			io->result = (uint64_t)sl->ret == io->len ? (int64_t)io->len : -EIO;
		else if (io->op == BK_IO_WRITE)
			io->result = io->len;
		else
			io->result = 0;
		if (sl->c)
			rbd_aio_release(sl->c);
		sl->c = NULL;
		sl->next = q->free;
		q->free = sl;
		q->inflight--;
		done[n++] = io;
	}
	if (q->ready)	/* more than max: keep the fd readable */
		signal_efd(q->efd);
	return (int)n;
}

static bool
rbd_poll(void *qpriv)
{
	struct rbd_queue *q = qpriv;

	return q->ready || __atomic_load_n(&q->done, __ATOMIC_ACQUIRE);
}

static const struct bk_store_driver rbd_driver = {
	.name = "rbd",
	.open = rbd_store_open,
	.close = rbd_store_close,
	.identify = rbd_identify,
	.queue_open = rbd_queue_open,
	.queue_close = rbd_queue_close,
	.queue_fd = rbd_queue_fd,
	.submit = rbd_submit,
	.reap = rbd_reap,
	.poll = rbd_poll,
	.size = rbd_store_size,
};

/* A module (store.h): blkbackd loads store-rbd.so for "rbd:" params. */
const struct bk_store_driver *const bk_store_module_driver = &rbd_driver;
const unsigned int bk_store_module_abi = BK_STORE_ABI;
