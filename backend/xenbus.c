/*
 * xenbus.c: the control plane (STYLE.md #6): xenstore watches, the vbd
 * state machine, feature negotiation and publication.  Runs on the
 * control thread only.
 *
 * Key set and state machine follow Linux xen-blkback (xenbus.c):
 *   probe:    max-ring-page-order, multi-queue-max-queues,
 *             feature-max-indirect-segments -> InitWait (2)
 *   frontend Initialised (3) / Connected (4):
 *             read ring-page-order, ring-ref / ring-refN, event-channel
 *             (per queue-N/ when multi-queue-num-queues > 1), protocol,
 *             feature-persistent; open the store; start the queues;
 *             publish feature-flush-cache, feature-barrier,
 *             feature-discard (+ discard-granularity, discard-alignment,
 *             discard-secure), feature-persistent, sectors, info,
 *             sector-size, physical-sector-size and state Connected (4)
 *             in ONE transaction, retried on EAGAIN
 *   frontend Closing (5):  Closing, disconnect
 *   frontend Closed (6), frontend gone, its domain dead:
 *             disconnect, Closed (6) (Closing while the queues drain)
 *   frontend Initialising (1) while we are Connected: Closing,
 *             disconnect, then as below
 *   frontend Initialising (1) while we are Closed, or Closing not after
 *             an error: InitWait (reconnect); Initialised/Connected
 *             there: connect at once
 *   toolstack: online=0, or our state node set to Closing (5) by
 *             someone else (libxl writes both): Closing (5) at once;
 *             disconnect and Closed (6) once the frontend is Closed or
 *             gone (Linux: frontend_changed, Closed and not online)
 *   backend directory removed: disconnect and forget the device
 * ("disconnect, X": X once the queues have drained, see below.)
 * Errors: logged with the key, written to <backend>/error, and the
 * device goes to Closing (Linux xenbus_dev_fatal); other devices go on.
 *
 * Disconnecting never waits for a guest's I/O (Linux blkback's
 * xen_blkif_disconnect returns -EBUSY while requests are in flight, and
 * the last one completes the free).  Each device's teardown is a small
 * state machine, dev->phase:
 *   DEV_DISCONNECTED  no store, no queue
 *   DEV_CONNECTED     dev_connect opened the store and runs the queues
 *   DEV_DRAINING      disconnect() asked every queue to stop; each
 *                     finishes its in-flight requests, responds, and
 *                     reports BK_REPORT_DRAINED
 * When the last queue has reported, bk_xenbus_handle_reports joins the
 * finished threads, unmaps, unbinds, closes the store (DISCONNECTED),
 * and only then takes the xenbus step that waited for it: Closed for a
 * frontend domain that is gone (then_closed), and for everything else,
 * the device brought in line with what xenstore says by then
 * (then_update: dev_update, or forgetting a removed device).  Events
 * for a draining device are only remembered (then_update), so a
 * frontend that went Closing, Initialising, Initialised meanwhile is
 * connected afresh once the drain is over.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>
#include <xen/io/xenbus.h>

#include "barrier.h"
#include "log.h"
#include "private.h"

#define BK_MAX_QUEUES 16

struct bk_dev {
	struct bk_daemon *d;
	struct bk_dev *next;
	uint32_t frontid, devid;
	char name[32];			/* "F/D" */
	char be[160];			/* backend directory */
	char fe[160];			/* frontend directory ("" until read) */
	char fe_state[176];		/* watched */
	bool fe_watched, fe_seen;
	/* the frontend state value outside 1..6 last reported ("" none):
	 * reported once per value, not per watch event */
	char fe_bad[24];
	int state;			/* the state we wrote last, -1 none */
	bool probed;
	enum { DEV_DISCONNECTED, DEV_CONNECTED, DEV_DRAINING } phase;
	bool then_update;		/* DRAINING: dev_update (scan_device) after */
	bool then_closed;		/* DRAINING: write Closed after (domain gone) */
	bool published;			/* we wrote Connected for this connection */
	bool fatal;			/* an error stopped it until reconnect */
	bool detaching;			/* the toolstack asked it to close (online=0) */
	bool backing_wait;		/* its backing is still another vbd's, draining */
	/* state-change log lines: a guest flapping its state node must not
	 * flood dom0's log (STATE_LOG_BURST per STATE_LOG_WINDOW_S) */
	time_t log_window;
	unsigned int log_lines, log_dropped;
	/* its claim on the backing (store.h), from connect until drained */
	struct bk_claim *claim;

	struct bk_dev_config cfg;
	struct bk_store *store;		/* the top of the stack, while connected */
	struct bk_store_features sf;
	struct bk_features feat;
	unsigned int nr_queues;
	struct bk_queue *queues[BK_MAX_QUEUES];
	struct bk_stats closed_stats;	/* of queues already destroyed */

	bool failed;			/* atomic: a flush failed (C15) */
	pthread_mutex_t rlock;		/* reports from queue threads */
	bool rep_broken, rep_failed;
	char rep_msg[256];
};

/* ---------------------------------------------------------------- */
/* Accessors for the dataplane.                                      */
/* ---------------------------------------------------------------- */

struct bk_daemon *bk_dev_daemon(const struct bk_dev *dev) { return dev->d; }
struct bk_features *bk_dev_features(struct bk_dev *dev) { return &dev->feat; }
uint32_t bk_dev_frontend_id(const struct bk_dev *dev) { return dev->frontid; }
const char *bk_dev_name(const struct bk_dev *dev) { return dev->name; }

struct bk_store *
bk_dev_store(const struct bk_dev *dev)
{
	return dev->store;
}

bool
bk_dev_failed(const struct bk_dev *dev)
{
	/* paired with the store in bk_dev_report */
	return __atomic_load_n(&dev->failed, __ATOMIC_ACQUIRE);
}

/* ---------------------------------------------------------------- */
/* xenstore helpers.                                                  */
/* ---------------------------------------------------------------- */

/* Read dir/key into a malloc'ed string; NULL (errno) if absent. */
static char *
xs_get(struct bk_daemon *d, xs_transaction_t t, const char *dir, const char *key)
{
	char path[256];
	unsigned int len;

	if (key)
		snprintf(path, sizeof(path), "%s/%s", dir, key);
	else
		snprintf(path, sizeof(path), "%s", dir);
	return xs_read(d->xs, t, path, &len);
}

/*
 * Read an unsigned integer.  Returns 0, -ENOENT if absent (*out = def),
 * -EINVAL if not a number.
 */
