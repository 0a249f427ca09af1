/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsmark: an fs_mark-compatible synchronous file creation benchmark.
 *
 * fs_mark 3.3 (Ric Wheeler) is not packaged in Debian; users compare its
 * tables across mailing-list posts, so this program takes the same flags
 * and prints the same columns:
 *
 *   FSUse%        Count         Size    Files/sec     App Overhead
 *
 * Semantics, per iteration and per thread (as fs_mark does them):
 *   - check that the filesystem has room for -n files of -s bytes,
 *   - for each file: make a name (hex seconds, '~' padding, -r random
 *     [A-Z0-9] characters, -p bytes in all), pick a subdirectory (-D/-N
 *     round robin, or -D alone: a new subdirectory every 180 s), creat,
 *     write -s bytes in -w byte write() calls, fsync per -S, close;
 *   - after the loop: sync() and/or reopen + fsync per -S;
 *   - the loop time is the wall time of all of this; Files/sec is
 *     files / loop time; App Overhead is loop time minus the time spent in
 *     creat/write/fsync/sync/close, in microseconds;
 *   - then, unless -k (or -L, or -F), unlink every file (not timed).
 * Files/sec and App Overhead are summed over threads; Count is the number
 * of files written since the start (all threads); FSUse% is how full the
 * first -d directory's filesystem is, as df computes it.
 *
 * Differences from fs_mark 3.3, on purpose: threads are pthreads (not
 * fork), the log file is written only when -l is given, -v is not
 * supported, and -F stops cleanly (exit 0) with fs_mark's "Insufficient
 * free space" line when an iteration would not fit.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"

#define FM_VERSION		"3.3"	/* the fs_mark version whose output we match */
#define FM_MAX_THREADS		64
#define FM_MAX_FILES		1000000
#define FM_MAX_IO		(1024 * 1024)
#define FM_MAX_NAME		128
#define FM_SECS_PER_DIR		180

/* -S values: bit sets, as fs_mark defines them. */
enum {
	FM_FSYNC_BEFORE_CLOSE	= 0x1,
	FM_SYNC_SYSCALL		= 0x2,
	FM_FSYNC_FIRST_FILE	= 0x4,
	FM_FSYNC_POST_REVERSE	= 0x8,
	FM_FSYNC_POST_IN_ORDER	= 0x10,
};

static const struct {
	unsigned int bits;
	const char *what;
} fm_sync_methods[] = {
	{ 0, "NO SYNC: no sync() or fsync() calls." },
	{ FM_FSYNC_BEFORE_CLOSE, "INBAND FSYNC: fsync() per file in write loop." },
	{ FM_SYNC_SYSCALL | FM_FSYNC_FIRST_FILE,
	  "SYSTEM SYNC/SINGLE FSYNC: sync() after the write loop, then fsync() of one file." },
	{ FM_FSYNC_POST_REVERSE,
	  "POST REVERSE: reopen and fsync() each file in reverse order after the write loop." },
	{ FM_FSYNC_POST_REVERSE | FM_SYNC_SYSCALL,
	  "SYNC POST REVERSE: sync(), then reopen and fsync() each file in reverse order." },
	{ FM_FSYNC_POST_IN_ORDER,
	  "POST: reopen and fsync() each file in order after the write loop." },
	{ FM_FSYNC_POST_IN_ORDER | FM_SYNC_SYSCALL,
	  "SYNC POST: sync(), then reopen and fsync() each file in order." },
};

enum fm_dir_policy { FM_DIR_NONE, FM_DIR_ROUND_ROBIN, FM_DIR_TIME_HASH };

struct fm_opts {
	const char *dirs[FM_MAX_THREADS];
	unsigned int ndirs;
	unsigned int nthreads;
	unsigned int nfiles;		/* -n, per thread per iteration */
	unsigned int nsubdirs;		/* -D */
	unsigned int per_subdir;	/* -N */
	enum fm_dir_policy policy;
	unsigned int loops;		/* -L */
	unsigned int file_size;		/* -s, bytes */
	unsigned int io_size;		/* -w, bytes per write() */
	unsigned int sync_type;		/* -S index into fm_sync_methods */
	unsigned int name_len;		/* -p */
	unsigned int rand_len;		/* -r */
	bool keep;			/* -k (implied by -L and -F) */
	bool fill;			/* -F */
	const char *log_path;		/* -l, or NULL */
};

/* Per-iteration results of one thread (microseconds). */
struct fm_stats {
	unsigned int files;
	double files_per_sec;
	uint64_t app_overhead_us;
};

