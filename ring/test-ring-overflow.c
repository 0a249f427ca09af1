/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ring-overflow.c: producer indexes that no honest peer can write.
 *
 * Back side (case C03): req_prod more than RING_SIZE ahead of the
 * responses marks the ring broken for good (-EPROTO), nothing is read
 * from or written to the ring because of it, and other rings are
 * unaffected.  Front side: rsp_prod ahead of the requests we pushed
 * (a bad backend) breaks the front ring the same way.
 */
#include <config.h>

#include <errno.h>

#include "test-ring.h"

/* The shared index page, whatever the ABI (header is common). */
static blkif_sring_t *sring(struct t_pair *p)
{
	return p->mem;
}

/* Break the back ring of p by publishing req_prod = value; check that it
 * stays broken and that nothing was consumed. */
static int t_expect_broken(struct t_pair *p, uint32_t value)
{
	struct blkreq req;
	uint32_t rsp_prod = sring(p)->rsp_prod;

	blkring_front_set_shared_req_prod(p->front, value);
	T_CHECK(blkring_back_get_request(p->back, &req) == -EPROTO);
	T_CHECK(blkring_broken(p->back));
	/* Sticky, even if the frontend "repairs" the index. */
	blkring_front_set_shared_req_prod(p->front, rsp_prod);
	T_CHECK(blkring_back_get_request(p->back, &req) == -EPROTO);
	T_CHECK(blkring_back_final_check(p->back));
	/* No response appeared. */
	T_CHECK(sring(p)->rsp_prod == rsp_prod);
	return 0;
}

/* C03: req_prod = RING_SIZE + 1 on a fresh ring. */
static int test_C03_ring_size_plus_1(void)
{
	unsigned int a;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;

		t_pair_init(&p, 1, t_abis[a]);
		T_CHECK(t_expect_broken(&p, blkring_size(p.back) + 1) == 0);
		t_pair_fini(&p);
	}
	return 0;
}

/* C03: req_prod = 2^31, on a 16-page ring. */
static int test_C03_plus_2_31(void)
{
	struct t_pair p;

	t_pair_init(&p, 16, BLKRING_ABI_X86_32);
	T_CHECK(t_expect_broken(&p, UINT32_C(1) << 31) == 0);
	t_pair_fini(&p);
	return 0;
}

/* C03: req_prod moved backwards (behind our responses) is the same as
 * a huge jump forwards in modular arithmetic. */
