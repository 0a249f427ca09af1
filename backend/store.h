/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store.h: blkbackd's storage: drivers behind one checked dispatch.
 *
 * A store is one backing (file, block device, RAM, nothing) opened for
 * one vbd, possibly with wrappers stacked on it (blkcrash's "record"
 * and "volatile").  Everything above the stores -- the vbd state
 * machine that opens them, the dataplane that does I/O on them, and a
 * wrapper calling the store below it -- goes through the functions of
 * this header (store.c), never through a driver's table: store.c checks
 * the contract below on every call, in one place, as nbdkit's
 * server/backend.c does for its plugins.
 *
 * Units: offsets and lengths in bytes, always multiples of 512.
 *
 * I/O is asynchronous.  Each dataplane queue thread opens its own
 * bk_store_queue, submits bk_io descriptors, and reaps completions when
 * the queue's fd polls readable (or when bk_store_poll() says so).
 *
 * Ownership: a bk_io belongs to the caller; the store holds a pointer to
 * it from bk_store_submit() until bk_store_reap() hands it back.  Its
 * iovec buffers must stay valid and untouched for that time.  Buffers
 * are 512-byte aligned (O_DIRECT on a 512-byte logical block device);
 * the dataplane's own buffers are 4096-aligned.
 *
 * Threads: the claims' registry is the control thread's.  A stack is opened on
 * a thread of its own (vbd-backing.c: several vbds' opens may run at
 * once, so a driver's open keeps what it shares with other stores
 * under a lock), and closed on the control thread or on the thread
 * that opened it.  A bk_store_queue is used by exactly one thread at a time.
 * Several queues of one store may run at once; the driver makes that
 * safe.  bk_store_failed() may be read from any thread.
 *
 * Errors: 0/-errno.  Nothing here or in a driver logs on the I/O path
 * (results go back through bk_io.result), with one exception: a call
 * that breaks the contract is a bug in blkbackd, logged once per queue
 * ("store contract: ...") and refused with -EINVAL.  Opening logs the
 * failing call with the path, and gives a one-line reason for the
 * device's xenstore error node (struct bk_store_why).
 */
#ifndef BK_STORE_H
#define BK_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "blkif_ops.h"		/* enum bk_fua */
#include "compiler.h"

struct bk_store;		/* one open layer of a stack (store.c's) */
struct bk_store_queue;		/* one thread's queue on a store (store.c's) */
struct bk_store_driver;

/* ---------------------------------------------------------------- */
/* I/O descriptors.                                                  */
/* ---------------------------------------------------------------- */

enum bk_io_op {
	BK_IO_READ,
	BK_IO_WRITE,
	BK_IO_FLUSH,	/* make every completed write durable (fdatasync) */
	BK_IO_DISCARD,	/* punch hole / BLKDISCARD; len bytes at offset */
};

/* WRITE: durable on completion.  Only on a store whose fua is
 * BK_FUA_NATIVE (the dispatch refuses it elsewhere). */
#define BK_IO_FUA	(1u << 0)
/* DISCARD: BLKSECDISCARD.  Only where can_secure_discard. */
#define BK_IO_SECURE	(1u << 1)

struct bk_io {
	enum bk_io_op op;
	unsigned int flags;	/* BK_IO_* */
	uint64_t offset;	/* bytes; 0 for FLUSH */
	uint64_t len;		/* bytes (sum of iov for READ/WRITE); 0 for FLUSH */
	struct iovec *iov;	/* READ/WRITE */
	int iovcnt;		/* READ/WRITE: 1..IOV_MAX */
	/*
	 * out: READ/WRITE: len on success; FLUSH/DISCARD: 0; or -errno.
	 * Never a short count: a driver that transfers less reports -EIO
	 * (the dispatch turns a short count into -EIO as well).
	 */
	int64_t result;
	/*
	 * out: what the host actually did, for the trace: "pwritev",
	 * "pwritev+RWF_DSYNC", "pwritev+fdatasync", "fdatasync",
	 * "fallocate", "BLKDISCARD", "mem-write"...  A static string, set
	 * by the driver (the dispatch sets "refused" when it refuses one).
	 */
	const char *host_action;
	void *opaque;		/* the caller's (the request it belongs to) */
};

