/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * disk2008.h: the timing model of the "disk2008" store (store-disk2008.c):
 * a 7200 rpm SATA disk of 2008 with a volatile write cache, as a pure
 * function of the requests' arrival times.
 *
 * The model is the disk's clock: each request's completion time is
 * computed here when it arrives, from the model's own state (where the
 * head is, when the mechanism is free, what the write cache holds), and
 * the store delivers the completion when the host's CLOCK_MONOTONIC
 * reaches it.  Nothing here reads a clock or does I/O, so a test gives
 * it arrival times and checks the completion times and cache states it
 * computes (tests/test-disk2008.c).
 *
 * Times are nanoseconds on one monotonic time line (the store uses
 * CLOCK_MONOTONIC); offsets and lengths are bytes.  One model is one
 * disk: the caller serialises the calls (the store holds a mutex).
 *
 * What is modelled (blkbench(1) "THE 2008 DISK" names the values and
 * where they come from):
 *  - one mechanism that serves media work in arrival order (FIFO: no
 *    reordering, no read priority): reads, writes that go to the media
 *    (cache off, or FUA), and the write-back ("destage") of cached data;
 *  - positioning before a media access: none when it starts where the
 *    last one ended with the mechanism still busy (streaming), or after
 *    a read (read look-ahead); a write that starts where the last one
 *    ended after an idle gap g waits for the platter to come round
 *    (rot - g for g < rot, the mean rot / 2 after that); any other
 *    access pays seek(d) + rot / 2, seek(d) = t2t + (full - t2t) *
 *    sqrt(d / stroke) for a head movement of d bytes;
 *  - transfer at the media rate; the interface moves data at its rate
 *    before a write (into the cache or onto the media) and after a read;
 *    every command costs cmd_ns on top;
 *  - write cache on (wce): a WRITE completes once it is in the cache,
 *    as soon as the cache has room for it (room is made by the destage
 *    of older writes, in order); its destage is queued on the mechanism
 *    behind everything already there.  FLUSH completes once every cached
 *    write is on the media.  A WRITE with FUA goes to the media like a
 *    write with the cache off (behind the queued destage);
 *  - write cache off: a WRITE completes when it is on the media; FLUSH
 *    has nothing to wait for.
 * Not modelled: reads served from the write cache, zoned recording (one
 * media rate over the whole disk), command queueing's reordering (NCQ),
 * TRIM (a 2008 disk has none: the store offers no discard).
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
};

/* The 2008 disk's values (blkbench(1)); stroke is left 0 for the caller
 * (the store: the backing's size, the filesystem filling the disk). */
void bk_d8_default_params(struct bk_d8_params *p);

/* One cached write waiting for, or under, its destage. */
struct bk_d8_extent {
	uint64_t end_ns;	/* when its destage ends: on the media from then */
	uint64_t len;		/* bytes */
};

struct bk_d8_model {
	struct bk_d8_params p;
	bool wce;		/* the write cache is on */
	uint64_t last_t;	/* latest arrival seen: arrivals are made monotone */
	uint64_t media_free;	/* when the mechanism has done its queued work */
	uint64_t head;		/* byte offset where the last media access ended */
	bool last_read;		/* the last media access was a read (look-ahead) */
	/* cached writes in destage order (a ring; destage ends ascend) */
	struct bk_d8_extent *ring;
	uint64_t ring_cap, ring_first, ring_n;
	uint64_t cached;	/* bytes of the ring's extents */
	/* counters, for the store's closing log line */
	uint64_t n_ios, n_seeks, n_rot_waits, n_cache_waits;
	uint64_t busy_ns;	/* mechanism busy time (positioning + transfer) */
};

enum bk_d8_op { BK_D8_READ, BK_D8_WRITE, BK_D8_FUA_WRITE, BK_D8_FLUSH };

/* A model of an idle disk, head at 0, empty cache.  0 or -ENOMEM/-EINVAL
 * (a parameter out of range). */
int bk_d8_init(struct bk_d8_model *m, const struct bk_d8_params *p, bool wce);
void bk_d8_fini(struct bk_d8_model *m);

/*
 * A request arrives at t_ns (made no earlier than the last arrival):
 * returns when it completes.  off/len: bytes (0 for FLUSH).  Returns 0
 * only when out of memory for the cache's bookkeeping (the caller fails
 * the request; the model is unchanged).
 */
uint64_t bk_d8_submit(struct bk_d8_model *m, uint64_t t_ns, enum bk_d8_op op,
		      uint64_t off, uint64_t len);

/* Bytes in the write cache not yet on the media at time t_ns (>= every
 * arrival so far).  Pure. */
uint64_t bk_d8_dirty_at(const struct bk_d8_model *m, uint64_t t_ns);

/* The positioning time of an access at off, for tests: seek(|off -
 * head|) + rot / 2, or 0 when off == head. */
uint64_t bk_d8_seek_ns(const struct bk_d8_params *p, uint64_t distance);

#endif /* BK_DISK2008_H */
