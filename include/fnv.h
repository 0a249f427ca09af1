/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fnv.h: FNV-1a, 64 bit (Fowler, Noll and Vo's hash; offset basis
 * 0xcbf29ce484222325, prime 0x100000001b3), the one hash the project's
 * logs and checks share: blkfront-test's guest log (guestlog.h),
 * blkbackd's crash log (crashlog.h) and blkcrash, which compares the two.
 *
 * Not cryptographic: it detects lost, stale, torn and misplaced data,
 * not an adversary.  Pure; any thread.
 */
#ifndef BLK_FNV_H
#define BLK_FNV_H

#include <stddef.h>
#include <stdint.h>

#define BLK_FNV1A64_INIT	0xcbf29ce484222325ull

/* Chainable over scattered buffers: start with BLK_FNV1A64_INIT and pass
 * each result back as h. */
static inline uint64_t
blk_fnv1a64_update(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t
blk_fnv1a64(const void *buf, size_t len)
{
	return blk_fnv1a64_update(BLK_FNV1A64_INIT, buf, len);
}

#endif /* BLK_FNV_H */
