/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: blkcrash, power-cut replay and verification (blkcrash.1).
 *
 *   blkcrash dump LOG
 *   blkcrash replay LOG IMAGE [--upto N | --flush K | --mark NAME] [--subset SEED]
 *   blkcrash check LOG GUESTLOG
 *   blkcrash fsck LOG BASE --fs ext4|xfs [--points N] [--seed S]
 *   blkcrash cut --pidfile FILE
 *   blkcrash run [...]        (the campaign: blkcrash-run, a script)
 *
 * LOG is a crash log (blkbackd --record) or a Linux dm-log-writes log
 * (dmlog.c), told apart by its magic or by --format.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "blkcrash.h"
#include "compiler.h"
#include "log.h"

/* Options shared by the subcommands (each uses the ones it documents). */
struct opts {
	uint64_t upto;
	bool have_upto;
	uint64_t flush_k;
	bool have_flush;
	uint64_t seed;
	bool have_seed;
	bool durable;		/* replay: durable records only */
	const char *fs;
	unsigned int points;
	const char *workdir;
	const char *pidfile;
	unsigned int max_report;
	unsigned int timeout;
	bool verbose;
	bool keep;
	bool no_random;		/* fsck: flush points only */
	enum cl_format format;	/* --format; CL_FMT_AUTO: by the magic */
	const char *mark;	/* replay --mark */
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: blkcrash COMMAND [OPTIONS] ARGS\n"
"Power-cut recording replay and verification for blkbackd.\n"
"LOG is a crash log (blkbackd --record) or a Linux dm-log-writes log.\n"
"\n"
"  dump LOG                     print the records of a log\n"
"  replay LOG IMAGE             rebuild IMAGE (a copy of the backing as it was\n"
"                               when recording started) at a crash point\n"
"      --upto N                 after host record N (default: the end)\n"
"      --flush K                after the K-th successful flush\n"
"      --mark NAME              at the first dm-log-writes mark NAME\n"
"      --subset SEED            plus a random subset of the writes that are\n"
"                               not durable yet (default: all of them, as the\n"
"                               host saw it; --durable: none of them)\n"
"      --durable                only what is durable at that point\n"
"  check LOG GUESTLOG           every write the guest saw promised durable by\n"
"                               an acknowledged flush or FUA is durable on the\n"
"                               host log before the guest was told\n"
"      --max-report N           print at most N violations (default 20, 0 all)\n"
"  fsck LOG BASE --fs ext4|xfs  run e2fsck -fn / xfs_repair -n on crash images\n"
"                               at every flush point and random points\n"
"      --points N               crash points in all (default 100)\n"
"      --seed S                 seed of the random points (default: time)\n"
"      --workdir DIR            scratch directory (default: a new one in /tmp)\n"
"      --keep                   keep the image of the first failing point\n"
"      --no-random              flush points only (durable state only)\n"
"  cut --pidfile FILE           power-cut a blkbackd (SIGUSR2) and wait for it\n"
"      --timeout SECONDS        how long to wait for it to exit (default 30)\n"
"  run [OPTIONS]                end-to-end campaign (see blkcrash-run --help)\n"
"\n"
"  --format crashlog|dm-log-writes  the format of LOG (default: by its magic)\n"
"  -v, --verbose                say more\n"
"  -h, --help                   this help\n"
"\n"
"Exit status: 0 no violation, 1 violations found, 2 usage or run error.\n");
}

static int
parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-') {
		log_error("not a number: \"%s\"", s);
		return -EINVAL;
	}
	return 0;
}

/*
 * A crash log with whole records past damage in its middle (blkcrash.h
 * corrupt_seq): say so.  check and fsck judge the backend by the log, so
 * for them it is an error (exit 2: the log, not the backend, is at
 * fault); dump and replay go on with the records before the damage.
 */
