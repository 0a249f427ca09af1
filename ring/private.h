/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ring/private.h: libblkring internals, shared by ring.c, request.c,
 * protocol.c, the unit tests and the fuzz harness.  Not installed.
 *
 * The x86_32-abi and x86_64-abi wire layouts live here because Xen's
 * public headers only describe the build's native layout: a 64-bit dom0
 * serving a 32-bit guest (or the other way round) must read the guest's
 * layout.  Linux xen-blkback (common.h) and QEMU (xen_blkif.h) carry the
 * same two layouts.  All of them are packed with explicit padding, so
 * they are the same whatever compiler or architecture builds them; the
 * static_asserts below pin every size and offset.
 *
 * The native layout is Xen's own struct blkif_request & co., never
 * redefined here.
 */
#ifndef BLK_RING_PRIVATE_H
#define BLK_RING_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "compiler.h"
#include "barrier.h"	/* before <xen/io/ring.h> */
#include <xen/xen.h>
#include <xen/io/ring.h>
#include <xen/io/blkif.h>

#include "blkring.h"

/* ---- x86_32-abi: i386 alignment (uint64_t aligned to 4 bytes) ---- */

struct blkif_x86_32_request {
	uint8_t operation;
	uint8_t nr_segments;
	blkif_vdev_t handle;
	uint64_t id;				/* offset 4 */
	blkif_sector_t sector_number;		/* offset 12 */
	struct blkif_request_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
} __attribute__((__packed__));			/* 108 bytes */

struct blkif_x86_32_request_discard {
	uint8_t operation;
	uint8_t flag;				/* BLKIF_DISCARD_SECURE */
	blkif_vdev_t handle;
	uint64_t id;				/* offset 4 */
	blkif_sector_t sector_number;		/* offset 12 */
	uint64_t nr_sectors;			/* offset 20 */
} __attribute__((__packed__));			/* 28 bytes */

struct blkif_x86_32_request_indirect {
	uint8_t operation;
	uint8_t indirect_op;
	uint16_t nr_segments;
	uint64_t id;				/* offset 4 */
	blkif_sector_t sector_number;		/* offset 12 */
	blkif_vdev_t handle;			/* offset 20 */
	uint16_t _pad1;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST]; /* 24 */
	uint64_t _pad2;				/* i386's 64-byte alignment */
} __attribute__((__packed__));			/* 64 bytes */

struct blkif_x86_32_response {
	uint64_t id;
	uint8_t operation;			/* offset 8 */
	uint8_t _pad;
	int16_t status;				/* offset 10 */
} __attribute__((__packed__));			/* 12 bytes */

/* ---- x86_64-abi: natural alignment ---- */

struct blkif_x86_64_request {
	uint8_t operation;
	uint8_t nr_segments;
	blkif_vdev_t handle;
	uint32_t _pad1;
	uint64_t id;				/* offset 8 */
	blkif_sector_t sector_number;		/* offset 16 */
	struct blkif_request_segment seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
} __attribute__((__packed__));			/* 112 bytes */

struct blkif_x86_64_request_discard {
	uint8_t operation;
	uint8_t flag;
	blkif_vdev_t handle;
	uint32_t _pad1;
	uint64_t id;				/* offset 8 */
	blkif_sector_t sector_number;		/* offset 16 */
	uint64_t nr_sectors;			/* offset 24 */
} __attribute__((__packed__));			/* 32 bytes */

struct blkif_x86_64_request_indirect {
	uint8_t operation;
	uint8_t indirect_op;
	uint16_t nr_segments;
	uint32_t _pad1;
	uint64_t id;				/* offset 8 */
	blkif_sector_t sector_number;		/* offset 16 */
	blkif_vdev_t handle;			/* offset 24 */
	uint16_t _pad2;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST]; /* 28 */
	uint32_t _pad3;
} __attribute__((__packed__));			/* 64 bytes */

struct blkif_x86_64_response {
	uint64_t id;
	uint8_t operation;			/* offset 8 */
	uint8_t _pad1;
	int16_t status;				/* offset 10 */
	uint32_t _pad2;
} __attribute__((__packed__));			/* 16 bytes */

DEFINE_RING_TYPES(blkif_x86_32, struct blkif_x86_32_request,
		  struct blkif_x86_32_response);
DEFINE_RING_TYPES(blkif_x86_64, struct blkif_x86_64_request,
		  struct blkif_x86_64_response);