/* One worker; owns its names array and its subdirectory cursor. */
struct fm_thread {
	const struct fm_opts *o;
	const char *dir;
	char (*names)[PATH_MAX];	/* nfiles full paths, this iteration */
	char *buf;			/* io_size bytes of zeroes */
	unsigned int subdir;
	unsigned int in_subdir;
	time_t subdir_since;
	unsigned int seed;
	struct fm_stats st;
	int err;			/* 0, or -errno of the failure (already printed) */
	bool nospace;
	pthread_t tid;
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* The only long option: --help, as every other command of the project. */
static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fsmark -d DIR [-d DIR]... [-D SUBDIRS] [-N FILES_PER_SUBDIR]\n"
		"              [-n FILES] [-L LOOPS] [-s BYTES] [-w BYTES] [-S METHOD]\n"
		"              [-t THREADS] [-p NAMELEN] [-r RANDLEN] [-k] [-F] [-l LOGFILE] [-h|--help]\n"
		"fs_mark-compatible file creation benchmark.\n"
		"  -d DIR     test directory (repeat for one directory per thread)\n"
		"  -D N       number of subdirectories (>= 2)\n"
		"  -N N       files per subdirectory before moving on (round robin)\n"
		"  -n N       files per thread per iteration (default 1000)\n"
		"  -L N       iterations (implies -k)\n"
		"  -s BYTES   size of each file (default 51200)\n"
		"  -w BYTES   bytes per write() call (default 16384)\n"
		"  -S METHOD  0 no sync, 1 fsync before close (default), 2 sync + one fsync,\n"
		"             3 post reverse fsync, 4 sync + post reverse, 5 post fsync,\n"
		"             6 sync + post fsync\n"
		"  -t N       threads (a multiple of the number of -d directories)\n"
		"  -p N       file name length (default 40)\n"
		"  -r N       random characters at the end of each name (default 24)\n"
		"  -k         keep the files after each iteration\n"
		"  -F         run until the filesystem is full (implies -k)\n"
		"  -l FILE    append the report to FILE too\n"
		"  -h, --help this help\n");
}

/* Parse a decimal unsigned int in [lo, hi]; print a message naming opt. */
static int parse_uint(char opt, const char *s, unsigned int lo, unsigned int hi,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "fsmark: -%c %s: expected a number in %u..%u\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

static int parse_args(int argc, char **argv, struct fm_opts *o)
{
	int c;
	bool threads_given = false;

	*o = (struct fm_opts){
		.nthreads = 1, .nfiles = 1000, .file_size = 50 * 1024,
		.io_size = 16 * 1024, .sync_type = 1, .name_len = 40,
		.rand_len = 24,
	};
	while ((c = getopt_long(argc, argv, "hkFr:S:N:D:d:l:L:n:p:s:t:w:", long_opts, NULL)) != -1) {
		int r = 0;

		switch (c) {
		case 'h':
			usage(stdout);
			exit(0);
		case 'k':
			o->keep = true;
			break;
		case 'F':
			o->fill = o->keep = true;
			break;
		case 'd':
			if (o->ndirs == FM_MAX_THREADS) {
				fprintf(stderr, "fsmark: at most %d -d directories\n",
					FM_MAX_THREADS);
				return -EINVAL;
			}
			if (strlen(optarg) + 1 + 3 + FM_MAX_NAME >= PATH_MAX) {
				fprintf(stderr, "fsmark: -d %s: path too long\n", optarg);
				return -EINVAL;
			}
			o->dirs[o->ndirs++] = optarg;
			break;
		case 'D':
			r = parse_uint('D', optarg, 2, 256, &o->nsubdirs);
			if (!r && o->policy == FM_DIR_NONE)
				o->policy = FM_DIR_TIME_HASH;
			break;
		case 'N':
			r = parse_uint('N', optarg, 1, UINT_MAX, &o->per_subdir);
			o->policy = FM_DIR_ROUND_ROBIN;
			break;
		case 'n':
			r = parse_uint('n', optarg, 1, FM_MAX_FILES, &o->nfiles);
			break;
		case 'L':
			r = parse_uint('L', optarg, 1, UINT_MAX, &o->loops);
			o->keep = true;
			break;
		case 's':
			r = parse_uint('s', optarg, 0, INT_MAX, &o->file_size);
			break;
		case 'w':
			r = parse_uint('w', optarg, 1, FM_MAX_IO, &o->io_size);
			break;
		case 'S':
			r = parse_uint('S', optarg, 0, ARRAY_SIZE(fm_sync_methods) - 1,
				       &o->sync_type);
			break;
		case 't':
			r = parse_uint('t', optarg, 1, FM_MAX_THREADS, &o->nthreads);
			threads_given = true;
			break;
		case 'p':
			r = parse_uint('p', optarg, 1, FM_MAX_NAME - 1, &o->name_len);
			break;
		case 'r':
			r = parse_uint('r', optarg, 0, FM_MAX_NAME - 1, &o->rand_len);
			break;
		case 'l':
			o->log_path = optarg;
			break;
		default:
			usage(stderr);
			return -EINVAL;
		}
		if (r)
			return r;
	}
	if (optind != argc) {
		fprintf(stderr, "fsmark: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!o->ndirs) {
		fprintf(stderr, "fsmark: give at least one directory with -d\n");
		return -EINVAL;
	}
	if (o->per_subdir && !o->nsubdirs) {
		fprintf(stderr, "fsmark: -N needs -D with at least 2 subdirectories\n");
		return -EINVAL;
	}
	if (o->rand_len > o->name_len) {
		fprintf(stderr, "fsmark: -r %u is longer than the name (-p %u)\n",
			o->rand_len, o->name_len);
		return -EINVAL;
	}
	/* At least one thread per directory; more must divide evenly. */
	if (!threads_given || o->nthreads < o->ndirs)
		o->nthreads = o->nthreads < o->ndirs ? o->ndirs : o->nthreads;
	if (o->nthreads % o->ndirs) {
		fprintf(stderr, "fsmark: -t %u is not a multiple of the %u directories\n",
			o->nthreads, o->ndirs);
		return -EINVAL;
	}
	return 0;
}

static int fs_use_percent(const char *dir, int *pct)
{
	struct statfs sf;

	if (statfs(dir, &sf) < 0) {
		fprintf(stderr, "fsmark: statfs %s: %s\n", dir, strerror(errno));
		return -errno;
	}
	*pct = sf.f_blocks ? (int)(100.0 * (double)(sf.f_blocks - sf.f_bavail) /
				    (double)sf.f_blocks) : 0;
	return 0;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0777) < 0 && errno != EEXIST) {
		int e = errno;

		fprintf(stderr, "fsmark: mkdir %s: %s\n", path, strerror(e));
		return -e;
	}
	return 0;
}