static int
xs_get_uint(struct bk_daemon *d, const char *dir, const char *key, unsigned long def,
	    unsigned long *out)
{
	char *s = xs_get(d, XBT_NULL, dir, key), *end;
	unsigned long v;

	*out = def;
	if (!s)
		return -ENOENT;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-') {
		free(s);
		return -EINVAL;
	}
	free(s);
	*out = v;
	return 0;
}

static bool
xs_put(struct bk_daemon *d, xs_transaction_t t, const char *dir, const char *key,
       const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(5, 6);

static bool
xs_put(struct bk_daemon *d, xs_transaction_t t, const char *dir, const char *key,
       const char *fmt, ...)
{
	char path[256], val[256];
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	return xs_write(d->xs, t, path, val, strlen(val));
}

static void
xs_del(struct bk_daemon *d, xs_transaction_t t, const char *dir, const char *key)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	xs_rm(d->xs, t, path);	/* absent is fine */
}

static const char *
state_name(int s)
{
	static const char *const names[] = {
		"Unknown", "Initialising", "InitWait", "Initialised", "Connected",
		"Closing", "Closed", "Reconfiguring", "Reconfigured",
	};

	return s >= 0 && (size_t)s < ARRAY_SIZE(names) ? names[s] : "?";
}

#define STATE_LOG_BURST		20
#define STATE_LOG_WINDOW_S	10

/*
 * May this device log one more state-change line now?  Up to
 * STATE_LOG_BURST lines per STATE_LOG_WINDOW_S seconds; the next window
 * first says how many were left out.  Control thread only.
 */
static bool
state_log_ok(struct bk_dev *dev)
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

/*
 * Write our state node, as Linux's __xenbus_switch_state does: in a
 * transaction, and only while the node exists, so that a late state
 * change never brings back a directory the toolstack has removed
 * (xl-remove --force during a drain).
 */
static void
set_state(struct bk_dev *dev, int state)
{
	struct bk_daemon *d = dev->d;
	int tries;

	if (dev->state == state)
		return;
	for (tries = 0; ; tries++) {
		xs_transaction_t t = xs_transaction_start(d->xs);
		char *cur;
		bool ok;

		if (t == XBT_NULL) {
			log_error("vbd %s: write %s/state: %m", dev->name, dev->be);
			return;
		}
		cur = xs_get(d, t, dev->be, "state");
		if (!cur) {
			xs_transaction_end(d->xs, t, true);
			bk_dbg(BK_DBG_XENBUS, "vbd %s: %s/state is gone: %s not written",
			       dev->name, dev->be, state_name(state));
			return;
		}
		free(cur);
		ok = xs_put(d, t, dev->be, "state", "%d", state);
		if (!ok) {
			int err = errno;

			xs_transaction_end(d->xs, t, true);
			errno = err;
			log_error("vbd %s: write %s/state: %m", dev->name, dev->be);
			return;
		}
		if (xs_transaction_end(d->xs, t, false))
			break;
		if (errno != EAGAIN || tries == 99) {
			log_error("vbd %s: write %s/state: %m", dev->name, dev->be);
			return;
		}
	}
	if (state_log_ok(dev))
		log_info("vbd %s: %s -> %s", dev->name, state_name(dev->state),
			 state_name(state));
	dev->state = state;
}

/* Linux xenbus_dev_fatal: log, <backend>/error, Closing. */
static void dev_fatal(struct bk_dev *dev, const char *key, const char *fmt, ...)
	ATTRIBUTE_FORMAT_PRINTF(3, 4);

static void
dev_fatal(struct bk_dev *dev, const char *key, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (state_log_ok(dev))	/* a flapping guest repeats its errors */
		log_error("vbd %s: %s: %s", dev->name, key, msg);
	if (!xs_put(dev->d, XBT_NULL, dev->be, "error", "%s: %s", key, msg))
		log_error("vbd %s: write %s/error: %m", dev->name, dev->be);
	dev->fatal = true;
	set_state(dev, XenbusStateClosing);
}

/* ---------------------------------------------------------------- */
/* Configuration knobs (documented in blkbackd.8 "XENSTORE KEYS").   */
/* ---------------------------------------------------------------- */

static void
config_free(struct bk_dev_config *c)
{
	bk_params_free(&c->params);
	memset(c, 0, sizeof(*c));
}

