/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenbus.c: the daemon's xenstore side (vbd.h): one watch on the
 * backend directory, one per frontend state node, one per guest on its
 * name and one on @releaseDomain; which vbd an event is about; the queues' reports;
 * statistics; shutdown.  What a vbd then does is vbd.c's.  Control
 * thread only.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#include "log.h"
#include "vbd.h"
#include "xenbus.h"
#include "xbus.h"

/* d->watches_unfired */
#define WATCH_VBD	1u	/* the backend directory */
#define WATCH_RELEASE	2u	/* @releaseDomain */

/* The last vbd of domain domid is gone: when the domain dies, xenops is
 * asked about it once more, so that it forgets it (its memory files). */
static void
domain_unused(struct bk_daemon *d, uint32_t domid)
{
	const struct bk_dev *dev;
	unsigned int i;

	for (dev = d->devs; dev; dev = dev->next)
		if (dev->frontid == domid)
			return;
	for (i = 0; i < d->nr_past_doms; i++)
		if (d->past_doms[i] == domid)
			return;
	if (d->nr_past_doms == ARRAY_SIZE(d->past_doms)) {
		/* the oldest is asked now, and forgotten either way */
		xenops_domain_alive(d->xops, d->past_doms[0]);
		memmove(d->past_doms, d->past_doms + 1,
			sizeof(d->past_doms[0]) * (ARRAY_SIZE(d->past_doms) - 1));
		d->nr_past_doms--;
	}
	d->past_doms[d->nr_past_doms++] = domid;
}

/* ---------------------------------------------------------------- */
/* The set of vbds: this file is its one owner.                       */
/* ---------------------------------------------------------------- */

/* A guest's name, one watch per guest (dev.h): held by one of its vbds,
 * handed on to another when that one goes.  The first firing reads it. */
static void
read_guest(struct bk_daemon *d, uint32_t domid)
{
	struct bk_dev *dev;
	char *v = NULL;
	bool read = false;

	for (dev = d->devs; dev; dev = dev->next) {
		if (dev->frontid != domid)
			continue;
		if (!read)
			v = xbus_read(d->xs, XBT_NULL, dev->guest_path, NULL);
		read = true;
		snprintf(dev->guest, sizeof(dev->guest), "%s", v ? v : "");
	}
	free(v);
}

static void
watch_guest(struct bk_dev *dev)
{
	struct bk_dev *o;
	char token[32];

	for (o = dev->d->devs; o; o = o->next)
		if (o != dev && o->frontid == dev->frontid && o->guest_watch) {
			snprintf(dev->guest, sizeof(dev->guest), "%s", o->guest);
			return;
		}
	snprintf(token, sizeof(token), "guest/%u", dev->frontid);
	dev->guest_watch = xs_watch(dev->d->xs, dev->guest_path, token);
	if (!dev->guest_watch)
		log_error("vbd %s: watch %s: %m (its guest's name is not shown)", dev->name,
			  dev->guest_path);
}

static void
unwatch_guest(struct bk_dev *dev)
{
	struct bk_dev *o;
	char token[32];

	if (!dev->guest_watch)
		return;
	dev->guest_watch = false;
	for (o = dev->d->devs; o; o = o->next)
		if (o != dev && o->frontid == dev->frontid) {
			o->guest_watch = true;
			return;
		}
	snprintf(token, sizeof(token), "guest/%u", dev->frontid);
	xs_unwatch(dev->d->xs, dev->guest_path, token);
}

/* A new vbd F/D, in the set. */
static struct bk_dev *
vbd_add(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev = bk_vbd_new(d, f, id);

	if (!dev)
		return NULL;
	dev->next = d->devs;
	d->devs = dev;
	watch_guest(dev);
	return dev;
}

/* Out of the set, and freed (bk_vbd_free: disconnected first). */
static void
vbd_forget(struct bk_daemon *d, struct bk_dev *dev, bool removed)
{
	struct bk_dev **pp;
	uint32_t domid = dev->frontid;

	unwatch_guest(dev);
	for (pp = &d->devs; *pp; pp = &(*pp)->next)
		if (*pp == dev) {
			*pp = dev->next;
			break;
		}
	bk_vbd_free(dev, removed);
	domain_unused(d, domid);
}

struct bk_dev *
bk_xenbus_find(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next)
		if (dev->frontid == f && dev->devid == id)
			return dev;
	return NULL;
}

