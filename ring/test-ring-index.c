/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ring-index.c: ring sizes, index arithmetic across 2^32, the
 * notification hold-off and the final check (<xen/io/ring.h> semantics).
 */
#include <config.h>

#include <errno.h>

#include "test-ring.h"

/* RING_SIZE for 1..16 pages: 32 entries per page in all three ABIs
 * (4032/112 = 36 and 4032/108 = 37, rounded down to a power of two);
 * page counts that are not a power of two are refused. */
static int test_ring_size_table(void)
{
	unsigned int a, n;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		for (n = 0; n <= 2 * BLKRING_MAX_PAGES; n++) {
			bool pow2 = n >= 1 && n <= 16 && (n & (n - 1)) == 0;
			unsigned int expect = pow2 ? 32 * n : 0;

			T_CHECK(blkring_size_for(t_abis[a], n) == expect);
		}
	}
	/* Unknown ABI. */
	T_CHECK(blkring_size_for((enum blkring_abi)3, 1) == 0);
	return 0;
}

/* An attached ring reports the same size; bad page counts give EINVAL. */
static int test_attach_size(void)
{
	unsigned int a, order;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		for (order = 0; order <= BLKRING_MAX_PAGE_ORDER; order++) {
			struct t_pair p;

			t_pair_init(&p, 1u << order, t_abis[a]);
			T_CHECK(blkring_size(p.front) == 32u << order);
			T_CHECK(blkring_size(p.back) == 32u << order);
			T_CHECK(blkring_abi(p.back) == t_abis[a]);
			T_CHECK(blkring_front_free_slots(p.front) == 32u << order);
			t_pair_fini(&p);
		}
	}
	{
		void *mem = t_ring_pages(4);

		errno = 0;
		T_CHECK(blkring_back_attach(mem, 3, BLKRING_ABI_NATIVE) == NULL);
		T_CHECK(errno == EINVAL);
		errno = 0;
		T_CHECK(blkring_front_attach(mem, 0, BLKRING_ABI_NATIVE) == NULL);
		T_CHECK(errno == EINVAL);
		T_CHECK(blkring_back_attach(NULL, 1, BLKRING_ABI_NATIVE) == NULL);
		T_CHECK(blkring_back_attach(mem, 1, (enum blkring_abi)7) == NULL);
		free(mem);
	}
	return 0;
}

/* Front attach initialises the shared indexes like SHARED_RING_INIT. */
static int test_front_init(void)
{
	struct t_pair p;
	blkif_sring_t *s;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	s = p.mem;
	T_CHECK(s->req_prod == 0 && s->rsp_prod == 0);
	T_CHECK(s->req_event == 1 && s->rsp_event == 1);
	t_pair_fini(&p);
	return 0;
}

/* Move `count` requests through the pair in batches of `batch`, checking
 * ids and order, starting at whatever index the rings are at. */
static int t_stream(struct t_pair *p, unsigned int count, unsigned int batch,
		    uint64_t *next_id)
{
	uint64_t sent = *next_id, got = *next_id, answered = *next_id;
	unsigned int done = 0;

	while (done < count) {
		unsigned int i, n = count - done < batch ? count - done : batch;
		struct blkrsp rsp;
		struct blkreq req;

		for (i = 0; i < n; i++) {
			t_read_req(&req, sent++, 8);
			T_CHECK(blkring_front_put_request(p->front, &req) == 0);
		}
		blkring_front_push_requests(p->front);
		for (i = 0; i < n; i++) {
			T_CHECK(blkring_back_get_request(p->back, &req) == 1);
			T_CHECK(req.id == got);
			T_CHECK(req.seg[0].gref == 100 + (grant_ref_t)got);
			got++;
			T_CHECK(blkring_back_put_response(p->back, req.id,
							  req.operation,
							  BLKIF_RSP_OKAY) == 0);
		}
		T_CHECK(blkring_back_get_request(p->back, &req) == 0);
		blkring_back_push_responses(p->back);
		for (i = 0; i < n; i++) {
			T_CHECK(blkring_front_get_response(p->front, &rsp) == 1);
			T_CHECK(rsp.id == answered);
			T_CHECK(rsp.status == BLKIF_RSP_OKAY);
			T_CHECK(rsp.operation == BLKIF_OP_READ);
			answered++;
		}
		T_CHECK(blkring_front_get_response(p->front, &rsp) == 0);
		done += n;
	}
	*next_id = sent;
	return 0;
}