/* Parse the backend's knobs.  0, or -EINVAL after dev_fatal(). */
static int
config_read(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	struct bk_dev_config c = { .discard_enable = -1 };
	struct bk_store_why why;
	char *params = NULL, *v;
	int rc = -EINVAL;

	params = xs_get(d, XBT_NULL, dev->be, "params");
	if (!params || !*params) {
		dev_fatal(dev, "params", "missing or empty (a file, a block device, "
			  "or DRIVER:ARG with DRIVER file|memory|null)");
		goto out;
	}
	if (bk_params_parse(params, &c.params, &why) < 0) {
		dev_fatal(dev, "params", "%s", why.msg);
		goto out;
	}

	v = xs_get(d, XBT_NULL, dev->be, "mode");
	if (v && strcmp(v, "r") && strcmp(v, "w") && strcmp(v, "ro") && strcmp(v, "rw")) {
		dev_fatal(dev, "mode", "\"%s\" is neither r (ro) nor w (rw)", v);
		free(v);
		goto out;
	}
	c.read_only = v && strchr(v, 'w') == NULL;
	free(v);

	v = xs_get(d, XBT_NULL, dev->be, "cache");
	if (v && strcmp(v, "writeback") && strcmp(v, "writethrough")) {
		dev_fatal(dev, "cache", "\"%s\" is neither writeback nor writethrough", v);
		free(v);
		goto out;
	}
	c.writethrough = v && !strcmp(v, "writethrough");
	free(v);

	v = xs_get(d, XBT_NULL, dev->be, "flush-mode");
	c.flush_mode = BK_FLUSH_MODE_AUTO;
	if (v && bk_flush_mode_parse(v, &c.flush_mode) < 0) {
		dev_fatal(dev, "flush-mode", "\"%s\" is not one of auto, flush, barrier, both, none",
			  v);
		free(v);
		goto out;
	}
	free(v);

	v = xs_get(d, XBT_NULL, dev->be, "discard-enable");
	if (v && strcmp(v, "0") && strcmp(v, "1")) {
		dev_fatal(dev, "discard-enable", "\"%s\" is neither 0 nor 1", v);
		free(v);
		goto out;
	}
	if (v)
		c.discard_enable = v[0] == '1';
	free(v);

	/* what xl/libxl write (libxl_device.c: device-type disk|cdrom,
	 * removable 0|1); anything else is a typo, not a plain disk */
	v = xs_get(d, XBT_NULL, dev->be, "device-type");
	if (v && strcmp(v, "disk") && strcmp(v, "cdrom")) {
		dev_fatal(dev, "device-type", "\"%s\" is neither disk nor cdrom", v);
		free(v);
		goto out;
	}
	c.cdrom = v && !strcmp(v, "cdrom");
	free(v);
	v = xs_get(d, XBT_NULL, dev->be, "removable");
	if (v && strcmp(v, "0") && strcmp(v, "1")) {
		dev_fatal(dev, "removable", "\"%s\" is neither 0 nor 1", v);
		free(v);
		goto out;
	}
	c.removable = v && !strcmp(v, "1");
	free(v);

	config_free(&dev->cfg);
	dev->cfg = c;
	memset(&c, 0, sizeof(c));
	rc = 0;
out:
	config_free(&c);
	free(params);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Storage: open the driver stack, negotiate features once.          */
/* ---------------------------------------------------------------- */

static void
stores_close(struct bk_dev *dev)
{
	bk_stack_close(dev->store);
	dev->store = NULL;
}

/*
 * Open the driver stack.  check_only (at probe, like Linux blkback
 * opening the backing in backend_changed() before InitWait): open the
 * base driver, check that it has something to serve, close it again.
 * The backing's claim (store.h) is checked at probe and at connect (a
 * vbd idling in InitWait after its guest left does not hold it) and
 * taken at connect.  A vbd still draining holds it until its last write
 * is done: dev then waits (dev->backing_wait; retried when that drain
 * is over).  0, -EINPROGRESS while the backing waits for another vbd's
 * drain, or -errno after dev_fatal().
 */
static int
stores_open(struct bk_dev *dev, bool check_only)
{
	struct bk_daemon *d = dev->d;
	struct bk_stack_config sc = {
		.read_only = dev->cfg.read_only,
		.writethrough = dev->cfg.writethrough,
		.record_path = d->opt.record_path,
		.volatile_cache = d->opt.volatile_cache,
	};
	const struct bk_claim *holder;
	struct bk_store_why why;
	int rc;

	rc = dev->claim ? 0 : bk_claim_check(&d->claims, &dev->cfg.params,
					     dev->cfg.read_only, &holder);
	if (rc == -EINPROGRESS) {
		if (!dev->backing_wait)
			log_info("vbd %s: \"%s\" is still written by vbd %s, which is "
				 "finishing its requests in flight; waiting for it",
				 dev->name, dev->cfg.params.arg, holder->owner);
		dev->backing_wait = true;
		return rc;
	}
	if (rc == -EBUSY) {
		dev_fatal(dev, "params", "\"%s\" is already served by vbd %s%s; "
			  "a backing is shared only when every vbd has mode=r",
			  dev->cfg.params.arg, holder->owner,
			  holder->read_only ? " (read-only)" : " read-write");
		return rc;
	}
	dev->backing_wait = false;
	rc = bk_stack_open(&dev->cfg.params, &sc, check_only, &dev->store, &why);
	if (rc < 0) {
		dev_fatal(dev, "params", "%s", why.msg);
		return rc;
	}
	if (check_only)
		return 0;
	dev->sf = *bk_store_features(dev->store);
	if (!dev->claim)
		dev->claim = bk_claim_take(&d->claims, &dev->cfg.params,
					   dev->cfg.read_only, dev->name);
	return 0;
}

/* STYLE.md #7: decide everything once, from the store and the knobs. */
static void
features_negotiate(struct bk_dev *dev)
{
	const struct bk_store_features *sf = &dev->sf;
	const struct bk_dev_config *c = &dev->cfg;
	struct bk_features *f = &dev->feat;
	bool can_flush = sf->can_flush || dev->d->opt.ignore_flush;

	memset(f, 0, sizeof(*f));
	f->sectors = sf->size >> SECTOR_SHIFT;
	f->sector_size = sf->sector_size ? sf->sector_size : 512;
	f->physical_sector_size = sf->physical_sector_size ? sf->physical_sector_size
							   : f->sector_size;
	f->read_only = c->read_only;
	f->info = (c->read_only ? VDISK_READONLY : 0) | (c->cdrom ? VDISK_CDROM : 0) |
		  (c->removable ? VDISK_REMOVABLE : 0);
	/*
	 * flush-mode=auto (the default) is Linux xen-blkback's rule: offer
	 * flush-cache only when the backing has a volatile cache
	 * (connect(): bdev_write_cache()), never barrier.  A guest on a
	 * writethrough store then marks its queue write-through and sends
	 * no flush at all, instead of a ring round trip that commits
	 * nothing.  The explicit modes are honoured as they are, even on a
	 * writethrough store (each flush is then a no-op: sync.c).
	 */
	f->flush_cache = can_flush && (c->flush_mode == BK_FLUSH_MODE_FLUSH ||
				       c->flush_mode == BK_FLUSH_MODE_BOTH ||
				       (c->flush_mode == BK_FLUSH_MODE_AUTO && sf->writeback));
	f->barrier = can_flush && (c->flush_mode == BK_FLUSH_MODE_BARRIER ||
				   c->flush_mode == BK_FLUSH_MODE_BOTH);
	f->discard = sf->can_discard && !c->read_only && c->discard_enable != 0;
	f->discard_secure = f->discard && sf->can_secure_discard;
	f->discard_granularity = f->physical_sector_size > 4096 ? f->physical_sector_size : 4096;
	f->discard_alignment = 0;
	f->writeback = sf->writeback;
	f->fua = sf->fua;
	f->ignore_flush = dev->d->opt.ignore_flush;
	if (c->flush_mode == BK_FLUSH_MODE_AUTO && !f->flush_cache)
		log_info("vbd %s: flush-mode=auto: %s, so no flush feature is advertised "
			 "(feature-flush-cache=0, as Linux blkback)", dev->name,
			 !sf->writeback ? "the backing has no volatile write cache"
					  " (cache=writethrough or a null store)"
					: "the backing cannot flush");
	if (c->discard_enable == 1 && !c->read_only && !sf->can_discard)
		log_info("vbd %s: discard-enable=1 but the backing cannot discard; "
			 "feature-discard=0", dev->name);
}

/* ---------------------------------------------------------------- */
/* Connect / disconnect.                                              */
/* ---------------------------------------------------------------- */

/* Have all (all: true) or any (false) of the device's queue threads
 * finished? */
static bool
queues_stopped(const struct bk_dev *dev, bool all)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++)
		if (bk_dataplane_stopped(dev->queues[i]) != all)
			return !all;
	return all;
}

