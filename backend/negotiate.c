/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * negotiate.c: what a vbd and its frontend say to each other through
 * xenstore (negotiate.h), with Linux xen-blkback's key set:
 *   probe:    max-ring-page-order, multi-queue-max-queues,
 *             feature-max-indirect-segments, then InitWait (2)
 *   connect:  read ring-page-order, ring-ref / ring-refN, event-channel
 *             (per queue-N/ when multi-queue-num-queues > 1), protocol;
 *             publish feature-flush-cache, feature-barrier,
 *             feature-discard (+ discard-granularity, discard-alignment,
 *             discard-secure), feature-persistent, sectors, info,
 *             sector-size, physical-sector-size and Connected (4) in ONE
 *             transaction, retried on EAGAIN
 * and the knobs of the backend directory (blkbackd.8 "XENSTORE KEYS").
 * Control thread.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xenstore.h>

#include "log.h"
#include "negotiate.h"
#include "xbus.h"

/* A key that is wrong: key and message into *f (nothing when f is NULL:
 * a look only).  -EINVAL. */
static int ATTRIBUTE_FORMAT_PRINTF(3, 4)
fault(struct bk_fault *f, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (!f)
		return -EINVAL;
	snprintf(f->key, sizeof(f->key), "%s", key);
	va_start(ap, fmt);
	vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
	va_end(ap);
	/* it may quote a guest's value: printable, one line */
	xbus_printable(f->msg, sizeof(f->msg), f->msg);
	return -EINVAL;
}

/* ---------------------------------------------------------------- */
/* The knobs.                                                         */
/* ---------------------------------------------------------------- */

void
bk_negotiate_config_free(struct bk_dev_config *c)
{
	bk_params_free(&c->params);
	free(c->params_raw);
	memset(c, 0, sizeof(*c));
}

/*
 * Read the knob key: absent (*out = NULL: the default; also mode="") or
 * one of the values in ok[] (NULL-terminated).  0, or -EINVAL with the
 * fault "\"v\" is <what>".
 */
static int
knob(struct bk_dev *dev, const char *dir, const char *key, const char *const *ok,
     const char *what, char **out, struct bk_fault *f)
{
	char *v = xbus_read(dev->d->xs, XBT_NULL, dir, key);
	unsigned int i;

	*out = NULL;
	if (v && !*v && !strcmp(key, "mode")) {
		/* mode written empty is mode absent (the default, w), as
		 * params empty is params absent (an error, below); the other
		 * knobs are the toolstack's own and "" is a typo there */
		free(v);
		v = NULL;
	}
	if (!v)
		return 0;
	for (i = 0; ok[i]; i++)
		if (!strcmp(v, ok[i])) {
			*out = v;
			return 0;
		}
	fault(f, key, "\"%s\" is %s", v, what);
	free(v);
	return -EINVAL;
}

/*
 * The disk image formats the hotplug script serves (params FORMAT:PATH):
 * qemu's block drivers of those names, with writes.  raw is not one: a
 * raw file or device is the file store's, without a daemon between.
 */
static const char *const image_formats[] = {
	"qcow2", "qed", "vmdk", "vhdx", "vpc", "vdi", NULL
};

/* params' image format ("qcow2" for "qcow2:/x"), or NULL. */
static const char *
image_format(const char *params)
{
	size_t n = strcspn(params, ":");
	unsigned int i;

	if (params[n] != ':')
		return NULL;
	for (i = 0; image_formats[i]; i++)
		if (strlen(image_formats[i]) == n && !strncmp(params, image_formats[i], n))
			return image_formats[i];
	return NULL;
}

/*
 * An image-format params: the nbd store at the socket the hotplug
 * script wrote to BK_IMAGE_NODE, or, before it did, c->image_wait.
 * The path must need no escaping in an NBD URI (the script makes it
 * from its image directory and the vbd's ids).  0, or -EINVAL.
 */
