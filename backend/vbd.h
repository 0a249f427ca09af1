/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd.h: one vbd (vbd.c; its backing in vbd-backing.c, its reports
 * and resize in vbd-reports.c, sharing the private vbd-int.h): its
 * state machine (Linux xen-blkback's xenbus.c: backend_changed,
 * frontend_changed, connect, xen_blkif_disconnect), its connection and
 * its drain.  xenbus.c (the
 * owner of the set of vbds, xenbus.h) creates and frees them and calls
 * the rest; ctl.c reads their counters.  What a vbd says through
 * xenstore is negotiate.c's (negotiate.h).
 *
 * The control plane owns every struct bk_dev (dev.h) and starts, stops
 * and destroys its queues (dataplane.h); the queues answer only through
 * their reports.  Control thread only.
 */
#ifndef BK_VBD_H
#define BK_VBD_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "dev.h"


/* A new vbd object for F/D (not yet in d->devs: xenbus.c links it), its
 * labels read.  NULL when out of memory (logged). */
struct bk_dev *bk_vbd_new(struct bk_daemon *d, uint32_t f, uint32_t id);
/* Free the vbd, already out of d->devs (disconnect first; waits for a
 * drain still running: callers other than shutdown disconnect it
 * first).  removed: log that it is gone. */
void bk_vbd_free(struct bk_dev *dev, bool removed);
/* Shutdown, once every vbd is freed: wait for the stores still being
 * closed (bk_vbd_store_close), saying after 10 s which wait goes on. */
void bk_vbd_closes_wait(struct bk_daemon *d);
/* report_efd readable: release the claims of the closes that have
 * finished (bk_vbd_store_close) and free them; the vbds waiting for
 * those backings look again (d->rescan_waiters).  Control thread. */
void bk_vbd_closes_reap(struct bk_daemon *d);
/* A power cut (SIGUSR2) reaches the stores still being closed too:
 * a close not yet begun is cut; one in progress is left to the exit
 * that follows the cut (never waited for).  Control thread. */
void bk_vbd_closes_power_cut(struct bk_daemon *d);
/* Bring the vbd in line with what xenstore says now (idempotent). */
void bk_vbd_update(struct bk_dev *dev);
/* An event on the vbd's directory node itself (removed, made again, or
 * only written or chmod'ed): true when the object is to be retired --
 * the node is gone or made again (bk_negotiate_dir_ours), or the
 * object never wrote a state there. */
bool bk_vbd_dir_made_again(const struct bk_dev *dev);
/* Re-read the vbd's vdev and params from xenstore into the labels
 * blkbackd-ctl shows (struct bk_dev). */
void bk_vbd_read_labels(struct bk_dev *dev);
/* The frontend's domain died (@releaseDomain). */
void bk_vbd_domain_gone(struct bk_dev *dev);
/* Act on the reports of the vbd's queues (xenbus.c handle_reports),
 * a size probe's answer among them (bk_vbd_size_ask). */
void bk_vbd_reports(struct bk_dev *dev);
/*
 * Ask for the backing's size (the periodic check, SIGHUP, rbd's notice,
 * blkbackd-ctl resize).  Never waits for the backing: queue 0's thread
 * reads it (bk_dataplane_probe_size) and reports it, and
 * bk_vbd_reports() then does what Linux blkback's xen_blkbk_resize
 * does: when it changed, sectors and our state rewritten in one
 * transaction (bk_negotiate_resize); a shrink or an unreadable size
 * logged and written to the error node, once.  At most one probe is out
 * per vbd: asked again meanwhile, again=true makes one more follow it
 * (blkbackd-ctl resize wants a size read after it asked), again=false
 * drops the ask; one out for 10 s or more is logged, once.
 * Returns the number of the probe whose answer will do for this ask:
 * the answer is in once dev->size.done_gen >= it, with dev->size.rc (0
 * whether it changed or not, -ENOTCONN when the vbd was no longer
 * connected, -EOPNOTSUPP when its store cannot tell -- memory, null, a
 * blkcrash stack -- or the store's or xenstore's -errno) and
 * dev->size.old_sectors / new_sectors.  0 when nothing was asked: the
 * vbd is not connected.
 */
uint64_t bk_vbd_size_ask(struct bk_dev *dev, bool again);
/* True when a drain is over: the caller then runs bk_vbd_drain_done(). */
bool bk_vbd_drained(const struct bk_dev *dev);
/* Finish the disconnect and write what waited for it (Closed, for a
 * domain gone).  True when the vbd must be scanned again now
 * (bk_xenbus_scan_device: updated, or forgotten when removed). */
bool bk_vbd_drain_done(struct bk_dev *dev);
/*
 * The vbd's store opens on a thread of its own (vbd-int.h
 * bk_vbd_backing_open), so a backing that takes long never holds the
 * control thread.  bk_vbd_opening(): an open is out.
 * bk_vbd_open_ended(): one has finished; the caller then scans the vbd
 * (bk_xenbus_scan_device), whose state machine takes the result, and
 * afterwards calls bk_vbd_open_settle(), which closes a result the vbd
 * did not want any more (it moved on meanwhile) and returns true when
 * the vbd is to be scanned once more (what its frontend did meanwhile,
 * acted on now that it is probed).
 */
bool bk_vbd_opening(const struct bk_dev *dev);
bool bk_vbd_open_ended(const struct bk_dev *dev);
bool bk_vbd_open_settle(struct bk_dev *dev);
/* After those scans: a frontend domain that died while the probe's
 * open was out (its @releaseDomain found the vbd not probed) is
 * closed now, as bk_vbd_domain_gone() would have. */
void bk_vbd_open_done(struct bk_dev *dev);
/* Start a disconnect (stop every queue).  True when nothing runs any
 * more (DEV_DISCONNECTED), false while it drains. */
bool bk_vbd_disconnect(struct bk_dev *dev);
/* Finish a disconnect, waiting for queues still draining (shutdown). */
void bk_vbd_disconnect_finish(struct bk_dev *dev);
/* The vbd's counters: closed queues' and the running ones'. */
void bk_vbd_stats(const struct bk_dev *dev, struct bk_stats *out);
/* Is its backing one whose data dies with this process (memory:)?
 * A successor that finds such a vbd Connected fails its requests. */
bool bk_vbd_process_lifetime(const struct bk_dev *dev);
/* Write our state node (only while it exists), logged, rate-limited. */
void bk_vbd_set_state(struct bk_dev *dev, int state);
/* Linux xenbus_dev_fatal: log, <backend>/error, Closing. */
void bk_vbd_fatal(struct bk_dev *dev, const char *key, const char *fmt, ...)
	ATTRIBUTE_FORMAT_PRINTF(3, 4);
/* May the vbd log one more state-change line now? (rate limit) */
bool bk_vbd_log_ok(struct bk_dev *dev);
/*
 * After start-up's first scan (control thread): remove the recovery
 * records in --state-dir of vbds whose backend directory is gone from
 * xenstore -- the toolstack removed the disk or destroyed its guest
 * while no blkbackd ran.  No vbd will take them over, and while
 * blkbackd is down blkbackd-ctl status would count them among stalled
 * guests.  Records of a vbd still there (taken over, or not: a backing
 * that failed to open again) are kept.  Each removal is logged.
 */
void bk_vbd_sweep_records(struct bk_daemon *d);

#endif /* BK_VBD_H */
