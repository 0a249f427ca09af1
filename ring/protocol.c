/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * protocol.c: the three blkif ABIs ("protocol" xenstore node) and the
 * conversion between their wire layouts and the private struct blkreq /
 * struct blkrsp.
 *
 * Every function here works on private buffers only: ring.c copies a
 * slot out of shared memory first (request) or writes a fully built
 * private buffer into it (response), so nothing here can race with the
 * other end.  The layouts are in private.h.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "private.h"
#include <xen/io/protocols.h>

/*
 * One encoder/decoder set per ABI.  The three layouts name their fields
 * alike (they are the same protocol with different alignment), so one
 * macro generates the code for each; only the types differ.
 */
#define BLKRING_DEFINE_CODEC(abi_, rq_t, dq_t, iq_t, rs_t)		\
static void decode_req_##abi_(const union blkring_wire_req *w,		\
			      struct blkreq *req)			\
{									\
	rq_t rw;							\
	unsigned int i, n;						\
									\
	static_assert(sizeof(rq_t) <= sizeof(w->raw), "wire buffer");	\
	memcpy(&rw, w->raw, sizeof(rw));				\
	memset(req, 0, offsetof(struct blkreq, seg));			\
	req->operation = rw.operation;					\
	req->op = rw.operation;						\
	switch (rw.operation) {						\
	case BLKIF_OP_DISCARD: {					\
		dq_t d;							\
									\
		static_assert(sizeof(dq_t) <= sizeof(rq_t), "discard");	\
		memcpy(&d, w->raw, sizeof(d));				\
		req->id = d.id;						\
		req->handle = d.handle;					\
		req->sector = d.sector_number;				\
		req->nr_sectors = d.nr_sectors;				\
		req->discard_secure = d.flag & BLKIF_DISCARD_SECURE;	\
		break;							\
	}								\
	case BLKIF_OP_INDIRECT: {					\
		iq_t ind;						\
									\
		static_assert(sizeof(iq_t) <= sizeof(rq_t), "indirect");	\
		memcpy(&ind, w->raw, sizeof(ind));			\
		req->op = ind.indirect_op;				\
		req->id = ind.id;					\
		req->handle = ind.handle;				\
		req->sector = ind.sector_number;			\
		req->nr_segments = ind.nr_segments;			\
		req->nr_indirect_pages =				\
			(ind.nr_segments + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) \
			/ BLKRING_SEGS_PER_INDIRECT_PAGE;		\
		for (i = 0; i < BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST; i++) \
			req->indirect_grefs[i] = ind.indirect_grefs[i];	\
		break;							\
	}								\
	default:							\
		req->id = rw.id;					\
		req->handle = rw.handle;				\
		req->sector = rw.sector_number;				\
		req->nr_segments = rw.nr_segments;			\
		n = rw.nr_segments;					\
		if (n > BLKIF_MAX_SEGMENTS_PER_REQUEST)			\
			n = BLKIF_MAX_SEGMENTS_PER_REQUEST;		\
		for (i = 0; i < n; i++) {				\
			req->seg[i].gref = rw.seg[i].gref;		\
			req->seg[i].first_sect = rw.seg[i].first_sect;	\
			req->seg[i].last_sect = rw.seg[i].last_sect;	\
		}							\
		break;							\
	}								\
}									\
									\
static void encode_req_##abi_(const struct blkreq *req,			\
			      union blkring_wire_req *w)		\
{									\
	unsigned int i, n;						\
									\
	memset(w, 0, sizeof(*w));					\
	switch (req->operation) {					\
	case BLKIF_OP_DISCARD: {					\
		dq_t d;							\
									\
		memset(&d, 0, sizeof(d));				\
		d.operation = req->operation;				\
		d.flag = req->discard_secure ? BLKIF_DISCARD_SECURE : 0; \
		d.handle = req->handle;					\
		d.id = req->id;						\
		d.sector_number = req->sector;				\
		d.nr_sectors = req->nr_sectors;				\
		memcpy(w->raw, &d, sizeof(d));				\
		break;							\
	}								\
	case BLKIF_OP_INDIRECT: {					\
		iq_t ind;						\
									\
		memset(&ind, 0, sizeof(ind));				\
		ind.operation = req->operation;				\
		ind.indirect_op = req->op;				\
		ind.nr_segments = (uint16_t)req->nr_segments;		\
		ind.id = req->id;					\
		ind.sector_number = req->sector;			\
		ind.handle = req->handle;				\
		n = req->nr_indirect_pages;				\
		if (n > BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST)		\
			n = BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST;	\
		for (i = 0; i < n; i++)					\
			ind.indirect_grefs[i] = req->indirect_grefs[i];	\
		memcpy(w->raw, &ind, sizeof(ind));			\
		break;							\
	}								\
	default: {							\
		rq_t rw;						\
									\
		memset(&rw, 0, sizeof(rw));				\
		rw.operation = req->operation;				\
		rw.nr_segments = (uint8_t)req->nr_segments;		\
		rw.handle = req->handle;				\
		rw.id = req->id;					\
		rw.sector_number = req->sector;				\
		n = req->nr_segments;					\
		if (n > BLKIF_MAX_SEGMENTS_PER_REQUEST)			\
			n = BLKIF_MAX_SEGMENTS_PER_REQUEST;		\
		for (i = 0; i < n; i++) {				\
			rw.seg[i].gref = req->seg[i].gref;		\
			rw.seg[i].first_sect = req->seg[i].first_sect;	\
			rw.seg[i].last_sect = req->seg[i].last_sect;	\
		}							\
		memcpy(w->raw, &rw, sizeof(rw));			\
		break;							\
	}								\
	}								\
}									\
									\
