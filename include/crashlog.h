/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * crashlog.h: the blkcrash record log ("what the HOST saw").
 *
 * Written by the "record" store wrapper (backend/store-record.c,
 * blkbackd --record=FILE), read by blkcrash (harness/crash/).  It logs,
 * at the lowest layer of the backend, every host write (with its data),
 * every completed flush (fdatasync), every discard, in host COMPLETION
 * order, each with a sequence number.  The guest side of the story ("what
 * the guest was told") is include/guestlog.h; blkcrash compares the two
 * (DESIGN-NOTES.md "blkcrash: proving durability").
 *
 * Layout.  All integers little-endian, no padding, no alignment promise.
 *
 *   file header (CRASHLOG_HDR_SIZE = 64 bytes)
 *     0  char  magic[8]   "BLKCRLOG"
 *     8  le32  version    CRASHLOG_VERSION (1)
 *    12  le32  hdr_size   64 (readers skip what they do not know)
 *    16  le64  dev_size   bytes of the store being recorded
 *    24  le32  sector     logical sector size of that store, bytes
 *    28  le32  flags      CRASHLOG_F_WRITEBACK: the store below has a
 *                         volatile cache (writes need a FLUSH to become
 *                         durable); without it every completed write is
 *                         durable (writethrough, O_DSYNC)
 *    32  le64  start_ns   CLOCK_MONOTONIC when recording started
 *    40  char  pad[20]    zero
 *    60  le32  crc        crashlog_crc() of bytes 0..59
 *
 *   then records, back to back; each is a header followed by data:
 *     0  le32  magic      CRASHLOG_REC_MAGIC
 *     4  le16  type       CRASHLOG_WRITE / _FLUSH / _DISCARD / _CUT
 *     6  le16  flags      CRASHLOG_R_* below
 *     8  le64  seq        1, 2, 3 ... (one per record, no gaps)
 *    16  le64  offset     bytes (WRITE, DISCARD); 0 otherwise
 *    24  le64  len        bytes (WRITE, DISCARD); 0 otherwise
 *    32  le64  hash       WRITE: crashlog_hash() of the data (the same
 *                         FNV-1a 64 as guestlog_hash(), so a guest's
 *                         acknowledged write and the host's record of it
 *                         compare directly); 0 otherwise
 *    40  le64  covers     FLUSH: every WRITE/DISCARD with seq < covers
 *                         is durable once this record exists (it is the
 *                         next seq at the time the flush was SUBMITTED:
 *                         fdatasync covers what completed before it
 *                         started, not what completed while it ran);
 *                         0 otherwise
 *    48  le64  time_ns    CLOCK_MONOTONIC at completion
 *    56  le32  result     0, or the negative errno the op failed with
 *    60  le32  crc        crashlog_crc() of bytes 0..59 of this header
 *    64  data             WRITE without CRASHLOG_R_FAILED: len bytes
 *
 * Record types:
 *   WRITE    a write completed on the store below.  Durable only when
 *            flagged CRASHLOG_R_DURABLE (FUA, or the store is
 *            writethrough) or once a later FLUSH covers it.
 *   FLUSH    a flush completed.  With CRASHLOG_R_FAILED it made nothing
 *            durable.
 *   DISCARD  a discard completed; replay writes zeros (the content of a
 *            discarded range is unspecified, zeros is one legal outcome).
 *   CUT      a simulated power cut ended the recording (volatile cache
 *            wrapper); informational.
 *
 * Ordering: records are appended when the completion is reaped, before
 * it is handed to the caller, under one lock per log, so seq order is
 * the order in which the backend learnt of completions and every
 * completion the guest was told about is already in the log.
 *
 * Crash safety: each reap batch is appended with one write(2) on an
 * O_APPEND fd.  A torn tail (the recorder was killed mid-append, or the
 * host lost power) shows up as a short record, a bad magic, a header CRC
 * mismatch, a data hash mismatch or a seq gap; readers stop at the first
 * such record and report how many bytes they ignored.  Everything before
 * it is valid.  The log is not fdatasync'ed (it describes the simulated
 * disk, the host itself does not lose power in a simulation).
 *
 * Size: 64 bytes of header per record plus the data: for 4 KiB writes the
 * log holds 1.016x the bytes written, so backing + log = 2.03x.
 */