void
bk_xenbus_scan_device(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev = bk_xenbus_find(d, f, id);
	char dir[200], *st;

	snprintf(dir, sizeof(dir), "%s/%u/%u", d->vbd_root, f, id);
	if (dev && !dev->gone) {
		/* A vbd we know lives while its directory does, as a Linux
		 * xenbus device (xenbus_dev_changed): a toolstack that
		 * removes one key of it, its state node among them, does
		 * not take the disk from a connected guest.  Only ENOENT
		 * says the directory is gone (a read refused is not). */
		char *node = xbus_read(d->xs, XBT_NULL, dir, NULL);

		if (node || errno != ENOENT) {
			free(node);
			bk_vbd_update(dev);
			return;
		}
		dev->gone = true;
	}
	if (dev) {
		/* forgotten once it has drained: then_update scans again (and
		 * a directory made again is a new vbd, with an object of its
		 * own, never the old one's state and connection) */
		dev->then_closed = false;
		if (!bk_vbd_disconnect(dev)) {
			dev->then_update = true;
			return;
		}
		vbd_forget(d, dev, true);
	}
	/* a new vbd: its directory is complete once its state node is
	 * there (the toolstack writes that last, or all in one
	 * transaction) */
	st = xbus_read(d->xs, XBT_NULL, dir, "state");
	if (!st)
		return;
	free(st);
	dev = vbd_add(d, f, id);
	if (dev)
		bk_vbd_update(dev);
}

static bool
parse_id(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX)
		return false;
	*out = v;
	return true;
}

/*
 * A directory under vbd_root whose name is not a number (parent/name) is
 * not a vbd this daemon can serve: say so once per name (of the last
 * few), not per watch event.
 */
static void
bad_dir(struct bk_daemon *d, const char *parent, const char *name)
{
	unsigned int i, n = ARRAY_SIZE(d->bad_dirs);
	char full[sizeof(d->bad_dirs[0])];

	snprintf(full, sizeof(full), "%s/%s", parent + strlen(d->vbd_root), name);
	for (i = 0; i < n; i++)
		if (!strcmp(d->bad_dirs[i], full))
			return;
	snprintf(d->bad_dirs[d->bad_dirs_next], sizeof(d->bad_dirs[0]), "%s", full);
	d->bad_dirs_next = (d->bad_dirs_next + 1) % n;
	log_info("%s/%s: not a number: ignored (blkbackd serves %s/<frontend domid>/<devid>)",
		 parent, name, d->vbd_root);
}

/* Rescan frontend f (or every frontend when all): vbds come and go. */
static void
scan_frontend(struct bk_daemon *d, bool all, uint32_t f)
{
	char path[200];
	char **ents;
	unsigned int n = 0, i;
	struct bk_dev *dev, *next;

	/* forget vbds whose directory vanished */
	for (dev = d->devs; dev; dev = next) {
		next = dev->next;
		if (all || dev->frontid == f)
			bk_xenbus_scan_device(d, dev->frontid, dev->devid);
	}
	if (all) {
		ents = xs_directory(d->xs, XBT_NULL, d->vbd_root, &n);
		for (i = 0; ents && i < n; i++) {
			uint32_t fid;

			if (parse_id(ents[i], &fid))
				scan_frontend(d, false, fid);
			else
				bad_dir(d, d->vbd_root, ents[i]);
		}
		free(ents);
		return;
	}
	snprintf(path, sizeof(path), "%s/%u", d->vbd_root, f);
	ents = xs_directory(d->xs, XBT_NULL, path, &n);
	for (i = 0; ents && i < n; i++) {
		uint32_t id;

		if (!parse_id(ents[i], &id))
			bad_dir(d, path, ents[i]);
		else if (!bk_xenbus_find(d, f, id))
			bk_xenbus_scan_device(d, f, id);
	}
	free(ents);
}

/* Where a path at or below vbd_root points. */
enum vbd_path {
	VP_ALL,		/* vbd_root itself, or outside it: everything */
	VP_FRONTEND,	/* vbd_root/F */
	VP_DIR,		/* vbd_root/F/ID, the vbd's directory node */
	VP_KEY,		/* below vbd_root/F/ID */
	VP_BAD,		/* a component that is not a number */
};

/* Parse path into *f and *id; a bad component is reported (bad_dir)
 * when report. */