/* ---------------------------------------------------------------- */
/* What a store can honour, probed once at open.                     */
/* ---------------------------------------------------------------- */

struct bk_store_features {
	uint64_t size;			/* bytes, a multiple of 512 */
	unsigned int sector_size;	/* logical block size (BLKSSZGET; 512 for files) */
	unsigned int physical_sector_size;
	bool read_only;			/* opened read-only: WRITE/DISCARD refused */
	bool can_flush;			/* FLUSH works (or has nothing to flush) */
	bool writeback;			/* has a volatile cache: needs flushes */
	enum bk_fua fua;
	bool can_discard;
	bool can_secure_discard;
	bool direct;			/* O_DIRECT in use (else buffered, logged) */
	/*
	 * The kernel interface the store's queues submit through
	 * ("libaio", "io_uring"), for the log and blkbackd-ctl; NULL for a
	 * store without one (memory, null, rbd, the wrappers: see
	 * bk_stack_engine()).  A static string.
	 */
	const char *engine;
	/*
	 * One submit call costs one system call however many I/Os it
	 * carries (io_uring): the caller should hand a whole pass of its
	 * ring to one bk_store_submit() rather than one call per request.
	 */
	bool batch_submit;
};

/*
 * The I/O engine of the file store (blkbackd --io-engine, the disks
 * file's io-engine=).  AUTO: io_uring when io_uring_setup works and
 * takes the operations the store needs (READV, WRITEV, FSYNC), else
 * libaio, said once in the log with the reason.  An explicit engine
 * that cannot be had fails the open (no silent fallback).
 */
enum bk_io_engine {
	BK_IO_ENGINE_AUTO,
	BK_IO_ENGINE_LIBAIO,
	BK_IO_ENGINE_URING,
};

/* "auto", "libaio", "io_uring" into *out: 0, or -EINVAL. */
int bk_io_engine_parse(const char *s, enum bk_io_engine *out);
/* The name bk_io_engine_parse() takes for e. */
const char *bk_io_engine_name(enum bk_io_engine e);

/*
 * Why an open failed, for the device's xenstore "error" node (which the
 * toolstack shows to an admin who may not see the daemon's log): one
 * line, without the key ("params") that the caller puts in front.
 */
struct bk_store_why {
	char msg[256];	/* the error node holds 255 bytes */
	/* set by the driver: arg itself is malformed (bad size, unknown
	 * option), as opposed to a backing that cannot be opened */
	bool bad_arg;
};

/* ---------------------------------------------------------------- */
/* The driver side: implemented by store-*.c, called only by store.c. */
/* ---------------------------------------------------------------- */

struct bk_store_config {
	/*
	 * The driver's own argument, parsed by the driver: what follows
	 * "DRIVER:" in params ("file": a path; "memory"/"null":
	 * "SIZE[,OPTION...]"; blkbackd.8 lists each driver's options).
	 * A wrapper's options, or NULL.
	 */
	const char *arg;
	bool read_only;			/* mode=r */
	bool writethrough;		/* cache=writethrough: every write durable (O_DSYNC) */
	struct bk_store *lower;		/* wrappers only: the store below (not owned) */
	const char *record_path;	/* "record" wrapper: the log file */
	struct bk_store_why *why;	/* out: never NULL when a driver's open runs */
	/*
	 * The control thread's eventfd for "a backing's size may have
	 * changed" (resized from another host: rbd), or NULL.  A driver
	 * whose backing can change size writes 1 to *notify_efd, from any
	 * thread, whenever it may have, and does nothing else about it:
	 * bk_store_size() is asked then.  Borrowed; the fd outlives the
	 * store.
	 */
	const int *notify_efd;
	/*
	 * A directory that outlives the process (blkbackd's --state-dir),
	 * where a driver may leave what the next blkbackd needs to take
	 * over (rbd: the image lock's owner), or NULL.
	 */
	const char *state_dir;
	/* The file store's I/O engine (others ignore it). */
	enum bk_io_engine io_engine;
};

/*
 * A driver's table.  Two kinds of driver:
 *  - asynchronous (file, record, volatile): the queue_* ops, submit and
 *    reap are Required, io is NULL;
 *  - synchronous (memory, null): io is Required and the queue ops are
 *    NULL; store.c gives them its default queue, which calls io() inside
 *    bk_store_submit() and hands the completions back through an
 *    eventfd that polls readable while any are waiting.
 * Every op gets the driver's own handles (the priv pointers it returned
 * from open and queue_open), never store.c's.
 */
