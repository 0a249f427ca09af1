/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hv-pins.c: grant pins of xensim's simulated hypervisor (see hv-int.h;
 * the shared-memory layout and the pin ledger protocol are in
 * hv-proto.h).  Mappers (xenops/xenops-sim*.c) take and drop pins on the
 * act table in shared memory themselves; this file only reads them, for
 * xensim-ctl's reports (hv_domain_grants_in_use, hv_domain_maps in
 * sim.h), and, when a dom0 process's connection closes, releases the
 * pins its ledger still records and settles an operation it died in,
 * as the kernel's gntdev unmaps what a dying process had mapped.
 *
 * Owns no struct: it reads hv.c's domain and connection lists, and
 * writes only pin words and grant flags in shared memory.
 */
#include <config.h>

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "hv-int.h"

/* ---- who holds which pin ---- */

int
hv_domain_grants_in_use(struct hv *hv, uint32_t domid,
			void (*fn)(void *opaque, uint32_t ref, unsigned int pins,
				   unsigned int wpins, uint32_t by),
			void *opaque)
{
	struct hv_dom *d = hv_dom_find(hv, domid);
	uint32_t ref;

	if (!d)
		return -ENOENT;
	for (ref = 0; ref < HV_NR_GRANTS; ref++) {
		/* mappers change it on shared memory: one atomic snapshot */
		uint32_t p = HV_PIN(__atomic_load_n(&d->act[ref].pin, __ATOMIC_ACQUIRE));

		if (p & HV_PIN_MASK)
			fn(opaque, ref, p & HV_PIN_MASK, (p & HV_PIN_W_MASK) / HV_PIN_W_ONE,
			   d->act[ref].domid);
	}
	return 0;
}

int
hv_domain_maps(struct hv *hv, uint32_t domid,
	       void (*fn)(void *opaque, uint32_t ref, bool writable, pid_t pid,
			  uint64_t conn),
	       void *opaque)
{
	struct hv_conn *c;
	uint32_t buf[1024];

	if (!hv_dom_find(hv, domid))
		return -ENOENT;
	for (c = hv->conns; c; c = c->next) {
		struct hv_ledger_hdr hdr;
		uint32_t used;

		if (c->ledger_fd < 0 ||
		    pread(c->ledger_fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr) ||
		    hdr.magic != HV_LEDGER_MAGIC)
			continue;
		/* Pairs with the client raising "used" before it writes a
		 * slot there; a slot read mid-change is either state, and
		 * only settled entries (no TRANS) are reported. */
		used = hdr.used < HV_LEDGER_SLOTS ? hdr.used : HV_LEDGER_SLOTS;
		for (uint32_t i = 0; i < used; i += ARRAY_SIZE(buf)) {
			size_t want = used - i < ARRAY_SIZE(buf) ? used - i : ARRAY_SIZE(buf);
			ssize_t n = pread(c->ledger_fd, buf, want * sizeof(buf[0]),
					  offsetof(struct hv_ledger, slot) +
					  (off_t)i * sizeof(buf[0]));

			if (n <= 0)
				break;
			for (size_t k = 0; k < (size_t)n / sizeof(buf[0]); k++) {
				uint32_t e = buf[k];

				if (!(e & HV_LEDGER_VALID) || (e & HV_LEDGER_TRANS) ||
				    ((e >> HV_LEDGER_DOMID_SHIFT) & HV_LEDGER_DOMID_MASK) != domid ||
				    (e & HV_LEDGER_REF_MASK) >= HV_NR_GRANTS)
					continue;
				fn(opaque, e & HV_LEDGER_REF_MASK,
				   e & HV_LEDGER_WRITABLE, c->pid, c->serial);
			}
		}
	}
	return 0;
}

/* ---- a closed connection's pin ledger ---- */

/* ~1 s of waiting for another mapper's BUSY transition (as pin_backoff in
 * xenops-sim.c): a holder killed mid-transition must not hang xensim. */
static bool
hv_busy_wait(unsigned int *spins, const struct timespec *t0)
{
	struct timespec now;

	if (++*spins < 64) {
		cpu_relax();
		return true;
	}
	sched_yield();
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000000000L +
	       (now.tv_nsec - t0->tv_nsec) < 1000000000L;
}

/* The GTF flags that must go from ref's entry once pin p remains. */
static uint32_t
hv_flags_to_clear(uint32_t p)
{
	if (!(p & HV_PIN_MASK))
		return GTF_reading | GTF_writing;
	if (!(p & HV_PIN_W_MASK))
		return GTF_writing;
	return 0;
}

/* Does pin p hold a pin of this kind (writable, or read-only)? */
static bool
hv_pin_has(uint32_t p, bool writable)
{
	uint32_t all = p & HV_PIN_MASK, w = (p & HV_PIN_W_MASK) >> 15;

	/* never below zero either way */
	return w <= all && (writable ? w != 0 : all - w != 0);
}