/* Indexes are free-running 32-bit counters: start 16 below 2^32 and run
 * three ring-fulls across the wrap, in every ABI, with full batches. */
static int test_wraparound(void)
{
	unsigned int a;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		uint64_t id = 1;
		blkif_sring_t *s;

		t_pair_init_at(&p, 1, t_abis[a], 0xfffffff0u);
		T_CHECK(t_stream(&p, 3 * 32, 32, &id) == 0);
		T_CHECK(t_stream(&p, 50, 7, &id) == 0);
		s = p.mem;
		T_CHECK(s->req_prod == 0xfffffff0u + 3 * 32 + 50);
		T_CHECK(s->req_prod < 0x100);	/* it did wrap */
		T_CHECK(s->rsp_prod == s->req_prod);
		T_CHECK(!blkring_broken(p.back) && !blkring_broken(p.front));
		t_pair_fini(&p);
	}
	return 0;
}

/* A full ring (exactly RING_SIZE outstanding) is legal, one more is not
 * possible from an honest frontend. */
static int test_full_ring(void)
{
	struct t_pair p;
	struct blkreq req;
	unsigned int i;

	t_pair_init_at(&p, 1, BLKRING_ABI_X86_32, 0xffffffe0u);
	for (i = 0; i < 32; i++) {
		t_read_req(&req, i, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	}
	T_CHECK(blkring_front_free_slots(p.front) == 0);
	T_CHECK(blkring_front_put_request(p.front, &req) == -ENOSPC);
	blkring_front_push_requests(p.front);
	for (i = 0; i < 32; i++) {
		T_CHECK(blkring_back_get_request(p.back, &req) == 1);
		T_CHECK(req.id == i);
	}
	T_CHECK(blkring_back_get_request(p.back, &req) == 0);
	T_CHECK(!blkring_broken(p.back));
	t_pair_fini(&p);
	return 0;
}

/* Request notification hold-off: the frontend notifies only when the
 * backend asked (req_event), i.e. after its final check. */
static int test_notify_requests(void)
{
	struct t_pair p;
	struct blkreq req;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	t_read_req(&req, 1, 0);
	/* req_event = 1 initially: the first request notifies. */
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	T_CHECK(blkring_front_push_requests(p.front));
	/* The backend is awake and has not re-armed: no notification. */
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	T_CHECK(!blkring_front_push_requests(p.front));
	/* Backend drains, final check finds nothing and re-arms. */
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	T_CHECK(blkring_back_get_request(p.back, &req) == 0);
	T_CHECK(!blkring_back_final_check(p.back));
	T_CHECK(((blkif_sring_t *)p.mem)->req_event == 3);
	/* Now the next push must notify. */
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	T_CHECK(blkring_front_push_requests(p.front));
	/* An empty push never notifies. */
	T_CHECK(!blkring_front_push_requests(p.front));
	t_pair_fini(&p);
	return 0;
}

/* Response notification hold-off, the mirror image. */
static int test_notify_responses(void)
{
	struct t_pair p;
	struct blkreq req;
	struct blkrsp rsp;
	unsigned int i;

	t_pair_init(&p, 1, BLKRING_ABI_X86_64);
	for (i = 0; i < 3; i++) {
		t_read_req(&req, i, 0);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	}
	blkring_front_push_requests(p.front);
	for (i = 0; i < 3; i++)
		T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	/* rsp_event = 1: the first response notifies. */
	T_CHECK(blkring_back_put_response(p.back, 0, 0, 0) == 0);
	T_CHECK(blkring_back_push_responses(p.back));
	/* Frontend has not re-armed: a second push stays quiet. */
	T_CHECK(blkring_back_put_response(p.back, 1, 0, 0) == 0);
	T_CHECK(!blkring_back_push_responses(p.back));
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 0);
	T_CHECK(!blkring_front_final_check(p.front));
	T_CHECK(blkring_back_put_response(p.back, 2, 0, 0) == 0);
	T_CHECK(blkring_back_push_responses(p.back));
	T_CHECK(!blkring_back_push_responses(p.back));
	t_pair_fini(&p);
	return 0;
}