#define BLKIF_X86_32_REQ_SIZE	108
#define BLKIF_X86_32_RSP_SIZE	12
#define BLKIF_X86_64_REQ_SIZE	112
#define BLKIF_X86_64_RSP_SIZE	16

static_assert(sizeof(struct blkif_request_segment) == 8, "segment");
static_assert(sizeof(struct blkif_x86_32_request) == BLKIF_X86_32_REQ_SIZE, "x86_32 req");
static_assert(offsetof(struct blkif_x86_32_request, nr_segments) == 1, "x86_32 nr");
static_assert(offsetof(struct blkif_x86_32_request, handle) == 2, "x86_32 handle");
static_assert(offsetof(struct blkif_x86_32_request, id) == 4, "x86_32 id");
static_assert(offsetof(struct blkif_x86_32_request, sector_number) == 12, "x86_32 sector");
static_assert(offsetof(struct blkif_x86_32_request, seg) == 20, "x86_32 seg");
static_assert(sizeof(struct blkif_x86_32_request_discard) == 28, "x86_32 discard");
static_assert(offsetof(struct blkif_x86_32_request_discard, flag) == 1, "x86_32 flag");
static_assert(offsetof(struct blkif_x86_32_request_discard, id) == 4, "x86_32 d id");
static_assert(offsetof(struct blkif_x86_32_request_discard, sector_number) == 12, "x86_32 d sector");
static_assert(offsetof(struct blkif_x86_32_request_discard, nr_sectors) == 20, "x86_32 d nr");
static_assert(sizeof(struct blkif_x86_32_request_indirect) == 64, "x86_32 indirect");
static_assert(offsetof(struct blkif_x86_32_request_indirect, indirect_op) == 1, "x86_32 i op");
static_assert(offsetof(struct blkif_x86_32_request_indirect, nr_segments) == 2, "x86_32 i nr");
static_assert(offsetof(struct blkif_x86_32_request_indirect, id) == 4, "x86_32 i id");
static_assert(offsetof(struct blkif_x86_32_request_indirect, sector_number) == 12, "x86_32 i sector");
static_assert(offsetof(struct blkif_x86_32_request_indirect, handle) == 20, "x86_32 i handle");
static_assert(offsetof(struct blkif_x86_32_request_indirect, indirect_grefs) == 24, "x86_32 i grefs");
static_assert(sizeof(struct blkif_x86_32_response) == BLKIF_X86_32_RSP_SIZE, "x86_32 rsp");
static_assert(offsetof(struct blkif_x86_32_response, operation) == 8, "x86_32 rsp op");
static_assert(offsetof(struct blkif_x86_32_response, status) == 10, "x86_32 rsp status");

static_assert(sizeof(struct blkif_x86_64_request) == BLKIF_X86_64_REQ_SIZE, "x86_64 req");
static_assert(offsetof(struct blkif_x86_64_request, handle) == 2, "x86_64 handle");
static_assert(offsetof(struct blkif_x86_64_request, id) == 8, "x86_64 id");
static_assert(offsetof(struct blkif_x86_64_request, sector_number) == 16, "x86_64 sector");
static_assert(offsetof(struct blkif_x86_64_request, seg) == 24, "x86_64 seg");
static_assert(sizeof(struct blkif_x86_64_request_discard) == 32, "x86_64 discard");
static_assert(offsetof(struct blkif_x86_64_request_discard, id) == 8, "x86_64 d id");
static_assert(offsetof(struct blkif_x86_64_request_discard, sector_number) == 16, "x86_64 d sector");
static_assert(offsetof(struct blkif_x86_64_request_discard, nr_sectors) == 24, "x86_64 d nr");
static_assert(sizeof(struct blkif_x86_64_request_indirect) == 64, "x86_64 indirect");
static_assert(offsetof(struct blkif_x86_64_request_indirect, nr_segments) == 2, "x86_64 i nr");
static_assert(offsetof(struct blkif_x86_64_request_indirect, id) == 8, "x86_64 i id");
static_assert(offsetof(struct blkif_x86_64_request_indirect, sector_number) == 16, "x86_64 i sector");
static_assert(offsetof(struct blkif_x86_64_request_indirect, handle) == 24, "x86_64 i handle");
static_assert(offsetof(struct blkif_x86_64_request_indirect, indirect_grefs) == 28, "x86_64 i grefs");
static_assert(sizeof(struct blkif_x86_64_response) == BLKIF_X86_64_RSP_SIZE, "x86_64 rsp");
static_assert(offsetof(struct blkif_x86_64_response, operation) == 8, "x86_64 rsp op");
static_assert(offsetof(struct blkif_x86_64_response, status) == 10, "x86_64 rsp status");

