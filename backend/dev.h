/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dev.h: the control plane's objects (control thread only): the daemon
 * (struct bk_daemon, main.c's for the life of the process), its options,
 * and each vbd (struct bk_dev) with its knobs.
 *
 * Who owns what: xenbus.c owns the set of vbds (d->devs: it creates,
 * links, unlinks and frees them, and keeps the watches that are not
 * one vbd's); vbd.c owns one vbd's state machine, its connection and
 * its drain, with vbd-backing.c (its backing and claim) and
 * vbd-reports.c (its queues' reports, a resize) (xenbus.h, vbd.h,
 * vbd-int.h, negotiate.h say who may call what).  The imports run one
 * way: main.c -> xenbus.c -> vbd-reports.c -> vbd.c -> vbd-backing.c,
 * negotiate.c, all of them on this header.
 */
#ifndef BK_DEV_H
#define BK_DEV_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "dataplane.h"
#include "store.h"
#include "xenops.h"

struct xs_handle;
struct bk_open;

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
/* Stores being closed off the control thread (vbd-backing.c
 * bk_vbd_store_close): the one piece of the daemon its closer threads
 * touch, under its lock.  Each close stays on the list until the
 * control thread has reaped it (bk_vbd_closes_reap): its claim on the
 * backing is released only then. */
struct bk_close;
struct bk_closes {
	pthread_mutex_t lock;
	pthread_cond_t done;		/* out fell to 0 */
	unsigned int out;		/* closer threads still closing */
	struct bk_close *list;		/* running or finished, not yet reaped */
};

struct bk_daemon {
	struct bk_options opt;
	xenops_t *xops;
	struct xs_handle *xs;
	uint32_t self;
	char vbd_root[64];		/* /local/domain/<self>/backend/vbd */
	struct bk_trace *trace;
	int report_efd;			/* queue threads -> control thread */
	/* stores -> control thread: "a backing's size may have changed"
	 * (rbd's header watch: bk_store_config.notify_efd); main.c then
	 * asks every connected vbd's size (bk_xenbus_check_sizes) */
	int size_efd;
	uint64_t size_gen;		/* the size probes asked so far (vbd-reports.c) */
	struct bk_dev *devs;
	struct bk_claims claims;	/* who serves which backing */
	struct bk_closes closes;
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
	/* params FORMAT:PATH (qcow2, vmdk...): a disk image the hotplug
	 * script serves through a qemu-storage-daemon of its own, on the
	 * unix socket it writes to BK_IMAGE_NODE (like Linux blkback's
	 * physical-device); params above is then the nbd store on it.
	 * image_format: the format's name (static), NULL for any other
	 * params; image_wait: that key is not there yet (params unset) */
	const char *image_format;
	bool image_wait;
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
	bool then_gone;			/* probe's open out: its domain died meanwhile */
	bool published;			/* we wrote Connected for this connection */
	bool fatal;			/* an error stopped it until reconnect */
	bool detaching;			/* the toolstack asked it to close (online=0) */
	bool image_wait_said;		/* connect() logged its wait for the image */
	/* its directory node itself was removed or made (again) since this
	 * object serves it: the vbd it served is gone, and what is there now
	 * is another one; this object writes nothing and is forgotten once
	 * drained (xenbus.c) */
	bool gone;
	bool backing_wait;		/* its backing is still another vbd's, draining */
	/* while backing_wait: the claim id waited for, and a hash of the
	 * params it was found for (vbd-backing.c: no new open meanwhile) */
	char backing_wait_id[sizeof(((struct bk_claim *)0)->id)];
	uint64_t backing_wait_params;
	/* a flush failed (C15), or a RAM disk's data died with the blkbackd
	 * that served it: every request fails, and a reconnect is refused,
	 * until the toolstack detaches the vbd (its directory goes).  Kept
	 * in <backend>/blkbackd-failed too, for a blkbackd started later
	 * (bk_vbd_mark_failed) */
	bool failed;
	char failed_why[200];		/* why, with when: "" while !failed */
	bool persistent;		/* this connection uses persistent grants */
	bool keep_state;		/* disconnect for a successor: keep the records */
	bool size_lost;			/* the backing's size cannot be read: reported */
	/*
	 * The backing's size probe (vbd-reports.c, bk_vbd_size_ask): asked
	 * of queue 0's thread, which may wait in it on a backing that
	 * hangs, and answered through that queue's report; never two at
	 * once.  What is out dies with the queues (bk_vbd_disconnect_finish
	 * clears asked and again); the last answer stays.
	 */
	struct {
		bool asked;		/* one is out: queue 0 has it */
		bool again;		/* ask one more once it is answered */
		bool said_slow;		/* its slowness was logged */
		uint64_t gen;		/* its number (d->size_gen) */
		struct timespec when;	/* CLOCK_MONOTONIC: when it was asked */
		/* the last one answered: its number and result, what
		 * blkbackd-ctl resize tells (bk_vbd_size_ask) */
		uint64_t done_gen;
		int rc;
		uint64_t old_sectors, new_sectors;
	} size;
	/* another backend serves it (a ring found served, without our
	 * record of it, or bound to the kernel's xen-blkback): nothing is
	 * written to it and its backing is not opened, until the toolstack
	 * makes it new (backend state Initialising) (vbd.c foreign) */
	bool foreign;
	/* state-change log lines: a guest flapping its state node must not
	 * flood dom0's log (vbd_log_ok) */
	time_t log_window;
	unsigned int log_lines, log_dropped;

	/*
	 * What blkbackd-ctl's list and stats show besides the daemon's own
	 * state, kept here so that answering them reads no xenstore: a
	 * --ctl-group user asking in a loop must not turn into xenstore
	 * round trips on the control thread, per vbd.  The labels are read
	 * when the vbd is found, its vdev and params again when the
	 * toolstack rewrites them (a CD-ROM's media change), the guest's
	 * name on a watch, one per guest (renamed at the end of a migration:
	 * "NAME--incoming" becomes NAME), held by one of its vbds and
	 * handed on when that one goes; the frontend's state each time
	 * vbd.c reads it; the error each time vbd.c writes or clears it.
	 */
	char guest[64];			/* /local/domain/F/name, "" when none */
	char guest_path[48];		/* that node */
	bool guest_watch;		/* this vbd holds the guest's watch */
	char vdev[32];			/* <backend>/dev, "" when none */
	char *params_found;		/* <backend>/params, NULL when none */
	int fe_value;			/* frontend state last read: 1..6, or -1 */
	char error[256];		/* <backend>/error as we wrote it, "" */

	struct bk_dev_config cfg;
	/*
	 * What the frontend was offered (the probe keys, and the backend's
	 * feature-persistent), which its rings are held to: --max-* and
	 * --feature-persistent when we probe it; for a vbd found Connected
	 * (a takeover), what its backend directory says it was offered, so
	 * that a successor started with other options serves the guest what
	 * its predecessor offered (negotiate.c bk_negotiate_offer).
	 */
	struct bk_offer {
		unsigned int max_ring_order, max_queues, max_indirect;
		bool persistent;
	} offer;
	struct bk_store *store;		/* the stack's top, while connected/draining */
	struct bk_claim *claim;		/* on the backing, while connected/draining */
	/* the store's open on a thread of its own, out or finished and not
	 * yet taken (vbd-backing.c, vbd-int.h); NULL when none */
	struct bk_open *open;
	/* a store whose data lives only in this process (memory:), kept
	 * between connections of this vbd as Linux keeps its backing
	 * while the device exists (vbd-backing.c bk_vbd_backing_keep);
	 * the store is dev->store's while connected; NULL when none */
	struct bk_open *kept;
	struct bk_features feat;
	unsigned int nr_queues;
	unsigned int ring_pages;	/* each queue's, as negotiated at connect */
	struct bk_queue *queues[BK_MAX_QUEUES];
	struct bk_stats closed_stats;	/* of queues already destroyed */
};


#endif /* BK_DEV_H */
