/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cllog.c: reading a crash log (include/crashlog.h); see blkcrash.h.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blkcrash.h"
#include "compiler.h"
#include "log.h"

const char *
cl_type_name(unsigned int type)
{
	switch (type) {
	case CRASHLOG_WRITE:
		return "WRITE";
	case CRASHLOG_FLUSH:
		return "FLUSH";
	case CRASHLOG_DISCARD:
		return "DISCARD";
	case CRASHLOG_CUT:
		return "CUT";
	case CL_MARK:
		return "MARK";
	}
	return "?";
}

const char *
cl_format_name(enum cl_format fmt)
{
	switch (fmt) {
	case CL_FMT_CRASHLOG:
		return "crash log";
	case CL_FMT_DMLOG:
		return "dm-log-writes log";
	case CL_FMT_AUTO:
		break;
	}
	return "log";
}

/* Fill durable_at for every record (one pass, records in seq order). */
void
cl_finish(struct cl_log *log)
{
	size_t i, pending = 0;	/* e[pending..i) may still be waiting */

	log->nflush = 0;
	for (i = 0; i < log->n; i++) {
		struct cl_entry *e = &log->e[i];
		const struct crashlog_rec *r = &e->rec;

		e->durable_at = CL_NEVER;
		if ((r->type == CRASHLOG_WRITE || r->type == CRASHLOG_DISCARD) &&
		    (r->flags & CRASHLOG_R_DURABLE) && !(r->flags & CRASHLOG_R_FAILED))
			e->durable_at = r->seq;
		if (r->type != CRASHLOG_FLUSH || (r->flags & CRASHLOG_R_FAILED))
			continue;
		log->nflush++;
		/* everything with seq < covers that is still waiting */
		for (; pending < i && log->e[pending].rec.seq < r->covers; pending++) {
			struct cl_entry *w = &log->e[pending];

			if ((w->rec.type == CRASHLOG_WRITE ||
			     w->rec.type == CRASHLOG_DISCARD) &&
			    !(w->rec.flags & CRASHLOG_R_FAILED) &&
			    w->durable_at == CL_NEVER)
				w->durable_at = r->seq;
		}
	}
}

/* Which format the first bytes of a file (len of them) say it is. */
static enum cl_format
cl_sniff(const unsigned char *p, size_t len)
{
	uint64_t m = 0;
	size_t i;

	if (len >= 8 && !memcmp(p, CRASHLOG_MAGIC, 8))
		return CL_FMT_CRASHLOG;
	if (len >= 8) {
		for (i = 0; i < 8; i++)
			m |= (uint64_t)p[i] << (8 * i);
		if (m == DML_MAGIC)
			return CL_FMT_DMLOG;
	}
	return CL_FMT_AUTO;
}

/*
 * After reading stopped at off (a record that is short, damaged or out of
 * seq): is there a whole, valid record further on whose seq comes after
 * the last one read?  A log torn by a cut or a crash while appending ends
 * at its damage; one with intact records past the damage was corrupted
 * in the middle (bit flips, a bad copy), and what follows the damage is
 * not a tail to ignore.  A record counts only with its header checksum,
 * a seq above n and, for a WRITE, its data hash: data that merely contains
 * the magic does not.  Sets log->corrupt_* and returns true if found.
 */
static bool
cl_find_later_record(struct cl_log *log, const unsigned char *p, size_t len,
		     size_t off)
{
	static const unsigned char magic[4] = {
		CRASHLOG_REC_MAGIC & 0xff, (CRASHLOG_REC_MAGIC >> 8) & 0xff,
		(CRASHLOG_REC_MAGIC >> 16) & 0xff, CRASHLOG_REC_MAGIC >> 24,
	};
	size_t q = off + 1;

	while (q + CRASHLOG_REC_SIZE <= len) {
		const unsigned char *m = memmem(p + q, len - q, magic, sizeof(magic));
		struct crashlog_rec rec;
		uint64_t dlen;

		if (!m)
			break;
		q = (size_t)(m - p);
		if (q + CRASHLOG_REC_SIZE > len)
			break;
		if (crashlog_decode_rec(p + q, &rec) == 0 && rec.seq > log->n) {
			dlen = crashlog_data_len(&rec);
			if (dlen <= len - q - CRASHLOG_REC_SIZE &&
			    (!dlen || crashlog_hash(p + q + CRASHLOG_REC_SIZE, dlen) ==
			     rec.hash)) {
				log->corrupt_seq = rec.seq;
				log->corrupt_next_off = q;
				return true;
			}
		}
		q++;
	}
	return false;
}

