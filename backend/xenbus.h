/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenbus.h: the daemon's xenstore side (xenbus.c), the one owner of the
 * set of vbds: the watches on the backend directory, the frontends'
 * state nodes, the guests' names and @releaseDomain; which vbd an event
 * is about; the queues' reports; statistics; shutdown.  What one vbd
 * then does is vbd.c's (vbd.h).  main.c and ctl.c call these; control
 * thread only.
 */
#ifndef BK_XENBUS_H
#define BK_XENBUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev.h"


/* Watch the backend directory and @releaseDomain.  0/-errno. */
int bk_xenbus_init(struct bk_daemon *d);
/* Handle the watches' first firings (every vbd found, dead frontends
 * closed), waiting up to timeout_ms for them, then up to a second for
 * the stores they began to open (a slower one is served meanwhile).
 * 0, or -EPIPE when xenstore went away. */
int bk_xenbus_first_scan(struct bk_daemon *d, int timeout_ms);
/* xs fd readable: handle every pending watch event. */
void bk_xenbus_handle_watches(struct bk_daemon *d);
/* report_efd readable: act on the queues' reports; finish the
 * disconnect of every vbd whose queues have drained, then what waited. */
void bk_xenbus_handle_reports(struct bk_daemon *d);
/* SIGUSR1 / --stats: one line per connected vbd. */
void bk_xenbus_log_stats(struct bk_daemon *d);
/*
 * SIGTERM, blkbackd-ctl shutdown/upgrade: stop every queue of every vbd
 * at once, wait until each has drained (in parallel: every request
 * taken is answered), destroy them (unmap, unbind, close the stores) and
 * free the vbds, each as soon as its queues are done (a vbd whose
 * backing hangs holds up only itself, until it answers).  close: write Closed for each probed vbd (the guests
 * lose their disks); otherwise write nothing at all to xenstore, so a
 * blkbackd started next finds every state as it was.  Blocks.
 * Returns how many vbds were left Connected without a backend (their
 * guests' I/O waits for the next blkbackd; 0 with close), their names
 * ("DOMID/DEVID", space-separated, cut short with "..." when they do not
 * fit) in left[len], and, when guests is not NULL, in *guests how many
 * guests (distinct frontend domains) those vbds belong to.
 */
unsigned int bk_xenbus_shutdown(struct bk_daemon *d, bool close, char *left, size_t len,
				unsigned int *guests);
/* The vbd F/D this daemon knows, or NULL. */
struct bk_dev *bk_xenbus_find(struct bk_daemon *d, uint32_t f, uint32_t id);
/* bk_vbd_size_ask() on every connected vbd (SIGHUP, the periodic
 * check, an rbd image's notice): asks, never waits for a backing. */
void bk_xenbus_check_sizes(struct bk_daemon *d);
/* SIGUSR2 (blkcrash): power-cut every vbd's store, no drain. */
void bk_xenbus_power_cut(struct bk_daemon *d);

/* Create/update/remove vbd F/D from what its directory holds now. */
void bk_xenbus_scan_device(struct bk_daemon *d, uint32_t f, uint32_t id);

#endif /* BK_XENBUS_H */