static bool
log_corrupt(const struct cl_log *log, const char *path, bool fatal)
{
	if (!log->corrupt_seq)
		return false;
	if (fatal)
		log_error("%s: corrupt log: the record after #%zu (at byte %" PRIu64
			  ") is damaged, yet valid records (#%" PRIu64 " at byte %"
			  PRIu64 ") follow it: not a torn tail; %" PRIu64
			  " bytes unread", path, log->n, log->valid_bytes,
			  log->corrupt_seq, log->corrupt_next_off, log->ignored_bytes);
	else
		log_warning("%s: corrupt log: records from #%zu on (byte %" PRIu64
			 ") are skipped, although valid records (#%" PRIu64
			 ") follow the damage", path, log->n + 1, log->valid_bytes,
			 log->corrupt_seq);
	return true;
}

/* ---- dump ---- */

static int
cmd_dump(int argc, char **argv, const struct opts *o)
{
	struct cl_log *log;
	size_t i;

	if (argc != 1) {
		usage(stderr);
		return 2;
	}
	if (cl_log_open_fmt(argv[0], o->format, &log) < 0)
		return 2;
	log_corrupt(log, argv[0], false);
	if (log->format == CL_FMT_DMLOG)
		printf("# dm-log-writes log %s: version %u, block %u bytes, %" PRIu64
		       " of %" PRIu64 " entries read, writes reach %" PRIu64 " bytes\n",
		       argv[0], log->hdr.version, log->block_size, log->entries_read,
		       log->entries_super, log->hdr.dev_size);
	else
		printf("# crash log %s: version %u, device %" PRIu64 " bytes, sector %u, %s\n",
		       argv[0], log->hdr.version, log->hdr.dev_size, log->hdr.sector,
		       (log->hdr.flags & CRASHLOG_F_WRITEBACK) ? "writeback" : "writethrough");
	for (i = 0; i < log->n; i++) {
		const struct cl_entry *e = &log->e[i];
		const struct crashlog_rec *r = &e->rec;

		printf("%" PRIu64 " %s", r->seq, cl_type_name(r->type));
		if (log->format == CL_FMT_DMLOG)
			printf(" entry=%" PRIu64, e->entry);
		if (r->type == CL_MARK)
			printf(" \"%.*s\"", (int)e->mark_len, (const char *)e->data);
		if (r->type == CRASHLOG_WRITE || r->type == CRASHLOG_DISCARD)
			printf(" offset=%" PRIu64 " len=%" PRIu64, r->offset, r->len);
		if (r->type == CRASHLOG_WRITE && !(r->flags & CRASHLOG_R_FAILED))
			printf(" hash=%016" PRIx64, r->hash);
		if (r->type == CRASHLOG_FLUSH)
			printf(" covers=<%" PRIu64, r->covers);
		if (r->flags & CRASHLOG_R_FUA)
			printf(" fua");
		if (r->flags & CRASHLOG_R_SECURE)
			printf(" secure");
		if (r->flags & CRASHLOG_R_FAILED)
			printf(" failed=%d", r->result);
		if (r->type == CRASHLOG_WRITE || r->type == CRASHLOG_DISCARD) {
			if (e->durable_at == CL_NEVER)
				printf(" durable=never");
			else
				printf(" durable=%" PRIu64, e->durable_at);
		}
		printf("\n");
	}
	if (log->format == CL_FMT_DMLOG && log->entries_read < log->entries_super)
		printf("# torn: the super block claims %" PRIu64 " entries, the file "
		       "holds %" PRIu64 "\n", log->entries_super, log->entries_read);
	printf("# %zu records, %" PRIu64 " flushes, %" PRIu64 " bytes ignored at the tail\n",
	       log->n, log->nflush, log->ignored_bytes);
	cl_log_close(log);
	return 0;
}

/* seq of the k-th successful FLUSH (1-based), 0 if there is none */
static uint64_t
flush_seq(const struct cl_log *log, uint64_t k)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct crashlog_rec *r = &log->e[i].rec;

		if (r->type == CRASHLOG_FLUSH && !(r->flags & CRASHLOG_R_FAILED) &&
		    --k == 0)
			return r->seq;
	}
	return 0;
}

/* seq of the first MARK record named name, 0 if there is none */
static uint64_t
mark_seq(const struct cl_log *log, const char *name)
{
	size_t i, len = strlen(name);

	for (i = 0; i < log->n; i++) {
		const struct cl_entry *e = &log->e[i];

		if (e->rec.type == CL_MARK && e->mark_len == len &&
		    !memcmp(e->data, name, len))
			return e->rec.seq;
	}
	return 0;
}