static enum vbd_path
parse_vbd_path(struct bk_daemon *d, const char *path, uint32_t *f, uint32_t *id,
	       bool report)
{
	size_t rl = strlen(d->vbd_root);
	char buf[256], *p, *slash;

	if (strncmp(path, d->vbd_root, rl) || (path[rl] != '/' && path[rl] != '\0'))
		return VP_ALL;
	snprintf(buf, sizeof(buf), "%s", path + rl);
	p = buf[0] == '/' ? buf + 1 : buf;
	if (!*p)
		return VP_ALL;
	slash = strchr(p, '/');
	if (slash)
		*slash = '\0';
	if (!parse_id(p, f)) {
		if (report && *p)
			bad_dir(d, d->vbd_root, p);
		return VP_BAD;
	}
	if (!slash)
		return VP_FRONTEND;
	p = slash + 1;
	slash = strchr(p, '/');
	if (slash)
		*slash = '\0';
	if (!parse_id(p, id)) {
		char parent[sizeof(d->vbd_root) + 16];

		snprintf(parent, sizeof(parent), "%s/%u", d->vbd_root, *f);
		if (report && *p)
			bad_dir(d, parent, p);
		return VP_BAD;
	}
	return slash ? VP_KEY : VP_DIR;
}

/* Does path end in "/key"? */
static bool
key_is(const char *path, const char *key)
{
	size_t pl = strlen(path), kl = strlen(key);

	return pl > kl && path[pl - kl - 1] == '/' && !strcmp(path + pl - kl, key);
}

/* An event at or below vbd_root: which frontend, which vbd? */
static void
handle_vbd_event(struct bk_daemon *d, const char *path)
{
	uint32_t f = 0, id = 0;

	switch (parse_vbd_path(d, path, &f, &id, true)) {
	case VP_ALL:
		scan_frontend(d, true, 0);
		break;
	case VP_FRONTEND:
		scan_frontend(d, false, f);
		break;
	case VP_KEY:
		bk_xenbus_scan_device(d, f, id);
		if (key_is(path, "dev") || key_is(path, "params")) {
			struct bk_dev *dev = bk_xenbus_find(d, f, id);

			if (dev)
				bk_vbd_read_labels(dev);
		}
		break;
	case VP_DIR:
		bk_xenbus_scan_device(d, f, id);
		break;
	case VP_BAD:
		break;
	}
}

static void
handle_release_domain(struct bk_daemon *d)
{
	struct bk_dev *dev;
	unsigned int i = 0;

	for (dev = d->devs; dev; dev = dev->next)
		if (xenops_domain_alive(d->xops, dev->frontid) == 0)
			bk_vbd_domain_gone(dev);
	/* domains whose vbds are all gone: asking is what lets xenops
	 * forget a dead one (the sim transport keeps its memory files) */
	while (i < d->nr_past_doms) {
		if (xenops_domain_alive(d->xops, d->past_doms[i]) == 0)
			d->past_doms[i] = d->past_doms[--d->nr_past_doms];
		else
			i++;
	}
}

int
bk_xenbus_init(struct bk_daemon *d)
{
	snprintf(d->vbd_root, sizeof(d->vbd_root), "/local/domain/%u/backend/vbd", d->self);
	if (!xs_watch(d->xs, d->vbd_root, "vbd")) {
		log_error("watch %s: %m", d->vbd_root);
		return -errno;
	}
	d->watches_unfired = WATCH_VBD;
	if (xs_watch(d->xs, "@releaseDomain", "release"))
		d->watches_unfired |= WATCH_RELEASE;
	else
		log_info("watch @releaseDomain: %m; a dying frontend is noticed "
			 "only through its state node");
	/* Each watch fires once at registration; vbds are scanned then
	 * (bk_xenbus_first_scan). */
	return 0;
}

/*
 * Before blkbackd says it is serving (pidfile, systemd's READY=1, the
 * parent's exit status), the vbds already there are taken over or
 * probed and the frontends of dead domains closed: what start-up
 * found is settled, and a vbd the toolstack adds afterwards is
 * never judged by the first @releaseDomain's look at the domains.
 */
/* How long start-up waits for the stores its first scan began to open. */
#define FIRST_OPENS_MS 1000

/* Is any vbd's store opening, or opened and not taken up yet
 * (start-up waits for them)?  1 opening, 2 opened, 0 neither. */
static int
opening(const struct bk_daemon *d)
{
	const struct bk_dev *dev;
	int r = 0;

	for (dev = d->devs; dev; dev = dev->next)
		if (bk_vbd_open_ended(dev))
			return 2;
		else if (bk_vbd_opening(dev))
			r = 1;
	return r;
}