/*
 * Release one pin of ref in d as the client's gnt_release does (the
 * same BUSY protocol on the 0 <-> 1 transitions, flags cleared on the
 * last pin / last writable pin), after checking that the active table
 * holds such a pin: 0, -ENOENT (no such pin: nothing done), -EDEADLK
 * (BUSY held for a second: left alone).
 */
static int
hv_pin_release(struct hv_dom *d, uint32_t ref, bool writable)
{
	struct hv_active *act = &d->act[ref];
	uint32_t *word = (uint32_t *)&d->gnt->table[ref];
	uint32_t dec = HV_PIN_ONE | (writable ? HV_PIN_W_ONE : 0);
	unsigned int spins = 0;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		/* Pairs with the mappers' smp_store_release(&act->pin). */
		uint64_t v = smp_load_acquire(&act->pin);
		uint32_t p = HV_PIN(v), np, clear;

		if (p & HV_PIN_BUSY) {
			if (!hv_busy_wait(&spins, &t0))
				return -EDEADLK;
			continue;
		}
		if (!hv_pin_has(p, writable))
			return -ENOENT;
		np = p - dec;
		clear = hv_flags_to_clear(np) & (writable ? ~0u : ~(uint32_t)GTF_writing);
		if (!clear) {
			/* Release: pairs with the mappers' acquire of pin. */
			if (__atomic_compare_exchange_n(&act->pin, &v, (uint64_t)np,
							false, __ATOMIC_RELEASE,
							__ATOMIC_RELAXED))
				return 0;
			continue;
		}
		if (!__atomic_compare_exchange_n(&act->pin, &v,
						 HV_PIN_WORD(p | HV_PIN_BUSY,
							     HV_OWNER_XENSIM),
						 false, __ATOMIC_ACQ_REL,
						 __ATOMIC_RELAXED))
			continue;
		/* Pairs with the guest's acquire in end-access: the page is
		 * the guest's again once it sees the flags clear. */
		__atomic_fetch_and(word, ~clear, __ATOMIC_RELEASE);
		/* Pairs with smp_load_acquire(&act->pin) in gnt_acquire. */
		smp_store_release(&act->pin, (uint64_t)np);
		return 0;
	}
}

/* A ledger slot of a closed connection, or 0 if it cannot be read. */
static uint32_t
hv_ledger_slot(int fd, uint32_t slot)
{
	uint32_t e;

	if (pread(fd, &e, sizeof(e), offsetof(struct hv_ledger, slot) +
		  (off_t)slot * sizeof(e)) != (ssize_t)sizeof(e))
		return 0;
	return e;
}

/*
 * ref's pin word is BUSY with a closed connection's token: its process
 * died inside a take or a release (hv-proto.h "pin ledger").  Finish or
 * undo it from what the slot the owner names says, so that the word is
 * consistent and free again.  Nobody else changes the word while that
 * BUSY is set.  Returns the slot if this settles its entry for good (a
 * release: the pass over the ledger must not release it again), else
 * HV_LEDGER_SLOTS.
 */
static uint32_t
hv_pin_recover(struct hv_dom *d, uint32_t ref, uint64_t v, int fd, bool *bad)
{
	struct hv_active *act = &d->act[ref];
	uint32_t *word = (uint32_t *)&d->gnt->table[ref];
	uint32_t own = HV_PIN_OWNER(v), slot = own & HV_OWN_SLOT_MASK;
	bool done = own & HV_OWN_DONE;
	uint32_t p = HV_PIN(v) & ~HV_PIN_BUSY, np = p, e = hv_ledger_slot(fd, slot);
	bool w = e & HV_LEDGER_WRITABLE, trans = e & HV_LEDGER_TRANS;
	bool rel = e & HV_LEDGER_RELEASING;
	uint32_t dec = HV_PIN_ONE | (w ? HV_PIN_W_ONE : 0), settled = HV_LEDGER_SLOTS;

	if (e != 0 && (!(e & HV_LEDGER_VALID) ||
		       ((e >> HV_LEDGER_DOMID_SHIFT) & HV_LEDGER_DOMID_MASK) != d->domid ||
		       (e & HV_LEDGER_REF_MASK) != ref)) {
		*bad = true;	/* not what it was doing: just let go */
	} else if (trans && !rel) {
		/* a take: not counted yet (undo), or counted and not
		 * recorded (release it) */
		if (done && hv_pin_has(p, w))
			np = p - dec;
	} else if (trans && rel) {
		/* a release: finish it, or it is counted already */
		if (!done && hv_pin_has(p, w))
			np = p - dec;
		settled = slot;
	}
	/* else a recorded take (the ledger pass releases it) or a release
	 * whose slot is clear (over): only BUSY goes. */
	/* A take may have set the flags for a pin it never counted; a
	 * release may not have cleared them yet. */
	__atomic_fetch_and(word, ~hv_flags_to_clear(np), __ATOMIC_RELEASE);
	/* Pairs with the mappers' smp_load_acquire(&act->pin). */
	smp_store_release(&act->pin, (uint64_t)np);
	return settled;
}

