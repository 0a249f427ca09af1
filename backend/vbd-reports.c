/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd-reports.c: what a connected vbd's queues and its backing report
 * (vbd.h bk_vbd_reports, bk_vbd_check_size): a resize of the backing
 * told to the frontend, a withdrawn feature, a broken ring or a failed
 * disk made fatal or written to the error node, a queue thread that
 * stopped.  xenbus.c calls it when the queues' report eventfd fires
 * and for the periodic size check, ctl.c for blkbackd-ctl resize.  It
 * calls vbd.c (errors, disconnect: vbd.h, vbd-int.h), never the other
 * way round.  Control thread only.
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

/*
 * Has the backing changed size (rbd resize from any host, a file or
 * block device grown or shrunk here)?  Then tell the frontend as Linux
 * blkback's xen_blkbk_resize does: "sectors" and our state node
 * rewritten in one transaction, so its watch on the state fires and it
 * re-reads sectors.  A shrink, or a backing whose size cannot be read
 * any more (a removed file), is an admin's mistake that may lose the
 * guest's data: said loudly, once, in the log and the error node.
 */
int
bk_vbd_check_size(struct bk_dev *dev, uint64_t *old_sectors, uint64_t *new_sectors)
{
	uint64_t bytes, old = dev->feat.sectors;
	char msg[256];
	int r;

	if (old_sectors)
		*old_sectors = old;
	if (new_sectors)
		*new_sectors = old;
	if (dev->phase != DEV_CONNECTED || !dev->published)
		return -ENOTCONN;
	r = bk_store_size(dev->store, &bytes);
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
	if (new_sectors)
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

void
bk_vbd_reports(struct bk_dev *dev)
{
	unsigned int i;

	if (dev->gone)
		return;	/* disconnecting; nothing more is written for it */
	bk_vbd_check_size(dev, NULL, NULL);

	for (i = 0; i < dev->nr_queues; i++) {
		struct bk_report rep;
		char node[320];

		if (!bk_dataplane_reports(dev->queues[i], &rep))
			continue;
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
