/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disk2008.h: the timing model of the "disk2008" store (store-disk2008.c):
 * a 7200 rpm SATA disk of 2008 with a volatile write cache, as a pure
 * function of the requests' arrival times.
 *
 * The model is the disk's clock: each request's completion time is
 * computed here from the model's own state (where the head is, when the
 * mechanism is free, what the write cache holds, what else is queued), and
 * the store delivers the completion when the host's CLOCK_MONOTONIC
 * reaches it.  Nothing here reads a clock or does I/O, so a test gives
 * it arrival times and checks the completion times and cache states it
 * computes (tests/test-disk2008.c).
 *
 * Times are nanoseconds on one monotonic time line (the store uses
 * CLOCK_MONOTONIC); offsets and lengths are bytes.  One model is one
 * disk: the caller serialises the calls (the store holds a mutex).
 *
 * The model is event-driven: requests wait in the disk's queue until the
 * mechanism takes them, and the one it takes is decided when it becomes
 * free, among those that have arrived by then, so a completion time is
 * known only once the model has been advanced to the moment the request
 * is dispatched (bk_d8_advance).  The caller advances it to "now" on
 * every arrival and whenever bk_d8_next_event() comes round.
 *
 * What is modelled (blkbench(1) "THE 2008 DISK" names the values and
 * where they come from):
 *  - one mechanism; the disk's queue (NCQ) is served shortest
 *    positioning time first: of the accesses that have arrived when the
 *    mechanism is free, the one it can start soonest (seek plus the
 *    wait for its sector) -- reads, writes that go to the media (cache
 *    off, or FUA) and the write-back ("destage") of cached writes alike;
 *    one that has waited more than p.max_wait_ns (3 s) is taken first
 *    (no starvation); else, when SPTF would take a destage, a read
 *    that has waited more than p.read_wait_ns (25 ms) is taken instead,
 *    the oldest such (the host waits on its reads, on no destage);
 *  - positioning before a media access: none when it starts where the
 *    last one ended with the mechanism still busy (streaming), or for a
 *    read that starts where one of the last 8 reads ended (read
 *    look-ahead into the cache's segments: the drive read on while it
 *    was there; the transfer is still charged, the seek is not); else
 *    seek(d) = t2t + (full - t2t) * sqrt(d / stroke) for a head movement
 *    of d bytes (none for d = 0), then the wait for the sector: the
 *    platter's phase at time t is t mod rot, and the sector at byte x
 *    passes under the head at (x mod track) / track of a turn, track
 *    being the bytes one turn carries at the media rate (so a write that
 *    continues the last one after an idle gap g waits rot - g);
 *  - transfer at the media rate; the interface moves data at its rate
 *    before a write (into the cache or onto the media) and after a read;
 *    every command costs cmd_ns on top;
 *  - write cache on (wce): a WRITE completes once it is in the cache,
 *    as soon as the cache has room for it: its bytes, and an entry of
 *    p.cache_writes (256) whatever its size (writes wait for room in
 *    arrival order; room is made when a destage ends), and its destage
 *    joins the disk's queue.  A FLUSH completes once every write cached
 *    before it arrived is on the media.  A WRITE with FUA goes to the
 *    media like a write with the cache off;
 *  - write cache off: a WRITE completes when it is on the media; FLUSH
 *    has nothing to wait for.  With p.wt_buf set, the disk takes a
 *    write's data (and so can queue the write for the media) only while
 *    the writes it holds -- taken, not yet on the media, the one being
 *    written included -- come to at most wt_buf bytes (one is always
 *    taken when it holds none); of the writes waiting for that, the one
 *    that continues the last write taken goes first (the drive streams
 *    on), else the oldest, and the oldest once it has waited more than
 *    p.max_wait_ns.  A
 *    write taken only when the mechanism is done with the last one
 *    crosses the interface first, so the head has passed its sector and
 *    it waits nearly a turn.
 * Not modelled: reads served from the write cache, zoned recording (one
 * media rate over the whole disk), TRIM (a 2008 disk has none: the store
 * offers no discard).
 */
#ifndef BK_DISK2008_H
#define BK_DISK2008_H

#include <stdbool.h>
#include <stdint.h>

struct bk_d8_params {
	uint64_t stroke;	/* bytes a full-stroke seek crosses (> 0) */
	uint64_t media_bps;	/* sequential media rate, bytes per second (> 0) */
	uint64_t iface_bps;	/* interface rate, bytes per second (> 0) */
	uint64_t t2t_ns;	/* track-to-track seek */
	uint64_t full_ns;	/* full-stroke seek (>= t2t_ns) */
	uint64_t rot_ns;	/* one revolution */
	uint64_t cmd_ns;	/* per-command overhead */
	uint64_t cache_bytes;	/* the write cache (> 0) */
	/* cache off: the bytes of writes whose data the disk holds at once
	 * (taken from the host, not yet on the media, the one being written
	 * included); 0: no limit */
	uint64_t wt_buf;
	/* an access that has waited longer than this is taken before any
	 * other (the queue's starvation bound, > 0) */
	uint64_t max_wait_ns;
	/* cache on: the writes the cache holds at most, whatever their
	 * size (its entries); 0: bytes only */
	uint64_t cache_writes;
	/* cache on: a host read that has waited longer than this is taken
	 * before the destage the queue would take next (the destage is
	 * the drive's background work); 0: never */
	uint64_t read_wait_ns;
};

