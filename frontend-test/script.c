/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * script.c: "blkfront-test script FILE", exact request sequences.
 *
 * The device is opened in raw mode (BLKFRONT_RAW): the handshake is the
 * normal one, then every request is written to queue 0's ring exactly as
 * the script says (blkring_front_put_request does not validate), so a
 * script can play a hostile or buggy frontend.  The language is described
 * in blkfront-test.1 (SCRIPT FORMAT) and frontend-test/README.script.
 *
 * One step per line; '#' starts a comment.  Words are COMMAND followed by
 * KEY=VALUE or positional arguments.  Numbers are decimal or 0x hex.
 * The first failing check prints "FILE:LINE: message" and the command
 * exits 1; a malformed line exits 2.
 *
 * This file runs the steps: it sends the requests, collects and checks
 * the responses, and keeps the script's state (struct sc).  Reading a
 * line's words (numbers, names, page references, the arguments of send
 * and wait) is script-parse.c's (script-parse.h); each line is read just
 * before it runs, so a step's syntax error still comes after the steps
 * above it have run.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xen/io/blkif.h>
#include <xen/io/xenbus.h>

#include "compiler.h"
#include "barrier.h"
#include "log.h"
#include "xbus.h"
#include "ft.h"
#include "script-parse.h"

#define SC_MAX_PENDING	4096

struct sc_sent {
	uint64_t id;
	uint8_t op;
	unsigned int line;
	unsigned int ring;		/* s->ring_gen when it was sent */
	bool answered;			/* its response is in got[] */
	grant_ref_t *grefs;		/* its data and indirect grants */
	unsigned int ngrefs;
};

struct sc_got {
	struct blkrsp rsp;
	unsigned int ring;
};

struct sc_snap {
	void *page;
	unsigned char *copy;
};

struct sc {
	struct sc_where at;		/* the script and the step's line */
	blkfront_t *bf;
	xenops_t *x;
	blkring_t *ring;
	uint64_t next_id;
	struct sc_sent sent[SC_MAX_PENDING];
	unsigned int nsent;
	struct sc_got got[SC_MAX_PENDING];
	unsigned int ngot;
	unsigned int ring_gen;		/* ring-new steps so far */
	bool closed;			/* "close" ran: nothing more */
	struct sc_snap *snap;		/* "snapshot": pages and their copies */
	unsigned int nsnap;
	struct sc_grant grants[32];
	unsigned int ngrants;
	unsigned int steps;
	uint32_t nput;			/* requests put = our private req_prod */
	blkif_vdev_t handle;
};

static int resolve_gref_page(struct sc *s, grant_ref_t gref, void **page);
static int sc_notify(struct sc *s);

/* A step whose outcome was not the expected one: returns 1. */
static int ATTRIBUTE_FORMAT_PRINTF(2, 3)
sc_fail(struct sc *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sc_vreport(&s->at, "", fmt, ap);
	va_end(ap);
	return 1;
}

/* Is gref a page of a request still waiting for its response?  (A
 * script may put one page in several requests; Linux never does.) */
static bool
gref_in_flight(const struct sc *s, grant_ref_t gref)
{
	unsigned int i, k;

	for (i = 0; i < s->nsent; i++)
		for (k = 0; !s->sent[i].answered && k < s->sent[i].ngrefs; k++)
			if (s->sent[i].grefs[k] == gref)
				return true;
	return false;
}

/*
 * A response is checked as hardened Linux blkfront checks one
 * (blkif_interrupt): it must answer a request sent on this ring and not
 * answered yet, with that request's operation (an INDIRECT's
 * indirect_op); and without persistent grants the backend must have
 * unmapped every grant of the request by now (blkif_completion's
 * gnttab_try_end_foreign_access; we end access and grant again, as the
 * pool pages stay ours for the next request).  Anything else fails the
 * script.
 */
