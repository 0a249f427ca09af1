/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * negotiate.h: what a vbd and its frontend say to each other through
 * xenstore (negotiate.c): the knobs, the probe keys, the ring keys, the
 * features negotiated once and published.  It reads and writes keys and
 * decides nothing about the vbd's state: a key that is wrong comes back
 * as a struct bk_fault, and vbd.c (with vbd-reports.c, its only
 * callers) decides what follows.  Control thread only.
 */
#ifndef BK_NEGOTIATE_H
#define BK_NEGOTIATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <xenstore.h>

#include "dev.h"

/* A key that is missing or wrong: its name and what is wrong with it,
 * as Linux's xenbus_dev_fatal would say it (vbd.c bk_vbd_fatal). */
struct bk_fault {
	char key[64];
	char msg[256];
};


/*
 * Is dev's backend directory still the vbd this object serves?  Read in
 * transaction t (or XBT_NULL).  -ENOENT: its state node is gone
 * (removed), or reads Unknown or Initialising although this object has
 * a state of its own there (dev->state != -1): the toolstack made the
 * vbd again, writing Initialising as it does into every new vbd, which
 * blkbackd never writes.  -EINVAL: the state is not a number.  0: ours.
 * Every transaction that writes the backend's keys asks first, so an
 * object can never write into a vbd made again before it saw the event.
 */
int bk_negotiate_dir_ours(struct xs_handle *xs, xs_transaction_t t, const struct bk_dev *dev);

/* The backend key where the hotplug script writes the unix socket of
 * the qemu-storage-daemon serving an image-format params (qcow2:PATH...;
 * blkbackd.8 "Disk images"), which serves it as the NBD export
 * BK_IMAGE_EXPORT. */
#define BK_IMAGE_NODE	"image-socket"
#define BK_IMAGE_EXPORT	"image"

/* dev->offer (dev.h): the daemon's options, or with published what the
 * backend directory's probe keys and feature-persistent say the
 * frontend was offered (a vbd taken over Connected; a key missing or
 * out of range leaves the option). */
void bk_negotiate_offer(struct bk_dev *dev, bool published);

/* Parse the backend's knobs into dev->cfg.  0, or -EINVAL with *f
 * naming the key (dev->cfg unchanged). */
int bk_negotiate_config(struct bk_dev *dev, struct bk_fault *f);
/*
 * The same for a vbd taken over Connected (a restart, an upgrade): the
 * knobs that decide what the guest was told and how its requests are
 * answered (mode, cache, flush-mode, discard-enable, io-engine) are
 * the ones its connect recorded (BK_KNOBS_NODE), not what the nodes say
 * now -- as Linux blkback reads them only at connect, a rewrite while
 * connected takes effect at the next connect (logged when they differ).
 * Without a record (a blkbackd before it wrote one), the nodes.
 */
int bk_negotiate_config_connected(struct bk_dev *dev, struct bk_fault *f);
void bk_negotiate_config_free(struct bk_dev_config *c);
/* Write the probe keys and InitWait in one transaction (Linux
 * xen_blkbk_probe).  0/-errno. */
int bk_negotiate_probe_keys(struct bk_dev *dev);
/*
 * Read what the frontend wrote for the connection: the number of
 * queues, the ring page order, the ABI, and each queue's ring keys into
 * rings[] (BK_MAX_QUEUES entries), and whether both ends use persistent
 * grants (dev->persistent).  The number of queues, or -EINVAL with *f
 * naming the key.
 */
int bk_negotiate_rings(struct bk_dev *dev, struct bk_ring_config *rings, struct bk_fault *f);
/* The same, for a look only: -EINVAL without a word to xenstore or the
 * log (a vbd that may be another backend's is never written to). */
int bk_negotiate_rings_peek(struct bk_dev *dev, struct bk_ring_config *rings);
/* Where queue i of nq keeps its ring keys (the frontend directory, or
 * its queue-N/ subdirectory). */
void bk_negotiate_queue_dir(const struct bk_dev *dev, unsigned int nq, unsigned int i,
			    char *buf, size_t len);
/* Decide dev->feat once, from the store's features and the knobs. */
void bk_negotiate_features(struct bk_dev *dev);
/* <backend>/BK_BACKING_NODE: what the vbd's connect opened, as the
 * store's identify() spells it (a file's st_dev:st_ino, a device's
 * st_rdev, an image's cluster/pool/name), written with the features
 * when it connects.  A blkbackd that takes the vbd over compares it with
 * what params leads to now (vbd.c); like Linux blkback's
 * physical-device, which it refuses to see change under a connection. */
#define BK_BACKING_NODE "blkbackd-backing"
/* <backend>/BK_KNOBS_NODE/{mode,cache,flush-mode,discard-enable,
 * io-engine}: the knobs a connection was given, written with its
 * Connected (bk_negotiate_publish), read back at a takeover. */
#define BK_KNOBS_NODE "blkbackd-knobs"

/* Publish the features and Connected in one transaction.  0/-errno. */
int bk_negotiate_publish(struct bk_dev *dev);
/*
 * The backing now has sectors (512-byte) sectors: write "sectors" and
 * rewrite our state node in one transaction (Linux xen_blkbk_resize),
 * so the frontend's watch on the state fires; then dev->feat.sectors =
 * sectors.  Nothing is written when the state node is gone (-ENOENT).
 * 0/-errno.
 */
int bk_negotiate_resize(struct bk_dev *dev, uint64_t sectors);
/* Set the nodes of withdrawn features (BK_WITHDRAW_*) to 0, logged. */
void bk_negotiate_withdraw(struct bk_dev *dev, unsigned int withdraw);

#endif /* BK_NEGOTIATE_H */
