/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dmlog.c: reading a Linux dm-log-writes log into crash-log records, so
 * that blkcrash dump, replay, check and fsck judge any backend (kernel
 * xen-blkback, QEMU qdisk, blkbackd) recorded BELOW it by the kernel's
 * "log-writes" device-mapper target (DESIGN-NOTES.md "blkcrash").
 *
 * The format, as the kernel target writes it (drivers/md/dm-log-writes.c,
 * target version 1.1; Documentation/admin-guide/device-mapper/
 * log-writes.rst).  All integers little-endian.  One unit runs through
 * everything: the BLOCK, of the super block's sectorsize bytes (the
 * logical block size of the DATA device: 512, or 4096 on a 4Kn disk).
 * It is NOT always the 512-byte sector of the block layer.
 *
 *   block 0: the super block, zero-padded to one block
 *     0  le64  magic       0x6a736677736872 (DML_MAGIC)
 *     8  le64  version     1
 *    16  le64  nr_entries  entries in the log
 *    24  le32  sectorsize  bytes of one block
 *
 *   block 1 on: nr_entries entries, back to back, each
 *     one block: the entry header, zero-padded
 *       0  le64  sector     first block written on the data device
 *       8  le64  nr_sectors blocks written
 *      16  le64  flags      FLUSH 1, FUA 2, DISCARD 4, MARK 8, METADATA 16
 *      24  le64  data_len   MARK: bytes of its text, which follows the
 *                           header in the same block (not NUL-ended);
 *                           else 0 (or, for DAX, the inline data's
 *                           length, stored in the data blocks below)
 *     then nr_sectors blocks of the data written, except for a DISCARD
 *     (which has none) and a MARK (nr_sectors 0).
 *
 * What an entry means (the order is the target's, not completion's):
 *   - a write without FUA is put aside when it completes and logged only
 *     when a later flush completes: just before that flush's entry if it
 *     completed before the flush was SUBMITTED, else after it.  So a
 *     FLUSH entry makes every WRITE/DISCARD entry before it durable.
 *     Writes never followed by a flush are logged at teardown (dmsetup
 *     remove), after the last flush, then a MARK "dm-log-writes-end".
 *   - a FUA write is logged when it completes: durable by itself.
 *   - a DISCARD is logged like a write without FUA.
 *   - a FLUSH with data (REQ_PREFLUSH on a write) flushes what came
 *     before, then writes its data, durable only with FUA as well: it
 *     becomes two records here, the FLUSH and then the WRITE.
 *   - the super block's nr_entries is rewritten only after FUA and MARK
 *     entries: read a log after "dmsetup remove", whose end mark brings
 *     it up to date.  Entries past nr_entries are not read.
 *
 * Records: WRITE (offset, len in bytes = blocks * sectorsize; hash of
 * the data, as the crash log's, so "check" compares with a guest log),
 * FLUSH (covers = its own seq: everything before it), DISCARD, and
 * CL_MARK.  The header of the result says writeback (durable only when
 * flushed or FUA) and a device size of the highest byte any entry
 * touches: the log does not record the device's size.
 *
 * Hostile input: the block size must be a power of two in 512..65536;
 * unknown flags, a MARK longer than its block, inline data longer than
 * the entry's blocks, and an entry reaching past DML_MAX_DEV are errors;
 * an entry whose header or data runs past the end of the file ends the
 * log (a torn copy), as does nr_entries.  Every size is checked against
 * what is left of the buffer before it is used, so memory and time are
 * bounded by the file's size.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "blkcrash.h"
#include "compiler.h"
#include "log.h"

#define DML_VERSION		1u
#define DML_F_FLUSH		(1u << 0)
#define DML_F_FUA		(1u << 1)
#define DML_F_DISCARD		(1u << 2)
#define DML_F_MARK		(1u << 3)
#define DML_F_METADATA		(1u << 4)
#define DML_F_KNOWN		0x1fu
#define DML_ENTRY_HDR		32u	/* bytes of an entry header */
#define DML_SUPER_HDR		28u	/* bytes of the super block */

static uint64_t
le64_at(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t
le32_at(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Append a zeroed record; NULL on ENOMEM. */
static struct cl_entry *
dml_push(struct cl_log *log, size_t *cap)
{
	struct cl_entry *e;

	if (log->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		void *p = realloc(log->e, ncap * sizeof(*log->e));

		if (!p)
			return NULL;
		log->e = p;
		*cap = ncap;
	}
	e = &log->e[log->n++];
	memset(e, 0, sizeof(*e));
	e->rec.seq = log->n;
	return e;
}

int
dml_parse(struct cl_log *log, const unsigned char *buf, size_t len,
	  const char *name)
{
	uint64_t magic, version, bs, off, i, max_end = 0;
	size_t cap = 0;

	if (len < DML_SUPER_HDR) {
		log_error("%s: not a dm-log-writes log (%zu bytes, shorter than "
			  "its super block)", name, len);
		return -EINVAL;
	}
	magic = le64_at(buf);
	version = le64_at(buf + 8);
	log->entries_super = le64_at(buf + 16);
	bs = le32_at(buf + 24);
	if (magic != DML_MAGIC) {
		log_error("%s: not a dm-log-writes log (magic %#" PRIx64 ")", name,
			  magic);
		return -EINVAL;
	}
	if (version != DML_VERSION) {
		log_error("%s: dm-log-writes log version %" PRIu64 " is not "
			  "supported (only %u)", name, version, DML_VERSION);
		return -EINVAL;
	}
	if (bs < 512 || bs > 65536 || (bs & (bs - 1))) {
		log_error("%s: dm-log-writes block size %" PRIu64 " is not a power "
			  "of two in 512..65536", name, bs);
		return -EINVAL;
	}
	log->block_size = (uint32_t)bs;
	log->hdr.version = (uint32_t)version;
	log->hdr.sector = (uint32_t)bs;
	log->hdr.flags = CRASHLOG_F_WRITEBACK;
	log->hdr.hdr_size = (uint32_t)bs;

	off = bs;		/* the first entry */
	for (i = 0; i < log->entries_super; i++) {
		const unsigned char *h;
		uint64_t sector, nr, flags, dlen, bytes = 0;
		struct cl_entry *e;

		if (off > len || len - off < bs)
			break;	/* torn: no room for the header */
		h = buf + off;
		sector = le64_at(h);
		nr = le64_at(h + 8);
		flags = le64_at(h + 16);
		dlen = le64_at(h + 24);
		if (flags & ~(uint64_t)DML_F_KNOWN) {
			log_error("%s: entry %" PRIu64 ": unknown flags %#" PRIx64,
				  name, i, flags);
			return -EINVAL;
		}
		if (nr > DML_MAX_DEV / bs || sector > DML_MAX_DEV / bs - nr) {
			log_error("%s: entry %" PRIu64 ": blocks %" PRIu64 " +%" PRIu64
				  " of %" PRIu64 " bytes reach past %llu bytes", name,
				  i, sector, nr, bs, DML_MAX_DEV);
			return -EINVAL;
		}
		if ((flags & DML_F_MARK) && dlen > bs - DML_ENTRY_HDR) {
			log_error("%s: entry %" PRIu64 ": mark of %" PRIu64
				  " bytes does not fit its block", name, i, dlen);
			return -EINVAL;
		}
		if (!(flags & (DML_F_MARK | DML_F_DISCARD)) && dlen > nr * bs) {
			log_error("%s: entry %" PRIu64 ": %" PRIu64 " bytes of inline "
				  "data in %" PRIu64 " blocks", name, i, dlen, nr);
			return -EINVAL;
		}
		if (!(flags & DML_F_DISCARD)) {
			bytes = nr * bs;
			if (len - off - bs < bytes)
				break;	/* torn: the data is not all there */
		}
		if (flags & DML_F_MARK) {
			e = dml_push(log, &cap);
			if (!e)
				return -ENOMEM;
			e->rec.type = CL_MARK;
			e->data = h + DML_ENTRY_HDR;
			e->mark_len = (size_t)dlen;
			e->entry = i;
		} else {
			/* a flush first: it covers what came before this entry */
			if (flags & DML_F_FLUSH) {
				e = dml_push(log, &cap);
				if (!e)
					return -ENOMEM;
				e->rec.type = CRASHLOG_FLUSH;
				e->rec.covers = e->rec.seq;
				e->entry = i;
			}
			if ((flags & DML_F_DISCARD) || nr > 0 || !(flags & DML_F_FLUSH)) {
				e = dml_push(log, &cap);
				if (!e)
					return -ENOMEM;
				e->entry = i;
				e->rec.offset = sector * bs;
				e->rec.len = nr * bs;
				if (flags & DML_F_DISCARD) {
					e->rec.type = CRASHLOG_DISCARD;
				} else {
					e->rec.type = CRASHLOG_WRITE;
					e->data = bytes ? h + bs : NULL;
					e->rec.hash = crashlog_hash(h + bs, (size_t)bytes);
				}
				if (flags & DML_F_FUA)
					e->rec.flags |= CRASHLOG_R_FUA | CRASHLOG_R_DURABLE;
				if (e->rec.offset + e->rec.len > max_end)
					max_end = e->rec.offset + e->rec.len;
			}
		}
		off += bs + bytes;
	}
	log->entries_read = i;
	log->hdr.dev_size = max_end;
	log->valid_bytes = off;
	log->ignored_bytes = 0;
	return 0;
}