int
bk_xenbus_first_scan(struct bk_daemon *d, int timeout_ms)
{
	struct timespec t0, now;
	int left = timeout_ms, o;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (d->watches_unfired && left > 0) {
		struct pollfd pfd = { .fd = xs_fileno(d->xs), .events = POLLIN };
		int n = poll(&pfd, 1, left);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (pfd.revents & (POLLERR | POLLHUP))
			return -EPIPE;
		if (pfd.revents & POLLIN)
			bk_xenbus_handle_watches(d);
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = timeout_ms - (int)((now.tv_sec - t0.tv_sec) * 1000 +
					  (now.tv_nsec - t0.tv_nsec) / 1000000);
	}
	if (d->watches_unfired)
		log_info("xenstore has not fired %s within %d ms of registering it; "
			 "serving meanwhile", d->watches_unfired & WATCH_VBD ?
			 "the backend directory's watch" : "@releaseDomain", timeout_ms);
	/* the stores the scan began to open (a takeover's among them), for
	 * up to FIRST_OPENS_MS: one slower than that is served meanwhile,
	 * rather than hold every other vbd and the control socket */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	left = FIRST_OPENS_MS;
	while ((o = opening(d)) && left > 0) {
		struct pollfd pfd = { .fd = d->report_efd, .events = POLLIN };
		int n = o == 2 ? 0 : poll(&pfd, 1, left);

		if (n < 0 && errno != EINTR)
			return -errno;
		if (o == 2 || (pfd.revents & POLLIN))
			bk_xenbus_handle_reports(d);
		clock_gettime(CLOCK_MONOTONIC, &now);
		left = FIRST_OPENS_MS - (int)((now.tv_sec - t0.tv_sec) * 1000 +
					      (now.tv_nsec - t0.tv_nsec) / 1000000);
	}
	if (opening(d))
		log_info("a vbd's store is still opening %d ms into start-up; serving "
			 "meanwhile", FIRST_OPENS_MS);
	return 0;
}

/* A claim some vbd may be waiting for was released (a drain ended):
 * those vbds look again. */
static void
scan_backing_waiters(struct bk_daemon *d)
{
	struct bk_dev *dev, *next;

	while (d->rescan_waiters) {
		d->rescan_waiters = false;
		for (dev = d->devs; dev; dev = next) {
			next = dev->next;
			if (dev->backing_wait)
				bk_xenbus_scan_device(d, dev->frontid, dev->devid);
		}
	}
}

/* Events taken per call: the rest waits for the next poll round. */
#define WATCH_BATCH	4096
/* Distinct backend paths remembered per batch; beyond, rescan all. */
#define WATCH_PATHS	32

/*
 * Every pending event is taken first and only then acted on, once per
 * vbd: each action re-reads the states (bk_vbd_update reconciles), so
 * the events of one batch coalesce.  A guest that writes its state node
 * 100 000 times costs one update per batch, not three xenstore round
 * trips per write, and the watch queue (libxenstore's, in our memory;
 * xenstored's, which drops a connection that stops reading) never
 * backs up.  The backend directory's events are deduplicated by path,
 * the frontends' mark their vbd, @releaseDomain is one flag.
 */
