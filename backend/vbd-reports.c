/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd-reports.c: what a connected vbd's queues and its backing report
 * (vbd.h bk_vbd_reports, bk_vbd_size_ask): a resize of the backing
 * told to the frontend, a withdrawn feature, a broken ring or a failed
 * disk made fatal or written to the error node, a queue thread that
 * stopped.  xenbus.c calls it when the queues' report eventfd fires
 * and for the periodic size check, ctl.c for blkbackd-ctl resize.  It
 * calls vbd.c (errors, disconnect: vbd.h, vbd-int.h), never the other
 * way round.  Control thread only.
 *
 * The size is never read here: a backing whose file system hangs (a
 * stopped FUSE daemon, a hard NFS mount whose server died) would hold
 * the control thread, and with it every guest's handshake, the control
 * socket and SIGTERM.  Queue 0's thread reads it (it serves that
 * backing anyway, and waits for it when it hangs) and reports it.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "negotiate.h"
#include "vbd-int.h"
#include "vbd.h"

/* A probe out this long is logged (once), when the next is due. */
#define SIZE_SLOW_S 10

static int64_t
secs_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (int64_t)(now.tv_sec - t->tv_sec);
}

/* Give queue 0 the probe (a number of its own).  False when it cannot
 * take one: the queue's thread has stopped. */
static bool
size_probe(struct bk_dev *dev)
{
	if (!dev->nr_queues || !bk_dataplane_probe_size(dev->queues[0]))
		return false;
	dev->size.asked = true;
	dev->size.said_slow = false;
	dev->size.gen = ++dev->d->size_gen;
	clock_gettime(CLOCK_MONOTONIC, &dev->size.when);
	return true;
}

/* (vbd.h) */
uint64_t
bk_vbd_size_ask(struct bk_dev *dev, bool again)
{
	/* what this ask needs: the next probe asked of any vbd (numbers
	 * are the daemon's, so a vbd made again never reuses one) */
	uint64_t want = dev->d->size_gen + 1;

	if (dev->phase != DEV_CONNECTED || !dev->published)
		return 0;
	if (!dev->size.asked)
		return size_probe(dev) ? want : 0;
	if (again)
		dev->size.again = true;
	if (!dev->size.said_slow && secs_since(&dev->size.when) >= SIZE_SLOW_S) {
		log_error("vbd %s: its backing \"%s\" has not told its size for %" PRId64
			  " s (a file system that hangs?); no new size check until it does",
			  dev->name, dev->cfg.params.arg, secs_since(&dev->size.when));
		dev->size.said_slow = true;
	}
	return want;
}

/*
 * The backing's size is bytes (r 0), or could not be read (r -errno).
 * Has it changed (rbd resize from any host, a file or block device
 * grown or shrunk here)?  Then tell the frontend as Linux blkback's
 * xen_blkbk_resize does: "sectors" and our state node rewritten in one
 * transaction, so its watch on the state fires and it re-reads sectors.
 * A shrink, or a backing whose size cannot be read any more (a removed
 * file), is an admin's mistake that may lose the guest's data: said
 * loudly, once, in the log and the error node.  Returns as
 * bk_vbd_size_ask's dev->size.rc says; *new_sectors: the size after.
 */