/* The final check closes the race: a request pushed after the backend
 * saw an empty ring (but before it slept) is found. */
static int test_final_check_race(void)
{
	struct t_pair p;
	struct blkreq req;
	struct blkrsp rsp;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	T_CHECK(blkring_back_get_request(p.back, &req) == 0);
	/* Frontend pushes while the backend is between its last get and
	 * its final check (no notification because req_event is stale
	 * would be lost otherwise). */
	t_read_req(&req, 9, 0);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	blkring_front_push_requests(p.front);
	T_CHECK(blkring_back_final_check(p.back));
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	T_CHECK(req.id == 9);
	T_CHECK(!blkring_back_final_check(p.back));
	/* Same on the front for responses. */
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 0);
	T_CHECK(blkring_back_put_response(p.back, 9, BLKIF_OP_READ, 0) == 0);
	blkring_back_push_responses(p.back);
	T_CHECK(blkring_front_final_check(p.front));
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
	T_CHECK(!blkring_front_final_check(p.front));
	t_pair_fini(&p);
	return 0;
}

/* Peeking (a polling consumer) sees new entries without arming the event
 * index: while the consumer polls, the producer's pushes stay quiet. */
static int test_peek(void)
{
	struct t_pair p;
	struct blkreq req;
	struct blkrsp rsp;
	blkif_sring_t *sr;

	t_pair_init(&p, 1, BLKRING_ABI_X86_32);
	sr = p.mem;
	T_CHECK(!blkring_back_peek(p.back));
	T_CHECK(!blkring_front_peek(p.front));
	T_CHECK(!blkring_back_peek(p.front));	/* wrong side: never */
	t_read_req(&req, 1, 0);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	T_CHECK(!blkring_back_peek(p.back));	/* not pushed yet */
	T_CHECK(blkring_front_push_requests(p.front));	/* req_event = 1 */
	T_CHECK(blkring_back_peek(p.back));
	T_CHECK(sr->req_event == 1);		/* peeking did not arm */
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	T_CHECK(!blkring_back_peek(p.back));
	/* the backend keeps polling: the next push does not notify */
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	T_CHECK(!blkring_front_push_requests(p.front));
	T_CHECK(blkring_back_peek(p.back));
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	/* responses: the same on the other side */
	T_CHECK(blkring_back_put_response(p.back, 1, BLKIF_OP_READ, 0) == 0);
	T_CHECK(!blkring_front_peek(p.front));
	T_CHECK(blkring_back_push_responses(p.back));	/* rsp_event = 1 */
	T_CHECK(blkring_front_peek(p.front));
	T_CHECK(sr->rsp_event == 1);
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
	T_CHECK(!blkring_front_peek(p.front));
	T_CHECK(blkring_back_put_response(p.back, 1, BLKIF_OP_READ, 0) == 0);
	T_CHECK(!blkring_back_push_responses(p.back));
	T_CHECK(blkring_front_peek(p.front));
	/* a bogus producer index reads as "more" until the get breaks it */
	T_CHECK(blkring_front_get_response(p.front, &rsp) == 1);
	blkring_front_set_shared_req_prod(p.front, 1000);
	T_CHECK(blkring_back_peek(p.back));
	T_CHECK(blkring_back_get_request(p.back, &req) == -EPROTO);
	T_CHECK(blkring_back_peek(p.back));
	t_pair_fini(&p);
	return 0;
}