static void encode_rsp_##abi_(const struct blkrsp *rsp,			\
			      union blkring_wire_rsp *w)		\
{									\
	rs_t r;								\
									\
	memset(&r, 0, sizeof(r));	/* padding must not leak */	\
	r.id = rsp->id;							\
	r.operation = rsp->operation;					\
	r.status = rsp->status;						\
	memset(w, 0, sizeof(*w));					\
	memcpy(w, &r, sizeof(r));					\
}									\
									\
static void decode_rsp_##abi_(const union blkring_wire_rsp *w,		\
			      struct blkrsp *rsp)			\
{									\
	rs_t r;								\
									\
	memcpy(&r, w, sizeof(r));					\
	rsp->id = r.id;							\
	rsp->operation = r.operation;					\
	rsp->status = r.status;						\
}

BLKRING_DEFINE_CODEC(native, struct blkif_request,
		     struct blkif_request_discard,
		     struct blkif_request_indirect, struct blkif_response)
BLKRING_DEFINE_CODEC(x86_32, struct blkif_x86_32_request,
		     struct blkif_x86_32_request_discard,
		     struct blkif_x86_32_request_indirect,
		     struct blkif_x86_32_response)
BLKRING_DEFINE_CODEC(x86_64, struct blkif_x86_64_request,
		     struct blkif_x86_64_request_discard,
		     struct blkif_x86_64_request_indirect,
		     struct blkif_x86_64_response)

static const struct blkring_codec codecs[] = {
	[BLKRING_ABI_NATIVE] = {
		.abi = BLKRING_ABI_NATIVE,
		.name = XEN_IO_PROTO_ABI_NATIVE,
		.req_size = sizeof(struct blkif_request),
		.rsp_size = sizeof(struct blkif_response),
		.decode_req = decode_req_native,
		.encode_req = encode_req_native,
		.encode_rsp = encode_rsp_native,
		.decode_rsp = decode_rsp_native,
	},
	[BLKRING_ABI_X86_32] = {
		.abi = BLKRING_ABI_X86_32,
		.name = XEN_IO_PROTO_ABI_X86_32,
		.req_size = sizeof(struct blkif_x86_32_request),
		.rsp_size = sizeof(struct blkif_x86_32_response),
		.decode_req = decode_req_x86_32,
		.encode_req = encode_req_x86_32,
		.encode_rsp = encode_rsp_x86_32,
		.decode_rsp = decode_rsp_x86_32,
	},
	[BLKRING_ABI_X86_64] = {
		.abi = BLKRING_ABI_X86_64,
		.name = XEN_IO_PROTO_ABI_X86_64,
		.req_size = sizeof(struct blkif_x86_64_request),
		.rsp_size = sizeof(struct blkif_x86_64_response),
		.decode_req = decode_req_x86_64,
		.encode_req = encode_req_x86_64,
		.encode_rsp = encode_rsp_x86_64,
		.decode_rsp = decode_rsp_x86_64,
	},
};

const struct blkring_codec *blkring_codec_get(enum blkring_abi abi)
{
	if ((unsigned int)abi >= ARRAY_SIZE(codecs))
		return NULL;
	return &codecs[abi];
}

int blkring_abi_from_protocol(const char *protocol, enum blkring_abi *abi)
{
	/* No node: Linux blkback's BLKIF_PROTOCOL_DEFAULT on x86. */
	if (protocol == NULL || protocol[0] == '\0') {
		*abi = BLKRING_ABI_X86_32;
		return 0;
	}
	/* The explicit ABI names first: on x86_64 the native name is also
	 * "x86_64-abi", and it maps to the explicit layout (identical). */
	if (strcmp(protocol, XEN_IO_PROTO_ABI_X86_32) == 0) {
		*abi = BLKRING_ABI_X86_32;
		return 0;
	}
	if (strcmp(protocol, XEN_IO_PROTO_ABI_X86_64) == 0) {
		*abi = BLKRING_ABI_X86_64;
		return 0;
	}
	if (strcmp(protocol, XEN_IO_PROTO_ABI_NATIVE) == 0) {
		*abi = BLKRING_ABI_NATIVE;
		return 0;
	}
	return -EINVAL;
}

const char *blkring_abi_name(enum blkring_abi abi)
{
	const struct blkring_codec *c = blkring_codec_get(abi);

	return c ? c->name : "unknown-abi";
}
