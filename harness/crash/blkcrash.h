/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkcrash.h: the pieces of blkcrash (private to harness/crash/).
 *
 *   cl_*     reading a crash log (include/crashlog.h) and deciding, for
 *            every record, from which point on it is durable
 *   dml_*    reading a Linux dm-log-writes log instead (dmlog.c), into
 *            the same records, so every command works on both
 *   img_*    building crash images: a working image file plus the seq
 *            that last wrote each 512-byte sector, so records can be
 *            applied in any order and the newest always wins
 *   gl_*     reading a guest log (include/guestlog.h)
 *   check_*  the durability contract between the two logs
 *
 * Units: bytes for offsets and lengths unless a name says sectors.
 * All functions return 0 (or a count) / -errno, and log why on error
 * (log_error names the file), unless a comment says otherwise.
 */
#ifndef BLKCRASH_H
#define BLKCRASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "crashlog.h"

#define CL_NEVER	UINT64_MAX	/* durable_at of a record never made durable */

/*
 * Record type of a dm-log-writes MARK (a named point, "dmsetup message
 * DEV 0 mark NAME"): only in memory, never in a crash log file.  It
 * writes nothing; its text is data[0 .. mark_len).
 */
#define CL_MARK		0x100

/* Where a log came from (the file's magic says; --format forces one). */
enum cl_format {
	CL_FMT_AUTO = 0,	/* by the magic of the file */
	CL_FMT_CRASHLOG,	/* blkbackd --record (include/crashlog.h) */
	CL_FMT_DMLOG,		/* Linux dm-log-writes (dmlog.c) */
};

/* One record of a crash log, decoded, with where its data is. */
struct cl_entry {
	struct crashlog_rec rec;
	const unsigned char *data;	/* WRITE: rec.len bytes in the mapping */
	/*
	 * The seq of the record after which this WRITE/DISCARD is durable:
	 * its own seq (FUA / writethrough), the seq of the first successful
	 * FLUSH that covers it, or CL_NEVER.
	 */
	uint64_t durable_at;
	/* dm-log-writes: index of the log entry this record came from
	 * (0-based, as xfstests' replay-log counts); crash log: seq - 1 */
	uint64_t entry;
	size_t mark_len;		/* CL_MARK: bytes of text at data */
};

struct cl_log {
	struct crashlog_hdr hdr;
	struct cl_entry *e;		/* e[i].rec.seq == i + 1 */
	size_t n;
	uint64_t nflush;		/* successful FLUSH records */
	uint64_t valid_bytes;		/* header + every valid record */
	uint64_t ignored_bytes;		/* torn or garbage tail */
	/* crash log only: reading stopped at damage (at valid_bytes) that
	 * whole valid records follow: corrupt in the middle, not torn.
	 * corrupt_seq is the seq of the first such record (0: none, the
	 * ignored bytes are a torn tail), corrupt_next_off its offset. */
	uint64_t corrupt_seq;
	uint64_t corrupt_next_off;
	enum cl_format format;		/* CRASHLOG or DMLOG, never AUTO */
	/* dm-log-writes only (0 for a crash log): */
	uint32_t block_size;		/* the super's sectorsize, bytes */
	uint64_t entries_super;		/* nr_entries the super block claims */
	uint64_t entries_read;		/* entries read (< entries_super: torn) */
	void *map;
	size_t map_len;
};

/*
 * Map and validate the log at path.  Reading stops at the first record
 * that is short, has a bad magic/CRC/data hash or a seq out of order: it
 * and what follows are counted in ignored_bytes (a torn tail), never an
 * error.  If a whole valid record with a later seq follows that damage,
 * the log is corrupt in the middle: corrupt_seq says so (the callers that
 * judge the backend by the log refuse it).  -EINVAL if the file header
 * itself is bad.  Caller frees with cl_log_close().
 */
int cl_log_open(const char *path, struct cl_log **out);
/*
 * The same for a given format: CL_FMT_AUTO looks at the magic (a crash
 * log's "BLKCRLOG", or dm-log-writes' le64 magic), anything else is an
 * error.  A dm-log-writes log is read by dml_parse() (below).
 */
int cl_log_open_fmt(const char *path, enum cl_format fmt, struct cl_log **out);
void cl_log_close(struct cl_log *log);

/* "crash log" / "dm-log-writes log" for printing. */
const char *cl_format_name(enum cl_format fmt);

/* Fill durable_at of every record and count nflush (after decoding). */
void cl_finish(struct cl_log *log);

