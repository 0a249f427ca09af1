/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd.c: one vbd's state machine (vbd.h), on the control thread: its
 * state and error nodes, connect, disconnect and drain, the objects,
 * the probe and the frontend.  Its backing and the claim on it are
 * vbd-backing.c's, the queues' reports and a resize vbd-reports.c's
 * (vbd-int.h; calls run vbd-reports.c -> vbd.c -> vbd-backing.c).
 *
 * States and transitions follow Linux xen-blkback (xenbus.c):
 *   probe:    the knobs and the backing checked, the probe keys written
 *             -> InitWait (2)
 *   frontend Initialised (3) / Connected (4): read the ring keys, open
 *             the store, start the queues, publish the features and
 *             Connected (4) in one transaction
 *   frontend Closing (5):  Closing, and the ring is still served (a
 *             guest with the disk open goes on until its last close)
 *   frontend Closed (6), frontend gone, its domain dead:
 *             Closing (5) if a ring was served, disconnect, Closed (6)
 *             from InitWait only once the frontend was seen alive
 *   frontend Initialising (1) while a ring is served: Closing,
 *             disconnect, then as below
 *   frontend Initialising (1) while we are Closed, or Closing not after
 *             an error: InitWait (reconnect); Initialised/Connected
 *             there: connect at once; but a failed vbd (a failed flush)
 *             is not connected again: Closed and its error node, until
 *             the toolstack detaches it (refuse_failed)
 * (DESIGN-NOTES.md has the whole table against Linux blkback's.)
 *   toolstack: online=0, or our state node set to Closing (5) by
 *             someone else (libxl writes both): Closing (5) at once;
 *             disconnect and Closed (6) once the frontend is Closed or
 *             gone (Linux: frontend_changed, Closed and not online)
 *   backend directory removed: disconnect and forget the vbd
 * ("disconnect, X": X once the queues have drained, see below.)
 * Errors: logged with the key, written to <backend>/error, and the vbd
 * goes to Closing (Linux xenbus_dev_fatal); other vbds go on.
 *
 * Disconnecting never waits for a guest's I/O (Linux blkback's
 * xen_blkif_disconnect returns -EBUSY while requests are in flight, and
 * the last one completes the free).  dev->phase:
 *   DEV_DISCONNECTED  no store, no queue
 *   DEV_CONNECTED     connect() opened the store and runs the queues
 *   DEV_DRAINING      disconnect() asked every queue to stop; each
 *                     finishes its in-flight requests, responds, and
 *                     reports BK_REPORT_DRAINED
 * When the last queue has reported, bk_vbd_drain_done() joins the
 * finished threads, unmaps, unbinds, closes the store and releases its
 * claim (DISCONNECTED), and only then takes the step that waited for
 * it: Closed for a frontend domain that is gone (then_closed), and for
 * everything else, the vbd brought in line with what xenstore says by
 * then (then_update).  Events for a draining vbd are only remembered
 * (then_update), so a frontend that went Closing, Initialising,
 * Initialised meanwhile is connected afresh once the drain is over.
 *
 * Reconciliation: every event re-reads the backend state and online
 * node and the frontend state, and moves the vbd toward what they say
 * (bk_vbd_update), so lost or coalesced watch events cannot wedge it.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>

#include "fnv.h"
#include "log.h"
#include "negotiate.h"
#include "vbd-int.h"
#include "vbd.h"
#include "xbus.h"

#define STATE_LOG_BURST		20
#define STATE_LOG_WINDOW_S	10

/* ---------------------------------------------------------------- */
/* State writes, errors, logs.                                        */
/* ---------------------------------------------------------------- */

/*
 * Up to STATE_LOG_BURST lines per STATE_LOG_WINDOW_S seconds; the next
 * window first says how many were left out.
 */
bool
bk_vbd_log_ok(struct bk_dev *dev)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (ts.tv_sec - dev->log_window >= STATE_LOG_WINDOW_S) {
		if (dev->log_dropped)
			log_info("vbd %s: %u state-change lines not logged in %d s "
				 "(the frontend is flapping its state?)", dev->name,
				 dev->log_dropped, STATE_LOG_WINDOW_S);
		dev->log_window = ts.tv_sec;
		dev->log_lines = 0;
		dev->log_dropped = 0;
	}
	if (dev->log_lines < STATE_LOG_BURST) {
		if (++dev->log_lines == STATE_LOG_BURST)
			log_info("vbd %s: state changes too frequent; logging fewer for %d s",
				 dev->name, STATE_LOG_WINDOW_S);
		return true;
	}
	dev->log_dropped++;
	return false;
}

struct state_arg {
	const struct bk_dev *dev;
	int state;
};

/* xbus_switch_state's transaction, asking bk_negotiate_dir_ours first */
static int
state_node(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct state_arg *a = arg;

	if (bk_negotiate_dir_ours(xs, t, a->dev) == -ENOENT)
		return -ENOENT;
	return xbus_printf(xs, t, a->dev->be, "state", "%d", a->state);
}

void
bk_vbd_set_state(struct bk_dev *dev, int state)
{
	struct state_arg a = { .dev = dev, .state = state };
	int r;

	if (dev->state == state || dev->gone || dev->foreign)
		return;
	r = xbus_transact(dev->d->xs, state_node, &a);
	if (r == -ENOENT) {
		bk_dbg(BK_DBG_XENBUS, "vbd %s: %s/state is gone or made again: %s not written",
		       dev->name, dev->be, xbus_state_name(state));
		return;
	}
	if (r < 0) {
		log_error("vbd %s: write %s/state: %s", dev->name, dev->be, strerror(-r));
		return;
	}
	if (bk_vbd_log_ok(dev))
		log_info("vbd %s: %s -> %s", dev->name, xbus_state_name(dev->state),
			 xbus_state_name(state));
	dev->state = state;
}

struct error_arg {
	const struct bk_dev *dev;
	const char *key;	/* "error", BK_FAILED_NODE */
	const char *msg;
};

static int
error_node(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct error_arg *a = arg;

	/* removed or made again: never bring it back, never write there */
	if (bk_negotiate_dir_ours(xs, t, a->dev) == -ENOENT)
		return -ENOENT;
	return xbus_printf(xs, t, a->dev->be, a->key, "%s", a->msg);
}

bool
bk_vbd_dir_made_again(const struct bk_dev *dev)
{
	/* an object that has no state of its own there (never probed, or
	 * left to another backend) is retired as before: nothing is lost,
	 * and its directory is probed afresh */
	return dev->state == -1 || bk_negotiate_dir_ours(dev->d->xs, XBT_NULL, dev) != 0;
}

/*
 * Write <backend>/error = msg, only while the backend directory is ours
 * (bk_negotiate_dir_ours), in a transaction: as set_state, an error
 * found after xl-remove (a connect that fails because the domain is
 * gone) must not recreate the directory.
 */
