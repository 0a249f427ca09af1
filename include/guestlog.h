/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * guestlog.h: the guest-side acknowledgement log ("what the guest was
 * told"), written by blkfront-test (verify --log FILE, export --log FILE)
 * and read by blkcrash, the power-cut checker (DESIGN-NOTES.md
 * "blkcrash: proving durability").
 *
 * The backend's recording store logs what the HOST saw; this log says
 * what the GUEST was promised.  A power cut is survivable exactly when
 * every promise in this log that was covered by an acknowledged flush is
 * kept on the backing store.
 *
 * Text, one record per line, fields separated by one space, numbers in
 * decimal unless noted, lines appended in the order the acknowledgements
 * reached the guest (completion order, not submission order).  The file
 * is line-buffered and fflush()ed after every record, so a SIGKILLed
 * frontend leaves a log that is complete up to its last full line; a
 * checker ignores a trailing partial line.
 *
 *   blkfront-guestlog 1                    first line: magic and version
 *   W <seq> <sector> <nr_sectors> <hash> <fua> [<issued_after>]
 *        a write was acknowledged BLKIF_RSP_OKAY.  sector and nr_sectors
 *        are 512-byte units.  hash = guestlog_hash() of the nr_sectors*512
 *        bytes written, 16 lowercase hex digits.  fua is 1 when the write
 *        itself was durable on acknowledgement (a WRITE_BARRIER with
 *        data), else 0.  issued_after (optional, readers accept 6 or 7
 *        fields): the seq of the last record written to this log BEFORE
 *        the write request was put on the ring (0 if none).  With it,
 *        blkcrash check knows that a write with issued_after >= g was
 *        sent after record g was acknowledged, so its arrival on the
 *        host bounds when the guest was told g: a flush acknowledged
 *        before its fdatasync completed is caught.  Without it only
 *        "durable by the end of the host log" can be checked.
 *   F <seq> <covers>
 *        a flush (FLUSH_DISKCACHE or WRITE_BARRIER) was acknowledged
 *        OKAY.  covers = the seq of the last W record that had been
 *        written to this log BEFORE the flush request was put on the ring
 *        (0 if none).  Promise: every W with seq <= covers is durable.
 *        W records acknowledged while the flush was in flight are NOT
 *        covered by it (blkif.h: a flush covers writes that completed
 *        before it was issued).
 *   E <seq> <op> <sector> <nr_sectors> <status>
 *        a write or flush completed with status != OKAY (op is "write",
 *        "flush" or "barrier"; status the blkif number, e.g. -1, -2).
 *        Nothing was promised; informational.
 *
 * seq numbers every record (W, F, E) from 1, strictly increasing by one
 * per line, so a lost line is detectable.  A FLUSH_DISKCACHE that carries
 * data logs its F (the flush of earlier writes happens first, as Linux blkback's
 * preflush)
 * and then a W with fua=0 for its data.  A WRITE_BARRIER with data logs
 * F then W with fua=1.
 *
 * Overlaps: writes may overlap earlier ones (a filesystem rewrites
 * blocks).  The expected content of a sector after a crash is that of
 * the latest W covering it that is promised durable, or of any later
 * acknowledged-or-in-flight write; a checker that wants byte-exact
 * answers checks a W only where no later W overlaps it.  blkfront-test
 * verify writes whole bs-sized, bs-aligned blocks, so its overlaps are
 * always whole records.
 */
#ifndef BLK_GUESTLOG_H
#define BLK_GUESTLOG_H

#include <stddef.h>
#include <stdint.h>

#include "fnv.h"

#define GUESTLOG_MAGIC		"blkfront-guestlog"
#define GUESTLOG_VERSION	1

/* The hash of a block's data in the log: FNV-1a 64 (fnv.h), as the
 * crash log's, so blkcrash can compare the two.  Pure, any thread. */
static inline uint64_t
guestlog_hash(const void *buf, size_t len)
{
	return blk_fnv1a64(buf, len);
}

#endif /* BLK_GUESTLOG_H */
