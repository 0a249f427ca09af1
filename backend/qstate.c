/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qstate.c: a queue's recovery record (qstate.h).
 *
 * The file: a header (identity, the consumer index), then one slot per
 * ring entry, each the record of the queue's request structure of the
 * same number while it is in flight.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "barrier.h"
#include "log.h"
#include "qstate.h"

#define QS_MAGIC	0x53514b42u	/* "BKQS" */
#define QS_VERSION	2u	/* 2: slots 8-byte aligned */

/* A request as blkring_back_get_request() copied it: its direct
 * segments (an indirect request's come from its pages again). */
struct qs_req {
	uint64_t id, sector, nr_sectors;
	uint8_t operation, op, discard_secure, pad;
	uint16_t handle, nr_segments;
	uint32_t nr_indirect_pages;
	grant_ref_t indirect_grefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	struct blkreq_seg seg[BLKIF_MAX_SEGMENTS_PER_REQUEST];
};

enum { QS_TAKEN = 1, QS_ANSWERED = 2 };

struct qs_slot {
	uint32_t idx;		/* ring index it was taken at */
	uint32_t flags;		/* QS_*: written last (release) */
	uint32_t rsp;		/* QS_ANSWERED: its response's ring index */
	uint32_t pad;
	struct qs_req req;
};

/* 8-byte aligned, so that the slots after it are too (their 64-bit
 * fields are read and written in place) */
struct qs_hdr {
	uint32_t magic, version;
	struct bk_qstate_id id;
	uint32_t req_cons;	/* written after the slot it covers */
	uint32_t pad;
} __attribute__((aligned(8)));

struct bk_qstate {
	char *path;
	int fd;
	struct qs_hdr *hdr;	/* the mapping */
	size_t len;
	struct qs_slot *slots;
	uint32_t size;
	/* answered slots in response order, until pushed (this process's) */
	uint32_t *fifo;
	uint32_t head, count;
};

static size_t
file_len(uint32_t ring_size)
{
	size_t n = sizeof(struct qs_hdr) + (size_t)ring_size * sizeof(struct qs_slot);
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);

	return (n + pg - 1) / pg * pg;
}