struct bk_store_driver {
	const char *name;		/* "file", "memory", ... */
	bool wrapper;			/* stacks on cfg->lower; never named in params */
	/* Its data lives only as long as this process (memory): a
	 * successor that takes such a vbd over fails its requests (vbd.c
	 * connect). */
	bool process_lifetime;

	/*
	 * Required.  Open per cfg; fill *f (all of it).  0/-errno.  On
	 * failure, logs the failing call and fills cfg->why (through
	 * bk_store_fail() or bk_store_bad_arg()).
	 */
	int (*open)(const struct bk_store_config *cfg, void **priv,
		    struct bk_store_features *f);
	/* Required.  Every queue is closed first.  Does not flush. */
	void (*close)(void *priv);

	/*
	 * Optional.  What arg serves, as a string equal for every arg
	 * that names the same backing (a file through a symlink, a block
	 * device by its st_rdev), for the claims below.  0, or -errno when
	 * it cannot tell (the open says why later).
	 */
	int (*identify)(const char *arg, char *id, size_t len);

	/* Asynchronous drivers. */
	int (*queue_open)(void *priv, unsigned int depth, void **qpriv);
	void (*queue_close)(void *qpriv);	/* waits for everything in flight */
	int (*queue_fd)(void *qpriv);		/* POLLIN: completions to reap */
	/* Returns how many were accepted (>= 0; the caller submits the
	 * rest later) or -errno if none.  FLUSH covers every write
	 * completed before this call. */
	int (*submit)(void *qpriv, struct bk_io **ios, unsigned int n);
	/* Up to max completions into done[], never blocking.  After the
	 * fd polls readable the caller reaps until this returns fewer
	 * than max. */
	int (*reap)(void *qpriv, struct bk_io **done, unsigned int max);
	/* Optional.  A cheap look without a system call or side effect:
	 * true when reap would find a completion now. */
	bool (*poll)(void *qpriv);
	/* Optional.  May the caller poll the queue's fd edge-triggered
	 * from now on (before the first submit)?  true: the driver writes
	 * the fd on every completion and reap need not read it, one
	 * system call less per wake-up.  false (or without this op): the
	 * fd is polled level-triggered (the file store's io_uring fd,
	 * readable exactly while its CQ holds a CQE, needs no read). */
	bool (*queue_edge)(void *qpriv);
	/*
	 * Optional, both or neither (io_uring).  wait_setup: the queue's
	 * thread sleeps in wait from now on instead of polling queue_fd:
	 * the driver watches fds[0..n-1] (n <= BK_STORE_WAIT_FDS, pollable
	 * fds the caller keeps open until queue_close) for POLLIN itself.
	 * Before the first submit.  0, or -EOPNOTSUPP (this kernel cannot;
	 * the caller polls queue_fd as before).  n == 0 after a setup, from
	 * the thread that waits, when it ends: stop watching the fds, and
	 * hold none of them any more when it returns.
	 * wait: hand the kernel what submit prepared and, when block,
	 * sleep until a completion is ready to reap or one of the fds polls
	 * readable; *fired gets bit i for each fds[i] seen readable since
	 * the last call.  0, -EINTR (a signal: call again), or -errno (the
	 * driver cannot wait any more).
	 */
	int (*queue_wait_setup)(void *qpriv, const int *fds, unsigned int n);
	int (*queue_wait)(void *qpriv, bool block, unsigned int *fired);

	/* Synchronous drivers: do io now, set io->result and host_action.
	 * Any queue thread; the driver serialises what needs it. */
	void (*io)(void *priv, struct bk_io *io);

	/*
	 * Optional (a backing whose size can change while open).  The
	 * backing's size now, in bytes rounded down to 512, into *bytes;
	 * -errno when it cannot tell or the backing is gone (a removed
	 * file: -ENOENT).  Cheap, no data I/O (fstat, an ioctl), but it may
	 * block where the backing's file system hangs: blkbackd asks it on
	 * a queue thread of the store (after *cfg->notify_efd fired, every
	 * few seconds and on request), never on its control thread.  After
	 * a shrink, the driver fails READ/WRITE past the new end (-EIO):
	 * the dispatch keeps the larger size.  One call at a time, from
	 * any thread, concurrently with the queues' I/O.
	 */
	int (*size)(void *priv, uint64_t *bytes);