static int
image_params(struct bk_dev *dev, const char *fmt, struct bk_dev_config *c,
	     struct bk_fault *f)
{
	static const char ok[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789/._-";
	char *sock = xbus_read(dev->d->xs, XBT_NULL, dev->be, BK_IMAGE_NODE);
	const struct bk_store_driver *nbd;
	struct bk_store_why why = { .msg = "" };
	char uri[200], shown[65];
	int rc = -EINVAL;

	c->image_format = fmt;
	if (!sock) {
		c->image_wait = true;
		return 0;
	}
	/* sun_path holds 108 bytes with its NUL */
	if (sock[0] != '/' || strlen(sock) > 107 || sock[strspn(sock, ok)]) {
		fault(f, BK_IMAGE_NODE, "\"%s\"%s is not the absolute path of a unix "
		      "socket (up to 107 bytes of A-Z a-z 0-9 / . _ -)",
		      xbus_printable(shown, sizeof(shown), sock), strlen(sock) > 64 ? "..." : "");
		goto out;
	}
	nbd = bk_store_find("nbd", &why);
	if (!nbd) {
		fault(f, "params", "%s images are served over NBD, and %s", fmt,
		      why.msg[0] ? why.msg : "blkbackd has no nbd store");
		goto out;
	}
	snprintf(uri, sizeof(uri), "nbd+unix:///%s?socket=%s", BK_IMAGE_EXPORT, sock);
	c->params.arg = strdup(uri);
	if (!c->params.arg) {
		fault(f, "params", "out of memory");
		goto out;
	}
	c->params.driver = nbd;
	rc = 0;
out:
	free(sock);
	return rc;
}

/* The knobs from dir (the backend directory, or the record of what a
 * connection was given: BK_KNOBS_NODE), the rest from the backend's. */
static int
config_read(struct bk_dev *dev, const char *dir, struct bk_fault *f)
{
	static const char *const modes[] = { "r", "w", "ro", "rw", NULL };
	static const char *const caches[] = { "writeback", "writethrough", NULL };
	static const char *const bools[] = { "0", "1", NULL };
	/* what xl/libxl write (libxl_device.c: device-type disk|cdrom,
	 * removable 0|1); anything else is a typo, not a plain disk */
	static const char *const types[] = { "disk", "cdrom", NULL };
	static const char *const engines[] = { "auto", "libaio", "io_uring", NULL };
	struct bk_dev_config c = { .discard_enable = -1, .flush_mode = BK_FLUSH_MODE_AUTO };
	struct bk_store_why why = { .msg = "" };
	const char *fmt;
	char *params = NULL, *v;
	int rc = -EINVAL;

	/* The guest is the domain this directory is under (backend/vbd/
	 * DOMID/DEVID), whose grants and ports we use; a toolstack that
	 * names another, or no number at all, has made a mistake (Linux
	 * refuses a frontend-id that is not a number too). */
	v = xbus_read(dev->d->xs, XBT_NULL, dev->be, "frontend-id");
	if (v) {
		char *end;
		unsigned long id;

		errno = 0;
		id = strtoul(v, &end, 10);
		if (!*v || *end || errno || id != dev->frontid) {
			fault(f, "frontend-id", "\"%s\" is not %u, the domain this "
			      "directory is for", v, dev->frontid);
			free(v);
			goto out;
		}
		free(v);
	}
	params = xbus_read(dev->d->xs, XBT_NULL, dev->be, "params");
	if (!params || !*params) {
		fault(f, "params", "missing or empty (a file, a block device, "
		      "or DRIVER:ARG with DRIVER %s)", bk_store_param_drivers());
		goto out;
	}
	fmt = image_format(params);
	if (fmt) {
		if (image_params(dev, fmt, &c, f) < 0)
			goto out;
	} else {
		rc = bk_params_parse(params, &c.params, &why);
		if (rc < 0) {
			fault(f, "params", "%s", why.msg[0] ? why.msg : strerror(-rc));
			goto out;
		}
		rc = -EINVAL;
	}
	if (knob(dev, dir, "mode", modes, "neither r (ro) nor w (rw)", &v, f) < 0)
		goto out;
	c.read_only = v && strchr(v, 'w') == NULL;
	free(v);
	if (knob(dev, dir, "cache", caches, "neither writeback nor writethrough", &v, f) < 0)
		goto out;
	c.writethrough = v && !strcmp(v, "writethrough");
	free(v);
	/* flush-mode: sync.c's names (blkif_ops.h) */
	v = xbus_read(dev->d->xs, XBT_NULL, dir, "flush-mode");
	if (v && bk_flush_mode_parse(v, &c.flush_mode) < 0) {
		fault(f, "flush-mode", "\"%s\" is not one of auto, flush, barrier, both, none", v);
		free(v);
		goto out;
	}
	free(v);
	if (knob(dev, dir, "io-engine", engines, "not one of auto, libaio, io_uring", &v, f) < 0)
		goto out;
	if (v)
		c.io_engine_set = bk_io_engine_parse(v, &c.io_engine) == 0;
	free(v);
	if (knob(dev, dir, "discard-enable", bools, "neither 0 nor 1", &v, f) < 0)
		goto out;
	if (v)
		c.discard_enable = v[0] == '1';
	free(v);
	if (knob(dev, dev->be, "device-type", types, "neither disk nor cdrom", &v, f) < 0)
		goto out;
	c.cdrom = v && !strcmp(v, "cdrom");
	free(v);
	if (knob(dev, dev->be, "removable", bools, "neither 0 nor 1", &v, f) < 0)
		goto out;
	c.removable = v && !strcmp(v, "1");
	free(v);
	c.params_raw = params;
	params = NULL;

	bk_negotiate_config_free(&dev->cfg);
	dev->cfg = c;
	memset(&c, 0, sizeof(c));
	rc = 0;
out:
	bk_negotiate_config_free(&c);
	free(params);
	return rc;
}

int
bk_negotiate_config(struct bk_dev *dev, struct bk_fault *f)
{
	return config_read(dev, dev->be, f);
}

/* The knobs that change what the guest was told or how its requests
 * are answered, as config_read reads them back. */
static void
knobs_show(const struct bk_dev_config *c, char *buf, size_t len)
{
	snprintf(buf, len, "mode=%s cache=%s flush-mode=%s discard-enable=%s io-engine=%s",
		 c->read_only ? "r" : "w", c->writethrough ? "writethrough" : "writeback",
		 bk_flush_mode_name(c->flush_mode),
		 c->discard_enable < 0 ? "unset" : c->discard_enable ? "1" : "0",
		 c->io_engine_set ? bk_io_engine_name(c->io_engine) : "unset");
}

int
bk_negotiate_config_connected(struct bk_dev *dev, struct bk_fault *f)
{
	char dir[sizeof(dev->be) + sizeof(BK_KNOBS_NODE) + 1], now[200], then[200];
	char *v;
	int rc = config_read(dev, dev->be, f);

	snprintf(dir, sizeof(dir), "%s/%s", dev->be, BK_KNOBS_NODE);
	v = xbus_read(dev->d->xs, XBT_NULL, dir, "mode");
	if (rc < 0 || !v)
		goto out;	/* connected by a blkbackd that recorded none */
	knobs_show(&dev->cfg, now, sizeof(now));
	rc = config_read(dev, dir, f);
	if (rc < 0) {
		/* ours, and unreadable: someone else wrote it */
		snprintf(f->key, sizeof(f->key), "%s", BK_KNOBS_NODE);
		goto out;
	}
	knobs_show(&dev->cfg, then, sizeof(then));
	if (strcmp(now, then))
		log_info("vbd %s: its knobs were rewritten while it was connected (%s): the "
			 "connection keeps what it was given (%s); they take effect at its "
			 "next connect", dev->name, now, then);
out:
	free(v);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Probe: what we offer.                                              */
/* ---------------------------------------------------------------- */

int
bk_negotiate_dir_ours(struct xs_handle *xs, xs_transaction_t t, const struct bk_dev *dev)
{
	unsigned int st;
	int r = xbus_read_uint(xs, t, dev->be, "state", XenbusStateUnknown, &st);

	if (r == -ENOENT)
		return -ENOENT;
	if (r < 0)
		return r == -EINVAL ? -EINVAL : 0;
	return dev->state != -1 && st <= XenbusStateInitialising ? -ENOENT : 0;
}

/* In transaction t: -ENOENT when our directory is gone or made again
 * (bk_negotiate_dir_ours): a transaction that writes keys must not bring
 * it back (xl-remove, a domain destroyed meanwhile) nor write into a new
 * vbd of the same name.  A state that is not a number is still ours. */
static int
be_exists(struct xs_handle *xs, xs_transaction_t t, const struct bk_dev *dev)
{
	return bk_negotiate_dir_ours(xs, t, dev) == -ENOENT ? -ENOENT : 0;
}

void
bk_negotiate_offer(struct bk_dev *dev, bool published)
{
	const struct bk_options *o = &dev->d->opt;
	struct xs_handle *xs = dev->d->xs;
	unsigned int v;
	int r;

	dev->offer.max_ring_order = o->max_ring_order;
	dev->offer.max_queues = o->max_queues;
	dev->offer.max_indirect = o->max_indirect;
	dev->offer.persistent = o->feature_persistent;
	if (!published)
		return;
	/* each key as our probe (or connect) wrote it; one that is not
	 * there or not a number leaves the option */
	if (xbus_read_uint(xs, XBT_NULL, dev->be, "max-ring-page-order", 0, &v) == 0 &&
	    v <= BLKRING_MAX_PAGE_ORDER)
		dev->offer.max_ring_order = v;
	if (xbus_read_uint(xs, XBT_NULL, dev->be, "multi-queue-max-queues", 0, &v) == 0 &&
	    v >= 1 && v <= BK_MAX_QUEUES)
		dev->offer.max_queues = v;
	r = xbus_read_uint(xs, XBT_NULL, dev->be, "feature-max-indirect-segments", 0, &v);
	if (r == -ENOENT)	/* the probe offers none by leaving it out */
		dev->offer.max_indirect = 0;
	else if (r == 0 && v <= BLKRING_MAX_INDIRECT_SEGMENTS)
		dev->offer.max_indirect = v;
	if (xbus_read_uint(xs, XBT_NULL, dev->be, "feature-persistent", 0, &v) == 0 && v <= 1)
		dev->offer.persistent = v == 1;
}

static int
probe_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	struct bk_dev *dev = arg;
	const struct bk_offer *o = &dev->offer;
	int r;

	r = be_exists(xs, t, dev);
	if (!r)
		r = xbus_printf(xs, t, dev->be, "max-ring-page-order", "%u", o->max_ring_order);
	if (!r)
		r = xbus_printf(xs, t, dev->be, "multi-queue-max-queues", "%u", o->max_queues);
	if (!r)
		r = xbus_printf(xs, t, dev->be, "state", "%d", XenbusStateInitWait);
	if (!r && o->max_indirect)
		r = xbus_printf(xs, t, dev->be, "feature-max-indirect-segments", "%u",
				o->max_indirect);
	else if (!r)
		r = xbus_rm(xs, t, dev->be, "feature-max-indirect-segments");
	if (!r)
		r = xbus_rm(xs, t, dev->be, "error");
	return r;
}

int
bk_negotiate_probe_keys(struct bk_dev *dev)
{
	return xbus_transact(dev->d->xs, probe_keys, dev);
}

/* ---------------------------------------------------------------- */
/* Connect: what the frontend says.                                   */
/* ---------------------------------------------------------------- */

void
bk_negotiate_queue_dir(const struct bk_dev *dev, unsigned int nq, unsigned int i,
		       char *buf, size_t len)
{
	if (nq == 1)
		snprintf(buf, len, "%s", dev->fe);
	else
		snprintf(buf, len, "%s/queue-%u", dev->fe, i);
}

/*
 * Read one queue's ring-ref(s) and event-channel from dir.  The names
 * follow Linux blkback's read_per_ring_refs: with a ring-page-order
 * node (multi_ref, even "0") ring-ref0 .. ring-refN-1, without one the
 * single "ring-ref"; the other spelling is never looked at, so keys an
 * earlier frontend left behind cannot be taken for this one's.
 */
static int
read_ring(struct bk_dev *dev, const char *dir, unsigned int order, bool multi_ref,
	  struct bk_ring_config *rc, struct bk_fault *f)
{
	struct xs_handle *xs = dev->d->xs;
	unsigned int i;
	uint64_t v;
	char key[32];
	int r;