/*
 * The second half of a disconnect: join the queue threads, unmap,
 * unbind, close the store: DEV_DISCONNECTED.  Waits for any thread that
 * has not finished yet: only shutdown and dev_free() call it before
 * queues_stopped(dev, true).
 */
static void
disconnect_finish(struct bk_dev *dev)
{
	unsigned int i;

	for (i = 0; i < dev->nr_queues; i++) {
		/* join first: the counters are final once the thread is gone */
		bk_dataplane_join(dev->queues[i]);
		bk_stats_sum(&dev->closed_stats, bk_dataplane_stats(dev->queues[i]));
		bk_dataplane_destroy(dev->queues[i]);
		dev->queues[i] = NULL;
	}
	dev->nr_queues = 0;
	stores_close(dev);
	bk_claim_release(&dev->d->claims, dev->claim);	/* its last write is done */
	dev->claim = NULL;
	if (dev->published && state_log_ok(dev))
		log_info("vbd %s: disconnected", dev->name);
	dev->published = false;
	dev->phase = DEV_DISCONNECTED;
}

/*
 * Start a disconnect: ask every queue to stop (they drain in parallel)
 * and return at once.  True when the device is DEV_DISCONNECTED now
 * (nothing was running), false while it drains: the caller then leaves
 * its next xenbus step to the end of the drain (dev->then_*, handled in
 * bk_xenbus_handle_reports).
 */
static bool
disconnect(struct bk_dev *dev)
{
	unsigned int i;

	if (dev->phase == DEV_DRAINING)
		return false;
	for (i = 0; i < dev->nr_queues; i++)
		bk_dataplane_stop(dev->queues[i]);
	if (queues_stopped(dev, true)) {
		disconnect_finish(dev);
		return true;
	}
	dev->phase = DEV_DRAINING;
	if (dev->claim)
		dev->claim->draining = true;	/* a new user waits for the end */
	/* what the device waits for, until "disconnected" (the xenbus step
	 * that follows, e.g. a re-added vbd's InitWait, waits too) */
	if (state_log_ok(dev))
		log_info("vbd %s: disconnecting: answering the requests in flight first",
			 dev->name);
	return false;
}

/* Where queue i of nq keeps its ring keys: the frontend directory, or
 * its queue-N/ subdirectory when there are several (blkif.h
 * "Multi-queue"). */
static void
queue_dir(const struct bk_dev *dev, unsigned int nq, unsigned int i, char *buf, size_t len)
{
	if (nq == 1)
		snprintf(buf, len, "%s", dev->fe);
	else
		snprintf(buf, len, "%s/queue-%u", dev->fe, i);
}

/* Read one queue's ring-ref(s) and event-channel from dir. */
static int
read_ring(struct bk_dev *dev, const char *dir, unsigned int order, struct bk_ring_config *rc)
{
	struct bk_daemon *d = dev->d;
	unsigned long v;
	unsigned int i;
	char key[32];
	int r;

	rc->nr_pages = 1u << order;
	for (i = 0; i < rc->nr_pages; i++) {
		snprintf(key, sizeof(key), "ring-ref%u", i);
		r = xs_get_uint(d, dir, key, 0, &v);
		if (r == -ENOENT && rc->nr_pages == 1) {
			snprintf(key, sizeof(key), "ring-ref");
			r = xs_get_uint(d, dir, key, 0, &v);
		}
		if (r < 0 || v > UINT32_MAX) {
			dev_fatal(dev, key, "%s in %s", r == -ENOENT ? "missing" : "not a grant ref", dir);
			return -EINVAL;
		}
		rc->refs[i] = v;
	}
	r = xs_get_uint(d, dir, "event-channel", 0, &v);
	if (r < 0 || v == 0 || v > UINT32_MAX) {
		dev_fatal(dev, "event-channel", "%s in %s",
			  r == -ENOENT ? "missing" : "not a port number", dir);
		return -EINVAL;
	}
	rc->evtchn = v;
	return 0;
}

/* dev_fatal for a frontend key that should be a number up to our
 * limit: quotes what the frontend wrote. */
static void
fatal_fe_number(struct bk_dev *dev, const char *key, const char *what,
		const char *limit_key, unsigned int limit)
{
	char *v = xs_get(dev->d, XBT_NULL, dev->fe, key);

	dev_fatal(dev, key, "\"%.32s\": %s (%s is %u)", v ? v : "", what, limit_key, limit);
	free(v);
}

/* Publish the features and Connected in one transaction (EAGAIN retry). */
static int
publish(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	const struct bk_features *f = &dev->feat;
	int tries;

	for (tries = 0; tries < 100; tries++) {
		xs_transaction_t t = xs_transaction_start(d->xs);
		bool ok;

		if (t == XBT_NULL)
			return -errno;
		ok = xs_put(d, t, dev->be, "feature-flush-cache", "%d", f->flush_cache) &&
		     xs_put(d, t, dev->be, "feature-barrier", "%d", f->barrier) &&
		     xs_put(d, t, dev->be, "feature-discard", "%d", f->discard) &&
		     xs_put(d, t, dev->be, "feature-persistent", "0") &&
		     xs_put(d, t, dev->be, "sectors", "%" PRIu64, f->sectors) &&
		     xs_put(d, t, dev->be, "info", "%u", f->info) &&
		     xs_put(d, t, dev->be, "sector-size", "%u", f->sector_size) &&
		     xs_put(d, t, dev->be, "physical-sector-size", "%u", f->physical_sector_size);
		if (ok && f->discard)
			ok = xs_put(d, t, dev->be, "discard-granularity", "%u", f->discard_granularity) &&
			     xs_put(d, t, dev->be, "discard-alignment", "%u", f->discard_alignment) &&
			     xs_put(d, t, dev->be, "discard-secure", "%d", f->discard_secure);
		if (ok && !f->discard) {
			xs_del(d, t, dev->be, "discard-granularity");
			xs_del(d, t, dev->be, "discard-alignment");
			xs_del(d, t, dev->be, "discard-secure");
		}
		if (ok)
			ok = xs_put(d, t, dev->be, "state", "%d", XenbusStateConnected);
		if (!ok) {
			int err = errno;

			xs_transaction_end(d->xs, t, true);
			return -err;
		}
		if (xs_transaction_end(d->xs, t, false))
			return 0;
		if (errno != EAGAIN)
			return -errno;
	}
	return -EAGAIN;
}