/* One response per consumed request: more is a backend bug (-ENOSPC),
 * and front/back calls on the wrong side are refused. */
static int test_response_accounting(void)
{
	struct t_pair p;
	struct blkreq req;

	t_pair_init(&p, 1, BLKRING_ABI_NATIVE);
	T_CHECK(blkring_back_put_response(p.back, 1, 0, 0) == -ENOSPC);
	t_read_req(&req, 1, 0);
	T_CHECK(blkring_front_put_request(p.front, &req) == 0);
	blkring_front_push_requests(p.front);
	T_CHECK(blkring_back_get_request(p.back, &req) == 1);
	T_CHECK(blkring_back_put_response(p.back, 1, 0, 0) == 0);
	T_CHECK(blkring_back_put_response(p.back, 1, 0, 0) == -ENOSPC);
	T_CHECK(blkring_back_get_request(p.front, &req) == -EINVAL);
	T_CHECK(blkring_front_put_request(p.back, &req) == -EINVAL);
	t_pair_fini(&p);
	return 0;
}

/*
 * A backend that attaches to a ring already in use (a frontend
 * reconnecting with its old ring) starts at the shared rsp_prod, as
 * Linux blkback's xen_blkif_map does: answered requests are not
 * consumed again, the next one is; a ring whose req_prod is more than
 * its size past rsp_prod is refused with EIO.
 */
static int test_back_attach_resumes(void)
{
	unsigned int a;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		struct blkreq req, got;
		struct blkrsp rsp;
		blkif_sring_t *s;
		uint64_t id;

		t_pair_init(&p, 1, t_abis[a]);
		for (id = 1; id <= 3; id++) {
			t_read_req(&req, id, id * 8);
			T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		}
		blkring_front_push_requests(p.front);
		for (id = 1; id <= 3; id++) {
			T_CHECK(blkring_back_get_request(p.back, &got) == 1);
			T_CHECK(blkring_back_put_response(p.back, got.id, got.op,
							  BLKIF_RSP_OKAY) == 0);
		}
		blkring_back_push_responses(p.back);
		for (id = 1; id <= 3; id++)
			T_CHECK(blkring_front_get_response(p.front, &rsp) == 1 &&
				rsp.id == id);

		/* the backend reconnects to the same pages */
		blkring_free(p.back);
		p.back = blkring_back_attach(p.mem, 1, t_abis[a]);
		T_CHECK(p.back != NULL);
		T_CHECK(blkring_back_get_request(p.back, &got) == 0);
		t_read_req(&req, 4, 32);
		T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		blkring_front_push_requests(p.front);
		T_CHECK(blkring_back_get_request(p.back, &got) == 1 && got.id == 4);
		T_CHECK(blkring_back_put_response(p.back, got.id, got.op,
						  BLKIF_RSP_OKAY) == 0);
		blkring_back_push_responses(p.back);
		T_CHECK(blkring_front_get_response(p.front, &rsp) == 1 &&
			rsp.id == 4 && rsp.status == BLKIF_RSP_OKAY);
		s = p.mem;
		T_CHECK(s->rsp_prod == 4);

		/* more outstanding than the ring holds: refused */
		s->req_prod = s->rsp_prod + 33;
		errno = 0;
		T_CHECK(blkring_back_attach(p.mem, 1, t_abis[a]) == NULL);
		T_CHECK(errno == EIO);
		s->req_prod = s->rsp_prod + 32;	/* a full ring is legal */
		{
			blkring_t *b = blkring_back_attach(p.mem, 1, t_abis[a]);

			T_CHECK(b != NULL);
			blkring_free(b);
		}
		t_pair_fini(&p);
	}
	return 0;
}

