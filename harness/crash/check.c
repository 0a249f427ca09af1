/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * check.c: the guest log (include/guestlog.h) and the durability contract
 * between it and the host's crash log; see blkcrash.h.
 *
 * The contract (blkif.h FLUSH_DISKCACHE / WRITE_BARRIER; DESIGN-NOTES.md
 * "blkcrash"), at the blkif level: a write the guest saw
 * acknowledged before it issued a flush that was then acknowledged (F
 * covers it), or a write acknowledged as FUA, must be durable on the host
 * BEFORE the guest is told so.
 *
 * "Before": the two logs have no common clock.  The host log orders
 * host events; the guest log orders what the guest was told.  They meet
 * through writes: each acknowledged guest write W is matched to the host
 * WRITE record with the same offset, length and data hash (the k-th such
 * guest write to the k-th such host record).  When the guest log says,
 * for every write, after which guest record it was issued (optional 7th
 * field), the first host record of a write issued after promise g was
 * made is an upper bound U(g) of where on the host timeline the guest
 * learnt of g: the promise is kept iff every write it covers is durable
 * at a host record before U(g).  A flush acknowledged before its
 * fdatasync completed is caught this way (the guest's next writes reach
 * the host before the flush record does).  Without issue order the only
 * bound is the end of the log: promised writes must be durable by then.
 *
 * Barrier ordering (nothing issued after a barrier reaches the host
 * before it) is the same check for the writes issued after the barrier
 * was acknowledged; writes in flight while a barrier ran are not
 * distinguishable in the guest log.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkcrash.h"
#include "compiler.h"
#include "guestlog.h"
#include "log.h"

/* ---- guest log ---- */

static int
gl_push(struct gl_log *gl, size_t *cap, const struct gl_entry *e)
{
	if (gl->n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 1024;
		void *p = realloc(gl->e, ncap * sizeof(*gl->e));

		if (!p)
			return -ENOMEM;
		gl->e = p;
		*cap = ncap;
	}
	gl->e[gl->n++] = *e;
	return 0;
}

int
gl_log_open(const char *path, struct gl_log **out)
{
	struct gl_log *gl;
	FILE *f;
	char *line = NULL;
	size_t linecap = 0, cap = 0;
	ssize_t len;
	unsigned long lineno = 0;
	int r = 0, ver;

	gl = calloc(1, sizeof(*gl));
	if (!gl)
		return -ENOMEM;
	gl->has_issue_order = true;
	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		log_error("%s: %m", path);
		free(gl);
		return r;
	}
	while ((len = getline(&line, &linecap, f)) > 0) {
		struct gl_entry e = { .issued_after = GL_NO_ISSUE };
		char op[16], hash[32];
		unsigned long long a, b, c, d, g;
		int fua, st, n;

		lineno++;
		if (line[len - 1] != '\n') {	/* torn last line */
			gl->ignored_lines++;
			break;
		}
		if (lineno == 1) {
			char magic[32];

			if (sscanf(line, "%31s %d", magic, &ver) != 2 ||
			    strcmp(magic, GUESTLOG_MAGIC) || ver != GUESTLOG_VERSION) {
				log_error("%s: not a version %d guest log (first line)",
					  path, GUESTLOG_VERSION);
				r = -EINVAL;
				break;
			}
			continue;
		}
		if (line[0] == 'W') {
			n = sscanf(line, "W %llu %llu %llu %31s %d %llu", &a, &b, &c,
				   hash, &fua, &g);
			if (n < 5)
				goto bad;
			e.type = GL_WRITE;
			e.sector = b;
			e.nr = c;
			e.fua = fua != 0;
			e.hash = strtoull(hash, NULL, 16);
			if (n == 6)
				e.issued_after = g;
			else
				gl->has_issue_order = false;
		} else if (line[0] == 'F') {
			if (sscanf(line, "F %llu %llu", &a, &c) != 2)
				goto bad;
			e.type = GL_FLUSH;
			e.covers = c;
		} else if (line[0] == 'E') {
			if (sscanf(line, "E %llu %15s %llu %llu %d", &a, op, &b, &d, &st) != 5)
				goto bad;
			e.type = GL_ERROR;
			e.sector = b;
			e.nr = d;
		} else {
			goto bad;
		}
		e.seq = a;
		if (e.seq != gl->n + 1) {
			log_error("%s:%lu: seq %" PRIu64 " where %zu was expected (a lost line)",
				  path, lineno, e.seq, gl->n + 1);
			r = -EINVAL;
			break;
		}
		r = gl_push(gl, &cap, &e);
		if (r < 0)
			break;
		continue;
bad:
		log_error("%s:%lu: cannot parse \"%.*s\"", path, lineno,
			  (int)(len - 1), line);
		r = -EINVAL;
		break;
	}
	free(line);
	fclose(f);
	if (r == 0 && lineno == 0) {
		log_error("%s: empty guest log", path);
		r = -EINVAL;
	}
	if (r < 0) {
		gl_log_close(gl);
		return r;
	}
	*out = gl;
	return 0;
}