	rc->nr_pages = 1u << order;
	for (i = 0; i < rc->nr_pages; i++) {
		if (multi_ref)
			snprintf(key, sizeof(key), "ring-ref%u", i);
		else
			snprintf(key, sizeof(key), "ring-ref");
		r = xbus_read_u64(xs, XBT_NULL, dir, key, UINT32_MAX, 0, &v);
		if (r < 0)
			return fault(f, key, "%s in %s",
				     r == -ENOENT ? "missing" : "not a grant ref", dir);
		rc->refs[i] = v;
	}
	r = xbus_read_u64(xs, XBT_NULL, dir, "event-channel", UINT32_MAX, 0, &v);
	if (r < 0 || v == 0)
		return fault(f, "event-channel", "%s in %s",
			     r == -ENOENT ? "missing" : "not a port number", dir);
	rc->evtchn = v;
	return 0;
}

/* The fault of a frontend key that should be a number up to our limit:
 * quotes what the frontend wrote.  -EINVAL. */
static int
fault_fe_number(struct bk_dev *dev, struct bk_fault *f, const char *key, const char *what,
		const char *limit_key, unsigned int limit)
{
	char *v;

	if (!f)
		return -EINVAL;
	v = xbus_read(dev->d->xs, XBT_NULL, dev->fe, key);
	fault(f, key, "\"%.32s\": %s (%s is %u)", v ? v : "", what, limit_key, limit);
	free(v);
	return -EINVAL;
}

static int
rings_read(struct bk_dev *dev, struct bk_ring_config *rings, struct bk_fault *f)
{
	const struct bk_offer *o = &dev->offer;
	struct xs_handle *xs = dev->d->xs;
	unsigned int order, nq, i, v32;
	bool multi_ref;
	enum blkring_abi abi;
	char *proto;
	int r;

	/* read once, for every queue (a frontend may change it meanwhile) */
	r = xbus_read_uint(xs, XBT_NULL, dev->fe, "ring-page-order", 0, &order);
	multi_ref = r != -ENOENT;
	if (r == -EINVAL || order > o->max_ring_order)
		return fault_fe_number(dev, f, "ring-page-order",
				       r == -EINVAL ? "not a number" : "too large",
				       "max-ring-page-order", o->max_ring_order);
	r = xbus_read_uint(xs, XBT_NULL, dev->fe, "multi-queue-num-queues", 1, &nq);
	if (r == -EINVAL || nq == 0 || nq > o->max_queues)
		return fault_fe_number(dev, f, "multi-queue-num-queues",
				       r == -EINVAL ? "not a number" : nq ? "too large" : "zero",
				       "multi-queue-max-queues", o->max_queues);
	proto = xbus_read(xs, XBT_NULL, dev->fe, "protocol");
	if (blkring_abi_from_protocol(proto, &abi) < 0) {
		fault(f, "protocol", "unknown ABI \"%s\"", proto ? proto : "");
		free(proto);
		return -EINVAL;
	}
	free(proto);
	for (i = 0; i < nq; i++) {
		char dir[200];

		bk_negotiate_queue_dir(dev, nq, i, dir, sizeof(dir));
		if (read_ring(dev, dir, order, multi_ref, &rings[i], f) < 0)
			return -EINVAL;
		rings[i].abi = abi;
	}
	/* Persistent grants only when both ends offer them, decided again
	 * at every connection (Linux blkback's connect_ring since 2022). */
	if (f) {	/* not for a look only */
		xbus_read_uint(xs, XBT_NULL, dev->fe, "feature-persistent", 0, &v32);
		dev->persistent = o->persistent && v32 == 1;
	}
	return (int)nq;
}

int
bk_negotiate_rings(struct bk_dev *dev, struct bk_ring_config *rings, struct bk_fault *f)
{
	return rings_read(dev, rings, f);
}

int
bk_negotiate_rings_peek(struct bk_dev *dev, struct bk_ring_config *rings)
{
	return rings_read(dev, rings, NULL);
}

/* ---------------------------------------------------------------- */
/* Features: decided once, published once.                            */
/* ---------------------------------------------------------------- */

void
bk_negotiate_features(struct bk_dev *dev)
{
	const struct bk_store_features *sf = bk_store_features(dev->store);
	const struct bk_dev_config *c = &dev->cfg;
	struct bk_features *f = &dev->feat;
	bool ignore_flush = dev->d->opt.ignore_flush;
	bool can_flush = sf->can_flush || ignore_flush;

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
	f->ignore_flush = ignore_flush;
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

/* <backend>/BK_KNOBS_NODE: the knobs this connection is served with, in
 * the names config_read takes, for a takeover (a restart, an upgrade)
 * to serve it alike (bk_negotiate_config_connected). */
static int
knobs_record(struct xs_handle *xs, xs_transaction_t t, const struct bk_dev *dev)
{
	const struct bk_dev_config *c = &dev->cfg;
	char dir[sizeof(dev->be) + sizeof(BK_KNOBS_NODE) + 1];
	int r;

	snprintf(dir, sizeof(dir), "%s/%s", dev->be, BK_KNOBS_NODE);
	xbus_rm(xs, t, dir, NULL);
	r = xbus_printf(xs, t, dir, "mode", "%s", c->read_only ? "r" : "w");
	if (!r)
		r = xbus_printf(xs, t, dir, "cache", "%s",
				c->writethrough ? "writethrough" : "writeback");
	if (!r)
		r = xbus_printf(xs, t, dir, "flush-mode", "%s", bk_flush_mode_name(c->flush_mode));
	if (!r && c->discard_enable >= 0)
		r = xbus_printf(xs, t, dir, "discard-enable", "%d", c->discard_enable);
	if (!r && c->io_engine_set)
		r = xbus_printf(xs, t, dir, "io-engine", "%s", bk_io_engine_name(c->io_engine));
	return r;
}


static int
publish_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct bk_dev *dev = arg;
	const struct bk_features *f = &dev->feat;
	const char *be = dev->be;
	int r;

	r = be_exists(xs, t, dev);
	if (!r)
		r = xbus_printf(xs, t, be, "feature-flush-cache", "%d", f->flush_cache);
	if (!r)
		r = xbus_printf(xs, t, be, "feature-barrier", "%d", f->barrier);
	if (!r)
		r = xbus_printf(xs, t, be, "feature-discard", "%d", f->discard);
	/* what we offer, not what was negotiated: a frontend decides the
	 * same way we do (Linux blkback since 2022) */
	if (!r)
		r = xbus_printf(xs, t, be, "feature-persistent", "%d", dev->offer.persistent);
	if (!r)
		r = xbus_printf(xs, t, be, "sectors", "%" PRIu64, f->sectors);
	if (!r)
		r = xbus_printf(xs, t, be, "info", "%u", f->info);
	if (!r)
		r = xbus_printf(xs, t, be, "sector-size", "%u", f->sector_size);
	if (!r)
		r = xbus_printf(xs, t, be, "physical-sector-size", "%u", f->physical_sector_size);
	if (!r && f->discard) {
		r = xbus_printf(xs, t, be, "discard-granularity", "%u", f->discard_granularity);
		if (!r)
			r = xbus_printf(xs, t, be, "discard-alignment", "%u", f->discard_alignment);
		if (!r)
			r = xbus_printf(xs, t, be, "discard-secure", "%d", f->discard_secure);
	} else if (!r) {
		xbus_rm(xs, t, be, "discard-granularity");
		xbus_rm(xs, t, be, "discard-alignment");
		xbus_rm(xs, t, be, "discard-secure");
	}
	if (!r && dev->claim)
		r = xbus_printf(xs, t, be, BK_BACKING_NODE, "%s", dev->claim->id);
	else if (!r)
		xbus_rm(xs, t, be, BK_BACKING_NODE);
	if (!r)
		r = knobs_record(xs, t, dev);
	if (!r)
		r = xbus_printf(xs, t, be, "state", "%d", XenbusStateConnected);
	return r;
}

int
bk_negotiate_publish(struct bk_dev *dev)
{
	return xbus_transact(dev->d->xs, publish_keys, dev);
}

struct resize_arg {
	const struct bk_dev *dev;
	uint64_t sectors;
};

static int
resize_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct resize_arg *a = arg;
	const char *be = a->dev->be;
	char *state;
	int r = be_exists(xs, t, a->dev);