static int
check_response(struct sc *s, const struct blkrsp *rsp)
{
	struct sc_sent *o = NULL;
	unsigned int i;

	for (i = 0; i < s->nsent; i++)
		if (s->sent[i].id == rsp->id && s->sent[i].ring == s->ring_gen &&
		    !s->sent[i].answered) {
			o = &s->sent[i];
			break;
		}
	if (!o)
		return sc_fail(s, "response id=%" PRIu64 " op=%u status=%s on ring %u: no such "
			       "request outstanding (never sent on this ring, or answered already)",
			       rsp->id, rsp->operation, sc_status_name(rsp->status), s->ring_gen);
	if (rsp->operation != o->op)
		return sc_fail(s, "response id=%" PRIu64 " has operation %u, its request (line %u) "
			       "%u", rsp->id, rsp->operation, o->line, o->op);
	o->answered = true;
	if (blkfront_info(s->bf)->feature_persistent)
		return 0;
	for (i = 0; i < o->ngrefs; i++) {
		void *page;

		if (resolve_gref_page(s, o->grefs[i], &page) < 0 ||
		    gref_in_flight(s, o->grefs[i]))
			continue;	/* not ours, or another request's too */
		if (xenops_end_access(s->x, page, 1) == -EBUSY)
			return sc_fail(s, "response id=%" PRIu64 " (line %u): the backend still maps "
				       "gref %u of the request (no persistent grants)", rsp->id,
				       o->line, o->grefs[i]);
		xenops_grant_again(s->x, page, 1);
	}
	return 0;
}

/* Move responses off the ring into s->got until timeout or want_id seen. */
static int
collect(struct sc *s, unsigned int timeout_ms, bool stop_at_first)
{
	struct blkrsp rsp;
	int r;

	for (;;) {
		if (s->ngot == SC_MAX_PENDING)
			return sc_fail(s, "more than %u unclaimed responses", SC_MAX_PENDING);
		r = blkfront_raw_get_response(s->bf, &rsp, timeout_ms);
		if (r < 0)
			return sc_fail(s, "response ring broken: rsp_prod overflow (%s)",
				       strerror(-r));
		if (r == 0)
			return 0;
		if (log_verbose)
			fprintf(stderr, "%s:%u: response id=%#" PRIx64 " op=%u status=%s\n",
				s->at.file, s->at.line, rsp.id, rsp.operation,
				sc_status_name(rsp.status));
		r = check_response(s, &rsp);
		if (r)
			return r;
		s->got[s->ngot].rsp = rsp;
		s->got[s->ngot++].ring = s->ring_gen;
		if (stop_at_first)
			return 0;
		timeout_ms = 0;
	}
}

/* Take a collected response to id (on ring ring, or any when < 0);
 * forget its request. */
static int
take(struct sc *s, uint64_t id, int ring, struct blkrsp *out)
{
	unsigned int i, g;

	for (i = 0; i < s->ngot; i++)
		if (s->got[i].rsp.id == id && (ring < 0 || s->got[i].ring == (unsigned int)ring)) {
			*out = s->got[i].rsp;
			g = s->got[i].ring;
			s->got[i] = s->got[--s->ngot];
			for (i = 0; i < s->nsent; i++)
				if (s->sent[i].id == id && s->sent[i].ring == g && s->sent[i].answered) {
					free(s->sent[i].grefs);
					/* keep the order: wait-all goes oldest first */
					memmove(&s->sent[i], &s->sent[i + 1],
						(s->nsent - i - 1) * sizeof(s->sent[0]));
					s->nsent--;
					break;
				}
			return 1;
		}
	return 0;
}

/* Wait for the response to id (on ring, or any when < 0); check status
 * (want_st unless NULL). */
static int
wait_id(struct sc *s, uint64_t id, int ring, const int *want_st, const uint8_t *want_op,
	unsigned int timeout_ms)
{
	uint64_t deadline = ft_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct blkrsp rsp;
	int r;

	while (!take(s, id, ring, &rsp)) {
		uint64_t now = ft_now_ns();

		if (now >= deadline)
			return sc_fail(s, "no response to id %" PRIu64 " within %u ms", id,
				       timeout_ms);
		r = collect(s, (unsigned int)((deadline - now) / 1000000ull) + 1, true);
		if (r)
			return r;
	}
	if (want_st && rsp.status != *want_st)
		return sc_fail(s, "id %" PRIu64 ": expected status=%s, got %s", id,
			       sc_status_name(*want_st), sc_status_name(rsp.status));
	if (want_op && rsp.operation != *want_op)
		return sc_fail(s, "id %" PRIu64 ": expected operation %u in the response, got %u",
			       id, *want_op, rsp.operation);
	return 0;
}