void
bk_vbd_write_error(struct bk_dev *dev, const char *msg)
{
	const struct error_arg a = { .dev = dev, .key = "error", .msg = msg };
	int r;

	if (dev->gone || dev->foreign)	/* another vbd's, another backend's */
		return;
	r = xbus_transact(dev->d->xs, error_node, (void *)&a);
	if (r == 0)
		snprintf(dev->error, sizeof(dev->error), "%s", msg);
	if (r == -ENOENT)
		bk_dbg(BK_DBG_XENBUS, "vbd %s: %s is gone: error not written", dev->name, dev->be);
	else if (r < 0)
		log_error("vbd %s: write %s/error: %s", dev->name, dev->be, strerror(-r));
}

void
bk_vbd_fatal(struct bk_dev *dev, const char *key, const char *fmt, ...)
{
	char msg[256], node[320];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* a message may quote what the guest wrote (its protocol, its ring
	 * keys): one log line, with no byte of the guest's that a terminal
	 * or a log reader would act on */
	xbus_printable(msg, sizeof(msg), msg);
	if (bk_vbd_log_ok(dev))	/* a flapping guest repeats its errors */
		log_error("vbd %s: %s: %s", dev->name, key, msg);
	snprintf(node, sizeof(node), "%s: %s", key, msg);
	/* xbus_printf writes up to 255 bytes and refuses more: cut it,
	 * or the error node would say nothing at all */
	if (strlen(node) > 255)
		node[255] = '\0';
	bk_vbd_write_error(dev, node);
	dev->fatal = true;
	bk_vbd_set_state(dev, XenbusStateClosing);
}

/* (vbd-int.h) */
void
bk_vbd_mark_failed(struct bk_dev *dev, const char *why)
{
	const struct error_arg a = { .dev = dev, .key = BK_FAILED_NODE, .msg = why };
	int r;

	if (dev->failed && dev->failed_why[0])
		return;
	dev->failed = true;
	snprintf(dev->failed_why, sizeof(dev->failed_why), "%s", why);
	if (dev->gone || dev->foreign)
		return;
	r = xbus_transact(dev->d->xs, error_node, (void *)&a);
	if (r < 0 && r != -ENOENT)
		log_error("vbd %s: write %s/%s: %s (a blkbackd started later will not know "
			  "that the vbd failed)", dev->name, dev->be, BK_FAILED_NODE, strerror(-r));
}

/*
 * A failed vbd (bk_vbd_mark_failed) is not connected again: a guest
 * that reconnects (a reboot, kexec, its driver reloaded) would find a
 * disk answering ERROR to everything behind a Connected that says
 * nothing, or, worse, a disk it trusts that may have lost writes it was
 * told were done.  Refused, naming why in the error node, until the
 * toolstack detaches the vbd, and the vbd stays (or goes) Closed: not
 * Closing as for other errors, since nothing is left to close, and a
 * frontend that sees our Closed while it starts closes its side too
 * (Linux blkfront's backend_changed), so neither end moves again until
 * the guest tries anew.  Linux blkback keeps no such state
 * (DESIGN-NOTES.md).  Called disconnected.  True when refused.
 */
static bool
refuse_failed(struct bk_dev *dev)
{
	char node[320];

	if (!dev->failed)
		return false;
	snprintf(node, sizeof(node), "failed: %s; not connected again: detach and reattach "
		 "the disk to clear", dev->failed_why[0] ? dev->failed_why : "the vbd failed");
	/* said once: our own write's watch event comes back here while the
	 * frontend is still Initialising, and a guest may try again and again */
	if (strcmp(dev->error, node)) {
		log_error("vbd %s: %s", dev->name, node);
		bk_vbd_write_error(dev, node);
	}
	dev->fatal = true;
	bk_vbd_set_state(dev, XenbusStateClosed);
	return true;
}

/* ---------------------------------------------------------------- */
/* The store and its claim (vbd-backing.c).                           */
/* ---------------------------------------------------------------- */

/* Open the vbd's store and claim its backing (bk_vbd_backing_open);
 * a refusal is fatal.  0, -EINPROGRESS while the backing is still
 * another vbd's (retried when its drain is over), or -errno after
 * bk_vbd_fatal(). */
static int
store_open(struct bk_dev *dev, bool check_only)
{
	struct bk_fault fault = { .key = "params", .msg = "cannot be opened" };
	int r = bk_vbd_backing_open(dev, check_only, &fault);

	if (r < 0 && r != -EINPROGRESS && dev->cfg.image_format) {
		/* the daemon is the hotplug script's: say whose it is (the
		 * nbd store's own words name the URI already) */
		static const char nbd[] = "cannot open nbd store \"";
		const char *why = fault.msg, *end;

		if (!strncmp(why, nbd, sizeof(nbd) - 1) &&
		    (end = strstr(why + sizeof(nbd) - 1, "\": ")) != NULL)
			why = end + 3;
		bk_vbd_fatal(dev, fault.key, "%s image, served by the hotplug script's "
			     "qemu-storage-daemon: %s", dev->cfg.image_format, why);
	} else if (r < 0 && r != -EINPROGRESS)
		bk_vbd_fatal(dev, fault.key, "%s", fault.msg);
	return r;
}

/* ---------------------------------------------------------------- */
/* Disconnect.                                                        */
/* ---------------------------------------------------------------- */

/* (vbd-int.h) */
bool
bk_vbd_queues_stopped(const struct bk_dev *dev, bool all)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++)
		if (bk_dataplane_stopped(dev->queues[i]) != all)
			return !all;
	return all;
}

void
bk_vbd_disconnect_finish(struct bk_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++) {
		/* join first: the counters are final once the thread is gone */
		bk_dataplane_join(dev->queues[i]);
		bk_stats_sum(&dev->closed_stats, bk_dataplane_stats(dev->queues[i]));
		bk_dataplane_destroy(dev->queues[i], dev->keep_state);
		dev->queues[i] = NULL;
	}
	dev->nr_queues = 0;
	/* a size probe out died with queue 0 (answered or not: a stopped
	 * queue takes no new one) */
	dev->size.asked = dev->size.again = false;
	/* the claim goes with the close: draining, and released only once
	 * the store is closed (vbd-backing.c); a kept store is not closed */
	if (bk_vbd_backing_keep(dev))
		bk_vbd_claim_release(dev->d, dev->claim);
	else
		bk_vbd_store_close(dev->d, dev->store, dev->claim);
	dev->store = NULL;
	dev->claim = NULL;
	if (dev->published && bk_vbd_log_ok(dev))
		log_info("vbd %s: disconnected", dev->name);
	dev->published = false;
	dev->phase = DEV_DISCONNECTED;
}

bool
bk_vbd_disconnect(struct bk_dev *dev)
{
	unsigned int i;

	if (dev->phase == DEV_DRAINING)
		return false;
	for (i = 0; i < dev->nr_queues; i++)
		bk_dataplane_stop(dev->queues[i]);
	if (bk_vbd_queues_stopped(dev, true)) {
		bk_vbd_disconnect_finish(dev);
		return true;
	}
	dev->phase = DEV_DRAINING;
	if (dev->claim)
		dev->claim->draining = true;
	/* what the vbd waits for, until "disconnected" (the xenbus step
	 * that follows, e.g. a re-added vbd's InitWait, waits too) */
	if (bk_vbd_log_ok(dev))
		log_info("vbd %s: disconnecting: answering the requests in flight first",
			 dev->name);
	return false;
}