/* ---- replay ---- */

static int
cmd_replay(int argc, char **argv, const struct opts *o)
{
	struct cl_log *log;
	struct img *im;
	struct cl_point p = { 0 };
	int r;

	if (argc != 2 || o->have_upto + o->have_flush + !!o->mark > 1 ||
	    (o->durable && o->have_seed)) {
		usage(stderr);
		return 2;
	}
	if (cl_log_open_fmt(argv[0], o->format, &log) < 0)
		return 2;
	log_corrupt(log, argv[0], false);
	p.upto = o->have_upto ? o->upto : log->n;
	if (o->have_flush) {
		p.upto = flush_seq(log, o->flush_k);
		if (p.upto == 0) {
			log_error("%s: there is no flush #%" PRIu64 " (%" PRIu64 " flushes)",
				  argv[0], o->flush_k, log->nflush);
			cl_log_close(log);
			return 2;
		}
	}
	if (o->mark) {
		p.upto = mark_seq(log, o->mark);
		if (p.upto == 0) {
			log_error("%s: there is no mark \"%s\"", argv[0], o->mark);
			cl_log_close(log);
			return 2;
		}
	}
	if (p.upto > log->n)
		p.upto = log->n;
	p.subset = o->have_seed;
	p.seed = o->seed;
	r = img_open(argv[1], log, &im);
	if (r < 0) {
		cl_log_close(log);
		return 2;
	}
	if (!o->durable && !o->have_seed) {
		p.subset = true;	/* everything the host saw */
		p.all = true;
	}
	r = img_goto(im, log, &p);
	if (r >= 0) {
		printf("replayed %s to record %" PRIu64 " of %zu%s", argv[1], p.upto,
		       log->n, p.all ? " (everything the host saw)" :
		       (p.subset ? "" : " (durable only)"));
		if (p.subset && !p.all)
			printf(" with %d of the not yet durable writes (seed %" PRIu64 ")",
			       r, p.seed);
		printf("\n");
		img_commit(im);	/* keep the subset */
		r = img_close(im, true);
	} else {
		img_close(im, false);
	}
	cl_log_close(log);
	return r < 0 ? 2 : 0;
}

/* ---- check ---- */

static int
cmd_check(int argc, char **argv, const struct opts *o)
{
	struct cl_log *log;
	struct gl_log *gl;
	struct check_result res;
	int r;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	if (cl_log_open_fmt(argv[0], o->format, &log) < 0)
		return 2;
	if (log_corrupt(log, argv[0], true) || gl_log_open(argv[1], &gl) < 0) {
		cl_log_close(log);
		return 2;
	}
	if (log->ignored_bytes)
		printf("note: %s: %" PRIu64 " bytes of torn tail ignored\n", argv[0],
		       log->ignored_bytes);
	if (log->format == CL_FMT_DMLOG && log->entries_read < log->entries_super)
		printf("note: %s: torn dm-log-writes log: %" PRIu64 " of %" PRIu64
		       " entries read\n", argv[0], log->entries_read, log->entries_super);
	if (!gl->has_issue_order)
		printf("note: %s has no issue order: promises are checked against "
		       "the end of the host log only\n", argv[1]);
	r = check_logs(log, gl, &res, o->max_report, o->verbose);
	if (r == 0)
		printf("check: %" PRIu64 " guest flushes, %" PRIu64
		       " writes promised durable, %" PRIu64 " lost (%" PRIu64
		       " never on the host log), %" PRIu64 " overwritten in time, %"
		       PRIu64 " host writes not acknowledged to the guest: %s\n",
		       res.flushes, res.writes_promised, res.writes_lost,
		       res.writes_unmatched, res.writes_superseded, res.host_unacked,
		       res.writes_lost ? "VIOLATED" : "ok");
	gl_log_close(gl);
	cl_log_close(log);
	if (r < 0)
		return 2;
	return res.writes_lost ? 1 : 0;
}