int
cl_log_open(const char *path, struct cl_log **out)
{
	return cl_log_open_fmt(path, CL_FMT_AUTO, out);
}

int
cl_log_open_fmt(const char *path, enum cl_format fmt, struct cl_log **out)
{
	struct cl_log *log;
	struct stat st;
	const unsigned char *p;
	size_t cap = 0, off;
	int fd, r;

	log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		log_error("%s: %m", path);
		goto err;
	}
	if (!S_ISREG(st.st_mode) || st.st_size < 8) {
		log_error("%s: not a crash log nor a dm-log-writes log (%s)", path,
			  S_ISREG(st.st_mode) ? "too short" :
			  "not a regular file: copy the log device to a file first");
		r = -EINVAL;
		goto err;
	}
	log->map_len = (size_t)st.st_size;
	log->map = mmap(NULL, log->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (log->map == MAP_FAILED) {
		r = -errno;
		log->map = NULL;
		log_error("%s: mmap: %m", path);
		goto err;
	}
	close(fd);
	fd = -1;
	p = log->map;
	if (fmt == CL_FMT_AUTO) {
		fmt = cl_sniff(p, log->map_len);
		if (fmt == CL_FMT_AUTO) {
			log_error("%s: not a crash log nor a dm-log-writes log "
				  "(unknown magic)", path);
			r = -EINVAL;
			goto err;
		}
	}
	log->format = fmt;
	if (fmt == CL_FMT_DMLOG) {
		r = dml_parse(log, p, log->map_len, path);
		if (r < 0)
			goto err;
		cl_finish(log);
		*out = log;
		return 0;
	}
	if (log->map_len < CRASHLOG_HDR_SIZE) {
		log_error("%s: not a crash log (too short)", path);
		r = -EINVAL;
		goto err;
	}
	r = crashlog_decode_hdr(p, &log->hdr);
	if (r < 0) {
		log_error("%s: %s", path, r == -ENOTSUP ?
			  "crash log version not supported" :
			  "not a crash log (bad magic or header checksum)");
		goto err;
	}
	if (log->hdr.hdr_size > log->map_len) {
		log_error("%s: header size %u is past the end of the file", path,
			  log->hdr.hdr_size);
		r = -EINVAL;
		goto err;
	}
	off = log->hdr.hdr_size;
	while (off + CRASHLOG_REC_SIZE <= log->map_len) {
		struct crashlog_rec rec;
		uint64_t dlen;

		if (crashlog_decode_rec(p + off, &rec) < 0 || rec.seq != log->n + 1)
			break;
		dlen = crashlog_data_len(&rec);
		if (dlen > log->map_len - off - CRASHLOG_REC_SIZE)
			break;
		if (dlen && crashlog_hash(p + off + CRASHLOG_REC_SIZE, dlen) != rec.hash)
			break;
		if (log->n == cap) {
			size_t ncap = cap ? 2 * cap : 1024;
			void *ne = realloc(log->e, ncap * sizeof(*log->e));

			if (!ne) {
				r = -ENOMEM;
				goto err;
			}
			log->e = ne;
			cap = ncap;
		}
		memset(&log->e[log->n], 0, sizeof(log->e[log->n]));
		log->e[log->n].rec = rec;
		log->e[log->n].entry = log->n;
		log->e[log->n].data = dlen ? p + off + CRASHLOG_REC_SIZE : NULL;
		log->n++;
		off += CRASHLOG_REC_SIZE + dlen;
	}
	log->valid_bytes = off;
	log->ignored_bytes = log->map_len - off;
	if (log->ignored_bytes)
		cl_find_later_record(log, p, log->map_len, off);
	cl_finish(log);
	*out = log;
	return 0;
err:
	if (fd >= 0)
		close(fd);
	cl_log_close(log);
	return r;
}

void
cl_log_close(struct cl_log *log)
{
	if (!log)
		return;
	if (log->map)
		munmap(log->map, log->map_len);
	free(log->e);
	free(log);
}

bool
cl_point_picks(const struct cl_point *p, uint64_t seq)
{
	uint64_t z = p->seed ^ (seq * 0x9e3779b97f4a7c15ull);

	if (!p->subset)
		return false;
	if (p->all)
		return true;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return z & 1;
}