static int test_C03_backwards(void)
{
	struct t_pair p;
	struct blkreq req;
	unsigned int i;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	for (i = 0; i < 5; i++) {
		t_read_req(&req, i, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	}
	blkring_front_push_requests(p.front);
	for (i = 0; i < 5; i++) {
		T_CHECK(blkring_back_get_request(p.back, &req) == 1);
		T_CHECK(blkring_back_put_response(p.back, req.id, 0, 0) == 0);
	}
	blkring_back_push_responses(p.back);
	T_CHECK(t_expect_broken(&p, 3) == 0);
	t_pair_fini(&p);
	return 0;
}

/* C03 across the 2^32 wrap: RING_SIZE + 1 past responses near 2^32. */
static int test_C03_across_wrap(void)
{
	struct t_pair p;

	t_pair_init_at(&p, 1, BLKRING_ABI_X86_64, 0xfffffff8u);
	T_CHECK(t_expect_broken(&p, 0xfffffff8u + 32 + 1) == 0);
	t_pair_fini(&p);
	return 0;
}

/* Exactly RING_SIZE outstanding with requests still unanswered is fine:
 * with 8 consumed and unanswered, req_prod may reach rsp_prod_pvt + 32
 * but not + 33. */
static int test_C03_boundary(void)
{
	struct t_pair p;
	struct blkreq req;
	unsigned int i;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	for (i = 0; i < 8; i++) {
		t_read_req(&req, i, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	}
	blkring_front_push_requests(p.front);
	for (i = 0; i < 8; i++)
		T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	/* 32 outstanding relative to rsp_prod_pvt 0: legal. */
	blkring_front_set_shared_req_prod(p.front, 32);
	for (i = 8; i < 32; i++)
		T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	T_CHECK(blkring_back_get_request(p.back, &req) == 0);
	T_CHECK(!blkring_broken(p.back));
	/* One more than the ring holds: broken. */
	T_CHECK(t_expect_broken(&p, 33) == 0);
	t_pair_fini(&p);
	return 0;
}

/* Requests consumed before the break can still be answered (the backend
 * completes in-flight I/O before it disconnects). */
static int test_C03_in_flight_answered(void)
{
	struct t_pair p;
	struct blkreq req;
	struct blkrsp rsp;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	t_read_req(&req, 77, 0);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	blkring_front_push_requests(p.front);
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	blkring_front_set_shared_req_prod(p.front, 1000);
	T_CHECK(blkring_back_get_request(p.back, &req) == -EPROTO);
	T_CHECK(blkring_back_put_response(p.back, 77, BLKIF_OP_READ, 0) == 0);
	T_CHECK(blkring_back_put_response(p.back, 78, BLKIF_OP_READ, 0) == -ENOSPC);
	blkring_back_push_responses(p.back);
	T_CHECK(sring(&p)->rsp_prod == 1);
	/* The front (which still believes it pushed 1) reads it fine. */
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
	T_CHECK(rsp.id == 77);
	t_pair_fini(&p);
	return 0;
}

/* C03: one broken ring does not affect another. */
static int test_C03_other_ring_unaffected(void)
{
	struct t_pair bad, good;
	struct blkreq req;

	t_pair_init(&bad, 1, BLKRING_ABI_NATIVE);
	t_pair_init(&good, 1, BLKRING_ABI_NATIVE);
	T_CHECK(t_expect_broken(&bad, 0x80000000u) == 0);
	t_read_req(&req, 1, 0);
	T_CHECK(blkring_front_put_request(good.front, &req) == 0);
	blkring_front_push_requests(good.front);
	T_CHECK(blkring_back_get_request(good.back, &req) == 1);
	T_CHECK(!blkring_broken(good.back));
	t_pair_fini(&bad);
	t_pair_fini(&good);
	return 0;
}

/* Front: a backend publishing more responses than requests pushed. */
static int test_front_rsp_beyond_requests(void)
{
	struct t_pair p;
	struct blkreq req;
	struct blkrsp rsp;
	unsigned int i;

	t_pair_init(&p, 1, BLKRING_ABI_X86_32);
	for (i = 0; i < 2; i++) {
		t_read_req(&req, i, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	}
	blkring_front_push_requests(p.front);
	/* Bad backend: rsp_prod = 3 after only 2 requests. */
	smp_store_release(&sring(&p)->rsp_prod, 3);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == -EPROTO);
	T_CHECK(blkring_broken(p.front));
	smp_store_release(&sring(&p)->rsp_prod, 0);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == -EPROTO);
	T_CHECK(blkring_front_final_check(p.front));
	t_pair_fini(&p);
	return 0;
}

/* Front: rsp_prod more than RING_SIZE ahead (RING_RESPONSE_PROD_OVERFLOW). */
static int test_front_rsp_ring_size_plus_1(void)
{
	struct t_pair p;
	struct blkrsp rsp;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	smp_store_release(&sring(&p)->rsp_prod, 33);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == -EPROTO);
	T_CHECK(blkring_broken(p.front));
	t_pair_fini(&p);
	return 0;
}

/* Front: responses for requests written but not yet pushed are bogus
 * too (the backend cannot have seen them). */
static int test_front_rsp_for_unpushed(void)
{
	struct t_pair p;
	struct blkreq req;
	struct blkrsp rsp;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	t_read_req(&req, 1, 0);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	smp_store_release(&sring(&p)->rsp_prod, 1);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == -EPROTO);
	t_pair_fini(&p);
	return 0;
}

int main(void)
{
	T_RUN(test_C03_ring_size_plus_1);
	T_RUN(test_C03_plus_2_31);
	T_RUN(test_C03_backwards);
	T_RUN(test_C03_across_wrap);
	T_RUN(test_C03_boundary);
	T_RUN(test_C03_in_flight_answered);
	T_RUN(test_C03_other_ring_unaffected);
	T_RUN(test_front_rsp_beyond_requests);
	T_RUN(test_front_rsp_ring_size_plus_1);
	T_RUN(test_front_rsp_for_unpushed);
	return t_failed ? 1 : 0;
}