bool
bk_vbd_drained(const struct bk_dev *dev)
{
	return dev->phase == DEV_DRAINING && bk_vbd_queues_stopped(dev, true);
}

bool
bk_vbd_drain_done(struct bk_dev *dev)
{
	bool closed = dev->then_closed, update = dev->then_update;

	bk_vbd_disconnect_finish(dev);
	dev->then_closed = dev->then_update = false;
	if (closed)
		bk_vbd_set_state(dev, XenbusStateClosed);
	return update;
}

/* (vbd.h) */
bool
bk_vbd_opening(const struct bk_dev *dev)
{
	return bk_vbd_backing_opening(dev);
}

/* (vbd.h) */
bool
bk_vbd_open_ended(const struct bk_dev *dev)
{
	return bk_vbd_backing_opened(dev);
}

/* (vbd.h) */
bool
bk_vbd_open_settle(struct bk_dev *dev)
{
	/* not taken: the vbd moved on while it opened (closed, removed,
	 * its params rewritten) */
	if (bk_vbd_backing_opened(dev))
		bk_vbd_backing_drop(dev);
	/* once more, as the frontend watch's first firing does after a
	 * probe that took no time: what the frontend did while the store
	 * opened (written, gone) is acted on now that the vbd is probed.
	 * Not while a new open is out (its end comes back here) or the vbd
	 * drains (its end scans). */
	return dev->phase != DEV_DRAINING && !bk_vbd_backing_opening(dev);
}

/* (vbd.h) */
void
bk_vbd_open_done(struct bk_dev *dev)
{
	if (dev->then_gone && !bk_vbd_backing_opening(dev)) {
		dev->then_gone = false;
		bk_vbd_domain_gone(dev);
	}
}

/* ---------------------------------------------------------------- */
/* Connect.                                                           */
/* ---------------------------------------------------------------- */

/* The backend's knobs into dev->cfg (negotiate.c); a wrong one is
 * fatal (its key named in the error node).  0/-EINVAL. */
static int
read_config(struct bk_dev *dev, bool connected)
{
	struct bk_fault fault = { .key = "params", .msg = "cannot be read" };
	int r = connected ? bk_negotiate_config_connected(dev, &fault) :
			    bk_negotiate_config(dev, &fault);

	if (r < 0)
		bk_vbd_fatal(dev, fault.key, "%s", fault.msg);
	return r;
}

/* Where queue i of the vbd keeps its recovery record (qstate.h). */
static void
record_path(const struct bk_dev *dev, unsigned int i, char *buf, size_t len)
{
	const char *dir = dev->d->opt.state_dir;

	snprintf(buf, len, "%s/vbd-%u-%u-q%u", dir ? dir : "", dev->frontid, dev->devid, i);
}