static int
cmd_send(struct sc *s, int argc, char **argv)
{
	struct blkreq *req = calloc(1, sizeof(*req));
	const struct sc_names nm = { s->bf, s->grants, s->ngrants };
	struct sc_send_cmd cmd;
	unsigned int i;
	int r = 0;

	if (!req)
		return sc_fail(s, "out of memory");
	req->id = s->next_id;
	req->handle = s->handle;
	r = sc_parse_send(&s->at, &nm, argc, argv, req, &cmd);
	if (r)
		goto out;
	if (req->operation == BLKIF_OP_INDIRECT) {
		struct blkif_request_segment *d;
		unsigned int npages = (cmd.nseg + BLKRING_SEGS_PER_INDIRECT_PAGE - 1) /
			BLKRING_SEGS_PER_INDIRECT_PAGE;

		req->op = cmd.ind_op;
		/* default indirect pages: the last pool pages */
		for (i = cmd.nigref; i < npages; i++) {
			void *pg;

			pg = blkfront_raw_page(s->bf, blkfront_raw_nr_pages(s->bf) - 1 - i,
					       &cmd.igrefs[i]);
			if (!pg) {
				r = sc_fail(s, "no pool page for indirect page %u", i);
				goto out;
			}
		}
		if (cmd.nigref < npages)
			cmd.nigref = npages;
		for (i = 0; i < cmd.nseg; i++) {
			void *pg;
			unsigned int pi = i / BLKRING_SEGS_PER_INDIRECT_PAGE;

			/* igref=RAW that is none of our pages (a gref the
			 * backend must refuse to map, like seg=0xffffffff):
			 * sent as it is, its segments written nowhere */
			if (resolve_gref_page(s, cmd.igrefs[pi], &pg) < 0)
				continue;
			d = pg;
			d[i % BLKRING_SEGS_PER_INDIRECT_PAGE].gref = cmd.segs[i].gref;
			d[i % BLKRING_SEGS_PER_INDIRECT_PAGE].first_sect = cmd.segs[i].first_sect;
			d[i % BLKRING_SEGS_PER_INDIRECT_PAGE].last_sect = cmd.segs[i].last_sect;
		}
		req->nr_indirect_pages = cmd.nigref;
		for (i = 0; i < cmd.nigref; i++)
			req->indirect_grefs[i] = cmd.igrefs[i];
	} else {
		for (i = 0; i < cmd.nseg && i < BLKIF_MAX_SEGMENTS_PER_REQUEST; i++)
			req->seg[i] = cmd.segs[i];
	}

	if (s->nsent == SC_MAX_PENDING) {
		r = sc_fail(s, "too many outstanding requests");
		goto out;
	}
	if (blkring_front_free_slots(s->ring) == 0) {
		/* more in flight than the ring has slots: as a real frontend,
		 * push what is queued and wait for a response to free one */
		uint64_t deadline = ft_now_ns() + (uint64_t)cmd.timeout * 1000000ull;

		blkring_front_push_requests(s->ring);
		r = sc_notify(s);
		while (!r && blkring_front_free_slots(s->ring) == 0) {
			if (ft_now_ns() >= deadline) {
				r = sc_fail(s, "ring full, and no response freed a slot within %u ms",
					    cmd.timeout);
				break;
			}
			r = collect(s, 10, true);
		}
		if (r)
			goto out;
	}
	r = blkring_front_put_request(s->ring, req);
	if (r) {
		r = sc_fail(s, "put request: %s", strerror(-r));
		goto out;
	}
	s->nput++;
	{
		struct sc_sent *o = &s->sent[s->nsent];
		unsigned int k;

		memset(o, 0, sizeof(*o));
		o->id = req->id;
		o->op = req->op;
		o->line = s->at.line;
		o->ring = s->ring_gen;
		o->grefs = calloc(cmd.nseg + cmd.nigref + 1, sizeof(*o->grefs));
		if (!o->grefs) {
			r = sc_fail(s, "out of memory");
			goto out;
		}
		for (k = 0; k < cmd.nseg; k++)
			o->grefs[o->ngrefs++] = cmd.segs[k].gref;
		for (k = 0; req->operation == BLKIF_OP_INDIRECT && k < cmd.nigref; k++)
			o->grefs[o->ngrefs++] = cmd.igrefs[k];
	}
	s->nsent++;
	if (req->id == s->next_id)
		s->next_id++;
	if (cmd.push) {
		blkring_front_push_requests(s->ring);
		r = sc_notify(s);
		if (r)
			goto out;
	}
	if (cmd.have_expect && cmd.expect_none) {
		r = collect(s, cmd.timeout, false);
		if (!r && take(s, req->id, (int)s->ring_gen, &(struct blkrsp){ 0 }))
			r = sc_fail(s, "id %" PRIu64 ": expected no response, got one", req->id);
	} else if (cmd.have_expect) {
		r = wait_id(s, req->id, (int)s->ring_gen, &cmd.want_st, &req->op, cmd.timeout);
	}
out:
	free(req);
	return r;
}