/*
 * Decode the dm-log-writes log in buf[0 .. len) into log (which must be
 * zeroed, format and map left to the caller; log->e[].data point into
 * buf, which must outlive log).  See dmlog.c for the format and how it
 * maps to records.  Every count and size in the log is bounded by len
 * and by DML_MAX_DEV before it is used.  A log that ends before the
 * super block's nr_entries (a torn copy) is not an error: the entries
 * read are kept, log->entries_read < log->entries_super says so.
 * Returns 0, or -EINVAL (not a dm-log-writes log, unknown version,
 * impossible entry; a message naming name and the entry is logged),
 * -ENOMEM.  On error log->e may hold records: cl_log_close() frees them.
 */
int dml_parse(struct cl_log *log, const unsigned char *buf, size_t len,
	      const char *name);

/* dm-log-writes: the le64 magic at byte 0 of the super block */
#define DML_MAGIC	0x6a736677736872ull
/* largest device (bytes) a dm-log-writes log may describe here: bounds
 * the per-sector tables of img_* and check_* against a hostile log */
#define DML_MAX_DEV	(1ull << 40)

/* "WRITE", "FLUSH", ... for printing. */
const char *cl_type_name(unsigned int type);

/*
 * A crash point: the image as the disk could hold it if power was cut
 * right after record upto: every record <= upto that is durable by then,
 * plus those not yet durable that the subset picks.
 */
struct cl_point {
	uint64_t upto;			/* record seq, 0 = before the first */
	bool subset;			/* false: durable records only */
	uint64_t seed;			/* subset: each pick has p = 1/2 */
	bool all;			/* subset: pick every one (the host's view) */
};

/* Does the subset of point p include the (not yet durable) record seq? */
bool cl_point_picks(const struct cl_point *p, uint64_t seq);

/* ---- images ---- */

struct img;

/*
 * Open path as the working image of log (creating it, sparse zeros of
 * the log's device size, when it does not exist; it must be at least
 * that big otherwise).  The image must hold what the store held when
 * recording started.
 */
int img_open(const char *path, const struct cl_log *log, struct img **out);
/* Close; 0 or -errno (fsync'ed first when sync is true). */
int img_close(struct img *im, bool sync);

/*
 * Bring the image to point p.  Points must come in increasing upto
 * order: durable records are applied for good, the subset of each point
 * is applied with an undo log that img_undo() rolls back.  Returns the
 * number of records the subset added (>= 0) or -errno.
 */
int img_goto(struct img *im, const struct cl_log *log, const struct cl_point *p);
/* Roll the current subset back (the image is durable-only again). */
int img_undo(struct img *im);
/* Keep the current subset for good (forget its undo log). */
void img_commit(struct img *im);

/* ---- guest log ---- */

enum gl_type { GL_WRITE, GL_FLUSH, GL_ERROR };

struct gl_entry {
	enum gl_type type;
	uint64_t seq;
	uint64_t sector, nr;		/* W, E: 512-byte sectors */
	uint64_t hash;			/* W */
	bool fua;			/* W: durable on acknowledgement */
	uint64_t covers;		/* F */
	/* W: seq of the last record logged before it was issued, or
	 * GL_NO_ISSUE when the log does not say (optional 7th field) */
	uint64_t issued_after;
};
#define GL_NO_ISSUE	UINT64_MAX

struct gl_log {
	struct gl_entry *e;		/* e[i].seq == i + 1 */
	size_t n;
	bool has_issue_order;		/* every W has issued_after */
	uint64_t ignored_lines;		/* trailing partial line */
};

int gl_log_open(const char *path, struct gl_log **out);
void gl_log_close(struct gl_log *gl);

/* ---- the contract check ---- */

struct check_result {
	uint64_t writes_promised;	/* guest W covered by an acked flush/FUA */
	uint64_t writes_lost;		/* ... not durable by the deadline */
	uint64_t writes_superseded;	/* ... not, but overwritten in time */
	uint64_t writes_unmatched;	/* acked W with no host record at all */
	uint64_t host_unacked;		/* host writes no guest W matches */
	uint64_t flushes;		/* guest F records */
};

/*
 * Check that every guest write promised durable (covered by an
 * acknowledged flush, or FUA) was durable on the host log before the
 * guest could have been told so, printing one line per violation to
 * stdout (at most max_report, 0 = all).  Returns 0 when the logs could be
 * compared (look at *res for violations), -errno otherwise.
 */
int check_logs(const struct cl_log *log, const struct gl_log *gl,
	       struct check_result *res, unsigned int max_report, bool verbose);

#endif /* BLKCRASH_H */