void
bk_vbd_sweep_records(struct bk_daemon *d)
{
	const char *dir = d->opt.state_dir;
	struct dirent *de;
	DIR *dp;

	if (!dir || !(dp = opendir(dir)))
		return;
	while ((de = readdir(dp))) {
		unsigned int dom, dev, q;
		int end = 0;
		char node[128], path[PATH_MAX];
		unsigned int len;
		void *v;

		if (sscanf(de->d_name, "vbd-%u-%u-q%u%n", &dom, &dev, &q, &end) != 3 ||
		    de->d_name[end])
			continue;
		snprintf(node, sizeof(node), "%s/%u/%u", d->vbd_root, dom, dev);
		v = xs_read(d->xs, XBT_NULL, node, &len);
		if (v || errno != ENOENT) {	/* there, or unknown: kept */
			free(v);
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (unlink(path) == 0)
			log_info("vbd %u/%u: removed its recovery record %s: its backend "
				 "directory went while no blkbackd ran", dom, dev, path);
		else if (errno != ENOENT)
			log_error("vbd %u/%u: recovery record %s: unlink: %m", dom, dev, path);
	}
	closedir(dp);
}

/*
 * A takeover opens params again, and the name may lead elsewhere now: a
 * file replaced (rm and a new one, mv over it), a symlink pointed
 * elsewhere, a block device renumbered.  Serving that to a guest whose
 * filesystem is mounted on the old one would look like lost writes and
 * worse.  True (and why, marked failed: the ring is served and every
 * request fails, as for a RAM disk found Connected) when what the
 * connect recorded (BK_BACKING_NODE) is not what was opened now.  A vbd
 * connected by a blkbackd that recorded nothing is taken as it is.
 */
static bool
backing_changed(struct bk_dev *dev, char *why, size_t len)
{
	const char *now = dev->claim ? dev->claim->id : "";
	char *was = xbus_read(dev->d->xs, XBT_NULL, dev->be, BK_BACKING_NODE);
	bool changed = was && strcmp(was, now) != 0;

	if (changed) {
		snprintf(why, len, "\"%s\" is not the backing this guest was "
			 "connected to (%s then, %s now)", dev->cfg.params.arg, was,
			 now[0] ? now : "nothing");
		bk_vbd_mark_failed(dev, why);
	}
	free(was);
	return changed;
}

/*
 * Connect: read the frontend's ring keys, open the store, start the
 * queues, publish.  takeover: the vbd is Connected already, served by a
 * blkbackd before us (a restart, an upgrade): the queues take their
 * rings over where it left them (dataplane.h, recover) and nothing is
 * written to xenstore -- the guest must not see a thing.
 */
static int
connect(struct bk_dev *dev, bool takeover)
{
	struct bk_daemon *d = dev->d;
	struct bk_ring_config rings[BK_MAX_QUEUES];
	struct bk_fault fault = { .key = "ring-ref", .msg = "cannot be read" };
	char changed_why[400];
	bool changed = false;
	unsigned int i;
	int nq, r;

	/* a stale connection never leaks (bk_vbd_update never calls us
	 * while one drains; this is the safety net) */
	if (!bk_vbd_disconnect(dev)) {
		dev->then_update = true;
		return 0;
	}
	/* Knobs may have been written after InitWait (by the hotplug
	 * script, like Linux's physical-device): read them again now; a
	 * takeover serves what its connect was given */
	if (read_config(dev, takeover) < 0)
		return 0;
	if (!takeover && refuse_failed(dev))
		return 0;
	/* A disk image: served once the hotplug script has started its
	 * daemon (Linux blkback waits for physical-device alike); the
	 * frontend waits meanwhile.  A vbd found Connected has it (the
	 * script ran before anyone connected it): without, it is broken. */
	if (dev->cfg.image_wait && takeover) {
		bk_vbd_fatal(dev, BK_IMAGE_NODE, "missing under a Connected %s image vbd",
			     dev->cfg.image_format);
		return 0;
	}
	if (dev->cfg.image_wait) {
		if (!dev->image_wait_said)
			log_info("vbd %s: the frontend is ready; waiting for the hotplug script "
				 "to serve the %s image (%s/%s)", dev->name,
				 dev->cfg.image_format, dev->be, BK_IMAGE_NODE);
		dev->image_wait_said = true;
		return 0;
	}
	dev->image_wait_said = false;
	/* A RAM disk found Connected lost its data with the blkbackd that
	 * served it.  Serve the rings all the same, so that no request the
	 * guest made hangs, but fail every one (as after a failed flush),
	 * reconnects included, and say why: a new, empty disk must not pass
	 * for the old one.  (Closing it at exit instead would not do: a
	 * guest that has the disk open stays Connected through our Closed,
	 * and the next blkbackd would connect it to an empty disk.) */
	if (takeover && bk_vbd_process_lifetime(dev)) {
		char why[200];

		snprintf(why, sizeof(why), "%s:%s: the data of this RAM disk died with the "
			 "blkbackd that served it", dev->cfg.params.driver->name,
			 dev->cfg.params.arg);
		bk_vbd_mark_failed(dev, why);
	}
	nq = bk_negotiate_rings(dev, rings, &fault);
	if (nq < 0) {
		bk_vbd_fatal(dev, fault.key, "%s", fault.msg);
		return 0;
	}
	dev->ring_pages = rings[0].nr_pages;
	r = store_open(dev, false);
	if (r < 0)
		return r;	/* -EINPROGRESS: retried once opened, or free */
	if (takeover)
		changed = backing_changed(dev, changed_why, sizeof(changed_why));
	dev->phase = DEV_CONNECTED;
	bk_negotiate_features(dev);
	for (i = 0; i < (unsigned int)nq; i++) {
		char state[PATH_MAX];
		const struct bk_queue_params p = {
			.name = dev->name,
			.idx = i,
			.domid = dev->frontid,
			.devid = dev->devid,
			.state_path = d->opt.state_dir ? state : NULL,
			.recover = takeover,
			.crash_point = d->opt.crash_point,
			.crash_after = d->opt.crash_after,
			.ring = rings[i],
			.xops = d->xops,
			.store = dev->store,
			.trace = d->trace,
			.feat = dev->feat,
			.failed = dev->failed,
			.max_indirect = dev->offer.max_indirect,
			.map_threshold = d->opt.map_threshold,
			.persistent = dev->persistent,
			.max_pgrants = d->opt.max_pgrants,
			.poll_max_us = d->opt.poll_max_us,
			/* one system call per pass however many I/Os it
			 * carries (io_uring): hand it the whole pass */
			.batch_submit = d->opt.batch_submit ||
					bk_store_features(dev->store)->batch_submit,
			.lat_clock = d->opt.lat_clock,
			.report_efd = d->report_efd,
		};
		const char *why = "?", *key = NULL;

		record_path(dev, i, state, sizeof(state));
		dev->queues[i] = bk_dataplane_create(&p, &why, &key);
		if (!dev->queues[i]) {
			int err = errno;
			char dir[200];

			/* name the frontend's key and where it is (the error
			 * node is read by the toolstack and the frontend) */
			bk_negotiate_queue_dir(dev, nq, i, dir, sizeof(dir));
			if (key)
				bk_vbd_fatal(dev, key, "queue %u: %s in %s: %s", i, why, dir,
					     strerror(err));
			else
				bk_vbd_fatal(dev, "queue", "queue %u: %s: %s", i, why, strerror(err));
			bk_vbd_disconnect(dev);
			return 0;
		}
		dev->nr_queues++;
	}
	for (i = 0; i < (unsigned int)nq; i++) {
		r = bk_dataplane_start(dev->queues[i]);
		if (r < 0) {
			bk_vbd_fatal(dev, "queue", "cannot start queue %u: %s", i, strerror(-r));
			bk_vbd_disconnect(dev);
			return 0;
		}
	}
	if (takeover) {
		dev->published = true;
		dev->state = XenbusStateConnected;
		log_info("vbd %s: taken over, Connected as it was (%s, %d queue%s, persistent=%d)",
			 dev->name, dev->cfg.params.arg, nq, nq == 1 ? "" : "s", dev->persistent);
		if (bk_vbd_process_lifetime(dev))
			bk_vbd_fatal(dev, "params", "%s:%s: the data of this RAM disk died with "
				     "the blkbackd that served it; every request fails",
				     dev->cfg.params.driver->name, dev->cfg.params.arg);
		else if (changed)
			bk_vbd_fatal(dev, "params", "%s; every request fails", changed_why);
		return 0;
	}
	r = bk_negotiate_publish(dev);
	if (r < 0) {
		log_error("vbd %s: publishing features: %s", dev->name, strerror(-r));
		bk_vbd_fatal(dev, "state", "cannot publish features: %s", strerror(-r));
		bk_vbd_disconnect(dev);
		return 0;
	}
	dev->published = true;
	/* the line that says what the guest got; rate-limited as the other
	 * state changes: a guest that reconnects in a loop (each time a
	 * whole handshake, some 25 a second) would flood the log */
	if (bk_vbd_log_ok(dev))
		log_info("vbd %s: %s -> Connected (%s, %d queue%s, %u-page ring, %s, "
			 "%" PRIu64 " sectors, flush=%d barrier=%d discard=%d persistent=%d fua=%s%s%s%s%s)",
			 dev->name, xbus_state_name(dev->state), dev->cfg.params.arg, nq,
			 nq == 1 ? "" : "s", rings[0].nr_pages, blkring_abi_name(rings[0].abi),
			 dev->feat.sectors, dev->feat.flush_cache, dev->feat.barrier, dev->feat.discard,
			 dev->persistent,
			 dev->feat.fua == BK_FUA_NATIVE ? "native" :
			 dev->feat.fua == BK_FUA_EMULATED ? "emulated" : "none",
			 dev->cfg.read_only ? ", read-only" : "",
			 dev->cfg.writethrough ? ", writethrough" : "",
			 bk_stack_engine(dev->store) ? " engine=" : "",
			 bk_stack_engine(dev->store) ? bk_stack_engine(dev->store) : "");
	dev->state = XenbusStateConnected;
	return 0;
}

/* ---------------------------------------------------------------- */
/* Objects.                                                           */
/* ---------------------------------------------------------------- */

void
bk_vbd_read_labels(struct bk_dev *dev)
{
	struct xs_handle *xs = dev->d->xs;
	char *v;

	v = xbus_read(xs, XBT_NULL, dev->be, "dev");
	snprintf(dev->vdev, sizeof(dev->vdev), "%s", v ? v : "");
	free(v);
	free(dev->params_found);
	dev->params_found = xbus_read(xs, XBT_NULL, dev->be, "params");
}

struct bk_dev *
bk_vbd_new(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev = calloc(1, sizeof(*dev));
	char *v;

	if (!dev) {
		log_error("vbd %u/%u: out of memory", f, id);
		return NULL;
	}
	dev->d = d;
	dev->frontid = f;
	dev->devid = id;
	dev->state = -1;
	dev->fe_value = -1;
	snprintf(dev->name, sizeof(dev->name), "%u/%u", f, id);
	snprintf(dev->be, sizeof(dev->be), "%s/%u/%u", d->vbd_root, f, id);
	snprintf(dev->guest_path, sizeof(dev->guest_path), "/local/domain/%u/name", f);
	bk_vbd_read_labels(dev);
	bk_negotiate_offer(dev, false);
	/* failed under a blkbackd before us (bk_vbd_mark_failed) */
	v = xbus_read(d->xs, XBT_NULL, dev->be, BK_FAILED_NODE);
	if (v) {
		dev->failed = true;
		/* ours, but a log line and the error node take nothing raw */
		xbus_printable(dev->failed_why, sizeof(dev->failed_why), v);
		free(v);
		log_info("vbd %s: failed under an earlier blkbackd (%s/%s: %s): every request "
			 "fails until the toolstack detaches it", dev->name, dev->be,
			 BK_FAILED_NODE, dev->failed_why);
	}
	bk_dbg(BK_DBG_XENBUS, "vbd %s: new device at %s", dev->name, dev->be);
	return dev;
}

void
bk_vbd_free(struct bk_dev *dev, bool removed)
{
	if (!bk_vbd_disconnect(dev))
		bk_vbd_disconnect_finish(dev);
	bk_vbd_backing_drop(dev);	/* an open still out closes itself */
	bk_vbd_backing_drop_kept(dev);
	if (dev->fe_watched)
		xs_unwatch(dev->d->xs, dev->fe_state, "fe");
	bk_negotiate_config_free(&dev->cfg);
	free(dev->params_found);
	if (removed)
		log_info("vbd %s: removed", dev->name);
	free(dev);
	/* a queue thread's malloc arena keeps what it freed: give it back
	 * (64 vbds come and go without the daemon keeping their memory) */
	malloc_trim(0);
}

bool
bk_vbd_process_lifetime(const struct bk_dev *dev)
{
	return dev->cfg.params.driver && dev->cfg.params.driver->process_lifetime;
}

void
bk_vbd_stats(const struct bk_dev *dev, struct bk_stats *out)
{
	unsigned int i;

	*out = dev->closed_stats;
	for (i = 0; i < dev->nr_queues; i++)
		bk_stats_sum(out, bk_dataplane_stats(dev->queues[i]));
}

/* ---------------------------------------------------------------- */
/* Probe and the frontend.                                            */
/* ---------------------------------------------------------------- */

/* The knobs, the backing, the probe keys and InitWait (Linux
 * xen_blkbk_probe and backend_changed). */
static void
probe(struct bk_dev *dev)
{
	int r;

	dev->fatal = false;
	if (refuse_failed(dev))
		goto failed;
	if (read_config(dev, false) < 0)
		goto failed;
	bk_negotiate_offer(dev, false);	/* what the probe keys will say */
	/* a disk image the hotplug script has not served yet: InitWait
	 * without it, as libxl runs the script only after InitWait */
	r = dev->cfg.image_wait ? 0 : store_open(dev, true);
	if (r == -EINPROGRESS)
		return;	/* probed again once the backing is free */
	if (r < 0)
		goto failed;
	r = bk_negotiate_probe_keys(dev);
	if (r == 0) {
		dev->error[0] = '\0';	/* the probe keys removed it */
		if (bk_vbd_log_ok(dev) && dev->cfg.image_wait)
			log_info("vbd %s: %s -> InitWait (params %s; the hotplug script "
				 "serves the image)", dev->name, xbus_state_name(dev->state),
				 dev->cfg.params_raw);
		else if (bk_vbd_log_ok(dev))
			log_info("vbd %s: %s -> InitWait (params %s:%s)", dev->name,
				 xbus_state_name(dev->state), dev->cfg.params.driver->name,
				 dev->cfg.params.arg);
		dev->state = XenbusStateInitWait;
		dev->probed = true;
		return;
	}
	if (r == -ENOENT) {
		/* removed before we got to it (an xl-add followed at once by
		 * its xl-remove): the toolstack's doing, not an error; the
		 * directory's own watch event forgets the vbd */
		if (bk_vbd_log_ok(dev))
			log_info("vbd %s: %s was removed before it could be probed",
				 dev->name, dev->be);
	} else {
		log_error("vbd %s: cannot write the probe keys under %s: %s", dev->name,
			  dev->be, strerror(-r));
	}
failed:
	dev->probed = true;
}

/*
 * Before the probe (which may wait for its store): is the frontend's
 * state node there (fe_seen: its removal from now on is a frontend
 * gone, not one not written yet), and what does it hold (fe_value, for
 * blkbackd-ctl list; fe_live when 1..5, as the probed path has it)?
 * Read quietly: a junk value is reported later.
 */
static void
fe_peek(struct bk_dev *dev)
{
	unsigned int v = XenbusStateUnknown;

	if (xbus_read_uint(dev->d->xs, XBT_NULL, dev->fe, "state", XenbusStateUnknown, &v) ==
	    -ENOENT)
		return;
	dev->fe_seen = true;
	dev->fe_value = v >= XenbusStateInitialising && v <= XenbusStateClosed &&
			v != XenbusStateInitWait ? (int)v : -1;
	if (dev->fe_value >= XenbusStateInitialising && dev->fe_value <= XenbusStateClosing)
		dev->fe_live = true;
}

/* The frontend's directory and a watch on its state node. */
static int
watch_frontend(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	char *fe;

	if (dev->fe_watched)
		return 0;
	fe = xbus_read(d->xs, XBT_NULL, dev->be, "frontend");
	if (!fe)
		return -ENOENT;
	/* Linux's xenbus_read_otherend_details: an empty path is fatal.
	 * So is one that is not absolute, or too long to watch whole.
	 * Once: our error write's own event comes back here. */
	if (fe[0] != '/' || strlen(fe) >= sizeof(dev->fe)) {
		char shown[65];

		if (!dev->fatal)
			bk_vbd_fatal(dev, "frontend", "\"%s\"%s is not a frontend directory "
				     "(an absolute xenstore path under %zu bytes)",
				     xbus_printable(shown, sizeof(shown), fe),
				     strlen(fe) > 64 ? "..." : "", sizeof(dev->fe));
		free(fe);
		return -EINVAL;
	}
	snprintf(dev->fe, sizeof(dev->fe), "%s", fe);
	free(fe);
	snprintf(dev->fe_state, sizeof(dev->fe_state), "%s/state", dev->fe);
	if (!xs_watch(d->xs, dev->fe_state, "fe")) {
		log_error("vbd %s: watch %s: %m", dev->name, dev->fe_state);
		return -errno;
	}
	dev->fe_watched = true;
	return 0;
}

/*
 * Read the frontend's state node.  0 with *out in 0..6 but 2, -ENOENT
 * if absent, -EINVAL if it holds anything else: Linux blkback's
 * frontend_changed() calls that fatal ("saw state N at frontend"), and
 * so does this, once per value.  0 (Unknown) is what Linux's
 * xenbus_read_driver_state() says of an absent node: taken as Closed,
 * with one line saying so.
 */
static int
fe_state_read(struct bk_dev *dev, unsigned long *out)
{
	char *s = xbus_read(dev->d->xs, XBT_NULL, dev->fe, "state"), *end;
	unsigned long v = ULONG_MAX;
	bool same, valid;
	char shown[33];

	if (!s) {
		dev->fe_value = -1;
		return -ENOENT;
	}
	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || *end)
			v = ULONG_MAX;
	}
	/* (an empty node is junk too: compared only once one was reported) */
	/* Every value must compare, whatever its length: reporting it
	 * rewrites our error node, whose watch event brings us back here. */
	same = dev->fe_bad_set && dev->fe_bad_len == strlen(s) && dev->fe_bad_hash == blk_fnv1a64(s, strlen(s));
	/* 2 (InitWait) is a backend's state: from a frontend it is junk, as
	 * Linux blkback's frontend_changed() has it (its default case) */
	valid = v >= XenbusStateInitialising && v <= XenbusStateClosed &&
		v != XenbusStateInitWait;
	if (valid) {
		dev->fe_bad_set = false;
	} else if (!same) {
		dev->fe_bad_len = strlen(s);
		dev->fe_bad_hash = blk_fnv1a64(s, strlen(s));
		dev->fe_bad_set = true;
		if (v == XenbusStateUnknown)
			log_info("vbd %s: frontend state 0 (Unknown) at %s: taken as Closed",
				 dev->name, dev->fe_state);
		else if (v == XenbusStateInitWait)
			bk_vbd_fatal(dev, "state", "the frontend's state \"2\" (InitWait) at %s "
				     "is a backend's state", dev->fe_state);
		else
			bk_vbd_fatal(dev, "state", "the frontend's state \"%s\"%s at %s is "
				     "not a XenbusState in 1..6",
				     xbus_printable(shown, sizeof(shown), s),
				     strlen(s) > 32 ? "..." : "", dev->fe_state);
	}
	free(s);
	dev->fe_value = valid ? (int)v : -1;
	*out = v;
	return valid || v == XenbusStateUnknown ? 0 : -EINVAL;
}

