/*
 * store.h: storage drivers behind a small ops table (STYLE.md #10).
 *
 * A store is one backing (file, block device, RAM, nothing) opened for
 * one vbd.  I/O is asynchronous: the dataplane thread of each ring queue
 * opens its own bk_store_queue, submits bk_io descriptors and reaps
 * completions when the queue's fd polls readable.
 *
 * Drivers: "file" (regular file or block device, libaio, O_DIRECT),
 * "memory" (RAM, tests), "null" (ring benchmarks).  Wrappers stack on a
 * driver: "record" (blkcrash: logs every host write/flush/discard in
 * completion order) and "volatile" (blkcrash: a disk write cache that a
 * power cut can drop).  A wrapper is a driver whose open() takes the
 * lower store.
 *
 * Units: offsets and lengths in bytes; always multiples of 512.
 *
 * Ownership: a bk_io belongs to the caller; the store holds a pointer to
 * it from submit() until it is handed back by reap().  The iovec buffers
 * must stay valid and untouched for that time.  Read buffers and, for
 * the file driver, all buffers are 4096-byte aligned (O_DIRECT).
 *
 * Threads: bk_store_ops.open/close/probe run on the control thread.
 * A bk_store_queue is used by exactly one thread.  Several queues of one
 * store may run at once (the driver makes that safe).
 *
 * Errors: 0/-errno.  A driver logs nothing on the I/O path; it reports
 * through bk_io.result.  open() logs the failing call with the path, and
 * says why in a short reason for the caller (bk_store_open(), below).
 */
#ifndef BK_STORE_H
#define BK_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct bk_store;
struct bk_store_queue;
struct bk_store_ops;

enum bk_io_op {
	BK_IO_READ,
	BK_IO_WRITE,
	BK_IO_FLUSH,	/* make every completed write durable (fdatasync) */
	BK_IO_DISCARD,	/* punch hole / BLKDISCARD; len bytes at offset */
};

/* WRITE: durable on completion.  Only when features.fua == BK_FUA_NATIVE;
 * other stores complete such a write with -EOPNOTSUPP. */
#define BK_IO_FUA	(1u << 0)
#define BK_IO_SECURE	(1u << 1)	/* DISCARD: BLKSECDISCARD */

struct bk_io {
	enum bk_io_op op;
	unsigned int flags;	/* BK_IO_* */
	uint64_t offset;	/* bytes */
	uint64_t len;		/* bytes (sum of iov for READ/WRITE) */
	struct iovec *iov;	/* READ/WRITE */
	int iovcnt;
	int64_t result;		/* out: len on success, or -errno */
	/*
	 * out: what the host actually did, for the trace: "pwritev",
	 * "pwritev+RWF_DSYNC", "pwritev+fdatasync", "fdatasync",
	 * "fallocate", "BLKDISCARD", "mem"...  Static string.
	 */
	const char *host_action;
	void *opaque;		/* caller's (the request it belongs to) */
};

/* FUA as negotiated once per store at open (DESIGN.md). */
enum bk_fua {
	BK_FUA_NONE,		/* store cannot make a write durable by itself */
	BK_FUA_EMULATED,	/* write, then fdatasync */
	BK_FUA_NATIVE,		/* RWF_DSYNC on the write */
};

/* What the store can honour, probed once at open (STYLE.md #7). */
struct bk_store_features {
	uint64_t size;			/* bytes */
	unsigned int sector_size;	/* logical block size (BLKSSZGET; 512 for files) */
	unsigned int physical_sector_size;
	bool can_flush;			/* fdatasync works (or nothing to flush) */
	bool writeback;			/* has a volatile cache: needs flushes */
	enum bk_fua fua;
	bool can_discard;
	bool can_secure_discard;
	bool direct;			/* O_DIRECT in use (else buffered, logged) */
};