static void
dev_connect(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	struct bk_ring_config rcs[BK_MAX_QUEUES];
	unsigned long order, nq;
	enum blkring_abi abi;
	char *proto;
	unsigned int i;
	int r;

	/* a stale connection never leaks (dev_update never calls us while
	 * one drains; this is the safety net) */
	if (!disconnect(dev)) {
		dev->then_update = true;
		return;
	}
	/* Knobs may have been written after InitWait (by the hotplug
	 * script, like Linux's physical-device): read them again now. */
	if (config_read(dev) < 0)
		return;
	r = xs_get_uint(d, dev->fe, "ring-page-order", 0, &order);
	if (r == -EINVAL || order > d->opt.max_ring_order) {
		fatal_fe_number(dev, "ring-page-order", r == -EINVAL ? "not a number" : "too large",
				"max-ring-page-order", d->opt.max_ring_order);
		return;
	}
	r = xs_get_uint(d, dev->fe, "multi-queue-num-queues", 1, &nq);
	if (r == -EINVAL || nq == 0 || nq > d->opt.max_queues) {
		fatal_fe_number(dev, "multi-queue-num-queues",
				r == -EINVAL ? "not a number" : nq ? "too large" : "zero",
				"multi-queue-max-queues", d->opt.max_queues);
		return;
	}
	proto = xs_get(d, XBT_NULL, dev->fe, "protocol");
	if (blkring_abi_from_protocol(proto, &abi) < 0) {
		dev_fatal(dev, "protocol", "unknown ABI \"%s\"", proto ? proto : "");
		free(proto);
		return;
	}
	free(proto);
	for (i = 0; i < nq; i++) {
		char dir[200];

		queue_dir(dev, nq, i, dir, sizeof(dir));
		if (read_ring(dev, dir, order, &rcs[i]) < 0)
			return;
		rcs[i].abi = abi;
	}
	/* feature-persistent: read for completeness; we never keep grants. */

	if (stores_open(dev, false) < 0)
		return;	/* -EINPROGRESS: retried once the backing is free */
	dev->phase = DEV_CONNECTED;
	features_negotiate(dev);
	for (i = 0; i < nq; i++) {
		const char *why = "?", *key = NULL;

		dev->queues[i] = bk_dataplane_create(dev, i, &rcs[i], &why, &key);
		if (!dev->queues[i]) {
			int err = errno;
			char dir[200];

			/* name the frontend's key and where it is (the error
			 * node is read by the toolstack and the frontend) */
			queue_dir(dev, nq, i, dir, sizeof(dir));
			errno = err;
			if (key)
				dev_fatal(dev, key, "queue %u: %s in %s: %m", i, why, dir);
			else
				dev_fatal(dev, "queue", "queue %u: %s: %m", i, why);
			disconnect(dev);
			return;
		}
		dev->nr_queues++;
	}
	for (i = 0; i < nq; i++) {
		r = bk_dataplane_start(dev->queues[i]);
		if (r < 0) {
			errno = -r;
			dev_fatal(dev, "queue", "cannot start queue %u: %m", i);
			disconnect(dev);
			return;
		}
	}
	r = publish(dev);
	if (r < 0) {
		errno = -r;
		log_error("vbd %s: publishing features: %m", dev->name);
		dev_fatal(dev, "state", "cannot publish features: %s", strerror(-r));
		disconnect(dev);
		return;
	}
	dev->published = true;
	/* not rate-limited: each needs a real ring handshake, and it is the
	 * line that says what the guest got */
	log_info("vbd %s: %s -> Connected (%s, %lu queue%s, %u-page ring, %s, "
		 "%" PRIu64 " sectors, flush=%d barrier=%d discard=%d fua=%s%s%s)",
		 dev->name, state_name(dev->state), dev->cfg.params.arg, nq, nq == 1 ? "" : "s",
		 1u << order, blkring_abi_name(abi), dev->feat.sectors, dev->feat.flush_cache,
		 dev->feat.barrier, dev->feat.discard,
		 dev->feat.fua == BK_FUA_NATIVE ? "native" :
		 dev->feat.fua == BK_FUA_EMULATED ? "emulated" : "none",
		 dev->cfg.read_only ? ", read-only" : "",
		 dev->cfg.writethrough ? ", writethrough" : "");
	dev->state = XenbusStateConnected;
}

/* ---------------------------------------------------------------- */
/* Device objects.                                                    */
/* ---------------------------------------------------------------- */

static struct bk_dev *
dev_find(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next)
		if (dev->frontid == f && dev->devid == id)
			return dev;
	return NULL;
}

static struct bk_dev *
dev_new(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev = calloc(1, sizeof(*dev));

	if (!dev) {
		log_error("vbd %u/%u: out of memory", f, id);
		return NULL;
	}
	dev->d = d;
	dev->frontid = f;
	dev->devid = id;
	dev->state = -1;
	snprintf(dev->name, sizeof(dev->name), "%u/%u", f, id);
	snprintf(dev->be, sizeof(dev->be), "%s/%u/%u", d->vbd_root, f, id);
	pthread_mutex_init(&dev->rlock, NULL);
	dev->next = d->devs;
	d->devs = dev;
	bk_dbg(BK_DBG_XENBUS, "vbd %s: new device at %s", dev->name, dev->be);
	return dev;
}

/* Forget the device.  Waits for a drain still running: callers other
 * than shutdown disconnect it first (scan_device). */
static void
dev_free(struct bk_dev *dev, bool removed)
{
	struct bk_daemon *d = dev->d;
	struct bk_dev **pp;

	if (!disconnect(dev))
		disconnect_finish(dev);
	if (dev->fe_watched)
		xs_unwatch(d->xs, dev->fe_state, "fe");
	for (pp = &d->devs; *pp; pp = &(*pp)->next)
		if (*pp == dev) {
			*pp = dev->next;
			break;
		}
	config_free(&dev->cfg);
	pthread_mutex_destroy(&dev->rlock);
	if (removed)
		log_info("vbd %s: removed", dev->name);
	free(dev);
}

