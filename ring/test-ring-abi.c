/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ring-abi.c: the native, x86_32-abi and x86_64-abi wire layouts.
 *
 * Sizes and offsets (also static_asserts in private.h, repeated here so a
 * failure names the field), the bytes a front ring actually puts in
 * shared memory, and round trips of requests (read/write, discard,
 * indirect) and responses through a front ring and a back ring in each
 * ABI.
 */
#include <config.h>

#include <errno.h>

#include "test-ring.h"

#define SRING_HDR	64	/* indexes + padding before ring[0] */

static uint64_t le64_at(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint32_t le32_at(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint16_t le16_at(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

/* Sizes and offsets of the two explicit layouts. */
static int test_layout_x86_32(void)
{
	T_CHECK(sizeof(struct blkif_x86_32_request) == 108);
	T_CHECK(offsetof(struct blkif_x86_32_request, operation) == 0);
	T_CHECK(offsetof(struct blkif_x86_32_request, nr_segments) == 1);
	T_CHECK(offsetof(struct blkif_x86_32_request, handle) == 2);
	T_CHECK(offsetof(struct blkif_x86_32_request, id) == 4);
	T_CHECK(offsetof(struct blkif_x86_32_request, sector_number) == 12);
	T_CHECK(offsetof(struct blkif_x86_32_request, seg) == 20);
	T_CHECK(sizeof(struct blkif_x86_32_request_discard) == 28);
	T_CHECK(offsetof(struct blkif_x86_32_request_discard, nr_sectors) == 20);
	T_CHECK(sizeof(struct blkif_x86_32_request_indirect) == 64);
	T_CHECK(offsetof(struct blkif_x86_32_request_indirect, nr_segments) == 2);
	T_CHECK(offsetof(struct blkif_x86_32_request_indirect, id) == 4);
	T_CHECK(offsetof(struct blkif_x86_32_request_indirect, handle) == 20);
	T_CHECK(offsetof(struct blkif_x86_32_request_indirect, indirect_grefs) == 24);
	T_CHECK(sizeof(struct blkif_x86_32_response) == 12);
	T_CHECK(offsetof(struct blkif_x86_32_response, operation) == 8);
	T_CHECK(offsetof(struct blkif_x86_32_response, status) == 10);
	T_CHECK(sizeof(union blkif_x86_32_sring_entry) == 108);
	return 0;
}

static int test_layout_x86_64(void)
{
	T_CHECK(sizeof(struct blkif_x86_64_request) == 112);
	T_CHECK(offsetof(struct blkif_x86_64_request, nr_segments) == 1);
	T_CHECK(offsetof(struct blkif_x86_64_request, handle) == 2);
	T_CHECK(offsetof(struct blkif_x86_64_request, id) == 8);
	T_CHECK(offsetof(struct blkif_x86_64_request, sector_number) == 16);
	T_CHECK(offsetof(struct blkif_x86_64_request, seg) == 24);
	T_CHECK(sizeof(struct blkif_x86_64_request_discard) == 32);
	T_CHECK(offsetof(struct blkif_x86_64_request_discard, nr_sectors) == 24);
	T_CHECK(sizeof(struct blkif_x86_64_request_indirect) == 64);
	T_CHECK(offsetof(struct blkif_x86_64_request_indirect, id) == 8);
	T_CHECK(offsetof(struct blkif_x86_64_request_indirect, handle) == 24);
	T_CHECK(offsetof(struct blkif_x86_64_request_indirect, indirect_grefs) == 28);
	T_CHECK(sizeof(struct blkif_x86_64_response) == 16);
	T_CHECK(offsetof(struct blkif_x86_64_response, status) == 10);
	T_CHECK(sizeof(union blkif_x86_64_sring_entry) == 112);
#ifdef __x86_64__
	/* Xen's own native structs on this build are the x86_64 layout. */
	T_CHECK(sizeof(struct blkif_request) == 112);
	T_CHECK(offsetof(struct blkif_request, seg) == 24);
	T_CHECK(sizeof(struct blkif_response) == 16);
	T_CHECK(offsetof(struct blkif_request_discard, nr_sectors) == 24);
#endif
	return 0;
}

/* protocol node <-> ABI. */
static int test_protocol_names(void)
{
	enum blkring_abi abi = BLKRING_ABI_NATIVE;

	T_CHECK(blkring_abi_from_protocol(NULL, &abi) == 0);
	T_CHECK(abi == BLKRING_ABI_X86_32);	/* Linux blkback default */
	abi = BLKRING_ABI_NATIVE;
	T_CHECK(blkring_abi_from_protocol("", &abi) == 0);
	T_CHECK(abi == BLKRING_ABI_X86_32);
	T_CHECK(blkring_abi_from_protocol("x86_32-abi", &abi) == 0);
	T_CHECK(abi == BLKRING_ABI_X86_32);
	T_CHECK(blkring_abi_from_protocol("x86_64-abi", &abi) == 0);
	T_CHECK(abi == BLKRING_ABI_X86_64);
	T_CHECK(blkring_abi_from_protocol("x86_64-abi ", &abi) == -EINVAL);
	T_CHECK(blkring_abi_from_protocol("X86_32-ABI", &abi) == -EINVAL);
	T_CHECK(blkring_abi_from_protocol("bogus", &abi) == -EINVAL);
	T_CHECK(strcmp(blkring_abi_name(BLKRING_ABI_X86_32), "x86_32-abi") == 0);
	T_CHECK(strcmp(blkring_abi_name(BLKRING_ABI_X86_64), "x86_64-abi") == 0);
	T_CHECK(strcmp(blkring_abi_name((enum blkring_abi)9), "unknown-abi") == 0);
#ifdef __x86_64__
	T_CHECK(strcmp(blkring_abi_name(BLKRING_ABI_NATIVE), "x86_64-abi") == 0);
#endif
	return 0;
}

/* The bytes a front ring writes: field offsets and slot stride. */
static int test_wire_bytes(void)
{
	static const struct {
		enum blkring_abi abi;
		size_t stride, id, sector, seg;
	} l[] = {
		{ BLKRING_ABI_X86_32, 108, 4, 12, 20 },
		{ BLKRING_ABI_X86_64, 112, 8, 16, 24 },
		{ BLKRING_ABI_NATIVE, sizeof(struct blkif_request),
		  offsetof(struct blkif_request, id),
		  offsetof(struct blkif_request, sector_number),
		  offsetof(struct blkif_request, seg) },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(l); i++) {
		struct t_pair p;
		struct blkreq req;
		const uint8_t *slot;

		t_pair_init(&p, 1, l[i].abi);
		t_read_req(&req, 1, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		t_read_req(&req, UINT64_C(0x0123456789abcdef), UINT64_C(0xfedcba9876543210));
		req.operation = BLKIF_OP_WRITE;
		req.handle = 0xbeef;
		req.nr_segments = 2;
		req.seg[1].gref = 0xa5a5a5a5;
		req.seg[1].first_sect = 3;
		req.seg[1].last_sect = 6;
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		slot = (const uint8_t *)p.mem + SRING_HDR + l[i].stride;
		T_CHECK(slot[0] == BLKIF_OP_WRITE);
		T_CHECK(slot[1] == 2);
		T_CHECK(le16_at(slot + 2) == 0xbeef);
		T_CHECK(le64_at(slot + l[i].id) == UINT64_C(0x0123456789abcdef));
		T_CHECK(le64_at(slot + l[i].sector) == UINT64_C(0xfedcba9876543210));
		T_CHECK(le32_at(slot + l[i].seg + 8) == 0xa5a5a5a5);
		T_CHECK(slot[l[i].seg + 12] == 3 && slot[l[i].seg + 13] == 6);
		t_pair_fini(&p);
	}
	return 0;
}

/* Read/write round trip: every field, 11 distinct segments. */
static int test_roundtrip_rw(void)
{
	unsigned int a, i;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		struct blkreq in, out;

		t_pair_init(&p, 2, t_abis[a]);
		memset(&in, 0, sizeof(in));
		in.operation = BLKIF_OP_WRITE;
		in.id = UINT64_C(0x8000000000000001);
		in.handle = 0x1234;
		in.sector = UINT64_C(0x123456789);
		in.nr_segments = 11;
		for (i = 0; i < 11; i++) {
			in.seg[i].gref = 0x10000000u + i;
			in.seg[i].first_sect = i % 8;
			in.seg[i].last_sect = 7;
		}
		T_CHECK(blkring_front_put_request(p.front, &in) == 0);
		blkring_front_push_requests(p.front);
		T_CHECK(blkring_back_get_request(p.back, &out) == 1);
		T_CHECK(out.operation == BLKIF_OP_WRITE && out.op == BLKIF_OP_WRITE);
		T_CHECK(out.id == in.id && out.handle == in.handle);
		T_CHECK(out.sector == in.sector && out.nr_segments == 11);
		for (i = 0; i < 11; i++) {
			T_CHECK(out.seg[i].gref == in.seg[i].gref);
			T_CHECK(out.seg[i].first_sect == in.seg[i].first_sect);
			T_CHECK(out.seg[i].last_sect == 7);
		}
		t_pair_fini(&p);
	}
	return 0;
}

/* Discard round trip: 64-bit range and the SECURE flag. */
static int test_roundtrip_discard(void)
{
	unsigned int a;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		struct blkreq in, out;
		int secure;

		t_pair_init(&p, 1, t_abis[a]);
		for (secure = 0; secure <= 1; secure++) {
			memset(&in, 0, sizeof(in));
			in.operation = BLKIF_OP_DISCARD;
			in.id = 42 + secure;
			in.handle = 7;
			in.sector = UINT64_C(1) << 40;
			in.nr_sectors = (UINT64_C(1) << 33) + 5;
			in.discard_secure = secure;
			T_CHECK(blkring_front_put_request(p.front, &in) == 0);
			blkring_front_push_requests(p.front);
			T_CHECK(blkring_back_get_request(p.back, &out) == 1);
			T_CHECK(out.operation == BLKIF_OP_DISCARD);
			T_CHECK(out.id == in.id && out.handle == 7);
			T_CHECK(out.sector == in.sector);
			T_CHECK(out.nr_sectors == in.nr_sectors);
			T_CHECK(out.discard_secure == (secure != 0));
			T_CHECK(out.nr_segments == 0);
		}
		t_pair_fini(&p);
	}
	return 0;
}

/* Indirect round trip: indirect_op, 16-bit nr_segments, 8 grefs, and the
 * segments through the indirect pages. */
static int test_roundtrip_indirect(void)
{
	unsigned int a, i;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		struct blkreq in, out;

		t_pair_init(&p, 1, t_abis[a]);
		memset(&in, 0, sizeof(in));
		in.operation = BLKIF_OP_INDIRECT;
		in.op = BLKIF_OP_WRITE;
		in.id = UINT64_C(0xdeadbeefcafe);
		in.handle = 0x202;
		in.sector = 4096;
		in.nr_segments = 4000;	/* 8 pages' worth; u16 on the wire */
		in.nr_indirect_pages = 8;
		for (i = 0; i < 8; i++)
			in.indirect_grefs[i] = 0x77000000u + i;
		T_CHECK(blkring_front_put_request(p.front, &in) == 0);
		blkring_front_push_requests(p.front);
		T_CHECK(blkring_back_get_request(p.back, &out) == 1);
		T_CHECK(out.operation == BLKIF_OP_INDIRECT && out.op == BLKIF_OP_WRITE);
		T_CHECK(out.id == in.id && out.handle == 0x202);
		T_CHECK(out.sector == 4096 && out.nr_segments == 4000);
		T_CHECK(out.nr_indirect_pages == 8);
		for (i = 0; i < 8; i++)
			T_CHECK(out.indirect_grefs[i] == 0x77000000u + i);
		t_pair_fini(&p);
	}
	return 0;
}

/* Indirect segments end to end: fill pages, parse, compare. */
static int test_indirect_segments(void)
{
	struct blkreq_limits lim = {
		.sectors = UINT64_C(1) << 30, .sector_size = 512,
		.max_indirect_segments = BLKRING_MAX_INDIRECT_SEGMENTS,
	};
	struct blkreq in, out;
	struct t_pair p;
	const char *reason;
	bool needs;
	void *page;
	unsigned int i;

	t_pair_init(&p, 1, BLKRING_ABI_X86_32);
	memset(&in, 0, sizeof(in));
	in.operation = BLKIF_OP_INDIRECT;
	in.op = BLKIF_OP_READ;
	in.id = 3;
	in.nr_segments = 256;
	in.nr_indirect_pages = 1;
	in.indirect_grefs[0] = 99;
	for (i = 0; i < 256; i++) {
		in.seg[i].gref = 5000 + i;
		in.seg[i].first_sect = i % 4;
		in.seg[i].last_sect = 4 + i % 4;
	}
	page = t_ring_pages(1);
	T_CHECK(blkreq_fill_indirect_pages(&in, &page) == 0);
	T_CHECK(blkring_front_put_request(p.front, &in) == 0);
	blkring_front_push_requests(p.front);
	T_CHECK(blkring_back_get_request(p.back, &out) == 1);
	T_CHECK(blkreq_validate(&out, &lim, &needs, &reason) == BLKIF_RSP_OKAY);
	T_CHECK(needs && out.nr_indirect_pages == 1);
	T_CHECK(blkreq_parse_indirect(&out, &lim, (const void *const *)&page,
				      &reason) == BLKIF_RSP_OKAY);
	T_CHECK(out.nr_sectors == 256 * 5);
	for (i = 0; i < 256; i++) {
		T_CHECK(out.seg[i].gref == 5000 + i);
		T_CHECK(out.seg[i].first_sect == i % 4);
		T_CHECK(out.seg[i].last_sect == 4 + i % 4);
	}
	free(page);
	t_pair_fini(&p);
	return 0;
}

/* Response round trip, every ABI: id, operation, each status. */
static int test_roundtrip_response(void)
{
	static const int16_t statuses[] = {
		BLKIF_RSP_OKAY, BLKIF_RSP_ERROR, BLKIF_RSP_EOPNOTSUPP,
	};
	unsigned int a, i;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		struct blkreq req;
		struct blkrsp rsp;

		t_pair_init(&p, 1, t_abis[a]);
		for (i = 0; i < ARRAY_SIZE(statuses); i++) {
			t_read_req(&req, 0, 0);
			T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		}
		blkring_front_push_requests(p.front);
		for (i = 0; i < ARRAY_SIZE(statuses); i++) {
			T_CHECK(blkring_back_get_request(p.back, &req) == 1);
			T_CHECK(blkring_back_put_response(p.back,
				UINT64_C(0xffffffff00000000) + i,
				(uint8_t)(BLKIF_OP_DISCARD + i), statuses[i]) == 0);
		}
		blkring_back_push_responses(p.back);
		for (i = 0; i < ARRAY_SIZE(statuses); i++) {
			T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
			T_CHECK(rsp.id == UINT64_C(0xffffffff00000000) + i);
			T_CHECK(rsp.operation == BLKIF_OP_DISCARD + i);
			T_CHECK(rsp.status == statuses[i]);
		}
		t_pair_fini(&p);
	}
	return 0;
}