/*
 * Is the kernel's xen-blkback bound to this vbd (sysfs
 * bus/xen-backend/devices/vbd-F-D/driver)?  Only asked where start-up
 * found it loaded and was told to leave its vbds alone.
 */
static bool
kernel_bound(const struct bk_dev *dev)
{
	const struct bk_options *o = &dev->d->opt;
	char path[PATH_MAX];

	if (!o->leave_kernel_vbds || !o->sysfs_root)
		return false;
	snprintf(path, sizeof(path), "%s/bus/xen-backend/devices/vbd-%u-%u/driver",
		 o->sysfs_root, dev->frontid, dev->devid);
	return access(path, F_OK) == 0;
}

/*
 * Did a blkbackd with our --state-dir (this one, or the one before a
 * restart, a crash or an upgrade) serve the connection the frontend
 * shows now?  Every queue's recovery record must be there and be of
 * that very ring (grant refs, the frontend's port, ABI, size): without
 * one, we never served it; with one of another connection, the vbd or
 * the frontend was made again since.  0 when it did; -ENOENT, -ESTALE,
 * or -EINVAL when the frontend's keys are not a ring we could have
 * served.  Reads only: nothing is written, nothing is logged.
 */
static int
served_here(struct bk_dev *dev)
{
	struct bk_ring_config rings[BK_MAX_QUEUES];
	char path[PATH_MAX];
	int nq, i, r;

	if (!dev->d->opt.state_dir)
		return -ENOENT;
	nq = bk_negotiate_rings_peek(dev, rings);
	if (nq < 0)
		return nq;
	for (i = 0; i < nq; i++) {
		record_path(dev, (unsigned int)i, path, sizeof(path));
		r = bk_dataplane_record_check(path, dev->frontid, dev->devid, (unsigned int)i,
					      &rings[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Leave the vbd to the backend that serves it: from now on nothing is
 * written to it, its backing is not opened, its ring not touched
 * (bk_vbd_update), until the toolstack makes it new.  Said once.
 */
static void
leave_alone(struct bk_dev *dev, const char *why)
{
	dev->foreign = true;
	log_info("vbd %s: %s: left alone; another backend (kernel xen-blkback?) "
		 "serves it", dev->name, why);
}

/*
 * Did a blkbackd connect this very backend directory?  Its connect's
 * record of the knobs (BK_KNOBS_NODE) is there: written by no other
 * backend, and gone with the directory when the toolstack makes the vbd
 * again (after which another backend may have probed it).
 */
static bool
connected_here(struct bk_dev *dev)
{
	char dir[sizeof(dev->be) + sizeof(BK_KNOBS_NODE) + 1], *v;
	bool there;

	snprintf(dir, sizeof(dir), "%s/%s", dev->be, BK_KNOBS_NODE);
	v = xbus_read(dev->d->xs, XBT_NULL, dir, "mode");
	there = v != NULL;
	free(v);
	return there;
}

/*
 * A vbd we have never written to, whose backend says Connected (or the
 * toolstack's Closing over a Connected frontend): may we take its ring
 * over as it stands?  Only a ring a blkbackd with our --state-dir served
 * (served_here), so a restart, a crash or an upgrade: a vbd Connected by
 * another backend -- the kernel's xen-blkback answers the same "vbd"
 * kind -- looks exactly the same, and two backends on one ring would
 * both consume it and both write the backing.  A ring in use (the
 * frontend Initialised or Connected) without our record is left alone
 * (dev->foreign; LEAVE) -- except one whose record is of another
 * connection in a directory our connect's knobs record is still in
 * (connected_here): its frontend made a new ring while no blkbackd ran
 * (a driver reload during an upgrade), which nobody has served, so it
 * is connected afresh (CONNECT_AFRESH).  Ours is taken over
 * (TAKE_OVER) with the hotplug script done (or none: no hotplug-status)
 * and the frontend Initialised or Connected; a vbd whose frontend is
 * not using a ring goes on as before (probed, or its junk state
 * reported).
 */
enum takeover { LEAVE, TAKE_OVER, CONNECT_AFRESH };

static enum takeover
may_take_over(struct bk_dev *dev)
{
	unsigned int fe_quiet = XenbusStateUnknown;
	unsigned long fe_state;
	bool script_ok;
	char *hp;
	int r;

	/* its rings are held to what the frontend was offered, whatever
	 * our options say now */
	bk_negotiate_offer(dev, true);
	r = served_here(dev);

	/* read quietly: a junk value is reported below, for ours only */
	xbus_read_uint(dev->d->xs, XBT_NULL, dev->fe, "state", XenbusStateUnknown, &fe_quiet);
	dev->fe_value = fe_quiet >= XenbusStateInitialising && fe_quiet <= XenbusStateClosed &&
			fe_quiet != XenbusStateInitWait ? (int)fe_quiet : -1;
	if (r == -ESTALE && (fe_quiet == XenbusStateInitialised ||
			     fe_quiet == XenbusStateConnected) && connected_here(dev)) {
		if (bk_vbd_log_ok(dev))
			log_info("vbd %s: Connected by a blkbackd before us, and its frontend "
				 "made a new ring since (it reconnected while no blkbackd ran): "
				 "connected afresh", dev->name);
		return CONNECT_AFRESH;
	}
	if (r < 0 && (fe_quiet == XenbusStateInitialised || fe_quiet == XenbusStateConnected)) {
		leave_alone(dev, r == -ESTALE ?
			    "Connected, but not on the ring this blkbackd served (its "
			    "recovery record is of another connection)" :
			    r == -ENOENT ?
			    "Connected, but not by this blkbackd (no recovery record for "
			    "its ring)" :
			    "Connected, on a ring this blkbackd could not have served (its "
			    "keys are missing, junk or beyond our limits)");
		return LEAVE;
	}
	if (r < 0)
		return LEAVE;
	/* the record proves the ring ours; a vbd made without a hotplug
	 * script (no hotplug-status, as by hand) was served all the same,
	 * and probing it again would write InitWait under a Connected guest */
	hp = xbus_read(dev->d->xs, XBT_NULL, dev->be, "hotplug-status");
	script_ok = !hp || !strcmp(hp, "connected");
	free(hp);
	return script_ok && fe_state_read(dev, &fe_state) == 0 &&
	       (fe_state == XenbusStateInitialised || fe_state == XenbusStateConnected) ?
	       TAKE_OVER : LEAVE;
}

/*
 * The toolstack detaches the vbd: online=0, or Closing written to our
 * state node by someone else (libxl's device removal writes both).
 * Linux blkback with libxl: the backend is Closing, so the guest closes
 * its side; the ring is pulled only when the frontend is Closed or gone
 * (frontend_changed(): Closed, then the device goes as it is not
 * online), never from under a connected guest.  Closed stays Closed
 * while online is 0.  Idempotent: runs again on each event until done.
 */
static void
detach(struct bk_dev *dev, unsigned int be_state)
{
	unsigned long fe_state = XenbusStateUnknown;
	int r = -ENOENT;

	if (dev->state == XenbusStateClosed && be_state == XenbusStateClosed) {
		dev->detaching = false;
		return;
	}
	dev->detaching = true;
	/* a blkbackd started after the toolstack's close has not looked at
	 * the frontend yet: it waits for the frontend's Closed all the same */
	if (!dev->fe_watched)
		watch_frontend(dev);
	if (dev->fe_watched)
		r = fe_state_read(dev, &fe_state);
	/* ... and serves it meanwhile: a frontend still Connected went so
	 * on a predecessor's Connected, and a guest that has the disk open
	 * stays Connected through our Closing and goes on with its I/O
	 * (Linux blkfront).  Take its rings over as at any restart (the
	 * requests the predecessor had taken included), without a word to
	 * xenstore; the queues stop at the frontend's Closed, below.  Only
	 * from a backend Connected, or the toolstack's Closing over it: one
	 * still Initialising was never connected by anyone (new, as Linux's
	 * xenbus_probe_node has it), whatever its frontend claims. */
	if (dev->state == -1 && dev->phase == DEV_DISCONNECTED && r == 0 &&
	    (be_state == XenbusStateConnected || be_state == XenbusStateClosing) &&
	    fe_state == XenbusStateConnected && may_take_over(dev) == TAKE_OVER) {
		dev->probed = true;
		dev->fe_seen = true;
		dev->fatal = false;
		if (connect(dev, true) == -EINPROGRESS) {
			/* its store still opening: here again once it is */
			dev->probed = false;
			return;
		}
		/* taken over as it stands: the toolstack's Closing is the
		 * state the guest sees, not to be written again (a write of
		 * the same value still fires the frontend's watch) */
		if (be_state == XenbusStateClosing && dev->phase == DEV_CONNECTED)
			dev->state = XenbusStateClosing;
	}
	if (dev->foreign) {	/* may_take_over: another backend's ring */
		dev->detaching = false;
		return;
	}
	bk_vbd_set_state(dev, XenbusStateClosing);	/* also if libxl wrote it: logged */
	if (r == -EINVAL || (r == 0 && fe_state != XenbusStateClosed &&
			     fe_state != XenbusStateUnknown))
		return;	/* the frontend's Closed (its watch) brings us back */
	if (!bk_vbd_disconnect(dev)) {
		dev->then_update = true;	/* Closed once drained */
		return;
	}
	bk_vbd_set_state(dev, XenbusStateClosed);
	dev->detaching = false;
}

/* A frontend that closed (not after an error) and comes back. */
static bool
may_reconnect(const struct bk_dev *dev)
{
	return dev->state == XenbusStateClosed ||
	       (dev->state == XenbusStateClosing && !dev->fatal);
}

/* What the frontend's state asks of a probed vbd. */
static void
frontend_changed(struct bk_dev *dev, unsigned long fe_state)
{
	switch (fe_state) {
	case XenbusStateInitialising:
		/* A frontend that starts over while its ring is still served:
		 * its Closing and Closed were overwritten before we read them
		 * (5, 6, 1 in quick succession), it restarted without closing,
		 * or it went Closing (we serve on, as Linux) and then
		 * Initialising.  Close our side first; the probe follows once
		 * the queues have drained. */
		if (dev->phase == DEV_CONNECTED) {
			bk_vbd_set_state(dev, XenbusStateClosing);
			if (!bk_vbd_disconnect(dev)) {
				dev->then_update = true;
				break;
			}
		}
		/* reconnect: a fresh probe (also from our Closing: the
		 * frontend did not wait for Closed, e.g. while we drained) */
		if (may_reconnect(dev)) {
			dev->probed = false;
			probe(dev);
		}
		break;
	case XenbusStateInitialised:
	case XenbusStateConnected:
		/* From Closing too: the frontend went Initialising and on
		 * while we drained, or two watches fired in close succession
		 * (Linux blkback's frontend_changed connects there as well). */
		if ((dev->state == XenbusStateInitWait || may_reconnect(dev)) && !dev->fatal)
			connect(dev, false);
		break;
	case XenbusStateClosing:
		/*
		 * Closing at once, from any state (Linux blkback), and the ring
		 * is still served: a guest that still has the disk open stays
		 * Closing and goes on with its I/O until its last close (Linux
		 * blkfront_closing, "Device in use; refusing to close").  The
		 * queues stop at the frontend's Closed.
		 */
		bk_vbd_set_state(dev, XenbusStateClosing);
		/* on its way out: a vbd wanting its backing waits for the
		 * release rather than being refused (store_open) */
		if (dev->claim)
			dev->claim->draining = true;
		break;
	case XenbusStateClosed:
	case XenbusStateUnknown:
	default:
		/*
		 * Closed from any state (Linux blkback), InitWait included
		 * once this frontend has been seen alive: it went Closed while
		 * we waited for it (it reconnects by writing Initialising, and
		 * we go back to InitWait then).  A frontend that has only ever
		 * been Closed, Unknown or absent since we serve the vbd has
		 * not started (blkbackd restarted, or the guest closed
		 * earlier): keep waiting in InitWait for it.
		 */
		if (dev->state == XenbusStateInitWait &&
		    (fe_state != XenbusStateClosed || !dev->fe_live))
			break;
		/* Closing while the queues stop, whether that takes a while
		 * (requests in flight) or no time at all: what the guest sees
		 * must not depend on the timing (a Connected state here would
		 * also leave nothing behind it) */
		if (dev->phase == DEV_CONNECTED)
			bk_vbd_set_state(dev, XenbusStateClosing);
		if (!bk_vbd_disconnect(dev)) {
			/* then Closed, or whatever the frontend has moved on
			 * to by then */
			if (dev->state != XenbusStateClosed && dev->state != -1)
				bk_vbd_set_state(dev, XenbusStateClosing);
			dev->then_update = true;
			break;
		}
		if (dev->state != -1)
			bk_vbd_set_state(dev, XenbusStateClosed);
		dev->fatal = false;
		break;
	}
}

/*
 * While the vbd drains, only remember that something changed: this
 * runs again once the drain is over (then_update), and then sees the
 * latest states, so every step that must follow a disconnect (Closed,
 * a fresh probe, a reconnect) happens after it, never before.
 */
void
bk_vbd_update(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	unsigned int be_state, online = 1;
	unsigned long fe_state;
	enum takeover t;
	char *v;
	int r;

	/* (an open out needs no such wait: every path that wants the store
	 * finds it out and waits in turn (-EINPROGRESS), and the rest --
	 * Closing, Closed, a detach -- is acted on at once; a result the
	 * vbd no longer wants is dropped, bk_vbd_open_settle) */
	if (dev->phase == DEV_DRAINING) {
		dev->then_update = true;
		return;
	}
	xbus_read_uint(d->xs, XBT_NULL, dev->be, "state", XenbusStateUnknown, &be_state);
	/* as Linux's xenbus_dev_is_online(): "%d" scanned, and a value
	 * that does not scan ("false", "") is offline; absent is online */
	v = xbus_read(d->xs, XBT_NULL, dev->be, "online");
	if (v) {
		char *end;
		long o = strtol(v, &end, 10);	/* "%d" without its overflow */

		online = end != v && o != 0;
		free(v);
	}

	/* Another backend's (Linux's xenbus_probe_node takes only a device
	 * whose backend state is Initialising: anything else is not new):
	 * left alone until the toolstack makes it new, whatever it does
	 * meanwhile (Closing, Closed, online=0: the other backend's
	 * business).  A vbd that the kernel backend took is its own even
	 * then. */
	if (!dev->foreign && dev->state == -1 && !dev->probed && kernel_bound(dev))
		leave_alone(dev, "bound to the kernel's xen-blkback (sysfs)");
	if (dev->foreign) {
		if (be_state != XenbusStateInitialising || kernel_bound(dev))
			return;
		log_info("vbd %s: Initialising again (made new by the toolstack): served "
			 "from now on", dev->name);
		dev->foreign = false;
		dev->probed = false;
		dev->state = -1;
	}

	/* The toolstack asks for teardown (libxl: online=0 and Closing).
	 * A Closing found by a blkbackd that has written no state yet is
	 * its predecessor's (a frontend's Closing, an error, a drain): the
	 * toolstack's close writes online=0 as well. */
	if (online == 0 || dev->detaching ||
	    (be_state == XenbusStateClosing && dev->state != XenbusStateClosing &&
	     dev->state != -1)) {
		detach(dev, be_state);
		return;
	}
	/* Someone reset the vbd to Initialising: start over. */
	if (be_state == XenbusStateInitialising && dev->state > XenbusStateInitialising) {
		if (!bk_vbd_disconnect(dev)) {
			dev->then_update = true;
			return;
		}
		dev->probed = false;
		dev->state = -1;
	}
	if (!dev->probed) {
		char *fid = xbus_read(d->xs, XBT_NULL, dev->be, "frontend-id");

		if (!fid)
			return;	/* not complete yet: the toolstack is still writing */
		free(fid);
		r = watch_frontend(dev);
		if (r < 0) {
			/* -ENOENT: not written yet; -EINVAL: reported.  Any
			 * other (xenstored's watch quota: E2BIG) is fatal, as
			 * Linux's xenbus_watch_pathfmt failing is ("adding
			 * watch on ..."): said in the error node, once, not
			 * left Initialising for the guest to time out on */
			if (r != -ENOENT && r != -EINVAL && !dev->fatal)
				bk_vbd_fatal(dev, "watch", "cannot watch %s: %s", dev->fe_state,
					     strerror(-r));
			return;
		}
		/* Connected already, by a blkbackd before us: take it over
		 * as it stands (crash, restart, upgrade) */
		dev->fatal = false;
		t = be_state == XenbusStateConnected ? may_take_over(dev) : LEAVE;
		if (t != LEAVE) {
			dev->probed = true;
			dev->fe_seen = true;
			/* its store still opening (or its backing draining):
			 * this branch again, once it is */
			if (connect(dev, t == TAKE_OVER) == -EINPROGRESS)
				dev->probed = false;
			return;
		}
		if (dev->foreign)
			return;
		/* ... unless the frontend's state is junk: fatal (reported
		 * there, once), and Closing until the frontend starts over, as
		 * from Connected; a probe would hide it behind InitWait */
		if (dev->fatal) {
			dev->probed = true;
			return;
		}
		fe_peek(dev);	/* ours, and probed now: its frontend as it stands */
		probe(dev);
		return;	/* the frontend watch fires once at once: next step there */
	}

	r = fe_state_read(dev, &fe_state);
	if (r == -ENOENT) {
		if (!dev->fe_seen)
			return;	/* the frontend has not appeared yet */
		fe_state = XenbusStateClosed;	/* gone */
	} else if (r < 0) {
		/* a bad value (reported by fe_state_read), but a frontend is
		 * there: the node's removal later is a frontend gone */
		dev->fe_seen = true;
		return;
	} else {
		dev->fe_seen = true;
		if (fe_state != XenbusStateClosed && fe_state != XenbusStateUnknown)
			dev->fe_live = true;
	}
	bk_dbg(BK_DBG_XENBUS, "vbd %s: backend %s, frontend %s", dev->name,
	       xbus_state_name(dev->state), xbus_state_name(fe_state));
	frontend_changed(dev, fe_state);
}

void
bk_vbd_domain_gone(struct bk_dev *dev)
{
	/* its probe's open out, or done and not taken up yet: acted on
	 * once the probe is done */
	if (!dev->probed && (bk_vbd_backing_opening(dev) || bk_vbd_backing_opened(dev))) {
		dev->then_gone = true;
		return;
	}
	if (dev->state == XenbusStateClosed || !dev->probed || dev->then_closed ||
	    dev->foreign)
		return;
	log_info("vbd %s: frontend domain %u is gone", dev->name, dev->frontid);
	/* as for a frontend that closed: Closing first if a ring was
	 * served, Closed once the queues have drained */
	if (dev->phase == DEV_CONNECTED)
		bk_vbd_set_state(dev, XenbusStateClosing);
	if (bk_vbd_disconnect(dev)) {
		bk_vbd_set_state(dev, XenbusStateClosed);
	} else {
		bk_vbd_set_state(dev, XenbusStateClosing);
		dev->then_closed = true;
	}
}