/* Pick the subdirectory for the next file (fs_mark's policies). */
static int next_subdir(struct fm_thread *t, char *out, size_t len)
{
	const struct fm_opts *o = t->o;
	time_t now = time(NULL);

	switch (o->policy) {
	case FM_DIR_NONE:
		snprintf(out, len, "%s", t->dir);
		return 0;
	case FM_DIR_ROUND_ROBIN:
		if (t->in_subdir >= o->per_subdir) {
			t->subdir = (t->subdir + 1) % o->nsubdirs;
			t->in_subdir = 0;
		}
		t->in_subdir++;
		break;
	case FM_DIR_TIME_HASH:
		if (now - t->subdir_since > FM_SECS_PER_DIR) {
			t->subdir = (t->subdir + 1) % o->nsubdirs;
			t->subdir_since = now;
		}
		break;
	}
	snprintf(out, len, "%s/%02x", t->dir, t->subdir);
	return make_dir(out);
}

/*
 * Name: the low hex digits of the current time (name_len - rand_len of
 * them, '~'-padded), then rand_len characters from [A-Z0-9].
 */
static void make_name(struct fm_thread *t, char *name)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	unsigned int seq_len = t->o->name_len - t->o->rand_len, i, n;
	char seq[32];

	n = (unsigned int)snprintf(seq, sizeof(seq), "%lx", (unsigned long)time(NULL));
	if (n >= seq_len) {
		memcpy(name, seq + n - seq_len, seq_len);
	} else {
		memcpy(name, seq, n);
		memset(name + n, '~', seq_len - n);
	}
	for (i = 0; i < t->o->rand_len; i++)
		name[seq_len + i] = alphabet[rand_r(&t->seed) % (sizeof(alphabet) - 1)];
	name[t->o->name_len] = '\0';
}

static int fm_fail(struct fm_thread *t, const char *what, const char *path)
{
	int e = errno;

	fprintf(stderr, "fsmark: %s %s: %s\n", what, path, strerror(e));
	t->err = -e;
	return -e;
}

/* Reopen path, fsync, close: the -S 2..6 post-loop fsync. */
static int reopen_fsync(struct fm_thread *t, const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return fm_fail(t, "open", path);
	if (fsync(fd) < 0) {
		fm_fail(t, "fsync", path);
		close(fd);
		return t->err;
	}
	close(fd);
	return 0;
}