/*
 * The connection of a dom0 process closed: finish or undo the pin
 * operations it died in, then release every pin its ledger still
 * records (hv-proto.h "pin ledger").  Reads the ledger with pread, so
 * a ledger shrunk or rewritten under us costs entries, never xensim.
 */
void
hv_ledger_release(struct hv *hv, int fd, uint32_t token)
{
	struct hv_ledger_hdr hdr;
	uint32_t buf[1024], used, done = 0, bad = 0, gone = 0, stuck = 0;
	uint32_t recovered = 0, *settled = NULL, nsettled = 0;
	struct hv_dom *d;

	if (pread(fd, &hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr))
		return;		/* never written: nothing recorded */
	if (hdr.magic != HV_LEDGER_MAGIC) {
		log_error("hv: a pin ledger with a bad magic (%#x): ignored",
			  hdr.magic);
		return;
	}
	/* The operations it died in: BUSY with its token, anywhere. */
	for (d = hv->doms; d; d = d->next) {
		for (uint32_t ref = 0; ref < HV_NR_GRANTS; ref++) {
			/* Pairs with the holder's compare-exchange. */
			uint64_t v = smp_load_acquire(&d->act[ref].pin);
			bool b = false;
			uint32_t s, *ns;

			if (!(HV_PIN(v) & HV_PIN_BUSY) ||
			    HV_PIN_OWNER(v) == HV_OWNER_XENSIM ||
			    HV_OWN_TOKEN(HV_PIN_OWNER(v)) != token)
				continue;
			s = hv_pin_recover(d, ref, v, fd, &b);
			recovered++;
			bad += b;
			if (s == HV_LEDGER_SLOTS)
				continue;
			ns = realloc(settled, sizeof(*ns) * (nsettled + 1));
			if (ns) {
				settled = ns;
				settled[nsettled++] = s;
			}
		}
	}
	used = hdr.used < HV_LEDGER_SLOTS ? hdr.used : HV_LEDGER_SLOTS;
	for (uint32_t i = 0; i < used; i += ARRAY_SIZE(buf)) {
		size_t want = used - i < ARRAY_SIZE(buf) ? used - i : ARRAY_SIZE(buf);
		ssize_t n = pread(fd, buf, want * sizeof(buf[0]),
				  offsetof(struct hv_ledger, slot) +
				  (off_t)i * sizeof(buf[0]));

		if (n <= 0)
			break;
		for (size_t k = 0; k < (size_t)n / sizeof(buf[0]); k++) {
			uint32_t e = buf[k], domid, ref;
			bool trans = e & HV_LEDGER_TRANS;
			bool rel = e & HV_LEDGER_RELEASING, skip = false;
			int rc;

			/* entry|TRANS: a take not counted (or settled above) */
			if (e == 0 || (trans && !rel))
				continue;
			domid = (e >> HV_LEDGER_DOMID_SHIFT) & HV_LEDGER_DOMID_MASK;
			ref = e & HV_LEDGER_REF_MASK;
			if (!(e & HV_LEDGER_VALID) || (rel && !trans) ||
			    ref >= HV_NR_GRANTS) {
				bad++;
				continue;
			}
			for (uint32_t j = 0; j < nsettled; j++)
				if (settled[j] == i + k)
					skip = true;
			if (skip)
				continue;
			d = hv_dom_find(hv, domid);
			if (!d) {
				/* destroyed: its tables went with it */
				gone++;
				continue;
			}
			/* a pin held, or one whose release had not begun */
			rc = hv_pin_release(d, ref, e & HV_LEDGER_WRITABLE);
			if (rc == 0)
				done++;
			else if (rc == -EDEADLK)
				stuck++;
			else
				bad++;
		}
		if ((size_t)n < want * sizeof(buf[0]))
			break;
	}
	free(settled);
	if (bad)
		log_error("hv: a closed dom0 connection's pin ledger had %u "
			  "entries without such a pin: skipped", bad);
	if (stuck)
		log_error("hv: %u ledger pins left: their entries stayed busy "
			  "(a mapper without a ledger died mid-transition?)", stuck);
	if (done || gone || recovered)
		bk_dbg(BK_DBG_SIM, "hv: released %u pins of a closed dom0 "
		       "connection, finished or undid %u operations it died "
		       "in (%u entries of destroyed domains skipped)",
		       done, recovered, gone);
}