#ifndef BLK_CRASHLOG_H
#define BLK_CRASHLOG_H

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fnv.h"

#define CRASHLOG_MAGIC		"BLKCRLOG"
#define CRASHLOG_VERSION	1u
#define CRASHLOG_HDR_SIZE	64u
#define CRASHLOG_REC_SIZE	64u
#define CRASHLOG_REC_MAGIC	0x43455243u	/* "CREC" read as le32 */

/* file header flags */
#define CRASHLOG_F_WRITEBACK	(1u << 0)

enum crashlog_type {
	CRASHLOG_WRITE = 1,
	CRASHLOG_FLUSH = 2,
	CRASHLOG_DISCARD = 3,
	CRASHLOG_CUT = 4,
};

/* record flags */
#define CRASHLOG_R_FUA		(1u << 0)	/* WRITE asked for FUA */
#define CRASHLOG_R_DURABLE	(1u << 1)	/* durable on completion */
#define CRASHLOG_R_SECURE	(1u << 2)	/* DISCARD: secure erase */
#define CRASHLOG_R_FAILED	(1u << 3)	/* result < 0; no data */

/* Decoded file header (host byte order). */
struct crashlog_hdr {
	uint32_t version;
	uint32_t hdr_size;
	uint64_t dev_size;
	uint32_t sector;
	uint32_t flags;
	uint64_t start_ns;
};

/* Decoded record header (host byte order). */
struct crashlog_rec {
	uint16_t type;
	uint16_t flags;
	uint64_t seq;
	uint64_t offset;
	uint64_t len;
	uint64_t hash;
	uint64_t covers;
	uint64_t time_ns;
	int32_t result;
};

/*
 * FNV-1a 64 over len bytes (fnv.h): identical to guestlog_hash()
 * (guestlog.h).  Pure; any thread.  Chainable: pass the previous result
 * as h to hash scattered buffers (start with CRASHLOG_HASH_INIT).
 */
#define CRASHLOG_HASH_INIT	BLK_FNV1A64_INIT
static inline uint64_t
crashlog_hash_update(uint64_t h, const void *buf, size_t len)
{
	return blk_fnv1a64_update(h, buf, len);
}

static inline uint64_t
crashlog_hash(const void *buf, size_t len)
{
	return crashlog_hash_update(CRASHLOG_HASH_INIT, buf, len);
}

/* Header and record checksum (the format's "crc" field, a name kept for
 * the format's sake: it is no CRC): the low 32 bits of crashlog_hash().
 * Pure; any thread. */
static inline uint32_t
crashlog_crc(const void *buf, size_t len)
{
	return (uint32_t)crashlog_hash(buf, len);
}

static inline void
crashlog_put16_(unsigned char *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, 2);
}

static inline void
crashlog_put32_(unsigned char *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, 4);
}

static inline void
crashlog_put64_(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, 8);
}

static inline uint16_t
crashlog_get16_(const unsigned char *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return le16toh(v);
}

static inline uint32_t
crashlog_get32_(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return le32toh(v);
}

static inline uint64_t
crashlog_get64_(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return le64toh(v);
}