/* Write the probe keys and InitWait (Linux xen_blkbk_probe). */
static void
dev_probe(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	int tries, r;

	dev->fatal = false;
	if (config_read(dev) < 0)
		goto failed;
	r = stores_open(dev, true);
	if (r == -EINPROGRESS)
		return;	/* probed again once the backing is free */
	if (r < 0)
		goto failed;
	for (tries = 0; tries < 100; tries++) {
		xs_transaction_t t = xs_transaction_start(d->xs);
		bool ok;

		if (t == XBT_NULL)
			break;
		ok = xs_put(d, t, dev->be, "max-ring-page-order", "%u", d->opt.max_ring_order) &&
		     xs_put(d, t, dev->be, "multi-queue-max-queues", "%u", d->opt.max_queues) &&
		     xs_put(d, t, dev->be, "state", "%d", XenbusStateInitWait);
		if (ok && d->opt.max_indirect)
			ok = xs_put(d, t, dev->be, "feature-max-indirect-segments", "%u",
				    d->opt.max_indirect);
		else if (ok)
			xs_del(d, t, dev->be, "feature-max-indirect-segments");
		xs_del(d, t, dev->be, "error");
		if (!ok) {
			xs_transaction_end(d->xs, t, true);
			break;
		}
		if (xs_transaction_end(d->xs, t, false)) {
			if (state_log_ok(dev))
				log_info("vbd %s: %s -> InitWait (params %s:%s)", dev->name,
					 state_name(dev->state), dev->cfg.params.driver->name,
					 dev->cfg.params.arg);
			dev->state = XenbusStateInitWait;
			dev->probed = true;
			return;
		}
		if (errno != EAGAIN)
			break;
	}
	log_error("vbd %s: cannot write the probe keys under %s: %m", dev->name, dev->be);
failed:
	dev->probed = true;
}