/* Find the page of one of our grefs (pool or named). */
static int
resolve_gref_page(struct sc *s, grant_ref_t gref, void **page)
{
	unsigned int i, n = blkfront_raw_nr_pages(s->bf);
	grant_ref_t g;

	for (i = 0; i < n; i++) {
		void *p = blkfront_raw_page(s->bf, i, &g);

		if (g == gref) {
			*page = p;
			return 0;
		}
	}
	for (i = 0; i < s->ngrants; i++)
		if (s->grants[i].gref == gref) {
			*page = s->grants[i].page;
			return 0;
		}
	*page = NULL;
	return -1;
}

/*
 * Notify the backend.  -ENOTCONN (the backend closed its end, e.g. after
 * declaring the ring broken) is a fact the next steps check, not a
 * script failure; anything else is.
 */
static int
sc_notify(struct sc *s)
{
	int r = blkfront_raw_notify(s->bf);

	if (r == -ENOTCONN) {
		if (log_verbose)
			fprintf(stderr, "%s:%u: notify: the backend closed the event channel\n",
				s->at.file, s->at.line);
		return 0;
	}
	return r ? sc_fail(s, "notify failed: %s", strerror(-r)) : 0;
}

static int
cmd_wait(struct sc *s, int argc, char **argv)
{
	struct sc_wait_cmd w;
	int r = sc_parse_wait(&s->at, argc, argv, s->ring_gen, &w);

	if (r)
		return r;
	return wait_id(s, w.id, w.ring, w.have_st ? &w.st : NULL, w.have_op ? &w.op : NULL,
		       w.timeout);
}

static int
cmd_wait_all(struct sc *s, int argc, char **argv)
{
	struct sc_wait_all_cmd w;
	int r = sc_parse_wait_all(&s->at, argc, argv, &w);

	while (!r && s->nsent) {
		struct sc_sent sent = s->sent[0];

		r = wait_id(s, sent.id, (int)sent.ring, w.have_st ? &w.st : NULL, &sent.op,
			    w.timeout);
		if (r)
			fprintf(stderr, "%s:%u: (request sent at line %u)\n", s->at.file,
				s->at.line, sent.line);
	}
	return r;
}

static int
cmd_expect_none(struct sc *s, int argc, char **argv)
{
	unsigned int timeout = 500;
	int r = sc_get_timeout(&s->at, argc, argv, 1, &timeout);

	if (r)
		return r;
	r = collect(s, timeout, false);
	if (r)
		return r;
	if (s->ngot)
		return sc_fail(s, "expected no response, got %u (first: id %" PRIu64 " status %s)",
			       s->ngot, s->got[0].rsp.id, sc_status_name(s->got[0].rsp.status));
	return 0;
}

/*
 * ring-new [wait=MS] [keys=single|multi]: the backend must have unmapped
 * the ring (within MS, default 0: now); responses still in it are
 * collected (and checked, as answers on that ring: "wait id=N ring=K"
 * takes them); then a new ring and event channel replace it and their
 * keys are written (multi: ring-page-order and ring-ref0.. even for one
 * page), no state change.  Later requests go on the new ring (ring
 * number + 1).
 */
static int
cmd_ring_new(struct sc *s, int argc, char **argv)
{
	unsigned int wait = 0;
	bool multi = false;
	int i, r;

	for (i = 1; i < argc; i++)
		if (strncmp(argv[i], "wait=", 5) == 0) {
			uint64_t n;

			if (sc_num(argv[i] + 5, &n))
				return sc_syntax(&s->at, "ring-new: bad wait=%s", argv[i] + 5);
			wait = (unsigned int)n;
		} else if (strcmp(argv[i], "keys=multi") == 0) {
			multi = true;
		} else if (strcmp(argv[i], "keys=single") != 0) {
			return sc_syntax(&s->at, "ring-new [wait=MS] [keys=single|multi]");
		}
	r = blkfront_raw_end_ring_access(s->bf, wait);
	if (r == -EBUSY)
		return sc_fail(s, "ring-new: the backend still maps ring %u after %u ms",
			       s->ring_gen, wait);
	if (r)
		return sc_fail(s, "ring-new: ending access to ring %u: %s", s->ring_gen,
			       strerror(-r));
	r = collect(s, 0, false);
	if (r)
		return r;
	r = blkfront_raw_new_ring(s->bf, multi);
	if (r)
		return sc_fail(s, "ring-new: %s", strerror(-r));
	s->ring = blkfront_raw_ring(s->bf);
	s->ring_gen++;
	s->nput = 0;
	return 0;
}