void
bk_xenbus_handle_watches(struct bk_daemon *d)
{
	char paths[WATCH_PATHS][200];
	unsigned int npaths = 0, n = 0, i;
	uint32_t f, id;
	bool rescan = false, release = false;
	struct bk_dev *dev, *next;
	char **w;

	while (n < WATCH_BATCH && (w = xs_check_watch(d->xs)) != NULL) {
		const char *path = w[XS_WATCH_PATH], *token = w[XS_WATCH_TOKEN];

		n++;
		bk_dbg(BK_DBG_XENBUS, "watch %s %s", token, path);
		if (!strcmp(token, "vbd")) {
			bool seen = false;

			/* The directory node itself: removed, made again, or
			 * only written or given new permissions (xenstore-chmod
			 * on a running guest's vbd).  Linux's xenbus forgets a
			 * device only when its node is gone; a node removed and
			 * made again passes that test, but reads Initialising
			 * again (bk_vbd_dir_made_again).  Marked here, as it
			 * comes, since a batch of more paths than are kept is
			 * handled as a rescan that would not see it. */
			if (parse_vbd_path(d, path, &f, &id, false) == VP_DIR &&
			    (dev = bk_xenbus_find(d, f, id)) != NULL && bk_vbd_dir_made_again(dev))
				dev->gone = true;
			for (i = 0; i < npaths && !seen; i++)
				seen = !strcmp(paths[i], path);
			if (!seen && npaths < WATCH_PATHS && strlen(path) < sizeof(paths[0]))
				snprintf(paths[npaths++], sizeof(paths[0]), "%s", path);
			else if (!seen)
				rescan = true;
			d->watches_unfired &= ~WATCH_VBD;
		} else if (!strcmp(token, "fe")) {
			for (dev = d->devs; dev; dev = dev->next)
				if (!strcmp(dev->fe_state, path))
					dev->fe_event = true;
		} else if (!strncmp(token, "guest/", 6) && parse_id(token + 6, &f)) {
			/* a guest's name: read at once (only the toolstack
			 * writes it, not the guest) */
			read_guest(d, f);
		} else if (!strcmp(token, "release")) {
			release = true;
			d->watches_unfired &= ~WATCH_RELEASE;
		}
		free(w);
	}
	if (n < WATCH_BATCH && errno != EAGAIN)
		log_error("xenstore: reading watches: %m");

	/* in the order they came in, as far as it matters: the backend
	 * directory (vbds appear and go), the frontends, dying domains */
	if (rescan)
		scan_frontend(d, true, 0);
	else
		for (i = 0; i < npaths; i++)
			handle_vbd_event(d, paths[i]);
	for (dev = d->devs; dev; dev = next) {
		next = dev->next;
		if (dev->fe_event) {
			dev->fe_event = false;
			bk_vbd_update(dev);
		}
	}
	if (release)
		handle_release_domain(d);
	scan_backing_waiters(d);
}

void
bk_xenbus_handle_reports(struct bk_daemon *d)
{
	struct bk_dev *dev, *next;
	uint64_t v;

	if (read(d->report_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_error("reading reports: %m");
	/* closes that finished: their claims go (waiters rescanned below) */
	bk_vbd_closes_reap(d);
	for (dev = d->devs; dev; dev = next) {
		bk_vbd_reports(dev);
		/* drain_done may free dev, never another vbd but through a
		 * rescan of a waiter, which the loop has not reached: restart
		 * from the head after one (rare) */
		next = dev->next;
		if (bk_vbd_drained(dev)) {
			uint32_t f = dev->frontid, id = dev->devid;

			/* what waited for the drain: a scan (it may go) */
			if (bk_vbd_drain_done(dev))
				bk_xenbus_scan_device(d, f, id);
			next = d->devs;
		} else if (bk_vbd_open_ended(dev)) {
			uint32_t f = dev->frontid, id = dev->devid;

			/* its store's open finished: the state machine takes
			 * it up where it waited (it may go) */
			bk_xenbus_scan_device(d, f, id);
			dev = bk_xenbus_find(d, f, id);
			if (dev && bk_vbd_open_settle(dev))
				bk_xenbus_scan_device(d, f, id);
			dev = bk_xenbus_find(d, f, id);
			if (dev)
				bk_vbd_open_done(dev);
			next = d->devs;
		}
	}
	scan_backing_waiters(d);
}

void
bk_xenbus_log_stats(struct bk_daemon *d)
{
	struct bk_dev *dev;

	/* connected vbds only (blkbackd.8 SIGUSR1): a closed vbd's counters
	 * no longer move; bk_xenbus_shutdown() logs them */
	for (dev = d->devs; dev; dev = dev->next) {
		struct bk_stats s;

		if (dev->phase == DEV_DISCONNECTED)
			continue;
		bk_vbd_stats(dev, &s);
		bk_stats_log(dev->name, &s);
	}
}

void
bk_xenbus_check_sizes(struct bk_daemon *d)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next)
		if (dev->phase == DEV_CONNECTED)
			bk_vbd_size_ask(dev, false);
}

/* Shutdown: a vbd disconnected, or drained (its queues all finished),
 * or NULL. */
static struct bk_dev *
first_drained(struct bk_daemon *d)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next)
		if (dev->phase != DEV_DRAINING || bk_vbd_drained(dev))
			return dev;
	return NULL;
}

/* Shutdown: wait (up to a second) for a queue's report -- its last one,
 * DRAINED, among them.  After SHUTDOWN_SLOW_S, say once which vbds
 * still hold the exit up. */