/* ---- fsck ---- */

/* Run argv (NULL-terminated) with stdout+stderr to outpath; exit status or -errno. */
static int
run_cmd(char *const argv[], const char *outpath)
{
	pid_t pid;
	int status;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		FILE *f = freopen(outpath, "a", stdout);

		if (!f || dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
			_exit(126);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

/*
 * Check the crash image at path as a machine would after the power cut:
 * recover (replay the journal: e2fsck -E journal_only for ext4, a mount
 * for xfs, both on a scratch copy), then the read-only check.  Returns 0
 * clean, 1 not clean (details appended to outpath), -errno on a tool
 * failure.
 */
static void ATTRIBUTE_FORMAT_PRINTF(2, 3)
append_line(const char *path, const char *fmt, ...)
{
	FILE *f = fopen(path, "a");
	va_list ap;

	if (!f)
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

static int
fsck_image(const char *fs, const char *path, const char *copy, const char *mnt,
	   const char *outpath)
{
	int r;

	{
		char *cp[] = { "cp", "--sparse=always", (char *)path, (char *)copy, NULL };

		r = run_cmd(cp, outpath);
		if (r != 0)
			return r < 0 ? r : -EIO;
	}
	if (!strcmp(fs, "ext4")) {
		char *rec[] = { "e2fsck", "-E", "journal_only", "-p", (char *)copy, NULL };
		char *chk[] = { "e2fsck", "-fn", (char *)copy, NULL };

		/*
		 * Replay the journal as the kernel would at mount.  It must
		 * exit 0: anything else means it found (and may have fixed)
		 * more than a journal to replay, e.g. "needs_recovery flag is
		 * clear, but journal has data", which must not pass unseen.
		 */
		r = run_cmd(rec, outpath);
		if (r == 126 || r == 127 || r < 0)
			return r < 0 ? r : -ENOENT;
		if (r != 0) {
			append_line(outpath, "journal recovery exited %d", r);
			unlink(copy);
			return 1;
		}
		r = run_cmd(chk, outpath);
		/* bits 1|2|4: errors; 8: cannot even read it (no superblock...);
		 * 16 usage, 32 cancelled, 126/127 not run: our failure */
		if (r == 126 || r == 127 || r < 0 || (r & (16 | 32 | 128)))
			r = r < 0 ? r : -EIO;
		else
			r = r == 0 ? 0 : 1;
	} else {
		char *mount[] = { "mount", "-t", "xfs", "-o", "loop,nouuid",
				  (char *)copy, (char *)mnt, NULL };
		char *umount[] = { "umount", (char *)mnt, NULL };
		char *chk[] = { "xfs_repair", "-n", "-f", (char *)copy, NULL };

		r = run_cmd(mount, outpath);
		if (r != 0) {
			append_line(outpath, "mount (log recovery) failed: %d", r);
			r = 1;
		} else {
			r = run_cmd(umount, outpath);
			if (r != 0)
				return -EBUSY;
			r = run_cmd(chk, outpath);
			r = r == 0 ? 0 : 1;
		}
	}
	unlink(copy);
	return r;
}

static int
cmp_point(const void *a, const void *b)
{
	const struct cl_point *x = a, *y = b;

	if (x->upto != y->upto)
		return x->upto < y->upto ? -1 : 1;
	return (int)x->subset - (int)y->subset;
}

static uint64_t
rnd(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int
cmd_fsck(int argc, char **argv, const struct opts *o)
{
	struct cl_log *log;
	struct img *im = NULL;
	struct cl_point *pts = NULL;
	char *work = NULL, *img = NULL, *out = NULL, *mnt = NULL, *copy = NULL;
	char tmpl[] = "/tmp/blkcrash.XXXXXX";
	unsigned int npts = 0, want = o->points ? o->points : 100, i;
	unsigned int nflushpts, bad = 0, clean = 0;
	uint64_t seed = o->have_seed ? o->seed : (uint64_t)time(NULL), st = seed, k;
	bool own_work = !o->workdir;
	int r, ret = 2;

	if (argc != 2 || !o->fs || (strcmp(o->fs, "ext4") && strcmp(o->fs, "xfs"))) {
		log_error("fsck needs LOG BASE and --fs ext4|xfs");
		return 2;
	}
	if (cl_log_open_fmt(argv[0], o->format, &log) < 0)
		return 2;
	if (log_corrupt(log, argv[0], true)) {
		cl_log_close(log);
		return 2;
	}
	if (own_work) {
		if (!mkdtemp(tmpl)) {
			log_error("mkdtemp %s: %m", tmpl);
			own_work = false;
			goto out;
		}
		work = strdup(tmpl);
	} else {
		work = strdup(o->workdir);
	}
	if (!work || asprintf(&img, "%s/crash.img", work) < 0 ||
	    asprintf(&out, "%s/fsck.out", work) < 0 ||
	    asprintf(&mnt, "%s/mnt", work) < 0 ||
	    asprintf(&copy, "%s/point.img", work) < 0) {
		log_error("out of memory");
		goto out;
	}
	if (mkdir(mnt, 0755) < 0 && errno != EEXIST) {
		log_error("mkdir %s: %m", mnt);
		goto out;
	}
	{
		char *cp[] = { "cp", "--sparse=always", argv[1], img, NULL };

		if (run_cmd(cp, out) != 0) {
			log_error("cannot copy %s to %s (see %s)", argv[1], img, out);
			goto out;
		}
	}
	if (img_open(img, log, &im) < 0)
		goto out;

	/* the points: flush points (at most half), then random ones */
	pts = calloc(want + 2, sizeof(*pts));
	if (!pts)
		goto out;
	nflushpts = log->nflush < want / 2 ? (unsigned int)log->nflush : want / 2;
	if (o->no_random)
		nflushpts = log->nflush < want ? (unsigned int)log->nflush : want;
	for (i = 0; i < nflushpts; i++) {
		/* evenly spread over the flushes, always including the last */
		k = log->nflush - (uint64_t)i * log->nflush / nflushpts;
		pts[npts++] = (struct cl_point){ .upto = flush_seq(log, k) };
	}
	while (!o->no_random && npts < want && log->n > 0) {
		pts[npts].upto = 1 + rnd(&st) % log->n;
		pts[npts].subset = true;
		pts[npts].seed = rnd(&st);
		npts++;
	}
	qsort(pts, npts, sizeof(*pts), cmp_point);

	for (i = 0; i < npts; i++) {
		int added = img_goto(im, log, &pts[i]);

		if (added < 0)
			goto out;
		r = fsck_image(o->fs, img, copy, mnt, out);
		if (r < 0) {
			errno = -r;
			log_error("point %u: the fsck tools failed (%m), see %s", i, out);
			goto out;
		}
		if (r == 0) {
			clean++;
		} else {
			bad++;
			if (!o->max_report || bad <= o->max_report)
				printf("FSCK FAILED: crash point after host record %" PRIu64
				       " (%s%s, %d unflushed writes kept, seed %" PRIu64
				       ")\n", pts[i].upto,
				       pts[i].subset ? "random subset" : "flush point",
				       "", added < 0 ? 0 : added, pts[i].seed);
			if (o->keep && bad == 1) {
				char *keep = NULL;

				if (asprintf(&keep, "%s/first-failure.img", work) >= 0) {
					char *cp[] = { "cp", "--sparse=always", img, keep, NULL };

					run_cmd(cp, out);
					printf("kept %s\n", keep);
					free(keep);
				}
			}
		}
		if (o->verbose)
			printf("point %u/%u: after #%" PRIu64 " %s: %s\n", i + 1, npts,
			       pts[i].upto, pts[i].subset ? "subset" : "durable",
			       r == 0 ? "clean" : "NOT CLEAN");
	}
	printf("fsck: %u crash points (%u flush points, %u random; seed %" PRIu64
	       "), %u clean, %u not clean: %s\n", npts, nflushpts, npts - nflushpts,
	       seed, clean, bad, bad ? "VIOLATED" : "ok");
	ret = bad ? 1 : 0;
out:
	if (im)
		img_close(im, false);
	free(pts);
	cl_log_close(log);
	if (work && own_work && ret != 2 && !(o->keep && bad)) {
		if (img)
			unlink(img);
		if (out)
			unlink(out);
		if (mnt)
			rmdir(mnt);
		rmdir(work);
	} else if (work && ret != 0) {
		printf("scratch files kept in %s\n", work);
	}
	free(work);
	free(img);
	free(out);
	free(mnt);
	free(copy);
	return ret;
}

/* ---- cut ---- */

/* name is "blkbackd", or libtool's uninstalled "lt-blkbackd" */
static bool
is_blkbackd_name(const char *name)
{
	if (!strncmp(name, "lt-", 3))
		name += 3;
	return !strcmp(name, "blkbackd");
}

static const char *
base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * Is pid a blkbackd?  SIGUSR2 is a power cut only to blkbackd
 * --cache=volatile; to most other programs it is fatal, so a stale or
 * wrong pid file must not make cut kill an unrelated process and call
 * it a power cut.  Its name (/proc/PID/comm: blkbackd keeps it across an
 * upgrade) or its executable says so; under valgrind (the tests' make
 * check-valgrind) the executable is valgrind's and blkbackd is one of
 * its arguments.  0 yes, -ESRCH gone, -EPERM not a blkbackd (what names
 * it, wlen bytes).
 */
static int
check_blkbackd(long pid, char *what, size_t wlen)
{
	char path[64], buf[PATH_MAX], comm[64] = "";
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	if (fgets(comm, sizeof(comm), f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	if (is_blkbackd_name(comm))
		return 0;
	snprintf(what, wlen, "\"%s\"", comm);
	snprintf(path, sizeof(path), "/proc/%ld/exe", pid);
	n = readlink(path, buf, sizeof(buf) - 1);
	if (n < 0)
		return -EPERM;	/* not ours to read (another user): comm decides */
	buf[n] = '\0';
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		buf[n - 10] = '\0';
	snprintf(what, wlen, "\"%s\" (%s)", comm, buf);
	if (is_blkbackd_name(base_name(buf)))
		return 0;
	if (strstr(buf, "valgrind")) {
		size_t i, len;

		snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
		f = fopen(path, "re");
		if (!f)
			return -EPERM;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		for (i = 0; i < len; i += strlen(buf + i) + 1)
			if (is_blkbackd_name(base_name(buf + i)))
				return 0;
	}
	return -EPERM;
}

static int
cmd_cut(int argc, char **argv, const struct opts *o)
{
	FILE *f;
	long pid;
	char what[PATH_MAX + 80];
	unsigned int i, limit = (o->timeout ? o->timeout : 30) * 10;
	int r;

	if (argc != 0 || !o->pidfile) {
		log_error("cut needs --pidfile FILE");
		return 2;
	}
	f = fopen(o->pidfile, "re");
	if (!f || fscanf(f, "%ld", &pid) != 1 || pid <= 1) {
		log_error("%s: no pid in it", o->pidfile);
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	r = check_blkbackd(pid, what, sizeof(what));
	if (r == -ESRCH) {
		log_error("%s: process %ld does not exist (a stale pid file?)",
			  o->pidfile, pid);
		return 2;
	}
	if (r < 0) {
		if (r == -EPERM)
			log_error("%s: process %ld is %s, not a blkbackd: no power cut "
				  "sent", o->pidfile, pid, what);
		else
			log_error("/proc/%ld: %s", pid, strerror(-r));
		return 2;
	}
	if (kill((pid_t)pid, SIGUSR2) < 0) {
		log_error("kill -USR2 %ld: %m", pid);
		return 2;
	}
	for (i = 0; i < limit; i++) {
		struct timespec ts = { 0, 100000000 };

		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			printf("power cut: process %ld is gone\n", pid);
			return 0;
		}
		nanosleep(&ts, NULL);
	}
	log_error("process %ld still runs %u s after SIGUSR2", pid, limit / 10);
	return 2;
}

/* ---- run: the campaign lives in a script next to us ---- */

static int
cmd_run(int argc, char **argv)
{
	char self[PATH_MAX], dir[PATH_MAX], script[PATH_MAX + 32];
	char **nargv;
	ssize_t n;
	char *slash;
	int i;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0) {
		log_error("readlink /proc/self/exe: %m");
		return 2;
	}
	self[n] = '\0';
	memcpy(dir, self, (size_t)n + 1);
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	/*
	 * An in-tree build has the script beside us; an out-of-tree build
	 * (VPATH, make distcheck, CI) in its source directory; else it is
	 * where "make install" put it.
	 */
	snprintf(script, sizeof(script), "%s/blkcrash-run", dir);
	if (access(script, X_OK) < 0)
		snprintf(script, sizeof(script), "%s/blkcrash-run", BLKCRASH_SRCDIR);
	if (access(script, X_OK) < 0)
		snprintf(script, sizeof(script), "%s/blkcrash-run", PKGLIBEXECDIR);
	nargv = calloc((size_t)argc + 2, sizeof(*nargv));
	if (!nargv)
		return 2;
	nargv[0] = script;
	for (i = 0; i < argc; i++)
		nargv[i + 1] = argv[i];
	setenv("BLKCRASH", self, 1);
	execv(script, nargv);
	log_error("%s: %m", script);
	free(nargv);
	return 2;
}

int
main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "upto", required_argument, NULL, 'u' },
		{ "flush", required_argument, NULL, 'F' },
		{ "subset", required_argument, NULL, 'S' },
		{ "durable", no_argument, NULL, 'd' },
		{ "fs", required_argument, NULL, 't' },
		{ "points", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "workdir", required_argument, NULL, 'w' },
		{ "keep", no_argument, NULL, 'k' },
		{ "no-random", no_argument, NULL, 'R' },
		{ "pidfile", required_argument, NULL, 'P' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "max-report", required_argument, NULL, 'm' },
		{ "format", required_argument, NULL, 'f' },
		{ "mark", required_argument, NULL, 'M' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .max_report = 20 };
	const char *cmd;
	uint64_t v;
	int c;

	log_init(argv[0]);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 2, argv + 2);
	optind = 2;
	while ((c = getopt_long(argc, argv, "vh", lopts, NULL)) != -1) {
		switch (c) {
		case 'u':
		case 'F':
		case 'S':
		case 's':
		case 'n':
		case 'T':
		case 'm':
			if (parse_u64(optarg, &v) < 0)
				return 2;
			if (c == 'u') {
				o.upto = v;
				o.have_upto = true;
			} else if (c == 'F') {
				o.flush_k = v;
				o.have_flush = true;
			} else if (c == 'S' || c == 's') {
				o.seed = v;
				o.have_seed = true;
			} else if (c == 'n') {
				o.points = v > 1000000 ? 1000000 : (unsigned int)v;
			} else if (c == 'T') {
				o.timeout = v > 86400 ? 86400 : (unsigned int)v;
			} else {
				o.max_report = v > UINT_MAX ? UINT_MAX : (unsigned int)v;
			}
			break;
		case 'd':
			o.durable = true;
			break;
		case 't':
			o.fs = optarg;
			break;
		case 'w':
			o.workdir = optarg;
			break;
		case 'k':
			o.keep = true;
			break;
		case 'R':
			o.no_random = true;
			break;
		case 'P':
			o.pidfile = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "crashlog")) {
				o.format = CL_FMT_CRASHLOG;
			} else if (!strcmp(optarg, "dm-log-writes")) {
				o.format = CL_FMT_DMLOG;
			} else {
				log_error("--format: \"%s\" is neither crashlog nor "
					  "dm-log-writes", optarg);
				return 2;
			}
			break;
		case 'M':
			o.mark = optarg;
			break;
		case 'v':
			o.verbose = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc, argv, &o);
	if (!strcmp(cmd, "replay"))
		return cmd_replay(argc, argv, &o);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc, argv, &o);
	if (!strcmp(cmd, "fsck"))
		return cmd_fsck(argc, argv, &o);
	if (!strcmp(cmd, "cut"))
		return cmd_cut(argc, argv, &o);
	log_error("unknown command \"%s\" (try --help)", cmd);
	return 2;
}
