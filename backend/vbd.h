/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vbd.h: blkbackd's control plane, on the control thread only.
 *
 *   xenbus.c     the daemon's xenstore side: the watches on the backend
 *                directory, the frontends' state nodes and
 *                @releaseDomain; which vbd an event is about; the
 *                queues' reports; statistics; shutdown
 *   vbd.c        one vbd's state machine (Linux xen-blkback's
 *                xenbus.c: backend_changed, frontend_changed, connect,
 *                xen_blkif_disconnect), its connection and its drain
 *   negotiate.c  what a vbd and its frontend say to each other through
 *                xenstore: the knobs, the probe keys, the ring keys, the
 *                features negotiated once and published
 *
 * The control plane owns every struct bk_dev and starts, stops and
 * destroys its queues (dataplane.h); the queues answer only through
 * their reports.
 */
#ifndef BK_VBD_H
#define BK_VBD_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "compiler.h"
#include "dataplane.h"
#include "store.h"
#include "xenops.h"

struct xs_handle;

#define BK_MAX_QUEUES 16

/* Daemon-wide options (main.c fills them; blkbackd.8 OPTIONS). */
struct bk_options {
	enum xenops_transport transport;
	const char *sim_dir;
	unsigned int max_queues;	/* multi-queue-max-queues */
	unsigned int max_ring_order;	/* max-ring-page-order */
	unsigned int max_indirect;	/* feature-max-indirect-segments, 0 = off */
	uint64_t map_threshold;		/* bytes: map grants for requests >= this; 0 never */
	bool feature_persistent;	/* offer persistent grants (feature-persistent) */
	unsigned int max_pgrants;	/* per queue (max_persistent_grants) */
	unsigned int poll_max_us;	/* queue threads' polling window cap; 0 never */
	bool ignore_flush;		/* --unsafe-ignore-flush */
	const char *record_path;	/* --record: blkcrash's recorder */
	bool volatile_cache;		/* --cache=volatile */
	const char *state_dir;		/* --state-dir: the queues' recovery records */
	enum bk_io_engine io_engine;	/* --io-engine: the file stores' engine */
	/* measured at start (main.c machine_costs): see bk_queue_params */
	bool batch_submit;
	clockid_t lat_clock;
	unsigned int crash_point, crash_after;	/* --test-crash-at (tests only) */
	bool close_on_exit;		/* --close-on-exit: SIGTERM closes every vbd */
	/* the kernel's xen-blkback (main.c kernel_backend_check): where
	 * sysfs is ("/sys", or $BLKBACKD_SYSFS_ROOT in tests), NULL when
	 * not looked at (sim without that variable) */
	const char *sysfs_root;
	bool leave_kernel_vbds;		/* --leave-kernel-vbds: it is loaded, and
					 * the vbds bound to it are left alone */
};

/* The daemon: main.c's, for the life of the process. */
struct bk_daemon {
	struct bk_options opt;
	xenops_t *xops;
	struct xs_handle *xs;
	uint32_t self;
	char vbd_root[64];		/* /local/domain/<self>/backend/vbd */
	struct bk_trace *trace;
	int report_efd;			/* queue threads -> control thread */
	struct bk_dev *devs;
	struct bk_claims claims;	/* who serves which backing */
	bool rescan_waiters;		/* a draining claim was released */
	/* domains that had vbds here and have none now (xenbus.c) */
	uint32_t past_doms[64];
	unsigned int nr_past_doms;
	/* xenbus.c: the last few non-numeric directory names under
	 * vbd_root it has logged, so each is logged once, not per event */
	char bad_dirs[4][64];
	unsigned int bad_dirs_next;
	/* xenbus.c: the watches registered whose first firing (xenstore
	 * fires each once at registration) has not been handled yet */
	unsigned int watches_unfired;
};

/* The per-vbd knobs (blkbackd.8 "XENSTORE KEYS"), read by negotiate.c. */
struct bk_dev_config {
	struct bk_params params;	/* params: driver and its arg */
	char *params_raw;		/* params as read (malloc'd): what
					 * blkbackd-ctl list shows */
	bool read_only;			/* mode=r */
	bool writethrough;		/* cache=writethrough */
	enum bk_flush_mode flush_mode;
	int discard_enable;		/* -1 unset (offer if supported), 0, 1 */
	/* the io-engine key (auto|libaio|io_uring), else --io-engine */
	bool io_engine_set;
	enum bk_io_engine io_engine;
	bool cdrom, removable;
};