/* The shared ring header is the same for every ABI: 64 bytes of indexes
 * and padding, then the entries.  ring.c relies on this to run the index
 * macros on the native view whatever the ABI (QEMU's "common" ring). */
static_assert(offsetof(struct blkif_sring, ring) == 64, "sring header");
static_assert(offsetof(struct blkif_x86_32_sring, ring) == 64, "x86_32 sring header");
static_assert(offsetof(struct blkif_x86_64_sring, ring) == 64, "x86_64 sring header");

#ifdef __x86_64__
/* Native is x86_64-abi on this build: Xen's own structs must agree. */
static_assert(sizeof(struct blkif_request) == BLKIF_X86_64_REQ_SIZE, "native req");
static_assert(sizeof(struct blkif_response) == BLKIF_X86_64_RSP_SIZE, "native rsp");
static_assert(offsetof(struct blkif_request_indirect, indirect_grefs) == 28, "native grefs");
#endif

/* ---- protocol.c: per-ABI encode/decode ---- */

/* A private copy of one request slot, large enough for every ABI. */
union blkring_wire_req {
	struct blkif_request native;
	struct blkif_x86_32_request x86_32;
	struct blkif_x86_64_request x86_64;
	uint8_t raw[sizeof(struct blkif_request) > BLKIF_X86_64_REQ_SIZE ?
		    sizeof(struct blkif_request) : BLKIF_X86_64_REQ_SIZE];
};

union blkring_wire_rsp {
	struct blkif_response native;
	struct blkif_x86_32_response x86_32;
	struct blkif_x86_64_response x86_64;
};

struct blkring_codec {
	enum blkring_abi abi;
	const char *name;		/* "x86_64-abi", ... */
	size_t req_size;		/* wire request, bytes */
	size_t rsp_size;		/* wire response, bytes */
	/* Decode a private copy (never shared memory) into *req: header
	 * fields, min(nr_segments, 11) direct segments, the discard range,
	 * the indirect header and all 8 indirect grefs. */
	void (*decode_req)(const union blkring_wire_req *w, struct blkreq *req);
	/* Encode *req into a zeroed private buffer (see
	 * blkring_front_put_request() for what is written). */
	void (*encode_req)(const struct blkreq *req, union blkring_wire_req *w);
	/* Response: id, operation, status only; padding zero. */
	void (*encode_rsp)(const struct blkrsp *rsp, union blkring_wire_rsp *w);
	void (*decode_rsp)(const union blkring_wire_rsp *w, struct blkrsp *rsp);
};

/* The codec of a valid ABI, or NULL. */
const struct blkring_codec *blkring_codec_get(enum blkring_abi abi);

/* ---- ring.c ---- */

struct blkring {
	enum blkring_abi abi;
	const struct blkring_codec *codec;
	bool is_front;
	bool broken;		/* sticky: bogus producer index seen */
	unsigned int nr_pages;
	/* One of these is live, chosen by abi; the index fields are laid out
	 * alike (asserted in ring.c) and the index macros use .native. */
	union {
		blkif_back_ring_t native;
		blkif_x86_32_back_ring_t x86_32;
		blkif_x86_64_back_ring_t x86_64;
	} back;
	union {
		blkif_front_ring_t native;
		blkif_x86_32_front_ring_t x86_32;
		blkif_x86_64_front_ring_t x86_64;
	} front;
	RING_IDX req_pushed;	/* front: last req_prod we published */
};

/*
 * Attach at a given starting index (BACK_RING_ATTACH/FRONT_RING_ATTACH)
 * instead of 0, for tests of the 2^32 wraparound and for the fuzzer.
 * The front variant also initialises the shared indexes to start.
 */
blkring_t *blkring_attach_at(void *sring, unsigned int nr_pages,
			     enum blkring_abi abi, bool front, RING_IDX start);

/* ---- fuzz-harness.c ---- */

/*
 * Run one fuzz input through a back ring: the ring contents, indexes and
 * limits come from data.  Aborts (assert) when an invariant breaks; the
 * return value is always 0 (libFuzzer convention).
 */
int blkring_fuzz_one(const uint8_t *data, size_t size);

#endif /* BLK_RING_PRIVATE_H */