	if (r)		/* removed or made again meanwhile: never write there */
		return r;
	state = xbus_read(xs, t, be, "state");
	if (!state)
		return -errno;
	r = xbus_printf(xs, t, be, "sectors", "%" PRIu64, a->sectors);
	if (!r)
		r = xbus_printf(xs, t, be, "state", "%s", state);
	free(state);
	return r;
}

int
bk_negotiate_resize(struct bk_dev *dev, uint64_t sectors)
{
	struct resize_arg a = { .dev = dev, .sectors = sectors };
	int r = xbus_transact(dev->d->xs, resize_keys, &a);

	if (r == 0)
		dev->feat.sectors = sectors;
	return r;
}

struct withdraw_arg {
	const struct bk_dev *dev;
	const char *node;
};

static int
withdraw_key(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct withdraw_arg *a = arg;
	int r = be_exists(xs, t, a->dev);

	if (r)		/* removed or made again meanwhile: never write there */
		return r;
	return xbus_printf(xs, t, a->dev->be, a->node, "0");
}

void
bk_negotiate_withdraw(struct bk_dev *dev, unsigned int withdraw)
{
	static const struct {
		unsigned int bit;
		const char *node;
	} nodes[] = {
		{ BK_WITHDRAW_FLUSH, "feature-flush-cache" },
		{ BK_WITHDRAW_BARRIER, "feature-barrier" },
		{ BK_WITHDRAW_DISCARD, "feature-discard" },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(nodes); i++) {
		struct withdraw_arg a = { .dev = dev, .node = nodes[i].node };
		int r;

		if (!(withdraw & nodes[i].bit))
			continue;
		log_info("vbd %s: the backing refused an operation (EOPNOTSUPP): %s=0",
			 dev->name, nodes[i].node);
		r = xbus_transact(dev->d->xs, withdraw_key, &a);
		if (r < 0 && r != -ENOENT)
			log_error("vbd %s: write %s/%s: %s", dev->name, dev->be, nodes[i].node,
				  strerror(-r));
	}
}