/* Every page a snapshot covers: the ring's, the pool's, the named grants'. */
static unsigned int
snap_pages(struct sc *s, void **pages, unsigned int max)
{
	unsigned int n = 0, i, nring;
	char *ring = blkfront_raw_ring_pages(s->bf, &nring);

	for (i = 0; i < nring && n < max; i++)
		pages[n++] = ring + (size_t)i * XEN_PAGE_SIZE;
	for (i = 0; i < blkfront_raw_nr_pages(s->bf) && n < max; i++)
		pages[n++] = blkfront_raw_page(s->bf, i, NULL);
	for (i = 0; i < s->ngrants && n < max; i++)
		pages[n++] = s->grants[i].page;
	return n;
}

/*
 * snapshot: remember the content of every page we have granted.  First
 * wait (up to 1 s) for the backend to finish its pass over the ring: a
 * backend that answered our last request may still re-arm req_event
 * (RING_FINAL_CHECK_FOR_REQUESTS: req_cons + 1) a moment later, a write
 * that belongs before the snapshot, not after it.
 */
static int
cmd_snapshot(struct sc *s)
{
	unsigned int max = BLKRING_MAX_PAGES + blkfront_raw_nr_pages(s->bf) + s->ngrants, i;
	unsigned int nring;
	/* every ABI's shared ring starts with the same header (ring.h) */
	struct blkif_sring *sr = blkfront_raw_ring_pages(s->bf, &nring);
	uint64_t deadline = ft_now_ns() + 1000000000ull;
	void **pages;

	while (READ_ONCE(sr->req_event) != READ_ONCE(sr->req_prod) + 1 &&
	       ft_now_ns() < deadline)
		usleep(1000);
	pages = calloc(max, sizeof(*pages));
	if (!pages)
		return sc_fail(s, "out of memory");
	for (i = 0; i < s->nsnap; i++)
		free(s->snap[i].copy);
	free(s->snap);
	s->nsnap = snap_pages(s, pages, max);
	s->snap = calloc(s->nsnap, sizeof(*s->snap));
	for (i = 0; s->snap && i < s->nsnap; i++) {
		s->snap[i].page = pages[i];
		s->snap[i].copy = malloc(XEN_PAGE_SIZE);
		if (!s->snap[i].copy)
			break;
		memcpy(s->snap[i].copy, pages[i], XEN_PAGE_SIZE);
	}
	free(pages);
	if (!s->snap || i < s->nsnap)
		return sc_fail(s, "out of memory");
	return 0;
}

/*
 * untouched: since "snapshot", no page we granted changed, and the
 * backend maps none of them now (an earlier instance's ring and pages,
 * once a new one has connected, must be left alone).
 */
static int
cmd_untouched(struct sc *s)
{
	unsigned int i;

	if (!s->snap)
		return sc_syntax(&s->at, "untouched: no snapshot before");
	for (i = 0; i < s->nsnap; i++) {
		void *p = s->snap[i].page;
		int r;

		if (memcmp(p, s->snap[i].copy, XEN_PAGE_SIZE))
			return sc_fail(s, "untouched: page %u of the snapshot (%s) was written", i,
				       i < BLKRING_MAX_PAGES ? "ring or pool" : "pool");
		r = xenops_end_access(s->x, p, 1);
		if (r == -EBUSY)
			return sc_fail(s, "untouched: page %u of the snapshot is mapped by the "
				       "backend", i);
		if (r == 0)
			xenops_grant_again(s->x, p, 1);
	}
	return 0;
}

/*
 * mapped PAGE yes|no: does the backend hold PAGE's grant mapped now?
 * Seen from our side of the grant, as Linux's
 * gnttab_try_end_foreign_access() sees it: ending access is refused
 * while the peer maps the page (access is granted again at once).  What
 * shows that persistent grants are really used, not only negotiated.
 * Only the simulator can tell (xenops_end_access(): gntalloc cannot).
 */
static int
cmd_mapped(struct sc *s, int argc, char **argv)
{
	const struct sc_names nm = { s->bf, s->grants, s->ngrants };
	void *page;
	grant_ref_t g;
	bool want;
	int r;

	if (argc != 3 || (strcmp(argv[2], "yes") && strcmp(argv[2], "no")))
		return sc_syntax(&s->at, "mapped PAGE yes|no");
	if (sc_resolve(&nm, argv[1], &page, &g, false) || !page)
		return sc_syntax(&s->at, "mapped: no such page %s", argv[1]);
	want = strcmp(argv[2], "yes") == 0;
	r = xenops_end_access(s->x, page, 1);
	if (r == 0)
		xenops_grant_again(s->x, page, 1);
	else if (r != -EBUSY)
		return sc_fail(s, "mapped %s: %s", argv[1], strerror(-r));
	if ((r == -EBUSY) != want)
		return sc_fail(s, "mapped %s: the backend %s gref %u", argv[1],
			       want ? "does not map" : "still maps", g);
	return 0;
}

