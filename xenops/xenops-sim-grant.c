/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xenops-sim-grant.c: grant tables over xensim (sim-priv.h): the
 * mapping side's entry flags and pins as Xen's _set_status_v1 keeps
 * them, this process's pin ledger, map/unmap/copy (dom0) and
 * share/unshare (the granting side).  xenops-sim.c's header says how the
 * data path works without xensim's daemon.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "sim-priv.h"

/* ---------------------------------------------------------------- */
/* Grant entries: the mapping side (Xen's _set_status_v1 and friends) */
/* ---------------------------------------------------------------- */

static uint32_t *
gnt_word(grant_entry_v1_t *e)
{
	/* flags (low 16 bits) and domid (high 16), accessed as one word. */
	return (uint32_t *)e;
}

/*
 * Wait while another mapper holds HV_PIN_BUSY (it is between two atomic
 * operations).  Bounded: a holder killed in that window would otherwise
 * hang us; after ~a second of yielding give up with -EDEADLK.
 */
static int
pin_backoff(unsigned int *spins)
{
	if (++*spins < 64) {
		cpu_relax();
		return 0;
	}
	if (*spins < (1u << 20)) {
		sched_yield();
		return 0;
	}
	return -EDEADLK;
}

/*
 * Set GTF_reading (and GTF_writing) in the guest's entry after checking it
 * as Xen does.  The caller holds HV_PIN_BUSY for this entry.
 */
