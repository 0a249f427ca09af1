/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ring.c: the shared blkif ring, both ends, on Xen's <xen/io/ring.h>.
 *
 * Back end (blkbackd): copy each request out of its slot once, check the
 * frontend's producer index, write responses, push them with the
 * notification hold-off, and the final check before sleeping.
 * Front end (blkfront-test): the mirror image, including a check that
 * the backend does not produce more responses than we asked for.
 *
 * Slot access goes through the per-ABI ring types (RING_GET_REQUEST on
 * the ABI's own view); the index macros run on the native view, whose
 * index fields are laid out identically in every ABI (asserted below).
 * Memory ordering: the ring.h macros use xen_mb/xen_rmb/xen_wmb, which
 * include/barrier.h maps onto C11 fences; the few loads we do by hand
 * use smp_load_acquire() and name the store they pair with.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "private.h"

#define RING_BYTES(nr_pages)	((size_t)(nr_pages) * XEN_PAGE_SIZE)

/* Index fields must coincide in the three views of the private rings. */
#define SAME_FIELD(a, b, f) \
	static_assert(offsetof(a, f) == offsetof(b, f), #a " " #f)
SAME_FIELD(blkif_back_ring_t, blkif_x86_32_back_ring_t, rsp_prod_pvt);
SAME_FIELD(blkif_back_ring_t, blkif_x86_32_back_ring_t, req_cons);
SAME_FIELD(blkif_back_ring_t, blkif_x86_32_back_ring_t, nr_ents);
SAME_FIELD(blkif_back_ring_t, blkif_x86_32_back_ring_t, sring);
SAME_FIELD(blkif_back_ring_t, blkif_x86_64_back_ring_t, rsp_prod_pvt);
SAME_FIELD(blkif_back_ring_t, blkif_x86_64_back_ring_t, req_cons);
SAME_FIELD(blkif_back_ring_t, blkif_x86_64_back_ring_t, nr_ents);
SAME_FIELD(blkif_back_ring_t, blkif_x86_64_back_ring_t, sring);
SAME_FIELD(blkif_front_ring_t, blkif_x86_32_front_ring_t, req_prod_pvt);
SAME_FIELD(blkif_front_ring_t, blkif_x86_32_front_ring_t, rsp_cons);
SAME_FIELD(blkif_front_ring_t, blkif_x86_32_front_ring_t, nr_ents);
SAME_FIELD(blkif_front_ring_t, blkif_x86_32_front_ring_t, sring);
SAME_FIELD(blkif_front_ring_t, blkif_x86_64_front_ring_t, req_prod_pvt);
SAME_FIELD(blkif_front_ring_t, blkif_x86_64_front_ring_t, rsp_cons);
SAME_FIELD(blkif_front_ring_t, blkif_x86_64_front_ring_t, nr_ents);
SAME_FIELD(blkif_front_ring_t, blkif_x86_64_front_ring_t, sring);
SAME_FIELD(struct blkif_sring, struct blkif_x86_32_sring, req_prod);
SAME_FIELD(struct blkif_sring, struct blkif_x86_32_sring, req_event);
SAME_FIELD(struct blkif_sring, struct blkif_x86_32_sring, rsp_prod);
SAME_FIELD(struct blkif_sring, struct blkif_x86_32_sring, rsp_event);
SAME_FIELD(struct blkif_sring, struct blkif_x86_64_sring, req_prod);
SAME_FIELD(struct blkif_sring, struct blkif_x86_64_sring, rsp_prod);

static bool valid_nr_pages(unsigned int nr_pages)
{
	return nr_pages >= 1 && nr_pages <= BLKRING_MAX_PAGES &&
	       (nr_pages & (nr_pages - 1)) == 0;
}

unsigned int blkring_size_for(enum blkring_abi abi, unsigned int nr_pages)
{
	size_t bytes = RING_BYTES(nr_pages);

	if (!valid_nr_pages(nr_pages))
		return 0;
	/* __CONST_RING_SIZE: entries that fit after the header, rounded
	 * down to a power of two (ring.h). */
	switch (abi) {
	case BLKRING_ABI_NATIVE:
		return __CONST_RING_SIZE(blkif, bytes);
	case BLKRING_ABI_X86_32:
		return __CONST_RING_SIZE(blkif_x86_32, bytes);
	case BLKRING_ABI_X86_64:
		return __CONST_RING_SIZE(blkif_x86_64, bytes);
	}
	return 0;
}

blkring_t *blkring_attach_at(void *sring, unsigned int nr_pages,
			     enum blkring_abi abi, bool front, RING_IDX start)
{
	const struct blkring_codec *codec = blkring_codec_get(abi);
	size_t bytes = RING_BYTES(nr_pages);
	blkring_t *r;

	if (sring == NULL || codec == NULL || !valid_nr_pages(nr_pages)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return NULL;
	r->abi = abi;
	r->codec = codec;
	r->is_front = front;
	r->nr_pages = nr_pages;

	if (front) {
		/* We own the shared page's contents until the backend
		 * connects: start from a clean page. */
		memset(sring, 0, bytes);
		switch (abi) {
		case BLKRING_ABI_NATIVE:
			SHARED_RING_INIT((blkif_sring_t *)sring);
			FRONT_RING_ATTACH(&r->front.native, (blkif_sring_t *)sring,
					  start, bytes);
			break;
		case BLKRING_ABI_X86_32:
			SHARED_RING_INIT((blkif_x86_32_sring_t *)sring);
			FRONT_RING_ATTACH(&r->front.x86_32,
					  (blkif_x86_32_sring_t *)sring, start, bytes);
			break;
		case BLKRING_ABI_X86_64:
			SHARED_RING_INIT((blkif_x86_64_sring_t *)sring);
			FRONT_RING_ATTACH(&r->front.x86_64,
					  (blkif_x86_64_sring_t *)sring, start, bytes);
			break;
		}
		/* A ring that starts at a non-zero index (tests) publishes it
		 * as if it had always been there. */
		r->front.native.sring->req_prod = start;
		r->front.native.sring->rsp_prod = start;
		r->front.native.sring->req_event = start + 1;
		r->front.native.sring->rsp_event = start + 1;
		r->req_pushed = start;
	} else {
		/* The frontend initialised the shared indexes; do not touch
		 * them (BACK_RING_INIT/ATTACH only set private state). */
		switch (abi) {
		case BLKRING_ABI_NATIVE:
			BACK_RING_ATTACH(&r->back.native, (blkif_sring_t *)sring,
					 start, bytes);
			break;
		case BLKRING_ABI_X86_32:
			BACK_RING_ATTACH(&r->back.x86_32,
					 (blkif_x86_32_sring_t *)sring, start, bytes);
			break;
		case BLKRING_ABI_X86_64:
			BACK_RING_ATTACH(&r->back.x86_64,
					 (blkif_x86_64_sring_t *)sring, start, bytes);
			break;
		}
	}
	return r;
}

/*
 * The backend's side of the ring, consuming from req_cons (resume) or
 * from where the responses stand.  Linux blkback's xen_blkif_map starts
 * where the ring stands, so a frontend that reconnects with the ring it
 * used before is not answered again for requests it already had
 * answers to; a successor taking a ring over resumes at the consumer
 * index its predecessor recorded.  Either way the indexes must be
 * possible: rsp_prod <= req_cons <= req_prod, modulo 2^32, within one
 * ring (else EIO).
 */
static blkring_t *back_attach(void *sring, unsigned int nr_pages,
			      enum blkring_abi abi, bool resume, uint32_t req_cons)
{
	const blkif_sring_t *s = sring;	/* the indexes: same in every ABI */
	RING_IDX req_prod, rsp_prod;
	blkring_t *r;

	if (sring == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rsp_prod = READ_ONCE(s->rsp_prod);
	req_prod = READ_ONCE(s->req_prod);
	if (!resume)
		req_cons = rsp_prod;
	r = blkring_attach_at(sring, nr_pages, abi, false, rsp_prod);
	if (!r)
		return NULL;
	if (req_prod - rsp_prod > blkring_size(r) || req_cons - rsp_prod > req_prod - rsp_prod) {
		blkring_free(r);
		errno = EIO;
		return NULL;
	}
	r->back.native.req_cons = req_cons;
	return r;
}

blkring_t *blkring_back_attach(void *sring, unsigned int nr_pages,
			       enum blkring_abi abi)
{
	return back_attach(sring, nr_pages, abi, false, 0);
}

blkring_t *blkring_back_attach_resume(void *sring, unsigned int nr_pages,
				      enum blkring_abi abi, uint32_t req_cons)
{
	return back_attach(sring, nr_pages, abi, true, req_cons);
}

uint32_t blkring_back_req_cons(const blkring_t *r)
{
	return r->back.native.req_cons;
}

uint32_t blkring_back_rsp_prod_pvt(const blkring_t *r)
{
	return r->back.native.rsp_prod_pvt;
}

uint32_t blkring_back_rsp_pushed(const blkring_t *r)
{
	return READ_ONCE(r->back.native.sring->rsp_prod);
}

blkring_t *blkring_front_attach(void *sring, unsigned int nr_pages,
				enum blkring_abi abi)
{
	return blkring_attach_at(sring, nr_pages, abi, true, 0);
}

void blkring_free(blkring_t *r)
{
	free(r);
}

unsigned int blkring_size(const blkring_t *r)
{
	return r->is_front ? RING_SIZE(&r->front.native) : RING_SIZE(&r->back.native);
}

enum blkring_abi blkring_abi(const blkring_t *r)
{
	return r->abi;
}

bool blkring_broken(const blkring_t *r)
{
	return r->broken;
}

/* ------------------------------------------------------------------ */
/* Slot addresses, through the ABI's own ring view.                   */
/* ------------------------------------------------------------------ */

static void *back_rsp_slot(blkring_t *r, RING_IDX idx)
{
	switch (r->abi) {
	case BLKRING_ABI_X86_32:
		return RING_GET_RESPONSE(&r->back.x86_32, idx);
	case BLKRING_ABI_X86_64:
		return RING_GET_RESPONSE(&r->back.x86_64, idx);
	case BLKRING_ABI_NATIVE:
	default:
		return RING_GET_RESPONSE(&r->back.native, idx);
	}
}

static void *front_req_slot(blkring_t *r, RING_IDX idx)
{
	switch (r->abi) {
	case BLKRING_ABI_X86_32:
		return RING_GET_REQUEST(&r->front.x86_32, idx);
	case BLKRING_ABI_X86_64:
		return RING_GET_REQUEST(&r->front.x86_64, idx);
	case BLKRING_ABI_NATIVE:
	default:
		return RING_GET_REQUEST(&r->front.native, idx);
	}
}

/*
 * Copy one slot out of shared memory exactly once (RING_COPY_REQUEST /
 * RING_COPY_RESPONSE: a volatile read into the private buffer, so the
 * compiler cannot re-read the slot later instead of using the copy).
 */
static void back_copy_request(blkring_t *r, RING_IDX idx, union blkring_wire_req *w)
{
	switch (r->abi) {
	case BLKRING_ABI_X86_32:
		RING_COPY_REQUEST(&r->back.x86_32, idx, &w->x86_32);
		break;
	case BLKRING_ABI_X86_64:
		RING_COPY_REQUEST(&r->back.x86_64, idx, &w->x86_64);
		break;
	case BLKRING_ABI_NATIVE:
	default:
		RING_COPY_REQUEST(&r->back.native, idx, &w->native);
		break;
	}
}

static void front_copy_response(blkring_t *r, RING_IDX idx, union blkring_wire_rsp *w)
{
	switch (r->abi) {
	case BLKRING_ABI_X86_32:
		RING_COPY_RESPONSE(&r->front.x86_32, idx, &w->x86_32);
		break;
	case BLKRING_ABI_X86_64:
		RING_COPY_RESPONSE(&r->front.x86_64, idx, &w->x86_64);
		break;
	case BLKRING_ABI_NATIVE:
	default:
		RING_COPY_RESPONSE(&r->front.native, idx, &w->native);
		break;
	}
}

/* ------------------------------------------------------------------ */
/* Back side.                                                         */
/* ------------------------------------------------------------------ */

int blkring_back_get_request(blkring_t *r, struct blkreq *req)
{
	blkif_back_ring_t *br = &r->back.native;
	union blkring_wire_req w;
	RING_IDX rp, rc;

	if (r->is_front)
		return -EINVAL;
	if (unlikely(r->broken))
		return -EPROTO;

	/* Pairs with the frontend's xen_wmb() in RING_PUSH_REQUESTS: the
	 * slots up to req_prod are written before we read them. */
	rp = smp_load_acquire(&br->sring->req_prod);
	rc = br->req_cons;

	/* Linux blkback's "bogus ring requests": a frontend cannot have
	 * more than RING_SIZE requests outstanding. */
	if (unlikely(RING_REQUEST_PROD_OVERFLOW(br, rp))) {
		r->broken = true;
		return -EPROTO;
	}
	if (rc == rp)
		return 0;
	/* Never reached with an honest index (guarded above); keeps the
	 * slot of an unanswered request from being reused. */
	if (RING_REQUEST_CONS_OVERFLOW(br, rc))
		return 0;

	/* The only read of this slot: everything below uses the copy. */
	memset(&w, 0, sizeof(w));
	back_copy_request(r, rc, &w);
	br->req_cons = rc + 1;
	r->codec->decode_req(&w, req);
	return 1;
}

int blkring_back_put_response(blkring_t *r, uint64_t id, uint8_t operation,
			      int16_t status)
{
	blkif_back_ring_t *br = &r->back.native;
	union blkring_wire_rsp w;
	struct blkrsp rsp = {
		.id = id, .operation = operation, .status = status,
	};

	if (r->is_front)
		return -EINVAL;
	/* One response per consumed request; more would overwrite a
	 * request slot the frontend may not have released. */
	if (br->rsp_prod_pvt == br->req_cons)
		return -ENOSPC;
	r->codec->encode_rsp(&rsp, &w);
	memcpy(back_rsp_slot(r, br->rsp_prod_pvt), &w, r->codec->rsp_size);
	br->rsp_prod_pvt++;
	return 0;
}

bool blkring_back_push_responses(blkring_t *r)
{
	blkif_back_ring_t *br = &r->back.native;
	int notify;

	if (r->is_front)
		return false;
	/* xen_wmb() inside: the response slots are visible before rsp_prod
	 * (pairs with the frontend's read of rsp_prod then xen_rmb());
	 * xen_mb() before reading rsp_event (pairs with the xen_mb() in the
	 * frontend's RING_FINAL_CHECK_FOR_RESPONSES). */
	RING_PUSH_RESPONSES_AND_CHECK_NOTIFY(br, notify);
	return notify;
}

bool blkring_back_final_check(blkring_t *r)
{
	blkif_back_ring_t *br = &r->back.native;
	int more;

	if (r->is_front)
		return false;
	if (r->broken)
		return true;
	/* Sets req_event = req_cons + 1, then xen_mb() (pairs with the one
	 * in the frontend's RING_PUSH_REQUESTS_AND_CHECK_NOTIFY), then looks
	 * again: closes the race with a request pushed meanwhile. */
	RING_FINAL_CHECK_FOR_REQUESTS(br, more);
	if (!more && RING_REQUEST_PROD_OVERFLOW(br, READ_ONCE(br->sring->req_prod)))
		more = 1;	/* let the next get report -EPROTO */
	return more;
}

bool blkring_back_peek(const blkring_t *r)
{
	const blkif_back_ring_t *br = &r->back.native;

	if (r->is_front)
		return false;
	if (r->broken)
		return true;
	/* the header (req_prod) is at the same place in every ABI; a bogus
	 * producer also reads as "more", so the next get reports -EPROTO */
	return READ_ONCE(br->sring->req_prod) != br->req_cons;
}

/* ------------------------------------------------------------------ */
/* Front side.                                                        */
/* ------------------------------------------------------------------ */

unsigned int blkring_front_free_slots(const blkring_t *r)
{
	if (!r->is_front)
		return 0;
	return RING_FREE_REQUESTS(&r->front.native);
}

int blkring_front_put_request(blkring_t *r, const struct blkreq *req)
{
	blkif_front_ring_t *fr = &r->front.native;
	union blkring_wire_req w;

	if (!r->is_front)
		return -EINVAL;
	if (RING_FULL(fr))
		return -ENOSPC;
	r->codec->encode_req(req, &w);
	memcpy(front_req_slot(r, fr->req_prod_pvt), w.raw, r->codec->req_size);
	fr->req_prod_pvt++;
	return 0;
}

bool blkring_front_push_requests(blkring_t *r)
{
	blkif_front_ring_t *fr = &r->front.native;
	int notify;

	if (!r->is_front)
		return false;
	/* xen_wmb() inside: request slots before req_prod (pairs with the
	 * backend's smp_load_acquire() of req_prod); xen_mb() before reading
	 * req_event (pairs with RING_FINAL_CHECK_FOR_REQUESTS). */
	RING_PUSH_REQUESTS_AND_CHECK_NOTIFY(fr, notify);
	r->req_pushed = fr->req_prod_pvt;
	return notify;
}

void blkring_front_set_shared_req_prod(blkring_t *r, uint32_t value)
{
	if (!r->is_front)
		return;
	/* Pairs with the backend's smp_load_acquire() of req_prod. */
	smp_store_release(&r->front.native.sring->req_prod, value);
}

int blkring_front_get_response(blkring_t *r, struct blkrsp *rsp)
{
	blkif_front_ring_t *fr = &r->front.native;
	union blkring_wire_rsp w;
	RING_IDX rp, rc;

	if (!r->is_front)
		return -EINVAL;
	if (unlikely(r->broken))
		return -EPROTO;
	/* Pairs with the xen_wmb() in the backend's RING_PUSH_RESPONSES. */
	rp = smp_load_acquire(&fr->sring->rsp_prod);
	rc = fr->rsp_cons;
	/* Hardened blkfront: no more responses than requests we pushed. */
	if (unlikely(RING_RESPONSE_PROD_OVERFLOW(fr, rp) ||
		     rp - rc > r->req_pushed - rc)) {
		r->broken = true;
		return -EPROTO;
	}
	if (rc == rp)
		return 0;
	memset(&w, 0, sizeof(w));
	front_copy_response(r, rc, &w);
	fr->rsp_cons = rc + 1;
	r->codec->decode_rsp(&w, rsp);
	return 1;
}

bool blkring_front_final_check(blkring_t *r)
{
	blkif_front_ring_t *fr = &r->front.native;
	int more;

	if (!r->is_front)
		return false;
	if (r->broken)
		return true;
	/* Sets rsp_event = rsp_cons + 1, xen_mb() (pairs with the one in
	 * RING_PUSH_RESPONSES_AND_CHECK_NOTIFY), then looks again. */
	RING_FINAL_CHECK_FOR_RESPONSES(fr, more);
	return more;
}

bool blkring_front_peek(const blkring_t *r)
{
	const blkif_front_ring_t *fr = &r->front.native;

	if (!r->is_front)
		return false;
	if (r->broken)
		return true;
	return READ_ONCE(fr->sring->rsp_prod) != fr->rsp_cons;
}