static int write_file(struct fm_thread *t, int fd, const char *path, uint64_t *us)
{
	unsigned int left = t->o->file_size;

	do {
		unsigned int chunk = left < t->o->io_size ? left : t->o->io_size;
		uint64_t t0 = now_us();
		ssize_t n = write(fd, t->buf, chunk);

		*us += now_us() - t0;
		if (n < 0)
			return fm_fail(t, "write", path);
		if ((unsigned int)n != chunk) {
			errno = ENOSPC;
			return fm_fail(t, "short write to", path);
		}
		left -= chunk;
	} while (left);
	return 0;
}

/* One iteration of one thread.  Returns 0 or -errno (message printed). */
static int fm_iteration(struct fm_thread *t)
{
	const struct fm_opts *o = t->o;
	unsigned int bits = fm_sync_methods[o->sync_type].bits;
	uint64_t loop0, loop_us, sys_us = 0, t0;
	struct statfs sf;
	unsigned int i;
	int fd;

	if (statfs(t->dir, &sf) < 0)
		return fm_fail(t, "statfs", t->dir);
	if ((uint64_t)sf.f_bavail * (uint64_t)sf.f_bsize <
	    (uint64_t)o->file_size * o->nfiles) {
		t->nospace = true;
		return 0;
	}

	loop0 = now_us();
	for (i = 0; i < o->nfiles; i++) {
		/* -d paths are checked short enough for dir/xx/name to fit. */
		char dir[PATH_MAX - FM_MAX_NAME - 1], name[FM_MAX_NAME];

		if (next_subdir(t, dir, sizeof(dir)))
			return t->err = -EIO;
		make_name(t, name);
		snprintf(t->names[i], PATH_MAX, "%s/%s", dir, name);

		t0 = now_us();
		fd = open(t->names[i], O_CREAT | O_RDWR | O_TRUNC, 0666);
		sys_us += now_us() - t0;
		if (fd < 0)
			return fm_fail(t, "creat", t->names[i]);
		if (o->file_size && write_file(t, fd, t->names[i], &sys_us)) {
			close(fd);
			return t->err;
		}
		if (bits & FM_FSYNC_BEFORE_CLOSE) {
			t0 = now_us();
			if (fsync(fd) < 0) {
				fm_fail(t, "fsync", t->names[i]);
				close(fd);
				return t->err;
			}
			sys_us += now_us() - t0;
		}
		t0 = now_us();
		close(fd);
		sys_us += now_us() - t0;
	}
	if (bits & FM_SYNC_SYSCALL) {
		t0 = now_us();
		sync();
		sys_us += now_us() - t0;
	}
	t0 = now_us();
	if (bits & FM_FSYNC_POST_IN_ORDER)
		for (i = 0; i < o->nfiles; i++)
			if (reopen_fsync(t, t->names[i]))
				return t->err;
	if (bits & FM_FSYNC_POST_REVERSE)
		for (i = o->nfiles; i-- > 0;)
			if (reopen_fsync(t, t->names[i]))
				return t->err;
	if ((bits & FM_FSYNC_FIRST_FILE) && reopen_fsync(t, t->names[0]))
		return t->err;
	sys_us += now_us() - t0;
	loop_us = now_us() - loop0;

	if (!o->keep)
		for (i = 0; i < o->nfiles; i++)
			if (unlink(t->names[i]) < 0)
				return fm_fail(t, "unlink", t->names[i]);

	t->st.files = o->nfiles;
	t->st.files_per_sec = loop_us ? o->nfiles / (loop_us / 1e6) : 0.0;
	t->st.app_overhead_us = loop_us > sys_us ? loop_us - sys_us : 0;
	return 0;
}

static void *fm_thread_main(void *arg)
{
	struct fm_thread *t = arg;

	fm_iteration(t);
	return NULL;
}