	/*
	 * Optional (blkcrash "volatile").  Simulate a power cut: drop what
	 * the model says a cache may lose.  Control thread, right before
	 * the daemon exits without draining.
	 */
	void (*power_cut)(void *priv);
};

extern const struct bk_store_driver bk_store_file_driver;
extern const struct bk_store_driver bk_store_memory_driver;
extern const struct bk_store_driver bk_store_null_driver;
extern const struct bk_store_driver bk_store_record_driver;	/* blkcrash */
extern const struct bk_store_driver bk_store_volatile_driver;	/* blkcrash */
/* a 2008 SATA disk's timing over a file (store-disk2008.c, blkbench) */
extern const struct bk_store_driver bk_store_disk2008_driver;

/*
 * Drivers with a library of their own (rbd: librbd and librados) are
 * modules, so that a dom0 gets those libraries only by installing the
 * module's package: store-NAME.so in BK_STORE_MODULE_DIR (the package's
 * $(pkglibdir)), or in $BLKBACKD_STORE_DIR when set (the build tree's
 * backend/.libs for the tests).  A module defines these two symbols and
 * uses the helpers below, which the program that loads it exports
 * (linked -export-dynamic).  BK_STORE_ABI changes with struct
 * bk_store_driver, struct bk_io, struct bk_store_features, struct
 * bk_store_why or the helpers; a module built for another is refused by
 * name.  (2: bk_store_why's msg grew from 200 to 256 bytes, and the
 * driver gained queue_wait_setup and queue_wait.)
 */
#define BK_STORE_ABI 2
extern const struct bk_store_driver *const bk_store_module_driver;
extern const unsigned int bk_store_module_abi;

/*
 * For a driver's open() that fails: log "who: reason" as an error, put
 * the reason into cfg->why->msg, and return err (a -errno), so that a
 * driver writes "return bk_store_fail(cfg, -EINVAL, ...)".  Preserves
 * errno.
 */
