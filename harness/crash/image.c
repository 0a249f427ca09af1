/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * image.c: building crash images from a crash log; see blkcrash.h.
 *
 * The image file holds the durable state at the current point; lastseq[]
 * holds, per 512-byte sector, the seq of the record that wrote it (0 =
 * the base image).  A record is applied only to the sectors whose
 * lastseq is lower than its own seq, so records can be applied in any
 * order (durable ones as they become durable, a subset on top) and the
 * image is always the one that applying them in seq order would give.
 *
 * The subset of a point is applied with an undo log (old data and old
 * lastseq of every run it overwrote) that img_undo() plays backwards.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkcrash.h"
#include "compiler.h"
#include "log.h"

struct img_undo_rec {
	uint64_t sector;
	uint64_t nr;
	uint32_t *seqs;		/* old lastseq[sector .. sector + nr) */
	unsigned char *data;	/* old content */
};

struct img {
	char *path;
	int fd;
	uint64_t sectors;
	uint32_t *lastseq;
	size_t next;		/* by_durable[next] is the first not applied */
	size_t *by_durable;	/* records sorted by durable_at */
	size_t nby;
	uint64_t upto;		/* current point */
	struct img_undo_rec *undo;
	size_t nundo, capundo;
	unsigned char *zeros;	/* for DISCARD, ZBUF bytes */
};

#define ZBUF	(1u << 20)

static int
cmp_durable(const void *a, const void *b, void *ctx)
{
	const struct cl_log *log = ctx;
	const struct cl_entry *x = &log->e[*(const size_t *)a];
	const struct cl_entry *y = &log->e[*(const size_t *)b];

	if (x->durable_at != y->durable_at)
		return x->durable_at < y->durable_at ? -1 : 1;
	return x->rec.seq < y->rec.seq ? -1 : x->rec.seq > y->rec.seq;
}

int
img_open(const char *path, const struct cl_log *log, struct img **out)
{
	struct img *im;
	struct stat st;
	size_t i;
	int r;

	if (log->hdr.dev_size % SECTOR_SIZE) {
		log_error("crash log: device size %" PRIu64 " is not a multiple of 512",
			  log->hdr.dev_size);
		return -EINVAL;
	}
	im = calloc(1, sizeof(*im));
	if (!im)
		return -ENOMEM;
	im->fd = -1;
	im->path = strdup(path);
	im->sectors = log->hdr.dev_size / SECTOR_SIZE;
	im->lastseq = calloc(im->sectors ? im->sectors : 1, sizeof(*im->lastseq));
	im->by_durable = calloc(log->n ? log->n : 1, sizeof(*im->by_durable));
	im->zeros = calloc(1, ZBUF);
	if (!im->path || !im->lastseq || !im->by_durable || !im->zeros) {
		r = -ENOMEM;
		goto err;
	}
	if (log->n > UINT32_MAX) {
		log_error("crash log: more than 2^32 records are not supported");
		r = -EFBIG;
		goto err;
	}
	im->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (im->fd < 0 || fstat(im->fd, &st) < 0) {
		r = -errno;
		log_error("%s: %m", path);
		goto err;
	}
	if (st.st_size == 0 && ftruncate(im->fd, (off_t)log->hdr.dev_size) < 0) {
		r = -errno;
		log_error("%s: ftruncate: %m", path);
		goto err;
	}
	if (S_ISREG(st.st_mode) && st.st_size != 0 &&
	    (uint64_t)st.st_size < log->hdr.dev_size) {
		log_error("%s: image is %" PRIu64 " bytes, the log's device %" PRIu64,
			  path, (uint64_t)st.st_size, log->hdr.dev_size);
		r = -EINVAL;
		goto err;
	}
	for (i = 0; i < log->n; i++) {
		const struct crashlog_rec *rec = &log->e[i].rec;

		if ((rec->type == CRASHLOG_WRITE || rec->type == CRASHLOG_DISCARD) &&
		    !(rec->flags & CRASHLOG_R_FAILED))
			im->by_durable[im->nby++] = i;
	}
	qsort_r(im->by_durable, im->nby, sizeof(*im->by_durable), cmp_durable,
		(void *)log);
	*out = im;
	return 0;
err:
	img_close(im, false);
	return r;
}

int
img_close(struct img *im, bool sync)
{
	int r = 0;

	if (!im)
		return 0;
	img_undo(im);
	if (im->fd >= 0) {
		if (sync && fsync(im->fd) < 0) {
			r = -errno;
			log_error("%s: fsync: %m", im->path);
		}
		close(im->fd);
	}
	free(im->undo);
	free(im->zeros);
	free(im->by_durable);
	free(im->lastseq);
	free(im->path);
	free(im);
	return r;
}