enum bk_dev_phase {
	DEV_DISCONNECTED,	/* no store, no queue */
	DEV_CONNECTED,		/* the store is open and the queues run */
	DEV_DRAINING,		/* asked to stop: answering what is in flight */
};

struct bk_dev {
	struct bk_daemon *d;
	struct bk_dev *next;
	uint32_t frontid, devid;
	char name[32];			/* "F/D" */
	char be[160];			/* backend directory */
	char fe[160];			/* frontend directory ("" until read) */
	char fe_state[176];		/* watched */
	bool fe_watched, fe_seen;
	bool fe_live;			/* seen in 1..5 since we serve the vbd */
	bool fe_event;			/* xenbus.c: a watch event this batch */
	/* the frontend state value outside 1..6 last reported (when
	 * fe_bad_set), as its length and FNV-1a hash (a guest's value may
	 * be up to 4 KiB): reported once per value, not per watch event */
	size_t fe_bad_len;
	uint64_t fe_bad_hash;
	bool fe_bad_set;
	int state;			/* the state we wrote last, -1 none */
	bool probed;
	enum bk_dev_phase phase;
	bool then_update;		/* DRAINING: dev_update (scan) after */
	bool then_closed;		/* DRAINING: write Closed after (domain gone) */
	bool published;			/* we wrote Connected for this connection */
	bool fatal;			/* an error stopped it until reconnect */
	bool detaching;			/* the toolstack asked it to close (online=0) */
	/* its directory node itself was removed or made (again) since this
	 * object serves it: the vbd it served is gone, and what is there now
	 * is another one; this object writes nothing and is forgotten once
	 * drained (xenbus.c) */
	bool gone;
	bool backing_wait;		/* its backing is still another vbd's, draining */
	bool failed;			/* a flush failed (C15): logged, error node */
	bool persistent;		/* this connection uses persistent grants */
	bool keep_state;		/* disconnect for a successor: keep the records */
	bool size_lost;			/* the backing's size cannot be read: reported */
	/* another backend serves it (a ring found served, without our
	 * record of it, or bound to the kernel's xen-blkback): nothing is
	 * written to it and its backing is not opened, until the toolstack
	 * makes it new (backend state Initialising) (vbd.c foreign) */
	bool foreign;
	/* state-change log lines: a guest flapping its state node must not
	 * flood dom0's log (vbd_log_ok) */
	time_t log_window;
	unsigned int log_lines, log_dropped;

	struct bk_dev_config cfg;
	struct bk_store *store;		/* the stack's top, while connected/draining */
	struct bk_claim *claim;		/* on the backing, while connected/draining */
	struct bk_features feat;
	unsigned int nr_queues;
	unsigned int ring_pages;	/* each queue's, as negotiated at connect */
	struct bk_queue *queues[BK_MAX_QUEUES];
	struct bk_stats closed_stats;	/* of queues already destroyed */
};

/* ---------------------------------------------------------------- */
/* xenbus.c: the daemon's entry points (main.c calls them).          */
/* ---------------------------------------------------------------- */