struct bk_store_config {
	const char *path;		/* params node: file or block device */
	bool read_only;			/* mode=r */
	bool writethrough;		/* cache mode: open O_DSYNC, every write durable */
	/* wrappers only: the store below; not owned (closed by the caller
	 * after the wrapper) */
	struct bk_store *lower;
	const struct bk_store_ops *lower_ops;	/* wrappers only: its driver */
	/* wrappers only: what the store below reported at its open() */
	const struct bk_store_features *lower_features;
	const char *record_path;	/* "record" wrapper: log file */
	uint64_t size;			/* "memory"/"null": bytes */
	/*
	 * Driver options, comma-separated, or NULL.  "memory" (tests only):
	 * "fail-flush" (every FLUSH fails with -EIO), "delay-ms=N", "fua=none|emulated|
	 * native", "no-flush" (FLUSH fails with -EOPNOTSUPP), "no-discard",
	 * "refuse-flush"/"refuse-discard" (offered, then -EOPNOTSUPP).
	 */
	const char *options;
	/*
	 * Out, optional: where open() puts a short reason when it fails
	 * (one line without the path, e.g. "size 0 is not a positive
	 * multiple of 512"), NUL-terminated in why_len bytes.  Left as the
	 * caller set it ("") when the errno says it all.  NULL: not wanted.
	 * Drivers write it with bk_store_fail() (store-util.h); callers use
	 * bk_store_open(), which sets it up.
	 */
	char *why;
	size_t why_len;
};

struct bk_store_ops {
	const char *name;

	/* Required.  Open per cfg; fill *features.  0/-errno, logs why. */
	int (*open)(const struct bk_store_config *cfg, struct bk_store **out,
		    struct bk_store_features *features);
	/* Required.  All queues closed first.  Does not flush. */
	void (*close)(struct bk_store *s);

	/* Required.  A per-thread submission queue of depth >= depth. */
	int (*queue_open)(struct bk_store *s, unsigned int depth,
			  struct bk_store_queue **out);
	/* Required.  Waits for everything in flight, then frees. */
	void (*queue_close)(struct bk_store_queue *q);
	/* Required.  Poll for POLLIN: completions are ready to reap. */
	int (*queue_fd)(struct bk_store_queue *q);

	/*
	 * Required.  Submit n I/Os; returns how many were accepted (>= 0;
	 * the rest may be resubmitted later) or -errno if none.
	 * FLUSH covers every write completed before this submit.
	 */
	int (*submit)(struct bk_store_queue *q, struct bk_io **ios, unsigned int n);

	/*
	 * Required.  Hand back up to max completed I/Os into done[] without
	 * blocking.  Returns the count (0 = none ready) or -errno.
	 * queue_fd is level-agnostic: after it polls readable the caller
	 * calls reap until it returns fewer than max (a driver may clear the
	 * fd's readiness on the first call, and returns fewer than max only
	 * when nothing else is ready at that moment).
	 */
	int (*reap)(struct bk_store_queue *q, struct bk_io **done, unsigned int max);

	/*
	 * Optional.  A cheap look, without a system call or side effect:
	 * true when reap would find a completion now.  For a queue thread
	 * that polls briefly before it sleeps; same thread as reap.  A false
	 * "true" only costs a reap that finds nothing.  NULL: the caller does
	 * not poll this store, it waits on queue_fd.
	 */
	bool (*poll)(struct bk_store_queue *q);

	/*
	 * Optional (blkcrash "volatile").  Simulate a power cut: drop what
	 * the model says a cache may lose.  Called from the control thread
	 * on SIGUSR2 right before the daemon exits without draining.
	 */
	void (*power_cut)(struct bk_store *s);
};

extern const struct bk_store_ops bk_store_file_ops;
extern const struct bk_store_ops bk_store_memory_ops;
extern const struct bk_store_ops bk_store_null_ops;
extern const struct bk_store_ops bk_store_record_ops;	/* blkcrash */
extern const struct bk_store_ops bk_store_volatile_ops;	/* blkcrash */

/* Look a driver up by name ("file", "memory", ...).  NULL if unknown. */
const struct bk_store_ops *bk_store_lookup(const char *name);

/*
 * ops->open(cfg, out, features) with a reason on failure: returns what
 * open() returns (0/-errno); on failure why (why_len bytes, > 0) holds
 * the driver's reason, or strerror(-errno) when the driver gave none,
 * never "".  For the device's xenstore error node, which the toolstack
 * shows to the admin who has no access to the daemon's log.
 * cfg->why/why_len are ignored (the wrapper points them at why).
 * Control thread, as open().
 */
int bk_store_open(const struct bk_store_ops *ops, const struct bk_store_config *cfg,
		  struct bk_store **out, struct bk_store_features *features,
		  char *why, size_t why_len);

#endif /* BK_STORE_H */