void
gl_log_close(struct gl_log *gl)
{
	if (!gl)
		return;
	free(gl->e);
	free(gl);
}

/* ---- matching guest writes to host records ---- */

struct hkey {
	uint64_t off, len, hash;
	size_t idx;		/* host record index (seq - 1) */
};

static int
hkey_cmp(const void *a, const void *b)
{
	const struct hkey *x = a, *y = b;

	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* First element of k[0..n) not less than (off, len, hash, 0). */
static size_t
hkey_lower(const struct hkey *k, size_t n, uint64_t off, uint64_t len, uint64_t hash)
{
	struct hkey want = { off, len, hash, 0 };
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (hkey_cmp(&k[mid], &want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * A promised write that is not itself durable in time is still kept if
 * every one of its sectors was overwritten by later acknowledged writes
 * that were durable in time (a cache below may never write the older
 * data at all).  One backward sweep with, per sector, the earliest
 * durable_at of the writes after the current one.
 */
static int
check_superseded(const struct cl_log *log, const struct gl_log *gl,
		 const uint64_t *match, const uint64_t *promise,
		 const uint64_t *bound, bool *superseded)
{
	uint64_t nsect = log->hdr.dev_size / SECTOR_SIZE, s;
	uint64_t *min_durable;
	size_t i;

	min_durable = malloc((nsect ? nsect : 1) * sizeof(*min_durable));
	if (!min_durable)
		return -ENOMEM;
	for (s = 0; s < nsect; s++)
		min_durable[s] = CL_NEVER;
	for (i = gl->n; i-- > 0;) {
		const struct gl_entry *e = &gl->e[i];
		uint64_t d, worst = 0, end;

		if (e->type != GL_WRITE || e->sector >= nsect || e->nr > nsect - e->sector)
			continue;
		end = e->sector + e->nr;
		d = match[i] ? log->e[match[i] - 1].durable_at : CL_NEVER;
		if (promise[i] && (d == CL_NEVER || d >= bound[promise[i]]) && e->nr) {
			for (s = e->sector; s < end; s++)
				if (min_durable[s] > worst)
					worst = min_durable[s];
			superseded[i] = worst < bound[promise[i]];
		}
		for (s = e->sector; s < end; s++)
			if (d < min_durable[s])
				min_durable[s] = d;
	}
	free(min_durable);
	return 0;
}

int
check_logs(const struct cl_log *log, const struct gl_log *gl,
	   struct check_result *res, unsigned int max_report, bool verbose)
{
	struct hkey *keys = NULL;
	bool *used = NULL;
	size_t nkeys = 0, i, pending = 0;
	uint64_t *match = NULL, *promise = NULL, *bound = NULL;
	bool *superseded = NULL;
	uint64_t reported = 0;
	int r = 0;

	memset(res, 0, sizeof(*res));
	keys = calloc(log->n + 1, sizeof(*keys));
	used = calloc(log->n + 1, sizeof(*used));
	match = calloc(gl->n + 1, sizeof(*match));	/* host seq, 0 = none */
	promise = calloc(gl->n + 1, sizeof(*promise));	/* guest seq, 0 = none */
	bound = calloc(gl->n + 2, sizeof(*bound));	/* U(g), host seq */
	superseded = calloc(gl->n + 1, sizeof(*superseded));
	if (!keys || !used || !match || !promise || !bound || !superseded) {
		r = -ENOMEM;
		goto out;
	}
	for (i = 0; i < log->n; i++) {
		const struct crashlog_rec *rec = &log->e[i].rec;

		if (rec->type != CRASHLOG_WRITE || (rec->flags & CRASHLOG_R_FAILED))
			continue;
		keys[nkeys++] = (struct hkey){ rec->offset, rec->len, rec->hash, i };
	}
	qsort(keys, nkeys, sizeof(*keys), hkey_cmp);

	/* match, and find each write's first promise */
	for (i = 0; i < gl->n; i++) {
		const struct gl_entry *e = &gl->e[i];

		if (e->type == GL_WRITE) {
			size_t k = hkey_lower(keys, nkeys, e->sector * SECTOR_SIZE,
					      e->nr * SECTOR_SIZE, e->hash);

			while (k < nkeys && used[k] &&
			       keys[k].off == e->sector * SECTOR_SIZE &&
			       keys[k].len == e->nr * SECTOR_SIZE && keys[k].hash == e->hash)
				k++;
			if (k < nkeys && keys[k].off == e->sector * SECTOR_SIZE &&
			    keys[k].len == e->nr * SECTOR_SIZE && keys[k].hash == e->hash) {
				used[k] = true;
				match[i] = keys[k].idx + 1;
			}
			if (e->fua)
				promise[i] = e->seq;
		} else if (e->type == GL_FLUSH) {
			res->flushes++;
			for (; pending < i && gl->e[pending].seq <= e->covers; pending++)
				if (gl->e[pending].type == GL_WRITE && !promise[pending])
					promise[pending] = e->seq;
		}
	}
	for (i = 0; i < nkeys; i++)
		if (!used[i])
			res->host_unacked++;

	/* U(g): first host record of a write issued after record g */
	for (i = 0; i <= gl->n + 1; i++)
		bound[i] = log->n + 1;
	if (gl->has_issue_order) {
		for (i = 0; i < gl->n; i++) {
			uint64_t a = gl->e[i].issued_after;

			if (gl->e[i].type != GL_WRITE || !match[i] || a > gl->n)
				continue;
			if (match[i] < bound[a])
				bound[a] = match[i];
		}
		for (i = gl->n; i-- > 0;)	/* suffix minimum */
			if (bound[i + 1] < bound[i])
				bound[i] = bound[i + 1];
	}

	r = check_superseded(log, gl, match, promise, bound, superseded);
	if (r < 0)
		goto out;

	for (i = 0; i < gl->n; i++) {
		const struct gl_entry *e = &gl->e[i];
		uint64_t u, d;
		bool lost;

		if (e->type != GL_WRITE || !promise[i])
			continue;
		res->writes_promised++;
		u = bound[promise[i]];
		if (superseded[i]) {
			res->writes_superseded++;
			continue;
		}
		if (!match[i]) {
			res->writes_unmatched++;
			res->writes_lost++;
			if (!max_report || reported++ < max_report)
				printf("LOST: guest write #%" PRIu64 " (sector %" PRIu64
				       " +%" PRIu64 ", hash %016" PRIx64 ") promised by #%"
				       PRIu64 " never reached the host log\n",
				       e->seq, e->sector, e->nr, e->hash, promise[i]);
			continue;
		}
		d = log->e[match[i] - 1].durable_at;
		lost = d == CL_NEVER || d >= u;
		if (lost) {
			res->writes_lost++;
			if (!max_report || reported++ < max_report) {
				printf("NOT DURABLE: guest write #%" PRIu64 " (sector %"
				       PRIu64 " +%" PRIu64 ") promised by #%" PRIu64
				       " is host write #%" PRIu64 ", ", e->seq, e->sector,
				       e->nr, promise[i], match[i]);
				if (d == CL_NEVER)
					printf("never made durable\n");
				else
					printf("durable only at host #%" PRIu64
					       ", after host #%" PRIu64
					       " which the guest issued after the promise\n",
					       d, u);
			}
		} else if (verbose) {
			printf("ok: guest write #%" PRIu64 " = host #%" PRIu64
			       ", durable at #%" PRIu64 " (bound #%" PRIu64 ")\n",
			       e->seq, match[i], d, u);
		}
	}
out:
	free(keys);
	free(used);
	free(match);
	free(promise);
	free(bound);
	free(superseded);
	return r;
}