static int
cmd_req_prod(struct sc *s, int argc, char **argv)
{
	uint64_t n;
	const char *v;
	uint32_t prod;

	if (argc != 2)
		return sc_syntax(&s->at, "req-prod +N | N");
	v = argv[1];
	if (sc_num(v[0] == '+' ? v + 1 : v, &n))
		return sc_syntax(&s->at, "req-prod: bad value %s", v);
	/* relative to what we have produced so far (private prod) */
	prod = v[0] == '+' ? s->nput + (uint32_t)n : (uint32_t)n;
	blkring_front_set_shared_req_prod(s->ring, prod);
	return sc_notify(s);
}

static int
cmd_page(struct sc *s, int argc, char **argv)
{
	const struct sc_names nm = { s->bf, s->grants, s->ngrants };
	void *page;
	grant_ref_t g;
	unsigned char buf[XEN_PAGE_SIZE];

	if (argc != 3)
		return sc_syntax(&s->at, "%s PAGE ARG", argv[0]);
	if (sc_resolve(&nm, argv[1], &page, &g, false) || !page)
		return sc_syntax(&s->at, "%s: no such page %s", argv[0], argv[1]);
	if (strcmp(argv[0], "fill") == 0) {
		if (sc_pattern(argv[2], page, XEN_PAGE_SIZE))
			return sc_syntax(&s->at, "fill: bad pattern %s", argv[2]);
		return 0;
	}
	if (strcmp(argv[0], "check") == 0) {
		unsigned int i;

		if (sc_pattern(argv[2], buf, sizeof(buf)))
			return sc_syntax(&s->at, "check: bad pattern %s", argv[2]);
		for (i = 0; i < XEN_PAGE_SIZE; i++)
			if (((unsigned char *)page)[i] != buf[i])
				return sc_fail(s, "check %s %s: byte %u is %#x, expected %#x "
					       "(sector %u of the page)", argv[1], argv[2], i,
					       ((unsigned char *)page)[i], buf[i], i / SECTOR_SIZE);
		return 0;
	}
	/* dump */
	{
		FILE *f = fopen(argv[2], "w");

		if (!f || fwrite(page, XEN_PAGE_SIZE, 1, f) != 1) {
			if (f)
				fclose(f);
			return sc_fail(s, "dump %s: %s", argv[2], strerror(errno));
		}
		if (fclose(f))
			return sc_fail(s, "dump %s: %s", argv[2], strerror(errno));
	}
	return 0;
}

static int
cmd_grant(struct sc *s, int argc, char **argv)
{
	struct sc_grant *g;
	bool writable = true;
	uint32_t domid = blkfront_info(s->bf)->backend_domid;
	uint64_t n;
	int i;

	if (argc < 2 || s->ngrants == ARRAY_SIZE(s->grants))
		return sc_syntax(&s->at, "grant NAME [ro] [domid=N]");
	if (argv[1][0] == 'p' && isdigit((unsigned char)argv[1][1]))
		return sc_syntax(&s->at, "grant: names pN are the pool's");
	for (i = 2; i < argc; i++) {
		if (strcmp(argv[i], "ro") == 0)
			writable = false;
		else if (strncmp(argv[i], "domid=", 6) == 0 && sc_num(argv[i] + 6, &n) == 0)
			domid = (uint32_t)n;
		else
			return sc_syntax(&s->at, "grant: unknown argument %s", argv[i]);
	}
	g = &s->grants[s->ngrants];
	snprintf(g->name, sizeof(g->name), "%s", argv[1]);
	g->page = xenops_share_pages(s->x, domid, 1, writable, &g->gref);
	if (!g->page)
		return sc_fail(s, "grant %s: share a page with dom%u: %m", argv[1], domid);
	s->ngrants++;
	if (log_verbose)
		fprintf(stderr, "%s:%u: grant %s = gref %u (%s, dom%u)\n", s->at.file, s->at.line,
			g->name, g->gref, writable ? "rw" : "ro", domid);
	return 0;
}