static void print_header(FILE *f, const struct fm_opts *o, int argc, char **argv)
{
	time_t now = time(NULL);
	int i;

	fprintf(f, "\n# ");
	for (i = 0; i < argc; i++)
		fprintf(f, " %s ", argv[i]);
	fprintf(f, "\n#\tVersion %s (fsmark from blkbackd), %u thread(s) starting at %s",
		FM_VERSION, o->nthreads, ctime(&now));
	fprintf(f, "#\tSync method: %s\n", fm_sync_methods[o->sync_type].what);
	if (o->policy == FM_DIR_ROUND_ROBIN)
		fprintf(f, "#\tDirectories:  Round Robin between directories across %u subdirectories with %u files per subdirectory.\n",
			o->nsubdirs, o->per_subdir);
	else if (o->policy == FM_DIR_TIME_HASH)
		fprintf(f, "#\tDirectories:  Time based hash between directories across %u subdirectories with %u seconds per subdirectory.\n",
			o->nsubdirs, FM_SECS_PER_DIR);
	else
		fprintf(f, "#\tDirectories:  no subdirectories used\n");
	fprintf(f, "#\tFile names: %u bytes long, (%u initial bytes of time stamp with %u random bytes at end of name)\n",
		o->name_len, o->name_len - o->rand_len, o->rand_len);
	fprintf(f, "#\tFiles info: size %u bytes, written with an IO size of %u bytes per write\n",
		o->file_size, o->io_size);
	fprintf(f, "#\tApp overhead is time in microseconds spent in the test not doing file writing related system calls.\n");
	fprintf(f, "\n%6s %12s %12s %12s %16s\n",
		"FSUse%", "Count", "Size", "Files/sec", "App Overhead");
	fflush(f);
}

static void print_row(FILE *f, int pct, unsigned int count, unsigned int size,
		      double fps, uint64_t overhead)
{
	fprintf(f, "%6d %12u %12u %12.1f %16llu\n", pct, count, size, fps,
		(unsigned long long)overhead);
	fflush(f);
}

int main(int argc, char **argv)
{
	struct fm_opts o;
	struct fm_thread *threads;
	FILE *log = NULL;
	unsigned int i, loops_done = 0, count = 0;
	int ret = 0;

	if (parse_args(argc, argv, &o))
		return 1;
	for (i = 0; i < o.ndirs; i++)
		if (make_dir(o.dirs[i]))
			return 1;
	if (o.log_path) {
		log = fopen(o.log_path, "a");
		if (!log) {
			fprintf(stderr, "fsmark: -l %s: %s\n", o.log_path, strerror(errno));
			return 1;
		}
	}
	threads = calloc(o.nthreads, sizeof(*threads));
	if (!threads) {
		perror("fsmark: calloc");
		return 1;
	}
	for (i = 0; i < o.nthreads; i++) {
		struct fm_thread *t = &threads[i];

		t->o = &o;
		t->dir = o.dirs[i % o.ndirs];
		t->names = calloc(o.nfiles, sizeof(*t->names));
		t->buf = calloc(1, o.io_size);
		t->seed = (unsigned int)time(NULL) ^ (unsigned int)getpid() ^ (i * 2654435761u);
		t->subdir = o.nsubdirs ? (unsigned int)(time(NULL) % o.nsubdirs) : 0;
		t->subdir_since = time(NULL);
		if (!t->names || !t->buf) {
			perror("fsmark: calloc");
			return 1;
		}
	}
	print_header(stdout, &o, argc, argv);
	if (log)
		print_header(log, &o, argc, argv);

	do {
		double fps = 0;
		uint64_t overhead = 0;
		bool nospace = false;
		int pct = 0, e;

		for (i = 0; i < o.nthreads; i++) {
			threads[i].st = (struct fm_stats){ 0 };
			e = pthread_create(&threads[i].tid, NULL, fm_thread_main, &threads[i]);
			if (e) {
				fprintf(stderr, "fsmark: pthread_create: %s\n", strerror(e));
				return 1;
			}
		}
		for (i = 0; i < o.nthreads; i++) {
			pthread_join(threads[i].tid, NULL);
			if (threads[i].err)
				ret = 1;
			nospace |= threads[i].nospace;
			count += threads[i].st.files;
			fps += threads[i].st.files_per_sec;
			overhead += threads[i].st.app_overhead_us;
		}
		if (ret)
			break;
		if (nospace) {
			printf("Insufficient free space in %s to create %u new files, exiting\n",
			       o.dirs[0], o.nfiles);
			ret = o.fill ? 0 : 1;
			break;
		}
		if (fs_use_percent(o.dirs[0], &pct)) {
			ret = 1;
			break;
		}
		print_row(stdout, pct, count, o.file_size, fps, overhead);
		if (log)
			print_row(log, pct, count, o.file_size, fps, overhead);
		loops_done++;
	} while (o.fill || loops_done < o.loops);

	for (i = 0; i < o.nthreads; i++) {
		free(threads[i].names);
		free(threads[i].buf);
	}
	free(threads);
	if (log && fclose(log)) {
		fprintf(stderr, "fsmark: -l %s: %s\n", o.log_path, strerror(errno));
		ret = 1;
	}
	return ret;
}