static int
gnt_set_status(uint32_t *word, uint32_t mapper, bool writable)
{
	/* Pairs with the guest's smp_store_release of the word in share. */
	uint32_t old = smp_load_acquire(word);

	/* Like Xen, give up if the guest keeps changing it under us. */
	for (int retries = 0; retries < 16; retries++) {
		uint32_t flags = old & 0xffff, dom = old >> 16, nw;

		if ((flags & GTF_type_mask) != GTF_permit_access ||
		    dom != mapper)
			return -EINVAL;
		if (writable && (flags & GTF_readonly))
			return -EPERM;
		nw = old | GTF_reading | (writable ? GTF_writing : 0);
		/* Acquire pairs with the guest's release: we read frame after. */
		if (__atomic_compare_exchange_n(word, &old, nw, false,
						__ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			return 0;
	}
	return -EINVAL;
}

/*
 * Take ref's BUSY for the operation recorded in our ledger slot (owner
 * HV_OWN(token, slot, 0), in the same compare-exchange): *p receives the
 * counts.  0, or -EDEADLK if another holder keeps it for ~a second.
 */
static int
pin_busy(struct hv_active *act, uint32_t own, uint32_t *p)
{
	unsigned int spins = 0;

	for (;;) {
		/* Pairs with the holders' smp_store_release(&act->pin):
		 * act->frame/domid are valid when the count != 0. */
		uint64_t v = smp_load_acquire(&act->pin);
		int rc;

		if (HV_PIN(v) & HV_PIN_BUSY) {
			rc = pin_backoff(&spins);
			if (rc < 0)
				return rc;
			continue;
		}
		if (__atomic_compare_exchange_n(&act->pin, &v,
						HV_PIN_WORD(HV_PIN(v) | HV_PIN_BUSY, own),
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			*p = HV_PIN(v);
			return 0;
		}
	}
}

/*
 * Pin ref of d for mapper, recorded in ledger slot `slot` (hv-proto.h
 * "pin ledger": every step of it, so that xensim can finish or undo it
 * whenever we die): on success *frame is the granted frame and the
 * entry is flagged in use until gnt_release().
 */
static int
gnt_acquire(struct sim_dom *d, grant_ref_t ref, uint32_t mapper,
	    bool writable, struct sim_ledger *l, uint32_t slot, uint32_t *frame)
{
	struct hv_active *act;
	uint32_t *word, *ls = &l->map->slot[slot];
	uint32_t inc = HV_PIN_ONE | (writable ? HV_PIN_W_ONE : 0);
	uint32_t e, p;
	int rc;

	if (ref >= HV_NR_GRANTS)
		return -EINVAL;
	act = &d->act[ref];
	word = gnt_word(&d->gnt->table[ref]);
	e = HV_LEDGER_ENTRY(d->domid, ref, writable);
	/* Each ledger store is a release: ordered before the act step
	 * that follows it, for xensim reading both after our death. */
	smp_store_release(ls, e | HV_LEDGER_TRANS);
	rc = pin_busy(act, HV_OWN(l->token, slot, false), &p);
	if (rc < 0) {
		smp_store_release(ls, 0);
		return rc;
	}
	/* We own ref's pin word until the last store_release below. */
	if ((p & HV_PIN_MASK) && (!writable || (p & HV_PIN_W_MASK))) {
		/* Already flagged as we need: just count the pin. */
		if (READ_ONCE(act->domid) != mapper)
			rc = -EINVAL;
		else if ((p & HV_PIN_MASK) == HV_PIN_MASK ||
			 (p & HV_PIN_W_MASK) == HV_PIN_W_MASK)
			rc = -ENOSPC;
	} else if ((p & HV_PIN_MASK) == HV_PIN_MASK) {
		rc = -ENOSPC;
	} else {
		rc = gnt_set_status(word, mapper, writable);
		if (rc == 0 && !(p & HV_PIN_MASK)) {
			/* Ordered after the acquire in gnt_set_status. */
			uint32_t f = READ_ONCE(d->gnt->table[ref].frame);

			if (f >= HV_NR_FRAMES) {
				/* Not a frame of the granting domain. */
				__atomic_fetch_and(word,
						   ~(uint32_t)(GTF_reading | GTF_writing),
						   __ATOMIC_RELEASE);
				rc = -EINVAL;
			} else {
				WRITE_ONCE(act->frame, f);
				WRITE_ONCE(act->domid, mapper);
			}
		} else if (rc == 0 && READ_ONCE(act->domid) != mapper) {
			rc = -EINVAL;	/* cannot happen: one mapper domain */
		}
	}
	if (rc < 0) {
		/* Pairs with the acquire in pin_busy: nothing changed. */
		smp_store_release(&act->pin, (uint64_t)p);
		smp_store_release(ls, 0);
		return rc;
	}
	*frame = READ_ONCE(act->frame);
	/* Counted (still ours, marked done), recorded, then let go: frame
	 * and domid are published with the count (pairs with pin_busy). */
	smp_store_release(&act->pin, HV_PIN_WORD((p + inc) | HV_PIN_BUSY,
						 HV_OWN(l->token, slot, true)));
	smp_store_release(ls, e);
	smp_store_release(&act->pin, (uint64_t)(p + inc));
	return 0;
}

/* Undo one gnt_acquire() recorded in ledger slot `slot`; clears the
 * guest-visible flags on the last pin.  The slot is free again after. */
static void
gnt_release(struct sim_dom *d, grant_ref_t ref, bool writable,
	    struct sim_ledger *l, uint32_t slot)
{
	struct hv_active *act = &d->act[ref];
	uint32_t *word = gnt_word(&d->gnt->table[ref]), *ls = &l->map->slot[slot];
	uint32_t dec = HV_PIN_ONE | (writable ? HV_PIN_W_ONE : 0);
	uint32_t p, np, clear = 0;

	smp_store_release(ls, HV_LEDGER_ENTRY(d->domid, ref, writable) |
			      HV_LEDGER_TRANS | HV_LEDGER_RELEASING);
	if (pin_busy(act, HV_OWN(l->token, slot, false), &p) < 0) {
		/* Another holder died without a ledger: leave the pin. */
		log_error("xenops-sim: dom%u gref %u: pin stuck busy",
			  d->domid, ref);
		smp_store_release(ls, 0);
		return;
	}
	if ((p & HV_PIN_MASK) == 0 || (writable && (p & HV_PIN_W_MASK) == 0)) {
		smp_store_release(&act->pin, (uint64_t)p);
		smp_store_release(ls, 0);
		log_error("xenops-sim: dom%u gref %u: release without pin",
			  d->domid, ref);
		return;
	}
	np = p - dec;
	if (!(np & HV_PIN_MASK))
		clear = GTF_reading | GTF_writing;
	else if (writable && !(np & HV_PIN_W_MASK))
		clear = GTF_writing;
	/* Pairs with the guest's acquire load/cmpxchg in end-access: all
	 * our accesses to the page happen before it sees the flags clear
	 * and reuses the page. */
	if (clear)
		__atomic_fetch_and(word, ~clear, __ATOMIC_RELEASE);
	/* Counted (still ours, marked done), unrecorded, then let go;
	 * pairs with the acquire in pin_busy. */
	smp_store_release(&act->pin, HV_PIN_WORD(np | HV_PIN_BUSY,
						 HV_OWN(l->token, slot, true)));
	smp_store_release(ls, 0);
	smp_store_release(&act->pin, (uint64_t)np);
}

/* ---------------------------------------------------------------- */
/* The pin ledger                                                    */
/* ---------------------------------------------------------------- */

/*
 * Create the ledger and hand it to xensim on our control connection
 * (dom0 only).  XENOPS_SIM_LEDGER_SLOTS (1..HV_LEDGER_SLOTS) lowers the
 * capacity, for tests of a full ledger.
 */
int
sim_ledger_open(struct sim *sim)
{
	struct hv_req req = { .op = HV_OP_PIN_LEDGER };
	struct hv_rsp rsp;
	struct sim_ledger *l;
	const char *lim = getenv("XENOPS_SIM_LEDGER_SLOTS");
	int fd, rc;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->nslots = HV_LEDGER_SLOTS;
	if (lim && *lim) {
		unsigned long v = strtoul(lim, NULL, 10);

		if (v >= 1 && v < HV_LEDGER_SLOTS)
			l->nslots = (uint32_t)v;
	}
	fd = memfd_create("xenops-pin-ledger", MFD_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		free(l);
		return rc;
	}
	if (ftruncate(fd, sizeof(struct hv_ledger)) < 0) {
		rc = -errno;
		goto fail;
	}
	l->map = mmap(NULL, sizeof(struct hv_ledger), PROT_READ | PROT_WRITE,
		      MAP_SHARED, fd, 0);
	if (l->map == MAP_FAILED) {
		l->map = NULL;
		rc = -errno;
		goto fail;
	}
	/* A child of fork() must not write its parent's ledger: it has no
	 * copy of it (and may not use the parent's handle anyway). */
	madvise(l->map, sizeof(struct hv_ledger), MADV_DONTFORK);
	l->map->hdr.magic = HV_LEDGER_MAGIC;
	l->map->hdr.version = HV_PROTO_VERSION;
	rc = sim_call(sim->conn, &req, &rsp, fd, NULL, NULL);
	if (rc < 0)
		goto fail;
	if (rsp.arg == 0 || rsp.arg > HV_OWN_TOKEN_MAX) {
		rc = -EPROTO;
		goto fail;
	}
	l->token = rsp.arg;
	close(fd);	/* xensim has its own */
	pthread_mutex_init(&l->lock, NULL);
	sim->ledger = l;
	return 0;
fail:
	if (l->map)
		munmap(l->map, sizeof(struct hv_ledger));
	close(fd);
	free(l);
	return rc;
}

void
sim_ledger_close(struct sim_ledger *l)
{
	if (!l)
		return;
	munmap(l->map, sizeof(struct hv_ledger));
	pthread_mutex_destroy(&l->lock);
	free(l->free);
	free(l);
}

/* Hand out n free slots into slots[]: 0, -ENOSPC (full), -ENOMEM. */
static int
ledger_get(struct sim_ledger *l, unsigned int n, uint32_t *slots)
{
	unsigned int i = 0;
	int rc = 0;

	pthread_mutex_lock(&l->lock);
	if (n > l->nfree + (l->nslots - l->used)) {
		rc = -ENOSPC;
		goto out;
	}
	if (n > l->nfree && l->cap < l->used + (n - l->nfree)) {
		/* The free stack can hold every slot ever handed out, so
		 * that ledger_put never allocates. */
		uint32_t cap = l->used + (n - l->nfree);
		uint32_t *f;

		if (cap < 2 * l->cap)
			cap = 2 * l->cap < l->nslots ? 2 * l->cap : l->nslots;
		f = realloc(l->free, sizeof(*f) * cap);
		if (!f) {
			rc = -ENOMEM;
			goto out;
		}
		l->free = f;
		l->cap = cap;
	}
	for (; i < n && l->nfree; i++)
		slots[i] = l->free[--l->nfree];
	if (i < n) {
		for (; i < n; i++)
			slots[i] = l->used++;
		/* Pairs with xensim's pread of "used" once we are gone: the
		 * new slots are covered before anything is stored in them. */
		smp_store_release(&l->map->hdr.used, l->used);
	}
out:
	pthread_mutex_unlock(&l->lock);
	return rc;
}

/* Take back n slots whose entries are clear. */
static void
ledger_put(struct sim_ledger *l, unsigned int n, const uint32_t *slots)
{
	pthread_mutex_lock(&l->lock);
	for (unsigned int i = 0; i < n; i++)
		l->free[l->nfree++] = slots[i];
	pthread_mutex_unlock(&l->lock);
}

/* Take a pin, recorded in our ledger slot (gnt_acquire). */
static int
pin_take(struct sim *sim, struct sim_dom *d, uint32_t slot, grant_ref_t ref,
	 bool writable, uint32_t *frame)
{
	/* mapper 0: only dom0 maps (sim_dom_get) */
	return gnt_acquire(d, ref, 0, writable, sim->ledger, slot, frame);
}

/* Release a pin and its ledger slot's entry (gnt_release). */
static void
pin_drop(struct sim *sim, struct sim_dom *d, uint32_t slot, grant_ref_t ref,
	 bool writable)
{
	gnt_release(d, ref, writable, sim->ledger, slot);
}

/* ---------------------------------------------------------------- */
/* map / unmap / copy                                               */
/* ---------------------------------------------------------------- */

/* mmap frames[0..count) of fd at addr, coalescing contiguous runs. */
static int
map_frames(void *addr, int fd, const uint32_t *frames, unsigned int count,
	   int prot)
{
	unsigned int i = 0;

	while (i < count) {
		unsigned int n = 1;

		while (i + n < count && frames[i + n] == frames[i] + n)
			n++;
		if (mmap((uint8_t *)addr + (size_t)i * HV_PAGE_SIZE,
			 (size_t)n * HV_PAGE_SIZE, prot, MAP_SHARED | MAP_FIXED,
			 fd, (off_t)frames[i] * HV_PAGE_SIZE) == MAP_FAILED)
			return -errno;
		i += n;
	}
	return 0;
}

static void *
reserve_va(unsigned int count)
{
	void *p = mmap(NULL, (size_t)count * HV_PAGE_SIZE, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *
sim_map_grefs(xenops_t *x, uint32_t domid, unsigned int count,
	      const grant_ref_t *refs, bool writable)
{
	struct sim *sim = to_sim(x);
	struct sim_map *m = NULL;
	struct sim_dom *d;
	uint32_t *frames = NULL;
	unsigned int pinned = 0;
	bool have_slots = false;
	void *va = NULL;
	int rc;

	rc = sim_dom_get(x, domid, &d);
	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	m = malloc(sizeof(*m) + (sizeof(grant_ref_t) + sizeof(uint32_t)) * count);
	frames = malloc(sizeof(*frames) * count);
	if (!m || !frames) {
		rc = -ENOMEM;
		goto fail;
	}
	m->slots = (uint32_t *)(m->refs + count);
	rc = ledger_get(sim->ledger, count, m->slots);
	if (rc < 0)
		goto fail;
	have_slots = true;
	for (pinned = 0; pinned < count; pinned++) {
		rc = pin_take(sim, d, m->slots[pinned], refs[pinned], writable,
			      &frames[pinned]);
		if (rc < 0)
			goto fail;
	}
	va = reserve_va(count);
	if (!va) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = map_frames(va, d->ram_fd, frames, count,
			PROT_READ | (writable ? PROT_WRITE : 0));
	if (rc < 0)
		goto fail;
	m->addr = va;
	m->count = count;
	m->writable = writable;
	m->dom = d;
	memcpy(m->refs, refs, sizeof(grant_ref_t) * count);
	pthread_mutex_lock(&sim->lock);
	m->next = sim->maps;
	sim->maps = m;
	pthread_mutex_unlock(&sim->lock);
	free(frames);
	bk_dbg(BK_DBG_GRANT, "xenops-sim: mapped %u grefs of dom%u at %p",
	       count, domid, va);
	return va;
fail:
	/* All or nothing: unmap, then unpin what we pinned. */
	if (va)
		munmap(va, (size_t)count * HV_PAGE_SIZE);
	while (pinned--)
		pin_drop(sim, d, m->slots[pinned], refs[pinned], writable);
	if (have_slots)
		ledger_put(sim->ledger, count, m->slots);
	free(frames);
	free(m);
	sim_dom_put(sim, d);
	errno = -rc;
	return NULL;
}

int
sim_unmap(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct sim_map **pp, *m;

	pthread_mutex_lock(&sim->lock);
	for (pp = &sim->maps; (m = *pp); pp = &m->next)
		if (m->addr == addr)
			break;
	if (!m || m->count != count) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	*pp = m->next;
	pthread_mutex_unlock(&sim->lock);

	/* The pages go before the flags: the guest may reuse them then. */
	munmap(addr, (size_t)count * HV_PAGE_SIZE);
	for (unsigned int i = 0; i < count; i++)
		pin_drop(sim, m->dom, m->slots[i], m->refs[i], m->writable);
	ledger_put(sim->ledger, count, m->slots);
	sim_dom_put(sim, m->dom);
	free(m);
	return 0;
}

int
sim_grant_copy(xenops_t *x, uint32_t domid, bool to_guest, unsigned int count,
	       struct xenops_copy_seg *segs)
{
	struct sim *sim = to_sim(x);
	struct sim_dom *d;
	uint32_t slot;
	int rc;

	rc = sim_dom_get(x, domid, &d);
	if (rc == 0) {
		/* One slot: each segment's pin is held only for its copy. */
		rc = ledger_get(sim->ledger, 1, &slot);
		if (rc < 0)
			sim_dom_put(sim, d);
	}
	if (rc < 0) {
		for (unsigned int i = 0; i < count; i++)
			if (segs[i].status == 0)
				segs[i].status = rc;
		return rc;
	}
	for (unsigned int i = 0; i < count; i++) {
		struct xenops_copy_seg *s = &segs[i];
		uint32_t frame;
		uint8_t *page;

		if (s->status != 0)
			continue;	/* bad geometry, set by xenops.c */
		rc = pin_take(sim, d, slot, s->gref, to_guest, &frame);
		if (rc < 0) {
			s->status = rc;
			continue;
		}
		page = d->ram + (size_t)frame * HV_PAGE_SIZE;
		if (to_guest)
			memcpy(page + s->offset, s->local, s->len);
		else
			memcpy(s->local, page + s->offset, s->len);
		pin_drop(sim, d, slot, s->gref, to_guest);
	}
	ledger_put(sim->ledger, 1, &slot);
	sim_dom_put(sim, d);
	return 0;
}

/* ---------------------------------------------------------------- */
/* share / unshare (granting side)                                  */
/* ---------------------------------------------------------------- */

/* Take a free bit of map[0..nbits) with compare-exchange; index or -ENOSPC. */
static int
bitmap_alloc(uint64_t *map, unsigned int nbits, unsigned int hint)
{
	unsigned int nwords = nbits / 64;

	for (unsigned int k = 0; k < nwords; k++) {
		uint64_t *w = &map[(hint + k) % nwords];
		uint64_t v = READ_ONCE(*w);

		while (~v) {
			unsigned int bit = __builtin_ctzll(~v);

			/* Relaxed suffices: the bit only guards ownership;
			 * the entry itself is published with release. */
			if (__atomic_compare_exchange_n(w, &v, v | (1ull << bit),
							false, __ATOMIC_ACQUIRE,
							__ATOMIC_RELAXED))
				return (int)(((hint + k) % nwords) * 64 + bit);
		}
	}
	return -ENOSPC;
}

static void
bitmap_free(uint64_t *map, unsigned int bit)
{
	/* Release: our last use of the ref/frame comes before its reuse,
	 * pairs with the acquire cmpxchg in bitmap_alloc. */
	__atomic_fetch_and(&map[bit / 64], ~(1ull << (bit % 64)),
			   __ATOMIC_RELEASE);
}

static void
share_free_ids(struct hv_gnt *g, grant_ref_t *refs, uint32_t *frames,
	       unsigned int nrefs, unsigned int nframes)
{
	for (unsigned int i = 0; i < nframes; i++)
		bitmap_free(g->frame_map, frames[i]);
	for (unsigned int i = 0; i < nrefs; i++)
		bitmap_free(g->gref_map, refs[i]);
}

/* Give the frames back to the memfd (they read as zero when reused). */
static void
punch_frames(int fd, const uint32_t *frames, unsigned int count)
{
	for (unsigned int i = 0; i < count;) {
		unsigned int n = 1;

		while (i + n < count && frames[i + n] == frames[i] + n)
			n++;
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)frames[i] * HV_PAGE_SIZE,
			      (off_t)n * HV_PAGE_SIZE) < 0)
			log_error("xenops-sim: punch hole in dom RAM: %m");
		i += n;
	}
}

void *
sim_share_pages(xenops_t *x, uint32_t domid, unsigned int count,
		bool writable, grant_ref_t *refs_out)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share *s;
	unsigned int nrefs = 0, nframes = 0, hint;
	void *va = NULL;
	int rc;

	s = calloc(1, sizeof(*s));
	if (s) {
		s->refs = malloc(sizeof(*s->refs) * count);
		s->frames = malloc(sizeof(*s->frames) * count);
	}
	if (!s || !s->refs || !s->frames) {
		rc = -ENOMEM;
		goto fail;
	}
	hint = __atomic_fetch_add(&sim->alloc_hint, 1, __ATOMIC_RELAXED);
	for (; nrefs < count; nrefs++) {
		rc = bitmap_alloc(g->gref_map, HV_NR_GRANTS, hint);
		if (rc < 0)
			goto fail;
		s->refs[nrefs] = rc;
	}
	/* Frames from a per-process place in RAM so runs stay contiguous. */
	hint = (uint32_t)getpid() * 7 + hint;
	for (; nframes < count; nframes++) {
		rc = bitmap_alloc(g->frame_map, HV_NR_FRAMES, hint);
		if (rc < 0)
			goto fail;
		s->frames[nframes] = rc;
	}
	va = reserve_va(count);
	if (!va) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = map_frames(va, sim->self->ram_fd, s->frames, count,
			PROT_READ | PROT_WRITE);
	if (rc < 0)
		goto fail;
	s->word = (domid << 16) | GTF_permit_access | (writable ? 0 : GTF_readonly);
	for (unsigned int i = 0; i < count; i++) {
		grant_entry_v1_t *e = &g->table[s->refs[i]];
		uint32_t flags = GTF_permit_access | (writable ? 0 : GTF_readonly);

		WRITE_ONCE(e->frame, s->frames[i]);
		/* Pairs with the mapper's smp_load_acquire in
		 * gnt_set_status: frame is visible before the grant
		 * (Linux gnttab_update_entry_v1's wmb()). */
		smp_store_release(gnt_word(e), (domid << 16) | flags);
		refs_out[i] = s->refs[i];
	}
	s->addr = va;
	s->count = count;
	pthread_mutex_lock(&sim->lock);
	s->next = sim->shares;
	sim->shares = s;
	pthread_mutex_unlock(&sim->lock);
	bk_dbg(BK_DBG_GRANT, "xenops-sim: shared %u pages with dom%u, first gref %u",
	       count, domid, refs_out[0]);
	return va;
fail:
	if (va)
		munmap(va, (size_t)count * HV_PAGE_SIZE);
	if (s && s->refs && s->frames)
		share_free_ids(g, s->refs, s->frames, nrefs, nframes);
	if (s) {
		free(s->refs);
		free(s->frames);
		free(s);
	}
	errno = rc == -ENOSPC ? ENOSPC : -rc;
	return NULL;
}

/*
 * End access to one entry (Linux gnttab_end_foreign_access_ref_v1):
 * refused while the mapper has GTF_reading/GTF_writing set.
 * *old receives the previous word for a rollback.
 */
static int
gnt_end_access(grant_entry_v1_t *e, uint32_t *old)
{
	uint32_t *word = gnt_word(e);
	/* Pairs with the mapper's release fetch_and in gnt_release. */
	uint32_t v = smp_load_acquire(word);

	do {
		if (v & (GTF_reading | GTF_writing))
			return -EBUSY;
		*old = v;
	} while (!__atomic_compare_exchange_n(word, &v, 0, false,
					      __ATOMIC_ACQ_REL,
					      __ATOMIC_ACQUIRE));
	return 0;
}

/* The share holding [addr, addr + count pages), and addr's index in it
 * (sim->lock held). */
static struct sim_share *
share_find(struct sim *sim, void *addr, unsigned int count, unsigned int *first)
{
	struct sim_share *s;

	for (s = sim->shares; s; s = s->next) {
		char *base = s->addr;
		size_t off;

		if ((char *)addr < base ||
		    (char *)addr >= base + (size_t)s->count * HV_PAGE_SIZE)
			continue;
		off = (size_t)((char *)addr - base);
		if (off % HV_PAGE_SIZE || off / HV_PAGE_SIZE + count > s->count)
			return NULL;
		*first = (unsigned int)(off / HV_PAGE_SIZE);
		return s;
	}
	return NULL;
}

int
sim_end_access(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share *s;
	unsigned int first, ended;
	uint32_t *old;
	int rc = 0;

	old = malloc(sizeof(*old) * count);
	if (!old)
		return -ENOMEM;
	pthread_mutex_lock(&sim->lock);
	s = share_find(sim, addr, count, &first);
	if (!s) {
		pthread_mutex_unlock(&sim->lock);
		free(old);
		return -EINVAL;
	}
	for (ended = 0; ended < count; ended++) {
		rc = gnt_end_access(&g->table[s->refs[first + ended]], &old[ended]);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		/* change nothing (as sim_unshare_pages) */
		while (ended--)
			smp_store_release(gnt_word(&g->table[s->refs[first + ended]]),
					  old[ended]);
	pthread_mutex_unlock(&sim->lock);
	free(old);
	return rc;
}

int
sim_grant_again(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share *s;
	unsigned int first, i;

	pthread_mutex_lock(&sim->lock);
	s = share_find(sim, addr, count, &first);
	if (!s) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	for (i = 0; i < count; i++) {
		uint32_t *word = gnt_word(&g->table[s->refs[first + i]]);
		uint32_t v = smp_load_acquire(word);

		/* An entry still granted (and maybe mapped: its flags are the
		 * mapper's) stays as it is.  The release pairs with the
		 * mapper's smp_load_acquire in gnt_set_status: our writes to
		 * the page come before the grant. */
		while (!(v & GTF_permit_access) &&
		       !__atomic_compare_exchange_n(word, &v, s->word, false,
						    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
			;
	}
	pthread_mutex_unlock(&sim->lock);
	return 0;
}

int
sim_unshare_pages(xenops_t *x, void *addr, unsigned int count)
{
	struct sim *sim = to_sim(x);
	struct hv_gnt *g = sim->self->gnt;
	struct sim_share **pp, *s;
	uint32_t *old;
	unsigned int ended;
	int rc = 0;

	pthread_mutex_lock(&sim->lock);
	for (pp = &sim->shares; (s = *pp); pp = &s->next)
		if (s->addr == addr)
			break;
	if (!s || s->count != count) {
		pthread_mutex_unlock(&sim->lock);
		return -EINVAL;
	}
	old = malloc(sizeof(*old) * count);
	if (!old) {
		pthread_mutex_unlock(&sim->lock);
		return -ENOMEM;
	}
	for (ended = 0; ended < count; ended++) {
		rc = gnt_end_access(&g->table[s->refs[ended]], &old[ended]);
		if (rc < 0)
			break;
	}
	if (rc < 0) {
		/* Change nothing: grant the ended ones again.  Nobody can
		 * have pinned an entry whose flags we cleared to 0. */
		while (ended--)
			/* Pairs with the mapper's acquire in gnt_set_status. */
			smp_store_release(gnt_word(&g->table[s->refs[ended]]),
					  old[ended]);
		pthread_mutex_unlock(&sim->lock);
		free(old);
		return rc;
	}
	*pp = s->next;
	pthread_mutex_unlock(&sim->lock);
	free(old);

	munmap(addr, (size_t)count * HV_PAGE_SIZE);
	punch_frames(sim->self->ram_fd, s->frames, count);
	share_free_ids(g, s->refs, s->frames, count, count);
	free(s->refs);
	free(s->frames);
	free(s);
	return 0;
}