/* xs-expect be|fe KEY VALUE [timeout=MS]   VALUE "-" = absent */
static int
cmd_xs(struct sc *s, int argc, char **argv)
{
	const struct blkfront_info *in = blkfront_info(s->bf);
	struct xs_handle *xs = blkfront_xs(s->bf);
	unsigned int timeout = 0;
	const char *dir;
	uint64_t deadline;
	char *v = NULL;
	int r;

	if (argc < 3)
		return sc_syntax(&s->at, "%s be|fe KEY [VALUE]", argv[0]);
	if (strcmp(argv[1], "be") == 0)
		dir = in->backend_path;
	else if (strcmp(argv[1], "fe") == 0)
		dir = in->frontend_path;
	else
		return sc_syntax(&s->at, "%s: be or fe, not %s", argv[0], argv[1]);
	if (strcmp(argv[0], "xs-read") == 0) {
		v = xbus_read(xs, XBT_NULL, dir, argv[2]);
		printf("%s/%s = %s\n", dir, argv[2], v ? v : "(absent)");
		free(v);
		return 0;
	}
	if (strcmp(argv[0], "xs-write") == 0) {
		if (argc != 4)
			return sc_syntax(&s->at, "xs-write be|fe KEY VALUE");
		r = xbus_printf(xs, XBT_NULL, dir, argv[2], "%s", argv[3]);
		return r ? sc_fail(s, "xs-write %s/%s: %s", dir, argv[2], strerror(-r)) : 0;
	}
	/* xs-expect */
	if (argc < 4)
		return sc_syntax(&s->at, "xs-expect be|fe KEY VALUE [timeout=MS]");
	r = sc_get_timeout(&s->at, argc, argv, 4, &timeout);
	if (r)
		return r;
	deadline = ft_now_ns() + (uint64_t)timeout * 1000000ull;
	for (;;) {
		bool ok;

		v = xbus_read(xs, XBT_NULL, dir, argv[2]);
		ok = strcmp(argv[3], "-") == 0 ? !v :
			strcmp(argv[3], "*") == 0 ? v != NULL : v && strcmp(v, argv[3]) == 0;
		if (ok) {
			free(v);
			return 0;
		}
		if (ft_now_ns() >= deadline)
			break;
		free(v);
		usleep(20000);
	}
	r = sc_fail(s, "%s/%s is %s%s%s, expected %s", dir, argv[2], v ? "\"" : "",
		    v ? v : "absent", v ? "\"" : "", argv[3]);
	free(v);
	return r;
}

static int
run_line(struct sc *s, char *line)
{
	char *argv[SC_MAX_WORDS];
	int argc, r;

	r = sc_split_words(&s->at, line, argv, &argc);
	if (r || argc == 0)
		return r;
	if (s->closed)
		return sc_syntax(&s->at, "nothing may follow close");
	s->steps++;
	if (strcmp(argv[0], "send") == 0)
		return cmd_send(s, argc, argv);
	if (strcmp(argv[0], "push") == 0) {
		blkring_front_push_requests(s->ring);
		return sc_notify(s);
	}
	if (strcmp(argv[0], "notify") == 0)
		return sc_notify(s);
	if (strcmp(argv[0], "wait") == 0)
		return cmd_wait(s, argc, argv);
	if (strcmp(argv[0], "wait-all") == 0)
		return cmd_wait_all(s, argc, argv);
	if (strcmp(argv[0], "expect-none") == 0)
		return cmd_expect_none(s, argc, argv);
	if (strcmp(argv[0], "req-prod") == 0)
		return cmd_req_prod(s, argc, argv);
	if (strcmp(argv[0], "ring-new") == 0)
		return cmd_ring_new(s, argc, argv);
	if (strcmp(argv[0], "snapshot") == 0)
		return argc == 1 ? cmd_snapshot(s) :
			sc_syntax(&s->at, "snapshot takes no argument");
	if (strcmp(argv[0], "mapped") == 0)
		return cmd_mapped(s, argc, argv);
	if (strcmp(argv[0], "untouched") == 0)
		return argc == 1 ? cmd_untouched(s) :
			sc_syntax(&s->at, "untouched takes no argument");
	if (strcmp(argv[0], "close") == 0) {
		if (argc != 1)
			return sc_syntax(&s->at, "close takes no argument");
		s->closed = true;
		return 0;
	}
	if (strcmp(argv[0], "fill") == 0 || strcmp(argv[0], "check") == 0 ||
	    strcmp(argv[0], "dump") == 0)
		return cmd_page(s, argc, argv);
	if (strcmp(argv[0], "grant") == 0)
		return cmd_grant(s, argc, argv);
	if (strcmp(argv[0], "xs-read") == 0 || strcmp(argv[0], "xs-expect") == 0 ||
	    strcmp(argv[0], "xs-write") == 0)
		return cmd_xs(s, argc, argv);
	if (strcmp(argv[0], "sleep") == 0) {
		uint64_t ms;

		if (argc != 2 || sc_num(argv[1], &ms))
			return sc_syntax(&s->at, "sleep MS");
		usleep((useconds_t)(ms * 1000));
		return 0;
	}
	if (strcmp(argv[0], "usleep") == 0) {
		uint64_t us;

		if (argc != 2 || sc_num(argv[1], &us) || us > 10000000)
			return sc_syntax(&s->at, "usleep US (at most 10 s)");
		usleep((useconds_t)us);
		return 0;
	}
	if (strcmp(argv[0], "echo") == 0) {
		int i;

		for (i = 1; i < argc; i++)
			printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
		fflush(stdout);
		return 0;
	}
	if (strcmp(argv[0], "info") == 0) {
		ft_print_info(stdout, s->bf, false);
		return 0;
	}
	return sc_syntax(&s->at, "unknown command %s", argv[0]);
}

