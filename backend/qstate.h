/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qstate.h: what one queue must leave behind so that the next blkbackd
 * can take its ring over without the guest noticing -- after a crash, a
 * restart or an upgrade -- and answer every request taken and not
 * answered exactly once.
 *
 * Why a record: requests and responses share the ring's slots, and
 * responses are written in completion order at the response producer
 * index, over the slots of requests taken earlier, so the ring alone
 * does not say which requests were taken.  The record is a small file
 * (on tmpfs, /run: it survives the process, not the machine, as the
 * guest does not either) mapped shared: what a store to it says is in
 * the file the instant the store is done, whatever happens to the
 * process after.
 *
 * A request in flight has one slot of the record, the slot of the same
 * number as its request structure in the queue's pool (there are as many
 * as the ring has entries): not its ring index, since a frontend may
 * reuse the ring slot of a request that is still in flight once enough
 * later ones were answered.
 *
 * Protocol, per request (the order is what makes a kill at any
 * instruction safe):
 *   take:    the private copy of the request into its slot, the slot
 *            marked with its take index, THEN the consumer index moved
 *            past it; only then is the request acted on.  (A kill
 *            before the index moved: the request was not acted on and is
 *            still in the ring -- no response can have been written over
 *            it -- so the next process takes it again.)
 *   answer:  the response written to the ring at response index r, THEN
 *            r recorded in the slot, THEN the responses pushed (shared
 *            rsp_prod), THEN the slot freed.  (A kill before the push:
 *            the frontend never saw it; the next process answers again,
 *            at the same index.  After the push, before the free: the
 *            next process sees r below the shared rsp_prod and knows it
 *            was answered.)
 * Recovery: the requests whose slot holds a take index below the
 * recorded consumer index and no response below the shared rsp_prod are
 * exactly the ones taken and not answered; there are req_cons - rsp_prod
 * of them, and they are done again, each in its slot, in take order (a barrier keeps its
 * place: it was taken after everything it must follow).  Reads, writes,
 * flushes and discards are idempotent at this level.
 *
 * Owner: one queue thread; the control thread creates and frees.
 * Errors: 0/-errno; logs only when a file cannot be made or is
 * unusable at open (what the admin must know).
 */
#ifndef BK_QSTATE_H
#define BK_QSTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "blkring.h"
#include "compiler.h"

struct bk_qstate;

/* The connection a record belongs to: a record of another ring (the
 * frontend reconnected meanwhile) is never used. */
struct bk_qstate_id {
	uint32_t domid, devid, queue;
	uint32_t nr_pages;
	grant_ref_t refs[BLKRING_MAX_PAGES];
	uint32_t evtchn;		/* the frontend's port */
	uint32_t abi;			/* enum blkring_abi */
	uint32_t ring_size;		/* entries */
};

/*
 * A fresh record at path (created or truncated, mode 0600) for a ring
 * whose consumer index starts at req_cons.  NULL+errno, logged.
 */
struct bk_qstate *bk_qstate_create(const char *path, const struct bk_qstate_id *id,
				   uint32_t req_cons);
/*
 * The record a previous process left at path, if it is for this very
 * connection (id): NULL+errno, ENOENT when there is none, ESTALE when it
 * is another connection's or damaged (logged).  *req_cons: the consumer
 * index it recorded.
 */
struct bk_qstate *bk_qstate_open(const char *path, const struct bk_qstate_id *id,
				 uint32_t *req_cons);
/*
 * Is the record at path this very connection's (id)?  0 when it is,
 * -ENOENT when there is none, -ESTALE when it is another connection's,
 * of another format or damaged, another -errno when it cannot be read.
 * Reads only: never logs, never changes the file.  Start-up asks this
 * before it takes a Connected vbd over: a vbd without its record was
 * not served by a blkbackd with this --state-dir.
 */
int bk_qstate_check(const char *path, const struct bk_qstate_id *id);
/* Unmap; with unlink_it also remove the file (the vbd closed: nothing
 * to take over).  qs may be NULL. */
void bk_qstate_close(struct bk_qstate *qs, bool unlink_it);

/* take: record req, taken at ring index idx, in slot (0..ring size - 1),
 * then req_cons = idx + 1. */
void bk_qstate_take(struct bk_qstate *qs, unsigned int slot, uint32_t idx,
		    const struct blkreq *req);
/* answer: the request in slot got its response at ring index rsp. */
void bk_qstate_answered(struct bk_qstate *qs, unsigned int slot, uint32_t rsp);
/* The frontend has been shown every response below pushed: free the
 * slots of the requests answered there. */
void bk_qstate_pushed(struct bk_qstate *qs, uint32_t pushed);

/*
 * Recovery: the requests taken and not answered (see above), in take
 * order: for each, fn(arg, slot, idx, &req).  Every other slot is
 * freed.  Returns how many there were, or -EIO (nothing done) when the
 * record does not add up: not req_cons - pushed of them.
 */
int bk_qstate_recover(struct bk_qstate *qs, uint32_t pushed,
		      void (*fn)(void *arg, unsigned int slot, uint32_t idx,
				 const struct blkreq *req),
		      void *arg);

#endif /* BK_QSTATE_H */