static int
img_pwrite(struct img *im, const void *buf, uint64_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pwrite(im->fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int r = n < 0 ? -errno : -EIO;

			errno = -r;
			log_error("%s: write at %" PRIu64 ": %m", im->path, off);
			return r;
		}
		buf = (const char *)buf + n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int
img_pread(struct img *im, void *buf, uint64_t len, uint64_t off)
{
	while (len > 0) {
		ssize_t n = pread(im->fd, buf, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			log_error("%s: read at %" PRIu64 ": %m", im->path, off);
			return r;
		}
		if (n == 0) {	/* past the end of a sparse file: zeros */
			memset(buf, 0, len);
			return 0;
		}
		buf = (char *)buf + n;
		len -= (uint64_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* Write data (NULL: zeros) of nr sectors at sector s. */
static int
img_put(struct img *im, uint64_t s, uint64_t nr, const unsigned char *data)
{
	uint64_t len = nr * SECTOR_SIZE, off = s * SECTOR_SIZE;
	int r;

	if (data)
		return img_pwrite(im, data, len, off);
	while (len > 0) {
		uint64_t c = len < ZBUF ? len : ZBUF;

		r = img_pwrite(im, im->zeros, c, off);
		if (r < 0)
			return r;
		len -= c;
		off += c;
	}
	return 0;
}

static int
img_save_undo(struct img *im, uint64_t s, uint64_t nr)
{
	struct img_undo_rec *u;
	int r;

	if (im->nundo == im->capundo) {
		size_t cap = im->capundo ? 2 * im->capundo : 64;
		void *p = realloc(im->undo, cap * sizeof(*im->undo));

		if (!p)
			return -ENOMEM;
		im->undo = p;
		im->capundo = cap;
	}
	u = &im->undo[im->nundo];
	u->sector = s;
	u->nr = nr;
	u->seqs = malloc(nr * sizeof(*u->seqs));
	u->data = malloc(nr * SECTOR_SIZE);
	if (!u->seqs || !u->data) {
		free(u->seqs);
		free(u->data);
		return -ENOMEM;
	}
	memcpy(u->seqs, &im->lastseq[s], nr * sizeof(*u->seqs));
	r = img_pread(im, u->data, nr * SECTOR_SIZE, s * SECTOR_SIZE);
	if (r < 0) {
		free(u->seqs);
		free(u->data);
		return r;
	}
	im->nundo++;
	return 0;
}

/*
 * Apply record e to every sector it covers whose lastseq is older.
 * With undo, save what is overwritten first.
 */
static int
img_apply(struct img *im, const struct cl_entry *e, bool undo)
{
	const struct crashlog_rec *rec = &e->rec;
	uint64_t first = rec->offset / SECTOR_SIZE;
	uint64_t nr = rec->len / SECTOR_SIZE, i = 0;
	uint32_t seq = (uint32_t)rec->seq;
	int r;

	if (rec->offset % SECTOR_SIZE || rec->len % SECTOR_SIZE ||
	    first > im->sectors || nr > im->sectors - first) {
		log_error("crash log: record %" PRIu64 " (offset %" PRIu64
			  " length %" PRIu64 ") is outside the device or unaligned",
			  rec->seq, rec->offset, rec->len);
		return -EINVAL;
	}
	while (i < nr) {
		uint64_t j;

		if (im->lastseq[first + i] >= seq) {
			i++;
			continue;
		}
		for (j = i; j < nr && im->lastseq[first + j] < seq; j++)
			;
		if (undo) {
			r = img_save_undo(im, first + i, j - i);
			if (r < 0)
				return r;
		}
		r = img_put(im, first + i, j - i,
			    e->data ? e->data + i * SECTOR_SIZE : NULL);
		if (r < 0)
			return r;
		for (; i < j; i++)
			im->lastseq[first + i] = seq;
	}
	return 0;
}

int
img_undo(struct img *im)
{
	int r = 0;

	while (im->nundo > 0) {
		struct img_undo_rec *u = &im->undo[--im->nundo];

		if (r == 0)
			r = img_pwrite(im, u->data, u->nr * SECTOR_SIZE,
				       u->sector * SECTOR_SIZE);
		memcpy(&im->lastseq[u->sector], u->seqs, u->nr * sizeof(*u->seqs));
		free(u->seqs);
		free(u->data);
	}
	return r;
}

void
img_commit(struct img *im)
{
	while (im->nundo > 0) {
		struct img_undo_rec *u = &im->undo[--im->nundo];

		free(u->seqs);
		free(u->data);
	}
}

int
img_goto(struct img *im, const struct cl_log *log, const struct cl_point *p)
{
	uint64_t upto = p->upto < log->n ? p->upto : log->n, s;
	int r, added = 0;

	r = img_undo(im);
	if (r < 0)
		return r;
	if (upto < im->upto) {
		log_error("crash points must come in increasing order (%" PRIu64
			  " after %" PRIu64 ")", upto, im->upto);
		return -EINVAL;
	}
	/* durable by upto: for good */
	while (im->next < im->nby &&
	       log->e[im->by_durable[im->next]].durable_at <= upto) {
		r = img_apply(im, &log->e[im->by_durable[im->next]], false);
		if (r < 0)
			return r;
		im->next++;
	}
	im->upto = upto;
	if (!p->subset)
		return 0;
	/* not durable yet: the subset, undoable */
	for (s = 1; s <= upto; s++) {
		const struct cl_entry *e = &log->e[s - 1];

		if ((e->rec.type != CRASHLOG_WRITE && e->rec.type != CRASHLOG_DISCARD) ||
		    (e->rec.flags & CRASHLOG_R_FAILED) || e->durable_at <= upto ||
		    !cl_point_picks(p, s))
			continue;
		r = img_apply(im, e, true);
		if (r < 0)
			return r;
		added++;
	}
	return added;
}
