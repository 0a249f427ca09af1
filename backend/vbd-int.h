/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd-int.h: what the files of one vbd's code share among themselves,
 * and nobody else includes: vbd.c (the state machine, connect,
 * disconnect and drain), vbd-backing.c (the backing and its claim) and
 * vbd-reports.c (the queues' reports, a resize).  The calls run one way:
 * vbd-reports.c -> vbd.c -> vbd-backing.c.  The vbd's interface to the
 * rest of blkbackd is vbd.h.  Control thread only.
 */
#ifndef BK_VBD_INT_H
#define BK_VBD_INT_H

#include <stdbool.h>

#include "dev.h"
#include "negotiate.h"

/*
 * vbd-backing.c.  Open the vbd's store (check_only: open the base,
 * check it, close it again, as Linux blkback opens the backing before
 * InitWait), and when not check_only take its claim (dev->claim).  A
 * backing another vbd serves is refused unless both are read-only or
 * both frontends are the same VM (a migration); one that a draining vbd
 * still writes is waited for (dev->backing_wait; retried when that drain
 * is over).  The open, and the stat that tells the claims what the
 * backing is, run on a thread of their own (dev->open): the
 * first call starts it and returns -EINPROGRESS; once it has finished,
 * xenbus.c scans the vbd again (bk_vbd_open_ended), and the state
 * machine's same call takes its result -- unless it now wants another
 * open (the other check_only, params rewritten), which is started
 * instead.  0, -EINPROGRESS while waiting (for the open or a drain),
 * or -errno with *f saying which key and why (the caller makes it
 * fatal).
 */
int bk_vbd_backing_open(struct bk_dev *dev, bool check_only, struct bk_fault *f);
/* Is an open out (started and not finished)? */
bool bk_vbd_backing_opening(const struct bk_dev *dev);
/* Has an open finished whose result nobody has taken? */
bool bk_vbd_backing_opened(const struct bk_dev *dev);
/* Forget dev->open: a finished one's store is closed; one still out is
 * left to its thread, which closes what it opens and frees itself. */
void bk_vbd_backing_drop(struct bk_dev *dev);
/* At a disconnect, once the queues are joined: keep dev->store for the
 * vbd's next connection when its data lives only in this process (a
 * memory: disk emptied by a guest's reconnect would lose what it had
 * acknowledged); true when kept (dev->store is then NULL), false when
 * the caller closes it.  bk_vbd_backing_drop_kept() closes a kept
 * store: when the vbd goes. */
bool bk_vbd_backing_keep(struct bk_dev *dev);
void bk_vbd_backing_drop_kept(struct bk_dev *dev);
/* Close the store stack s (NULL: nothing) on a thread of its own,
 * counted in d->closes; s must be idle (its queues joined) and is not
 * the caller's any more.  Where no thread can be had, here (logged).
 * claim (NULL: none), the claim on what s opened, is the close's from
 * here: marked draining, so that no vbd opens the backing while the
 * close may still write it, and released by bk_vbd_closes_reap() once
 * the close is over (at once when s is NULL or closed here). */
void bk_vbd_store_close(struct bk_daemon *d, struct bk_store *s, struct bk_claim *claim);
/* Release claim (NULL: none) from d->claims; the vbds waiting for a
 * draining one look again (d->rescan_waiters).  Control thread. */
void bk_vbd_claim_release(struct bk_daemon *d, struct bk_claim *claim);

/* vbd.c.  Write <backend>/error = msg, only while the backend directory
 * exists (never recreating it); logged when it fails. */
void bk_vbd_write_error(struct bk_dev *dev, const char *msg);
/* vbd.c.  The vbd failed (dev->failed; why: what happened, and when,
 * for the error node of every refused reconnect).  Once: the first why
 * stays.  Also written to <backend>/BK_FAILED_NODE, so that a blkbackd
 * started later finds it (bk_vbd_new); that node dies with the backend
 * directory, i.e. when the toolstack detaches the vbd. */
#define BK_FAILED_NODE "blkbackd-failed"
void bk_vbd_mark_failed(struct bk_dev *dev, const char *why);
/* vbd.c.  Have all (all: true) or any (false) of the vbd's queue
 * threads finished? */
bool bk_vbd_queues_stopped(const struct bk_dev *dev, bool all);

#endif /* BK_VBD_INT_H */