/* A successor resumes at the consumer index its predecessor recorded:
 * requests before it are not taken again, responses go on at the shared
 * rsp_prod; an index outside rsp_prod..req_prod is refused. */
static int test_back_attach_resume_at(void)
{
	unsigned int a;

	for (a = 0; a < ARRAY_SIZE(t_abis); a++) {
		struct t_pair p;
		struct blkreq req, got;
		struct blkrsp rsp;
		uint64_t id;

		t_pair_init(&p, 1, t_abis[a]);
		for (id = 1; id <= 4; id++) {
			t_read_req(&req, id, id * 8);
			T_CHECK(blkring_front_put_request(p.front, &req) == 0);
		}
		blkring_front_push_requests(p.front);
		/* the predecessor took 1..3, answered 2 (shown), died */
		for (id = 1; id <= 3; id++)
			T_CHECK(blkring_back_get_request(p.back, &got) == 1 && got.id == id);
		T_CHECK(blkring_back_put_response(p.back, 2, got.op, BLKIF_RSP_OKAY) == 0);
		blkring_back_push_responses(p.back);
		T_CHECK(blkring_back_req_cons(p.back) == 3);
		T_CHECK(blkring_back_rsp_prod_pvt(p.back) == 1);
		T_CHECK(blkring_back_rsp_pushed(p.back) == 1);
		blkring_free(p.back);

		/* out of range: before rsp_prod, past req_prod */
		T_CHECK(blkring_back_attach_resume(p.mem, 1, t_abis[a], 0) == NULL && errno == EIO);
		T_CHECK(blkring_back_attach_resume(p.mem, 1, t_abis[a], 5) == NULL && errno == EIO);

		p.back = blkring_back_attach_resume(p.mem, 1, t_abis[a], 3);
		T_CHECK(p.back != NULL);
		/* the next request taken is 4, not 1..3 again */
		T_CHECK(blkring_back_get_request(p.back, &got) == 1 && got.id == 4);
		T_CHECK(blkring_back_get_request(p.back, &got) == 0);
		/* answers for 1, 3 (from the record) and 4 go on at index 1 */
		T_CHECK(blkring_back_put_response(p.back, 1, BLKIF_OP_READ, BLKIF_RSP_OKAY) == 0);
		T_CHECK(blkring_back_put_response(p.back, 3, BLKIF_OP_READ, BLKIF_RSP_OKAY) == 0);
		T_CHECK(blkring_back_put_response(p.back, 4, BLKIF_OP_READ, BLKIF_RSP_OKAY) == 0);
		T_CHECK(blkring_back_put_response(p.back, 5, BLKIF_OP_READ, BLKIF_RSP_OKAY) ==
			-ENOSPC);
		blkring_back_push_responses(p.back);
		T_CHECK(blkring_front_get_response(p.front, &rsp) == 1 && rsp.id == 2);
		T_CHECK(blkring_front_get_response(p.front, &rsp) == 1 && rsp.id == 1);
		T_CHECK(blkring_front_get_response(p.front, &rsp) == 1 && rsp.id == 3);
		T_CHECK(blkring_front_get_response(p.front, &rsp) == 1 && rsp.id == 4);
		T_CHECK(blkring_front_get_response(p.front, &rsp) == 0);
		t_pair_fini(&p);
	}
	return 0;
}

int main(void)
{
	T_RUN(test_ring_size_table);
	T_RUN(test_attach_size);
	T_RUN(test_front_init);
	T_RUN(test_wraparound);
	T_RUN(test_full_ring);
	T_RUN(test_notify_requests);
	T_RUN(test_notify_responses);
	T_RUN(test_final_check_race);
	T_RUN(test_response_accounting);
	T_RUN(test_peek);
	T_RUN(test_back_attach_resumes);
	T_RUN(test_back_attach_resume_at);
	return t_failed ? 1 : 0;
}