/* Encode *h into buf[CRASHLOG_HDR_SIZE] (hdr_size is forced to 64). */
static inline void
crashlog_encode_hdr(unsigned char buf[CRASHLOG_HDR_SIZE],
		    const struct crashlog_hdr *h)
{
	memset(buf, 0, CRASHLOG_HDR_SIZE);
	memcpy(buf, CRASHLOG_MAGIC, 8);
	crashlog_put32_(buf + 8, h->version);
	crashlog_put32_(buf + 12, CRASHLOG_HDR_SIZE);
	crashlog_put64_(buf + 16, h->dev_size);
	crashlog_put32_(buf + 24, h->sector);
	crashlog_put32_(buf + 28, h->flags);
	crashlog_put64_(buf + 32, h->start_ns);
	crashlog_put32_(buf + 60, crashlog_crc(buf, 60));
}

/*
 * Decode buf[CRASHLOG_HDR_SIZE].  Returns 0, -EINVAL (not a crash log or
 * corrupt header) or -ENOTSUP (a version this reader does not know).
 */
static inline int
crashlog_decode_hdr(const unsigned char buf[CRASHLOG_HDR_SIZE],
		    struct crashlog_hdr *h)
{
	if (memcmp(buf, CRASHLOG_MAGIC, 8) != 0 ||
	    crashlog_get32_(buf + 60) != crashlog_crc(buf, 60))
		return -EINVAL;
	h->version = crashlog_get32_(buf + 8);
	h->hdr_size = crashlog_get32_(buf + 12);
	h->dev_size = crashlog_get64_(buf + 16);
	h->sector = crashlog_get32_(buf + 24);
	h->flags = crashlog_get32_(buf + 28);
	h->start_ns = crashlog_get64_(buf + 32);
	if (h->version != CRASHLOG_VERSION || h->hdr_size < CRASHLOG_HDR_SIZE)
		return -ENOTSUP;
	return 0;
}

/* Encode *r into buf[CRASHLOG_REC_SIZE] with its magic and CRC. */
static inline void
crashlog_encode_rec(unsigned char buf[CRASHLOG_REC_SIZE],
		    const struct crashlog_rec *r)
{
	crashlog_put32_(buf, CRASHLOG_REC_MAGIC);
	crashlog_put16_(buf + 4, r->type);
	crashlog_put16_(buf + 6, r->flags);
	crashlog_put64_(buf + 8, r->seq);
	crashlog_put64_(buf + 16, r->offset);
	crashlog_put64_(buf + 24, r->len);
	crashlog_put64_(buf + 32, r->hash);
	crashlog_put64_(buf + 40, r->covers);
	crashlog_put64_(buf + 48, r->time_ns);
	crashlog_put32_(buf + 56, (uint32_t)r->result);
	crashlog_put32_(buf + 60, crashlog_crc(buf, 60));
}

/*
 * Decode buf[CRASHLOG_REC_SIZE].  Returns 0, or -EINVAL when the magic or
 * CRC is wrong (a torn or foreign tail).  Does not check the data.
 */
static inline int
crashlog_decode_rec(const unsigned char buf[CRASHLOG_REC_SIZE],
		    struct crashlog_rec *r)
{
	if (crashlog_get32_(buf) != CRASHLOG_REC_MAGIC ||
	    crashlog_get32_(buf + 60) != crashlog_crc(buf, 60))
		return -EINVAL;
	r->type = crashlog_get16_(buf + 4);
	r->flags = crashlog_get16_(buf + 6);
	r->seq = crashlog_get64_(buf + 8);
	r->offset = crashlog_get64_(buf + 16);
	r->len = crashlog_get64_(buf + 24);
	r->hash = crashlog_get64_(buf + 32);
	r->covers = crashlog_get64_(buf + 40);
	r->time_ns = crashlog_get64_(buf + 48);
	r->result = (int32_t)crashlog_get32_(buf + 56);
	return 0;
}

/* Bytes of data that follow a record header. */
static inline uint64_t
crashlog_data_len(const struct crashlog_rec *r)
{
	if (r->type == CRASHLOG_WRITE && !(r->flags & CRASHLOG_R_FAILED))
		return r->len;
	return 0;
}

#endif /* BLK_CRASHLOG_H */