/* The 2008 disk's values (blkbench(1)): stroke 250 GB (the store puts
 * its backing at the start of such a disk). */
void bk_d8_default_params(struct bk_d8_params *p);

enum bk_d8_op { BK_D8_READ, BK_D8_WRITE, BK_D8_FUA_WRITE, BK_D8_FLUSH };

/*
 * One request, owned by the caller from bk_d8_submit() until the model
 * hands it back through bk_d8_take() with done_ns set (or internal: a
 * destage, owned by the model).
 */
struct bk_d8_job {
	struct bk_d8_job *next;	/* the model's lists */
	enum bk_d8_op op;
	uint64_t off, len;	/* bytes; 0 for FLUSH */
	void *opaque;		/* the caller's */
	/* the model's */
	uint64_t arrive, ready, done_ns;
	uint64_t seq;		/* destage: creation order; flush: the first not covered */
	uint64_t nwait;		/* flush: destages it still waits for */
	bool destage;
};

struct bk_d8_model {
	struct bk_d8_params p;
	bool wce;		/* the write cache is on */
	uint64_t now;		/* the model's clock: latest time advanced to */
	uint64_t media_free;	/* when the mechanism ends its current access */
	/* the access under way (ends at media_free): a destage, or
	 * &busy_mark for the caller's (already handed back), or NULL */
	struct bk_d8_job *cur;
	struct bk_d8_job busy_mark;
	uint64_t head;		/* byte offset where the last media access ended */
	bool last_read;		/* the last media access was a read (look-ahead) */
	/* where the last BK_D8_STREAMS reads ended: the read cache's
	 * segments, filled by look-ahead (a round robin) */
	uint64_t stream_end[8];
	unsigned int stream_next;
	uint64_t next_seq;
	struct bk_d8_job *queue;	/* media accesses waiting (unordered) */
	struct bk_d8_job *room, **room_tail;	/* cache writes waiting for room, FIFO */
	struct bk_d8_job *flushes;	/* flushes waiting for the destage */
	struct bk_d8_job *known, **known_tail;	/* done_ns set: for bk_d8_take */
	/* cache off with p.wt_buf: writes whose data the disk has not taken
	 * yet (in arrival order), the bytes it holds, and those of the
	 * access under way */
	struct bk_d8_job *wt_wait, **wt_tail;
	uint64_t wt_held, cur_wt_len;
	uint64_t wt_end;	/* where the last write taken ends */
	uint64_t cached;	/* bytes in the cache not yet destaged */
	uint64_t ndestage;	/* destages queued or under way */
	/* counters, for the store's closing log line and the tests */
	uint64_t n_ios, n_seeks, n_rot_waits, n_cache_waits;
	uint64_t n_starved;	/* accesses taken oldest first (waited > max_wait_ns) */
	uint64_t n_reads_first;	/* reads taken before a destage (waited > read_wait_ns) */
	uint64_t busy_ns;	/* mechanism busy time (positioning + transfer) */
};

/* A model of an idle disk, head at 0, empty cache, clock at 0.  0 or
 * -EINVAL (a parameter out of range). */
int bk_d8_init(struct bk_d8_model *m, const struct bk_d8_params *p, bool wce);
/* Frees the model's own destages; the caller's jobs are the caller's. */
void bk_d8_fini(struct bk_d8_model *m);

/*
 * Run the model up to time t (no-op if t is not later than its clock):
 * dispatch what the mechanism takes until then, finish destages, admit
 * writes to the cache, complete flushes.  Jobs whose completion time
 * became known go to bk_d8_take().  0 or -ENOMEM (a destage could not
 * be queued; the model is then unchanged past the failing write).
 */
int bk_d8_advance(struct bk_d8_model *m, uint64_t t);
/*
 * A request arrives at t (made no earlier than the model's clock; the
 * model is advanced to it first).  0 or -ENOMEM.
 */
int bk_d8_submit(struct bk_d8_model *m, uint64_t t, struct bk_d8_job *j);
/* The next job whose done_ns is known (in the order they became known),
 * or NULL. */
struct bk_d8_job *bk_d8_take(struct bk_d8_model *m);
/* When the model next has something to decide (a dispatch, the end of
 * the access under way), or UINT64_MAX if nothing is waiting. */
uint64_t bk_d8_next_event(const struct bk_d8_model *m);

/* Bytes in the write cache not yet on the media, at the model's clock. */
static inline uint64_t
bk_d8_cached(const struct bk_d8_model *m)
{
	return m->cached;
}

/* The seek time for a head movement of distance bytes (0 for 0). */
uint64_t bk_d8_seek_ns(const struct bk_d8_params *p, uint64_t distance);

#endif /* BK_DISK2008_H */