static int
size_apply(struct bk_dev *dev, int r, uint64_t bytes, uint64_t *new_sectors)
{
	uint64_t old = dev->feat.sectors;
	char msg[256];

	*new_sectors = old;
	if (dev->phase != DEV_CONNECTED || !dev->published)
		return -ENOTCONN;
	if (r == -EOPNOTSUPP)
		return r;
	if (r < 0) {
		if (!dev->size_lost) {
			log_error("vbd %s: cannot read the size of its backing \"%s\": %s%s",
				  dev->name, dev->cfg.params.arg, strerror(-r),
				  r == -ENOENT ? " (removed?)" : "");
			snprintf(msg, sizeof(msg), "params: cannot read the size of \"%s\": %s",
				 dev->cfg.params.arg, strerror(-r));
			bk_vbd_write_error(dev, msg);
		}
		dev->size_lost = true;
		return r;
	}
	dev->size_lost = false;
	if (bytes >> 9 == old)
		return 0;
	r = bk_negotiate_resize(dev, bytes >> 9);
	if (r < 0) {
		log_error("vbd %s: the backing now has %" PRIu64 " sectors; writing %s/sectors: "
			  "%s", dev->name, bytes >> 9, dev->be, strerror(-r));
		return r;
	}
	*new_sectors = dev->feat.sectors;
	if (dev->feat.sectors > old) {
		log_info("vbd %s: backing resized: %" PRIu64 " -> %" PRIu64 " sectors", dev->name,
			 old, dev->feat.sectors);
		return 0;
	}
	log_error("vbd %s: BACKING SHRANK: %" PRIu64 " -> %" PRIu64 " sectors under a "
		  "connected guest; its I/O past the new end fails", dev->name, old,
		  dev->feat.sectors);
	snprintf(msg, sizeof(msg), "params: the backing shrank from %" PRIu64 " to %" PRIu64
		 " sectors while connected", old, dev->feat.sectors);
	bk_vbd_write_error(dev, msg);
	return 0;
}

/* Queue 0 answered the probe (bk_dataplane_probe_size). */
static void
size_answered(struct bk_dev *dev, int r, uint64_t bytes)
{
	if (!dev->size.asked)
		return;	/* nothing out: nothing to answer */
	dev->size.asked = false;
	if (dev->size.said_slow)
		log_info("vbd %s: its backing told its size after %" PRId64 " s", dev->name,
			 secs_since(&dev->size.when));
	dev->size.old_sectors = dev->feat.sectors;
	dev->size.rc = size_apply(dev, r, bytes, &dev->size.new_sectors);
	dev->size.done_gen = dev->size.gen;
	if (dev->size.again) {
		dev->size.again = false;
		bk_vbd_size_ask(dev, false);
	}
}

void
bk_vbd_reports(struct bk_dev *dev)
{
	unsigned int i;

	if (dev->gone)
		return;	/* disconnecting; nothing more is written for it */

	for (i = 0; i < dev->nr_queues; i++) {
		struct bk_report rep;
		char node[320];

		if (!bk_dataplane_reports(dev->queues[i], &rep))
			continue;
		if (rep.events & BK_REPORT_SIZE)
			size_answered(dev, rep.size_rc, rep.size_bytes);
		if (rep.events & BK_REPORT_WITHDRAW)
			bk_negotiate_withdraw(dev, rep.withdraw);
		if ((rep.events & BK_REPORT_BROKEN_RING) && dev->phase == DEV_CONNECTED) {
			bk_vbd_fatal(dev, "ring", "%s", rep.msg);
			bk_vbd_disconnect(dev);
		} else if (rep.events & BK_REPORT_FAILED) {
			/* C15: loud, once; the error node says it for the
			 * toolstack (the queues answer ERROR from now on) */
			if (!dev->failed) {
				char why[200], when[32];
				const char *cut = strstr(rep.msg, "; device failed");
				time_t now = time(NULL);
				struct tm tm;

				log_error("vbd %s: %s", dev->name, rep.msg);
				strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC",
					 gmtime_r(&now, &tm));
				/* what the refused reconnects say (refuse_failed) */
				snprintf(why, sizeof(why), "the backing failed a flush at %s "
					 "(%.*s); data written since its last good flush may "
					 "be lost", when,
					 (int)(cut ? (size_t)(cut - rep.msg) : strlen(rep.msg)),
					 rep.msg);
				bk_vbd_mark_failed(dev, why);
			}
			snprintf(node, sizeof(node), "failed: %s", rep.msg);
			bk_vbd_write_error(dev, node);
		}
	}
	if (dev->phase == DEV_CONNECTED && bk_vbd_queues_stopped(dev, false)) {
		/* not asked to: it could not wait for events any more */
		bk_vbd_fatal(dev, "queue", "a queue thread stopped (see the log)");
		bk_vbd_disconnect(dev);
	}
}