#define SHUTDOWN_SLOW_S 10
static void
wait_drained(struct bk_daemon *d, const struct timespec *since, bool *said)
{
	struct pollfd p = { .fd = d->report_efd, .events = POLLIN };
	struct timespec now;
	uint64_t v;

	if (poll(&p, 1, 1000) > 0 && read(d->report_efd, &v, sizeof(v)) < 0) {
		/* EAGAIN: taken already */
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!*said && now.tv_sec - since->tv_sec >= SHUTDOWN_SLOW_S) {
		struct bk_dev *dev;
		char names[256] = "";
		size_t used = 0;

		for (dev = d->devs; dev && used + 40 < sizeof(names); dev = dev->next)
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
						 used ? " " : "", dev->name);
		log_error("stopping: still waiting after %d s for vbd %s%s to finish its I/O in "
			  "flight (a backing that hangs?); every other vbd is done",
			  SHUTDOWN_SLOW_S, names, dev ? " ..." : "");
		*said = true;
	}
}

/* Will the shutdown leave this vbd Connected without a backend?  Not
 * one whose directory the toolstack removed (gone, still draining):
 * it is detached, and its records go with it. */
static bool
left_stalled(const struct bk_dev *dev, bool close)
{
	return !close && dev->state == XenbusStateConnected && !dev->gone;
}

unsigned int
bk_xenbus_shutdown(struct bk_daemon *d, bool close, char *left, size_t len,
		   unsigned int *guests)
{
	struct bk_dev *dev, *o;
	unsigned int stalled = 0;
	struct timespec since;
	bool said = false;
	size_t used = 0;

	if (len)
		left[0] = '\0';
	/* the guests among them: a frontend counted at its first such vbd
	 * (quadratic, once, at exit: no table to size) */
	if (guests) {
		*guests = 0;
		for (dev = d->devs; dev; dev = dev->next) {
			if (!left_stalled(dev, close))
				continue;
			for (o = d->devs; o != dev; o = o->next)
				if (o->frontid == dev->frontid && left_stalled(o, close))
					break;
			if (o == dev)
				(*guests)++;
		}
	}

	/* Stop every queue of every vbd first, so they drain in parallel;
	 * then wait for them (here, and only here, the control thread waits
	 * for I/O: nothing else is left to serve). */
	for (dev = d->devs; dev; dev = dev->next) {
		unsigned int i;

		for (i = 0; i < dev->nr_queues; i++)
			bk_dataplane_stop(dev->queues[i]);
	}
	for (dev = d->devs; dev; dev = dev->next) {
		/* staying Connected for a successor: it takes the queues over
		 * from their recovery records (qstate.h) */
		dev->keep_state = !close && !dev->gone;
		if (left_stalled(dev, close)) {
			stalled++;
			if (used + 1 < len) {
				int n = snprintf(left + used, len - used, "%s%s",
						 used ? " " : "", dev->name);

				if (n >= 0 && (size_t)n < len - used) {
					used += (size_t)n;
				} else {	/* cut short, and said so */
					if (len > 4)
						strcpy(left + len - 4, "...");
					used = len;
				}
			}
		}
		bk_vbd_disconnect(dev);	/* draining now, or done */
	}
	/* Each vbd as soon as its queues are done, in whatever order they
	 * finish: one whose backing hangs (a queue thread waiting in its
	 * I/O or its size probe) holds up only itself -- every other one is
	 * destroyed, and closed with close, meanwhile.  That one is waited
	 * for until its backing answers; a SIGKILL meanwhile leaves its
	 * recovery records, as a crash does. */
	clock_gettime(CLOCK_MONOTONIC, &since);
	while (d->devs) {
		dev = first_drained(d);
		if (!dev) {
			wait_drained(d, &since, &said);
			continue;
		}
		if (dev->phase == DEV_DRAINING)
			bk_vbd_disconnect_finish(dev);	/* drained: no wait */
		if (close && dev->probed && dev->state != XenbusStateClosed)
			bk_vbd_set_state(dev, XenbusStateClosed);
		bk_stats_log(dev->name, &dev->closed_stats);
		vbd_forget(d, dev, false);
	}
	bk_vbd_closes_wait(d);
	xs_unwatch(d->xs, d->vbd_root, "vbd");
	xs_unwatch(d->xs, "@releaseDomain", "release");
	return stalled;
}

void
bk_xenbus_power_cut(struct bk_daemon *d)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next)
		bk_stack_power_cut(dev->store);
	bk_vbd_closes_power_cut(d);
}