static struct bk_qstate *
qs_map(const char *path, int fd, uint32_t ring_size)
{
	struct bk_qstate *qs = calloc(1, sizeof(*qs));
	void *p;

	if (!qs)
		return NULL;
	qs->len = file_len(ring_size);
	p = mmap(NULL, qs->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	qs->path = strdup(path);
	qs->fifo = calloc(ring_size, sizeof(*qs->fifo));
	if (p == MAP_FAILED || !qs->path || !qs->fifo) {
		int err = p == MAP_FAILED ? errno : ENOMEM;

		if (p != MAP_FAILED)
			munmap(p, qs->len);
		free(qs->path);
		free(qs->fifo);
		free(qs);
		errno = err;
		return NULL;
	}
	qs->fd = fd;
	qs->hdr = p;
	qs->slots = (struct qs_slot *)(qs->hdr + 1);
	qs->size = ring_size;
	return qs;
}

struct bk_qstate *
bk_qstate_create(const char *path, const struct bk_qstate_id *id, uint32_t req_cons)
{
	struct bk_qstate *qs;
	int fd, err;

	if (!id->ring_size || (id->ring_size & (id->ring_size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	/* Every block allocated now, not at the first store through the
	 * mapping: on a full --state-dir that store would be a SIGBUS that
	 * kills the daemon and stalls every guest; here it is ENOSPC, and
	 * only this queue's connect fails. */
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		err = errno;
	else
		err = posix_fallocate(fd, 0, (off_t)file_len(id->ring_size));
	if (err) {
		log_error("recovery record %s: %s", path, strerror(err));
		if (fd >= 0) {
			close(fd);
			unlink(path);	/* not left half made */
		}
		errno = err;
		return NULL;
	}
	qs = qs_map(path, fd, id->ring_size);
	if (!qs) {
		err = errno;
		log_error("recovery record %s: mmap: %m", path);
		close(fd);
		unlink(path);
		errno = err;
		return NULL;
	}
	/* the file is zeroes: no slot taken; the header goes last */
	qs->hdr->id = *id;
	qs->hdr->req_cons = req_cons;
	qs->hdr->version = QS_VERSION;
	smp_store_release(&qs->hdr->magic, QS_MAGIC);
	return qs;
}

struct bk_qstate *
bk_qstate_open(const char *path, const struct bk_qstate_id *id, uint32_t *req_cons)
{
	struct bk_qstate *qs;
	struct stat st;
	int fd, err;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size != file_len(id->ring_size)) {
		log_error("recovery record %s: not one for a ring of %u entries", path,
			  id->ring_size);
		close(fd);
		errno = ESTALE;
		return NULL;
	}
	qs = qs_map(path, fd, id->ring_size);
	if (!qs) {
		err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	if (qs->hdr->magic != QS_MAGIC || qs->hdr->version != QS_VERSION ||
	    memcmp(&qs->hdr->id, id, sizeof(*id))) {
		log_error("recovery record %s: of another connection (the frontend "
			  "reconnected?), or damaged: not used", path);
		bk_qstate_close(qs, false);
		errno = ESTALE;
		return NULL;
	}
	*req_cons = qs->hdr->req_cons;
	return qs;
}

int
bk_qstate_check(const char *path, const struct bk_qstate_id *id)
{
	struct qs_hdr hdr;
	struct stat st;
	ssize_t n;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	n = pread(fd, &hdr, sizeof(hdr), 0);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if ((size_t)n != sizeof(hdr) || (size_t)st.st_size != file_len(id->ring_size) ||
	    hdr.magic != QS_MAGIC || hdr.version != QS_VERSION ||
	    memcmp(&hdr.id, id, sizeof(*id)))
		return -ESTALE;
	return 0;
}

void
bk_qstate_close(struct bk_qstate *qs, bool unlink_it)
{
	if (!qs)
		return;
	munmap(qs->hdr, qs->len);
	close(qs->fd);
	if (unlink_it && unlink(qs->path) < 0 && errno != ENOENT)
		log_error("recovery record %s: unlink: %m", qs->path);
	free(qs->path);
	free(qs->fifo);
	free(qs);
}

void
bk_qstate_take(struct bk_qstate *qs, unsigned int slot, uint32_t idx,
	       const struct blkreq *req)
{
	struct qs_slot *s = &qs->slots[slot];
	struct qs_req *c = &s->req;
	unsigned int n = req->nr_segments < BLKIF_MAX_SEGMENTS_PER_REQUEST ?
			 req->nr_segments : BLKIF_MAX_SEGMENTS_PER_REQUEST;

	c->id = req->id;
	c->sector = req->sector;
	c->nr_sectors = req->nr_sectors;
	c->operation = req->operation;
	c->op = req->op;
	c->discard_secure = req->discard_secure;
	c->handle = req->handle;
	c->nr_segments = req->nr_segments;
	c->nr_indirect_pages = req->nr_indirect_pages;
	memcpy(c->indirect_grefs, req->indirect_grefs, sizeof(c->indirect_grefs));
	memcpy(c->seg, req->seg, n * sizeof(c->seg[0]));
	s->idx = idx;
	/* the copy, then the slot marked, then the index past it */
	smp_store_release(&s->flags, QS_TAKEN);
	smp_store_release(&qs->hdr->req_cons, idx + 1);
}

void
bk_qstate_answered(struct bk_qstate *qs, unsigned int slot, uint32_t rsp)
{
	struct qs_slot *s = &qs->slots[slot];

	s->rsp = rsp;
	/* the response is in the ring already; the push comes after */
	smp_store_release(&s->flags, QS_TAKEN | QS_ANSWERED);
	qs->fifo[(qs->head + qs->count) & (qs->size - 1)] = slot;
	qs->count++;
}

void
bk_qstate_pushed(struct bk_qstate *qs, uint32_t pushed)
{
	while (qs->count) {
		struct qs_slot *s = &qs->slots[qs->fifo[qs->head]];

		/* responses are pushed in response index order */
		if ((int32_t)(pushed - s->rsp) <= 0)
			break;
		smp_store_release(&s->flags, 0);
		qs->head = (qs->head + 1) & (qs->size - 1);
		qs->count--;
	}
}

static void
req_of(const struct qs_req *c, struct blkreq *req)
{
	unsigned int n = c->nr_segments < BLKIF_MAX_SEGMENTS_PER_REQUEST ?
			 c->nr_segments : BLKIF_MAX_SEGMENTS_PER_REQUEST;

	memset(req, 0, offsetof(struct blkreq, seg));
	req->id = c->id;
	req->sector = c->sector;
	req->nr_sectors = c->nr_sectors;
	req->operation = c->operation;
	req->op = c->op;
	req->discard_secure = c->discard_secure;
	req->handle = c->handle;
	req->nr_segments = c->nr_segments;
	req->nr_indirect_pages = c->nr_indirect_pages;
	memcpy(req->indirect_grefs, c->indirect_grefs, sizeof(c->indirect_grefs));
	memcpy(req->seg, c->seg, n * sizeof(c->seg[0]));
}

/* Is the slot a request taken (before cons) and not answered where the
 * frontend could see it (below pushed)? */
static bool
in_flight(const struct qs_slot *s, uint32_t cons, uint32_t pushed)
{
	return (s->flags & QS_TAKEN) && (int32_t)(cons - s->idx) > 0 &&
	       !((s->flags & QS_ANSWERED) && (int32_t)(pushed - s->rsp) > 0);
}

int
bk_qstate_recover(struct bk_qstate *qs, uint32_t pushed,
		  void (*fn)(void *arg, unsigned int slot, uint32_t idx,
			     const struct blkreq *req),
		  void *arg)
{
	uint32_t cons = qs->hdr->req_cons, want = cons - pushed, n = 0, i;
	struct blkreq *req;
	uint32_t *order;

	if (want > qs->size)
		return -EIO;
	order = malloc(qs->size * sizeof(*order));
	req = malloc(sizeof(*req));
	if (!order || !req) {
		free(order);
		free(req);
		return -ENOMEM;
	}
	for (i = 0; i < qs->size; i++)
		if (in_flight(&qs->slots[i], cons, pushed))
			order[n++] = i;
	if (n != want) {
		free(order);
		free(req);
		return -EIO;	/* nothing done: the record does not add up */
	}
	/* take order: oldest (largest distance behind cons) first */
	for (i = 1; i < n; i++) {
		uint32_t v = order[i], j = i;

		while (j && cons - qs->slots[order[j - 1]].idx < cons - qs->slots[v].idx) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	/* everything else in the record is done, or was never taken */
	for (i = 0; i < qs->size; i++)
		if (qs->slots[i].flags && !in_flight(&qs->slots[i], cons, pushed))
			qs->slots[i].flags = 0;
	for (i = 0; i < n; i++) {
		struct qs_slot *s = &qs->slots[order[i]];

		/* answered but never shown: it is answered again */
		s->flags = QS_TAKEN;
		req_of(&s->req, req);
		fn(arg, order[i], s->idx, req);
	}
	free(order);
	free(req);
	return (int)n;
}