/* The frontend's directory and a watch on its state node. */
static int
dev_watch_frontend(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	char *fe;

	if (dev->fe_watched)
		return 0;
	fe = xs_get(d, XBT_NULL, dev->be, "frontend");
	if (!fe)
		return -ENOENT;
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
 * Read the frontend's state node.  0 with *out in 0..6, -ENOENT if
 * absent, -EINVAL if it holds anything else: Linux blkback's
 * frontend_changed() calls that fatal ("saw state N at frontend"), and
 * so does this, once per value.  0 (Unknown) is what Linux's
 * xenbus_read_driver_state() says of an absent node: taken as Closed, as
 * before, with one line saying so.
 */
static int
fe_state_read(struct bk_dev *dev, unsigned long *out)
{
	char *s = xs_get(dev->d, XBT_NULL, dev->fe, "state"), *end;
	unsigned long v = ULONG_MAX;
	bool same;

	if (!s)
		return -ENOENT;
	if (s[0] >= '0' && s[0] <= '9') {
		errno = 0;
		v = strtoul(s, &end, 10);
		if (errno || *end)
			v = ULONG_MAX;
	}
	same = strncmp(dev->fe_bad, s, sizeof(dev->fe_bad) - 1) == 0 &&
	       strlen(s) < sizeof(dev->fe_bad);
	if (v >= XenbusStateInitialising && v <= XenbusStateClosed) {
		dev->fe_bad[0] = '\0';
	} else if (!same) {
		snprintf(dev->fe_bad, sizeof(dev->fe_bad), "%s", s);
		if (v == XenbusStateUnknown)
			log_info("vbd %s: frontend state 0 (Unknown) at %s: taken as Closed",
				 dev->name, dev->fe_state);
		else
			dev_fatal(dev, "state", "the frontend's state \"%.32s\"%s at %s is not "
				  "a XenbusState in 1..6", s, strlen(s) > 32 ? "..." : "",
				  dev->fe_state);
	}
	free(s);
	*out = v;
	return v <= XenbusStateClosed ? 0 : -EINVAL;
}

/*
 * The toolstack detaches the device: online=0, or Closing written to our
 * state node by someone else (libxl's device removal writes both).
 * Linux blkback with libxl: the backend is Closing, so the guest closes
 * its side; the ring is pulled only when the frontend is Closed or gone
 * (frontend_changed(): Closed, then the device goes as it is not
 * online), never from under a connected guest.  Closed stays Closed
 * while online is 0.  Idempotent: runs again on each event until done.
 */
static void
dev_detach(struct bk_dev *dev, unsigned long be_state)
{
	unsigned long fe_state = XenbusStateUnknown;
	int r = -ENOENT;

	if (dev->state == XenbusStateClosed && be_state == XenbusStateClosed) {
		dev->detaching = false;
		return;
	}
	dev->detaching = true;
	set_state(dev, XenbusStateClosing);	/* also if libxl wrote it: logged */
	if (dev->fe_watched)
		r = fe_state_read(dev, &fe_state);
	if (r == -EINVAL || (r == 0 && fe_state != XenbusStateClosed &&
			     fe_state != XenbusStateUnknown))
		return;	/* the frontend's Closed (its watch) brings us back */
	if (!disconnect(dev)) {
		dev->then_update = true;	/* Closed once drained */
		return;
	}
	set_state(dev, XenbusStateClosed);
	dev->detaching = false;
}

/* A frontend that closed (not after an error) and comes back. */
static bool
may_reconnect(const struct bk_dev *dev)
{
	return dev->state == XenbusStateClosed ||
	       (dev->state == XenbusStateClosing && !dev->fatal);
}

/*
 * Bring the device in line with what xenstore says now (idempotent).
 * While the device drains, only remember that something changed: this
 * runs again once the drain is over (then_update), and then sees the
 * latest states, so every step that must follow a disconnect (Closed,
 * a fresh probe, a reconnect) happens after it, never before.
 */
static void
dev_update(struct bk_dev *dev)
{
	struct bk_daemon *d = dev->d;
	unsigned long be_state, online, fe_state;
	int r;

	if (dev->phase == DEV_DRAINING) {
		dev->then_update = true;
		return;
	}
	xs_get_uint(d, dev->be, "state", XenbusStateUnknown, &be_state);
	xs_get_uint(d, dev->be, "online", 1, &online);

	/* The toolstack asks for teardown (libxl: online=0 and Closing). */
	if (online == 0 || dev->detaching ||
	    (be_state == XenbusStateClosing && dev->state != XenbusStateClosing)) {
		dev_detach(dev, be_state);
		return;
	}
	/* Someone reset the device to Initialising: start over. */
	if (be_state == XenbusStateInitialising && dev->state > XenbusStateInitialising) {
		if (!disconnect(dev)) {
			dev->then_update = true;
			return;
		}
		dev->probed = false;
		dev->state = -1;
	}
	if (!dev->probed) {
		char *fid = xs_get(d, XBT_NULL, dev->be, "frontend-id");

		if (!fid)
			return;	/* not complete yet: the toolstack is still writing */
		free(fid);
		if (dev_watch_frontend(dev) < 0)
			return;
		dev_probe(dev);
		return;	/* the frontend watch fires once at once: next step there */
	}

	r = fe_state_read(dev, &fe_state);
	if (r == -ENOENT) {
		if (!dev->fe_seen)
			return;	/* the frontend has not appeared yet */
		fe_state = XenbusStateClosed;	/* gone */
	} else if (r < 0) {
		return;		/* a bad value: reported by fe_state_read */
	} else {
		dev->fe_seen = true;
	}
	bk_dbg(BK_DBG_XENBUS, "vbd %s: backend %s, frontend %s", dev->name,
	       state_name(dev->state), state_name(fe_state));

	switch (fe_state) {
	case XenbusStateInitialising:
		/* A frontend that starts over while we are Connected: its
		 * Closing was overwritten before we read it (5 then 1 in quick
		 * succession), or it restarted without closing.  Close our
		 * side first; the probe follows once the queues have drained. */
		if (dev->state == XenbusStateConnected) {
			set_state(dev, XenbusStateClosing);
			if (!disconnect(dev)) {
				dev->then_update = true;
				break;
			}
		}
		/* reconnect: a fresh probe (also from our Closing: the
		 * frontend did not wait for Closed, e.g. while we drained) */
		if (may_reconnect(dev)) {
			dev->probed = false;
			dev_probe(dev);
		}
		break;
	case XenbusStateInitialised:
	case XenbusStateConnected:
		/* From Closing too: the frontend went Initialising and on
		 * while we drained, or two watches fired in close succession
		 * (Linux blkback's frontend_changed connects there as well). */
		if (dev->state == XenbusStateInitWait || may_reconnect(dev)) {
			if (!dev->fatal)
				dev_connect(dev);
		}
		break;
	case XenbusStateClosing:
		/* Closing at once (Linux blkback); Closed waits for the drain
		 * and the frontend's Closed */
		if (dev->state != XenbusStateClosed)
			set_state(dev, XenbusStateClosing);
		if (!disconnect(dev))
			dev->then_update = true;
		break;
	case XenbusStateClosed:
	case XenbusStateUnknown:
	default:
		/*
		 * A frontend that is Closed when we (re)probe has not started
		 * yet (blkbackd restarted, or the guest closed earlier): keep
		 * waiting in InitWait for it, as Linux blkfront reconnects from
		 * Closed when it sees InitWait.
		 */
		if (dev->state == XenbusStateInitWait)
			break;
		if (!disconnect(dev)) {
			/* Closing while the queues drain; then Closed, or
			 * whatever the frontend has moved on to by then (a
			 * Connected state here would leave nothing behind it) */
			if (dev->state != XenbusStateClosed && dev->state != -1)
				set_state(dev, XenbusStateClosing);
			dev->then_update = true;
			break;
		}
		if (dev->state != -1)
			set_state(dev, XenbusStateClosed);
		dev->fatal = false;
		break;
	}
}

/* Create/update/remove the device F/D from what its directory holds. */
static void
scan_device(struct bk_daemon *d, uint32_t f, uint32_t id)
{
	struct bk_dev *dev = dev_find(d, f, id);
	char path[200], *st;
	unsigned int len;

	snprintf(path, sizeof(path), "%s/%u/%u/state", d->vbd_root, f, id);
	st = xs_read(d->xs, XBT_NULL, path, &len);
	if (!st) {
		/* forgotten once it has drained: then_update scans again */
		if (dev && !disconnect(dev))
			dev->then_update = true;
		else if (dev)
			dev_free(dev, true);
		return;
	}
	free(st);
	if (!dev)
		dev = dev_new(d, f, id);
	if (dev)
		dev_update(dev);
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

/* Rescan frontend f (or every frontend when all): devices come and go. */
static void
scan_frontend(struct bk_daemon *d, bool all, uint32_t f)
{
	char path[200];
	char **ents;
	unsigned int n = 0, i;
	struct bk_dev *dev, *next;

	/* forget devices whose directory vanished */
	for (dev = d->devs; dev; dev = next) {
		next = dev->next;
		if (all || dev->frontid == f)
			scan_device(d, dev->frontid, dev->devid);
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
		else if (!dev_find(d, f, id))
			scan_device(d, f, id);
	}
	free(ents);
}

static void
handle_vbd_event(struct bk_daemon *d, const char *path)
{
	size_t rl = strlen(d->vbd_root);
	char buf[256], *p, *slash;
	uint32_t f, id;

	if (strncmp(path, d->vbd_root, rl) || (path[rl] != '/' && path[rl] != '\0')) {
		scan_frontend(d, true, 0);
		return;
	}
	snprintf(buf, sizeof(buf), "%s", path + rl);
	p = buf[0] == '/' ? buf + 1 : buf;
	if (!*p) {
		scan_frontend(d, true, 0);
		return;
	}
	slash = strchr(p, '/');
	if (slash)
		*slash = '\0';
	if (!parse_id(p, &f)) {
		if (*p)
			bad_dir(d, d->vbd_root, p);
		return;
	}
	if (!slash) {
		scan_frontend(d, false, f);
		return;
	}
	p = slash + 1;
	slash = strchr(p, '/');
	if (slash)
		*slash = '\0';
	if (!parse_id(p, &id)) {
		char parent[sizeof(d->vbd_root) + 16];

		snprintf(parent, sizeof(parent), "%s/%u", d->vbd_root, f);
		if (*p)
			bad_dir(d, parent, p);
		return;
	}
	scan_device(d, f, id);
}

static void
handle_release_domain(struct bk_daemon *d)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next) {
		int alive = xenops_domain_alive(d->xops, dev->frontid);

		if (alive == 0 && dev->state != XenbusStateClosed && dev->probed &&
		    !dev->then_closed) {
			log_info("vbd %s: frontend domain %u is gone", dev->name, dev->frontid);
			if (disconnect(dev)) {
				set_state(dev, XenbusStateClosed);
			} else {
				/* as for a frontend that closed: Closing
				 * while the queues drain, Closed after */
				set_state(dev, XenbusStateClosing);
				dev->then_closed = true;
			}
		}
	}
}

/* ---------------------------------------------------------------- */
/* Entry points (private.h).                                          */
/* ---------------------------------------------------------------- */

int
bk_xenbus_init(struct bk_daemon *d)
{
	snprintf(d->vbd_root, sizeof(d->vbd_root), "/local/domain/%u/backend/vbd", d->self);
	if (!xs_watch(d->xs, d->vbd_root, "vbd")) {
		log_error("watch %s: %m", d->vbd_root);
		return -errno;
	}
	if (!xs_watch(d->xs, "@releaseDomain", "release"))
		log_info("watch @releaseDomain: %m; a dying frontend is noticed "
			 "only through its state node");
	/* The watch fires once at registration; devices are scanned then. */
	return 0;
}