/* A response writes its own size only, in the ABI's layout, with the
 * padding zeroed (no stale bytes of the request or of our stack). */
static int test_response_bytes(void)
{
	static const struct {
		enum blkring_abi abi;
		size_t rsp_size;
	} l[] = {
		{ BLKRING_ABI_X86_32, 12 },
		{ BLKRING_ABI_X86_64, 16 },
		{ BLKRING_ABI_NATIVE, sizeof(struct blkif_response) },
	};
	unsigned int i, b;

	for (i = 0; i < ARRAY_SIZE(l); i++) {
		struct t_pair p;
		struct blkreq req;
		uint8_t *slot;

		t_pair_init(&p, 1, l[i].abi);
		t_read_req(&req, 1, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		blkring_front_push_requests(p.front);
		T_CHECK(blkring_back_get_request(p.back, &req) == 1);
		slot = (uint8_t *)p.mem + SRING_HDR;
		memset(slot, 0xa5, 128);
		T_CHECK(blkring_back_put_response(p.back, UINT64_C(0x1122334455667788),
						  BLKIF_OP_WRITE, BLKIF_RSP_EOPNOTSUPP) == 0);
		T_CHECK(le64_at(slot) == UINT64_C(0x1122334455667788));
		T_CHECK(slot[8] == BLKIF_OP_WRITE);
		T_CHECK(slot[9] == 0);				/* padding */
		T_CHECK(le16_at(slot + 10) == 0xfffe);		/* -2 */
		for (b = 12; b < l[i].rsp_size; b++)
			T_CHECK(slot[b] == 0);			/* padding */
		for (b = l[i].rsp_size; b < 128; b++)
			T_CHECK(slot[b] == 0xa5);		/* untouched */
		t_pair_fini(&p);
	}
	return 0;
}

/* The two layouts really differ: a 32-bit front read by a 64-bit back
 * does not decode to the same request (the ABI must be negotiated). */
static int test_layouts_differ(void)
{
	void *mem = t_ring_pages(1);
	blkring_t *front = blkring_front_attach(mem, 1, BLKRING_ABI_X86_32);
	blkring_t *back = blkring_back_attach(mem, 1, BLKRING_ABI_X86_64);
	struct blkreq in, out;

	T_CHECK(front && back);
	t_read_req(&in, UINT64_C(0x1111222233334444), 0x55556666);
	T_CHECK(blkring_front_put_request(front, &in) == 0);
	blkring_front_push_requests(front);
	T_CHECK(blkring_back_get_request(back, &out) == 1);
	T_CHECK(out.id != in.id);
	blkring_free(front);
	blkring_free(back);
	free(mem);
	return 0;
}

int main(void)
{
	T_RUN(test_layout_x86_32);
	T_RUN(test_layout_x86_64);
	T_RUN(test_protocol_names);
	T_RUN(test_wire_bytes);
	T_RUN(test_roundtrip_rw);
	T_RUN(test_roundtrip_discard);
	T_RUN(test_roundtrip_indirect);
	T_RUN(test_indirect_segments);
	T_RUN(test_roundtrip_response);
	T_RUN(test_response_bytes);
	T_RUN(test_layouts_differ);
	return t_failed ? 1 : 0;
}