static bool sc_no_close, sc_expect_no_connect;
static unsigned int sc_grant_budget;

static void
script_usage(FILE *f)
{
	fprintf(f, "usage: blkfront-test script [device options] [--no-close]\n"
		"                            [--expect-no-connect] [--grant-budget N] FILE|-\n"
		"  Connect (raw mode: requests as written, responses checked, no\n"
		"  completion thread) and run the steps of FILE; see SCRIPT FORMAT in\n"
		"  blkfront-test(1).  --grant-budget: at most N data pool grants.\n%s",
		FT_COMMON_HELP);
}

static int
script_opt(void *ctx, int opt, const char *arg)
{
	switch (opt) {
	case 'N': sc_no_close = true; return 1;
	case 'X': sc_expect_no_connect = true; return 1;
	case 'G': {
		char *end;
		unsigned long v = strtoul(arg, &end, 10);

		if (!*arg || *end || v == 0 || v > 65536)
			return -1;
		sc_grant_budget = (unsigned int)v;
		return 1;
	}
	}
	return 0;
}

int
ft_cmd_script(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-close", no_argument, NULL, 'N' },
		{ "expect-no-connect", no_argument, NULL, 'X' },
		{ "grant-budget", required_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	struct ft_common c;
	struct sc *s;
	blkfront_t *bf;
	FILE *f;
	char line[4096];
	int i, r = 0;

	i = ft_parse(argc, argv, &c, NULL, opts, script_opt, NULL, script_usage);
	if (i != argc - 1) {
		script_usage(stderr);
		return 2;
	}
	f = strcmp(argv[i], "-") == 0 ? stdin : fopen(argv[i], "r");
	if (!f) {
		log_error("script %s: %m", argv[i]);
		return 2;
	}
	c.bcfg.flags |= BLKFRONT_RAW;
	c.bcfg.grant_budget = sc_grant_budget;
	bf = ft_common_open(&c);
	if (sc_expect_no_connect) {
		if (f != stdin)
			fclose(f);
		if (!bf) {
			printf("script: device did not connect, as expected\n");
			return 0;
		}
		fprintf(stderr, "script: --expect-no-connect, but the device connected\n");
		ft_common_close(&c, bf);
		return 1;
	}
	if (!bf) {
		if (f != stdin)
			fclose(f);
		return 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		ft_common_close(&c, bf);
		return 1;
	}
	s->at.file = argv[i];
	s->bf = bf;
	s->x = c.x;
	s->ring = blkfront_raw_ring(bf);
	s->next_id = 1;
	s->handle = (blkif_vdev_t)c.bcfg.devid;
	while (fgets(line, sizeof(line), f)) {
		s->at.line++;
		r = run_line(s, line);
		if (r)
			break;
	}
	if (f != stdin)
		fclose(f);
	if (!r && !s->closed)
		printf("script %s: %u steps ok\n", s->at.file, s->steps);
	fflush(stdout);
	if (sc_no_close && !s->closed)
		_exit(r);
	for (i = 0; i < (int)s->ngrants; i++)
		if (xenops_unshare_pages(c.x, s->grants[i].page, 1) < 0)
			log_error("script: ending access to grant %s failed", s->grants[i].name);
	/* "close": the close protocol is a step that must pass too */
	if (s->closed && !r) {
		if (blkfront_close(bf) < 0) {
			fprintf(stderr, "%s:%u: close: the backend was Closed and still mapped "
				"a page of ours\n", s->at.file, s->at.line);
			r = 1;
		} else {
			printf("script %s: %u steps ok\n", s->at.file, s->steps);
		}
		bf = NULL;
	}
	for (i = 0; i < (int)s->nsent; i++)
		free(s->sent[i].grefs);
	for (i = 0; i < (int)s->nsnap; i++)
		free(s->snap[i].copy);
	free(s->snap);
	free(s);
	ft_common_close(&c, bf);
	return r;
}