void
bk_xenbus_handle_watches(struct bk_daemon *d)
{
	char **w;

	while ((w = xs_check_watch(d->xs)) != NULL) {
		const char *path = w[XS_WATCH_PATH], *token = w[XS_WATCH_TOKEN];

		bk_dbg(BK_DBG_XENBUS, "watch %s %s", token, path);
		if (!strcmp(token, "vbd")) {
			handle_vbd_event(d, path);
		} else if (!strcmp(token, "fe")) {
			struct bk_dev *dev, *next;

			for (dev = d->devs; dev; dev = next) {
				next = dev->next;
				if (!strcmp(dev->fe_state, path))
					dev_update(dev);
			}
		} else if (!strcmp(token, "release")) {
			handle_release_domain(d);
		}
		free(w);
	}
	if (errno != EAGAIN)
		log_error("xenstore: reading watches: %m");
}

void
bk_dev_report(struct bk_dev *dev, enum bk_report what, const char *feature, const char *msg)
{
	struct bk_daemon *d = dev->d;
	uint64_t one = 1;

	if (what == BK_REPORT_WITHDRAW) {
		/* The dataplane's only xenstore write (Linux blkback parity). */
		log_info("vbd %s: the backing refused an operation (EOPNOTSUPP): %s=0",
			 dev->name, feature);
		if (!xs_put(d, XBT_NULL, dev->be, feature, "0"))
			log_error("vbd %s: write %s/%s: %m", dev->name, dev->be, feature);
		return;
	}
	if (what == BK_REPORT_DRAINED) {
		/* the news is bk_dataplane_stopped(): only wake the control
		 * thread (the queue thread's last act) */
		if (write(d->report_efd, &one, sizeof(one)) != sizeof(one))
			log_error("vbd %s: cannot wake the control thread: %m", dev->name);
		return;
	}
	pthread_mutex_lock(&dev->rlock);
	if (what == BK_REPORT_BROKEN_RING) {
		dev->rep_broken = true;
	} else {
		if (!dev->rep_failed && !bk_dev_failed(dev))
			log_error("vbd %s: %s", dev->name, msg);
		dev->rep_failed = true;
		/* paired with the load in bk_dev_failed */
		__atomic_store_n(&dev->failed, true, __ATOMIC_RELEASE);
	}
	snprintf(dev->rep_msg, sizeof(dev->rep_msg), "%s", msg ? msg : "");
	pthread_mutex_unlock(&dev->rlock);
	if (write(d->report_efd, &one, sizeof(one)) != sizeof(one))
		log_error("vbd %s: cannot wake the control thread: %m", dev->name);
}

/*
 * The drain of dev is over: finish its disconnect, then take the steps
 * that waited for it (dev may be freed), then retry the devices that
 * waited for a backing it held.
 */
static void
drain_done(struct bk_daemon *d, struct bk_dev *dev)
{
	uint32_t f = dev->frontid, id = dev->devid;
	bool closed = dev->then_closed, update = dev->then_update;
	struct bk_dev *o, *next;

	disconnect_finish(dev);
	dev->then_closed = dev->then_update = false;
	if (closed)
		set_state(dev, XenbusStateClosed);
	if (update)
		scan_device(d, f, id);	/* dev_update, or forget it */
	for (o = d->devs; o; o = next) {
		next = o->next;
		if (o->backing_wait)
			scan_device(d, o->frontid, o->devid);
	}
}

void
bk_xenbus_handle_reports(struct bk_daemon *d)
{
	struct bk_dev *dev, *next;
	uint64_t v;

	if (read(d->report_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_error("reading reports: %m");
	for (dev = d->devs; dev; dev = next) {
		bool broken, failed;
		char msg[256];

		pthread_mutex_lock(&dev->rlock);
		broken = dev->rep_broken;
		failed = dev->rep_failed;
		dev->rep_broken = dev->rep_failed = false;
		snprintf(msg, sizeof(msg), "%s", dev->rep_msg);
		pthread_mutex_unlock(&dev->rlock);
		if (broken && dev->phase == DEV_CONNECTED) {
			dev_fatal(dev, "ring", "%s", msg);
			disconnect(dev);
		} else if (failed) {
			if (!xs_put(d, XBT_NULL, dev->be, "error", "failed: %s", msg))
				log_error("vbd %s: write %s/error: %m", dev->name, dev->be);
		}
		if (dev->phase == DEV_CONNECTED && queues_stopped(dev, false)) {
			/* not asked to: it could not wait for events any more */
			dev_fatal(dev, "queue", "a queue thread stopped (see the log)");
			disconnect(dev);
		}
		/* drain_done may free dev, never another device but through
		 * scan_device of a waiter, which the loop has not reached:
		 * restart from the head after one (rare) */
		next = dev->next;
		if (dev->phase == DEV_DRAINING && queues_stopped(dev, true)) {
			drain_done(d, dev);
			next = d->devs;
		}
	}
}

void
bk_xenbus_log_stats(struct bk_daemon *d)
{
	struct bk_dev *dev;
	unsigned int i;

	/* connected devices only (blkbackd.8 SIGUSR1): a closed vbd's
	 * counters no longer move; bk_xenbus_shutdown() logs them */
	for (dev = d->devs; dev; dev = dev->next) {
		struct bk_stats s = dev->closed_stats;

		if (dev->phase == DEV_DISCONNECTED)
			continue;
		for (i = 0; i < dev->nr_queues; i++)
			bk_stats_sum(&s, bk_dataplane_stats(dev->queues[i]));
		bk_stats_log(dev->name, &s);
	}
}

void
bk_xenbus_shutdown(struct bk_daemon *d)
{
	struct bk_dev *dev;

	/* Stop every queue of every device first, so they drain in parallel;
	 * then wait for each (here, and only here, the control thread waits
	 * for I/O: nothing else is left to serve). */
	for (dev = d->devs; dev; dev = dev->next) {
		unsigned int i;

		for (i = 0; i < dev->nr_queues; i++)
			bk_dataplane_stop(dev->queues[i]);
	}
	while (d->devs) {
		struct bk_stats s;

		dev = d->devs;
		if (!disconnect(dev))
			disconnect_finish(dev);
		if (dev->probed && dev->state != XenbusStateClosed)
			set_state(dev, XenbusStateClosed);
		s = dev->closed_stats;
		bk_stats_log(dev->name, &s);
		dev_free(dev, false);
	}
	xs_unwatch(d->xs, d->vbd_root, "vbd");
	xs_unwatch(d->xs, "@releaseDomain", "release");
}

void
bk_xenbus_power_cut(struct bk_daemon *d)
{
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next)
		bk_stack_power_cut(dev->store);
}