int bk_store_fail(const struct bk_store_config *cfg, int err, const char *who,
		  const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(4, 5);
/*
 * The same for an arg that is malformed (sets why->bad_arg; logs
 * nothing: the caller's error line names the key).  Returns -EINVAL.
 */
int bk_store_bad_arg(const struct bk_store_config *cfg, const char *fmt, ...)
	ATTRIBUTE_FORMAT_PRINTF(2, 3);

/*
 * Helpers for drivers whose arg is "SIZE[,OPTION...]" (memory, null).
 * Splits arg, parses SIZE (bytes, or with a K/M/G/T suffix: powers of
 * 1024) and checks every option word against known (NULL-terminated;
 * a word may carry "=value", which the driver reads with
 * bk_opt_get()).  0, or -EINVAL through bk_store_bad_arg() with the
 * messages blkbackd.8 shows ("bad size ...", "unknown option ...").
 * *opts points into arg (after the first comma) or is NULL.
 */
int bk_store_parse_sized(const struct bk_store_config *cfg, const char *driver,
			 const char *const *known, uint64_t *size, const char **opts);
/* Parse a size as above into bytes.  0 or -EINVAL. */
int bk_parse_size(const char *s, uint64_t *out);
/* True if the comma-separated list opts contains exactly word. */
bool bk_opt_has(const char *opts, const char *word);
/* Value of "key=value" in the comma-separated list, copied into buf;
 * NULL if absent; "" when empty or longer than len - 1 bytes (never a
 * silently truncated value: callers refuse "" as invalid). */
const char *bk_opt_get(const char *opts, const char *key, char *buf, size_t len);

/* ---------------------------------------------------------------- */
/* Opening stores.                                                    */
/* ---------------------------------------------------------------- */

/* The driver called name ("file", "memory", ...; wrappers too), or NULL. */
const struct bk_store_driver *bk_store_lookup(const char *name);
/*
 * The same, loading the module store-NAME.so (above) when no built-in
 * driver has the name; loaded once, never unloaded.  NULL with why->msg
 * saying what is missing: no such driver, a module that cannot be
 * loaded (its package not installed, its libraries missing), or one
 * built for another BK_STORE_ABI.  Any thread.
 */
const struct bk_store_driver *bk_store_find(const char *name, struct bk_store_why *why);
/*
 * The DRIVER names params may start with, "file|memory|null|disk2008|rbd|nbd":
 * the built-in stores (not the wrappers, which options choose) and the
 * modules this project builds, installed or not.  A static string, built
 * once; any thread.
 */
const char *bk_store_param_drivers(void);

/*
 * Open one layer: drv->open(cfg) with cfg->why pointed at why (cleared
 * first; filled with strerror when the driver gave no reason, never "").
 * The features are checked (size a multiple of 512, FUA and secure
 * discard only with what they need) and kept.  0/-errno.
 */
int bk_store_open(const struct bk_store_driver *drv, const struct bk_store_config *cfg,
		  struct bk_store **out, struct bk_store_why *why);
/* Close one layer (not the ones below it).  s may be NULL. */
void bk_store_close(struct bk_store *s);

/* The layer's features, as probed at open.  Valid until close. */
const struct bk_store_features *bk_store_features(const struct bk_store *s);
/* The layer's driver name. */
const char *bk_store_name(const struct bk_store *s);

/*
 * The backing's size now, in bytes (a multiple of 512): asked after a
 * notify_efd polled readable, periodically, and on request (blkbackd:
 * on the vbd's first queue thread, as it may block).  From a
 * driver with a size op (file, rbd); -EOPNOTSUPP for every other store,
 * and for a stack with wrappers (blkcrash's layers keep the size of the
 * open); the driver's -errno when the backing is gone.
 * A grown size also becomes the layer's size for the checks of
 * bk_store_submit(), so that I/O up to the new end is accepted; a
 * shrunk one does not (the checks keep the larger size, and the driver
 * fails I/O past the new end).  One caller at a time, any thread.
 */
int bk_store_size(struct bk_store *s, uint64_t *bytes);

/*
 * The layer's size in bytes now: what it was opened with, or more after
 * bk_store_size() saw the backing grow.  Any thread (a relaxed atomic
 * load): queue threads check requests against it.
 */
uint64_t bk_store_size_now(const struct bk_store *s);

/*
 * True once a FLUSH through any queue of s completed with an error
 * other than -EOPNOTSUPP: acknowledged writes may not be durable, and
 * the vbd must not answer OKAY again (Linux blkback fails the request;
 * blkbackd fails the device: every later request is ERROR).  Sticky
 * until close.  Any thread (acquire load).
 */
bool bk_store_failed(const struct bk_store *s);

/* ---------------------------------------------------------------- */
/* Stacks: what a vbd's "params" opens.                               */
/* ---------------------------------------------------------------- */

/*
 * params, split: "DRIVER:ARG", libxl's "phy:", "aio:" and "raw:"
 * prefixes for a file or block device, or a plain path (file).
 */
struct bk_params {
	const struct bk_store_driver *driver;	/* never a wrapper */
	char *arg;				/* malloc'd */
};

/* 0, -EINVAL (unknown driver; the message is in why) or -ENOMEM. */
int bk_params_parse(const char *params, struct bk_params *out, struct bk_store_why *why);
void bk_params_free(struct bk_params *p);

struct bk_stack_config {
	bool read_only;			/* mode=r */
	bool writethrough;		/* cache=writethrough */
	const char *record_path;	/* --record: stack "record" on the base */
	bool volatile_cache;		/* --cache=volatile: then "volatile" on top */
	const int *notify_efd;		/* the base's cfg->notify_efd, or NULL */
	const char *state_dir;		/* the base's cfg->state_dir, or NULL */
	enum bk_io_engine io_engine;	/* the base's cfg->io_engine */
};

/*
 * Open params' driver and the wrappers c asks for: volatile(record(base)).
 * check_only (at probe, as Linux blkback opens the backing before
 * InitWait): open the base, check it has something to serve, close it,
 * *top = NULL.  On failure why->msg is the whole line for the error
 * node after "params: ", e.g. 'cannot open file store "/x": No such
 * file or directory', 'bad size "abc" for driver memory (bytes, or with
 * K/M/G/T)', 'file store "/x" is empty (0 bytes): nothing to serve',
 * 'cannot stack the record store: ...'.  0/-errno.
 */
int bk_stack_open(const struct bk_params *p, const struct bk_stack_config *c,
		  bool check_only, struct bk_store **top, struct bk_store_why *why);
/* Close top and every layer below it.  top may be NULL. */
void bk_stack_close(struct bk_store *top);
/* The engine of the first layer from top down that has one (the
 * features' engine), or NULL.  top may be NULL. */
const char *bk_stack_engine(const struct bk_store *top);
/* power_cut of every layer, top first (blkcrash, SIGUSR2). */
void bk_stack_power_cut(struct bk_store *top);

/* ---------------------------------------------------------------- */
/* Claims: one writer per backing.                                    */
/* ---------------------------------------------------------------- */

/*
 * Xen's block hotplug script refuses a backing another vbd uses unless
 * every user has it read-only: two writers (or a writer and a reader
 * with its own cache) corrupt a filesystem.  A vbd holds a claim on its
 * backing from the moment it connects until its last request in flight
 * has been answered after it disconnects; a vbd idling in InitWait holds
 * none.  Keyed by the driver's identify(), so a file reached through a
 * symlink is the same backing, and an RBD image by cluster, pool and
 * image.  The registry is the control thread's (bk_claim_id is not:
 * vbd-backing.c asks it on the thread that opens the store).
 */
struct bk_claim {
	struct bk_claim *next;
	char id[256];
	bool read_only;
	bool draining;		/* disconnecting: released once drained */
	bool closing;		/* its store is being closed (bk_vbd_store_close):
				 * never shared, not even by may_share */
	char owner[32];		/* the vbd's name ("F/D"), copied: the claim
				 * may outlive the vbd (bk_vbd_store_close) */
};

struct bk_claims {
	struct bk_claim *head;
};

/*
 * May a vbd open p (read_only or not) now?  0 when no claim conflicts
 * or the driver cannot identify the backing (its open says why);
 * -EBUSY when a connected vbd holds it (*holder: that claim), or
 * -EINPROGRESS when the holder is draining (wait for its release).
 */
int bk_claim_check(const struct bk_claims *reg, const struct bk_params *p,
		   bool read_only, const struct bk_claim **holder);
/* The same, except that a claim for which may_share(claim, arg) says
 * true never conflicts (two vbds of one VM: vbd-backing.c). */
int bk_claim_check_shared(const struct bk_claims *reg, const struct bk_params *p, bool read_only,
			  bool (*may_share)(const struct bk_claim *c, void *arg), void *arg,
			  const struct bk_claim **holder);
/* Take a claim (after bk_claim_check said 0).  NULL when the backing
 * cannot be identified (nothing to hold) or out of memory. */
struct bk_claim *bk_claim_take(struct bk_claims *reg, const struct bk_params *p,
			       bool read_only, const char *owner);
/*
 * What p serves, as the claims key it (the driver's identify(): for a
 * file a stat(), which waits as long as the file system does -- any
 * thread may ask).  0 with id (at most len bytes, NUL included), or
 * -errno: -EOPNOTSUPP when the driver serves no shared backing (RAM).
 */
int bk_claim_id(const struct bk_params *p, char *id, size_t len);
/* bk_claim_check_shared() and bk_claim_take() on an id bk_claim_id()
 * gave; id NULL: not identified (check says 0, take NULL). */
int bk_claim_check_id(const struct bk_claims *reg, const char *id, bool read_only,
		      bool (*may_share)(const struct bk_claim *c, void *arg), void *arg,
		      const struct bk_claim **holder);
struct bk_claim *bk_claim_take_id(struct bk_claims *reg, const char *id, bool read_only,
				  const char *owner);
/* Release a claim; c may be NULL. */
void bk_claim_release(struct bk_claims *reg, struct bk_claim *c);

/* ---------------------------------------------------------------- */
/* Queues and I/O (the checked dispatch).                             */
/* ---------------------------------------------------------------- */

/* A queue of depth >= depth for one thread.  0/-errno. */
int bk_store_queue_open(struct bk_store *s, unsigned int depth, struct bk_store_queue **out);
/* Waits for everything in flight, then frees.  q may be NULL. */
void bk_store_queue_close(struct bk_store_queue *q);
/* Poll for POLLIN: completions are ready to reap.  Owned by the queue. */
int bk_store_queue_fd(const struct bk_store_queue *q);
/*
 * Ask to poll the fd edge-triggered (EPOLLET), before the first submit:
 * true if the driver agreed (it then signals the fd on every completion
 * and reap stops clearing it, so a level-triggered poll would spin);
 * false: keep polling it level-triggered.  The data plane's queue
 * thread asks; other users (tests, the export) poll level-triggered.
 */
bool bk_store_queue_edge(struct bk_store_queue *q);

/* The most fds bk_store_queue_wait_setup() takes. */
#define BK_STORE_WAIT_FDS 4
/*
 * Let the store own the queue thread's sleep (the file store on
 * io_uring with multishot poll, Linux >= 5.13): from now on the thread
 * calls bk_store_wait() where it called epoll_wait() on the queue's fd
 * and fds[], so that one io_uring_enter submits and sleeps.  fds: up to
 * BK_STORE_WAIT_FDS pollable fds (the event channel, the stop eventfd),
 * borrowed until bk_store_queue_close() or the call below.  Before the
 * first submit.  0, or -EOPNOTSUPP: the store cannot (another driver,
 * libaio, an older kernel); poll bk_store_queue_fd() as before.
 * With n == 0 after a setup, from the waiting thread as it ends (nothing
 * in flight): the store stops watching the fds and lets go of them
 * before it returns (the event channel's ports are unbound when its fd
 * is closed, not later); 0 or -errno (it could not: they are let go of
 * at bk_store_queue_close()).
 */
int bk_store_queue_wait_setup(struct bk_store_queue *q, const int *fds, unsigned int n);
/*
 * After bk_store_queue_wait_setup(): submit what bk_store_submit()
 * prepared and, when block, sleep until a completion is ready or one
 * of the fds polls readable (never spins: without block it does not
 * sleep and makes no system call unless there is something to submit).
 * *fired: bit i set for each fds[i] that polled readable since the
 * last call.  Completions are taken with bk_store_reap() afterwards,
 * as after the fd polled readable.  0, -EINTR (call again), or -errno:
 * the store cannot wait any more (the queue must stop).  Queue thread.
 */
int bk_store_wait(struct bk_store_queue *q, bool block, unsigned int *fired);

/*
 * Submit n I/Os; returns how many were accepted (>= 0: the caller
 * submits the rest after a reap) or -errno if none.  Checked first, in
 * order: an io that breaks the contract -- op unknown; READ/WRITE with
 * len 0, offset or len not a multiple of 512, past the store's size or
 * wrapping, iov not summing to len; WRITE or DISCARD on a read-only
 * store; FUA where fua != BK_FUA_NATIVE; FLUSH where !can_flush;
 * DISCARD where !can_discard; SECURE where !can_secure_discard -- ends
 * the batch there: the ios before it are submitted, and when it is the
 * first, the call returns -EINVAL (the caller fails that io) and logs
 * the violation once per queue.  FLUSH covers every write completed
 * before this call.
 */
int bk_store_submit(struct bk_store_queue *q, struct bk_io **ios, unsigned int n);
/*
 * Hand back up to max completed I/Os into done[] without blocking.  The
 * count (0 = none ready) or -errno.  After the fd polls readable, call
 * again until it returns fewer than max.  A READ/WRITE whose driver
 * reported a short count is handed back as -EIO; a FLUSH that failed
 * (not -EOPNOTSUPP) makes bk_store_failed() true.
 */
int bk_store_reap(struct bk_store_queue *q, struct bk_io **done, unsigned int max);
/*
 * A cheap look, no system call: true when bk_store_reap() would find a
 * completion now.  Same thread as reap.  Always false on a store that
 * cannot tell (bk_store_can_poll() is false); wait on the fd there.
 */
bool bk_store_poll(struct bk_store_queue *q);
bool bk_store_can_poll(const struct bk_store *s);
/* I/Os submitted and not yet reaped. */
unsigned int bk_store_inflight(const struct bk_store_queue *q);

#endif /* BK_STORE_H */