/* Watch the backend directory and @releaseDomain.  0/-errno. */
int bk_xenbus_init(struct bk_daemon *d);
/* Handle the watches' first firings (every vbd found, dead frontends
 * closed), waiting up to timeout_ms for them.  0, or -EPIPE when
 * xenstore went away. */
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
 * free the vbds.  close: write Closed for each probed vbd (the guests
 * lose their disks); otherwise write nothing at all to xenstore, so a
 * blkbackd started next finds every state as it was.  Blocks.
 * Returns how many vbds were left Connected without a backend (their
 * guests' I/O waits for the next blkbackd; 0 with close), their names
 * ("DOMID/DEVID", space-separated, cut short with "..." when they do not
 * fit) in left[len].
 */
unsigned int bk_xenbus_shutdown(struct bk_daemon *d, bool close, char *left, size_t len);
/* The vbd F/D this daemon knows, or NULL. */
struct bk_dev *bk_xenbus_find(struct bk_daemon *d, uint32_t f, uint32_t id);
/* bk_vbd_check_size() on every connected vbd (SIGHUP, the periodic
 * check). */
void bk_xenbus_check_sizes(struct bk_daemon *d);
/* SIGUSR2 (blkcrash): power-cut every vbd's store, no drain. */
void bk_xenbus_power_cut(struct bk_daemon *d);
/* The last vbd of domain domid is gone: when the domain dies, xenops is
 * asked about it once more, so that it forgets it (its memory files). */
void bk_xenbus_domain_unused(struct bk_daemon *d, uint32_t domid);

/* Create/update/remove vbd F/D from what its directory holds now. */
void bk_xenbus_scan_device(struct bk_daemon *d, uint32_t f, uint32_t id);

/* ---------------------------------------------------------------- */
/* vbd.c: one vbd.                                                    */
/* ---------------------------------------------------------------- */

struct bk_dev *bk_vbd_new(struct bk_daemon *d, uint32_t f, uint32_t id);
/* Forget the vbd (disconnect first; waits for a drain still running:
 * callers other than shutdown disconnect it first). */
void bk_vbd_free(struct bk_dev *dev, bool removed);
/* Bring the vbd in line with what xenstore says now (idempotent). */
void bk_vbd_update(struct bk_dev *dev);
/* The frontend's domain died (@releaseDomain). */
void bk_vbd_domain_gone(struct bk_dev *dev);
/* Act on the reports of the vbd's queues (xenbus.c handle_reports),
 * and on a resize of its backing (the store writes report_efd too). */
void bk_vbd_reports(struct bk_dev *dev);
/*
 * Read the backing's size (bk_store_size) and, when it changed, write
 * sectors and rewrite state in one transaction (bk_negotiate_resize);
 * a shrink or an unreadable size is logged and written to the error
 * node, once.  *old_sectors / *new_sectors (either may be NULL): the
 * size before and after.  0 (changed or not), -ENOTCONN when the vbd is
 * not connected, -EOPNOTSUPP when its store cannot tell (memory, null,
 * a blkcrash stack), or the store's or xenstore's -errno.
 */
int bk_vbd_check_size(struct bk_dev *dev, uint64_t *old_sectors, uint64_t *new_sectors);
/* True when a drain is over: the caller then runs bk_vbd_drain_done(). */
bool bk_vbd_drained(const struct bk_dev *dev);
/* Finish the disconnect and take the steps that waited for it.  May
 * free dev (a removed vbd). */
void bk_vbd_drain_done(struct bk_dev *dev);
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

/* ---------------------------------------------------------------- */
/* negotiate.c: the xenstore keys of a vbd.                           */
/* ---------------------------------------------------------------- */

/* Parse the backend's knobs into dev->cfg.  0, or -EINVAL after
 * bk_vbd_fatal(). */
int bk_negotiate_config(struct bk_dev *dev);
void bk_negotiate_config_free(struct bk_dev_config *c);
/* Write the probe keys and InitWait in one transaction (Linux
 * xen_blkbk_probe).  0/-errno. */
int bk_negotiate_probe_keys(struct bk_dev *dev);
/*
 * Read what the frontend wrote for the connection: the number of
 * queues, the ring page order, the ABI, and each queue's ring keys into
 * rings[] (BK_MAX_QUEUES entries).  The number of queues, or -EINVAL
 * after bk_vbd_fatal() naming the key.
 */
int bk_negotiate_rings(struct bk_dev *dev, struct bk_ring_config *rings);
/* The same, for a look only: -EINVAL without a word to xenstore or the
 * log (a vbd that may be another backend's is never written to). */
int bk_negotiate_rings_peek(struct bk_dev *dev, struct bk_ring_config *rings);
/* Where queue i of nq keeps its ring keys (the frontend directory, or
 * its queue-N/ subdirectory). */
void bk_negotiate_queue_dir(const struct bk_dev *dev, unsigned int nq, unsigned int i,
			    char *buf, size_t len);
/* Decide dev->feat once, from the store's features and the knobs. */
void bk_negotiate_features(struct bk_dev *dev);
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

#endif /* BK_VBD_H */
