/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * export.c: "blkfront-test export MOUNTPOINT", the disk as a file through
 * FUSE (libfuse3, high-level API, multi-threaded loop).
 *
 * MOUNTPOINT/disk: read/write become blkif requests (libblkfront splits
 * and runs them in parallel); fsync/fdatasync become one flush per
 * negotiation (blkfront_flush: FLUSH_DISKCACHE, or WRITE_BARRIER when
 * only barriers were offered, or nothing when the backend offers neither).
 * fallocate(PUNCH_HOLE|KEEP_SIZE), what a loop device on the file sends
 * for a discard (blkdiscard, fstrim, mount -o discard), becomes
 * BLKIF_OP_DISCARD (blkfront_discard) when the backend offers
 * feature-discard, else EOPNOTSUPP; --direct punches the hole in PATH.
 * The FUSE writeback cache is never enabled (FUSE would then hold dirty
 * data the guest believes written); a loop device on the file should use
 * --direct-io=on (FUSE's async direct I/O then keeps requests parallel).
 *
 * --direct PATH: the same file system over PATH itself, no ring (the
 * benchmark's dom0 row): blkbackd's store code on PATH with requests
 * shaped as for the ring (direct.c), writethrough = cache=writethrough.
 *
 * Unaligned I/O (not sector-aligned) is read-modify-write under an
 * exclusive lock; aligned writes share it, so an RMW never races a write
 * to the same sector.
 *
 * Threads: FUSE worker threads call the device ops concurrently; the
 * blkfront device and the direct engine are thread-safe.
 */
#include <config.h>

#define FUSE_USE_VERSION 312
#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "guestlog.h"
#include "ft.h"

#define EX_FILE "disk"

struct ex {
	/* one of: */
	blkfront_t *bf;
	struct ft_direct *direct;	/* --direct */
	uint64_t size;			/* bytes */
	unsigned int align;		/* sector size (bytes) */
	pthread_rwlock_t rmw;
	/* --direct counters */
	uint64_t d_reads, d_writes, d_flushes, d_discards;
	time_t mtime;
};

static struct ex *
ex_get(void)
{
	return fuse_get_context()->private_data;
}

/* Aligned, in-range I/O on the device: 0 or -errno. */
static int
dev_read(struct ex *e, void *buf, size_t len, uint64_t off)
{
	if (e->bf)
		return blkfront_pread(e->bf, buf, len, off / SECTOR_SIZE);
	__atomic_fetch_add(&e->d_reads, 1, __ATOMIC_RELAXED);
	return ft_direct_pread(e->direct, buf, len, off);
}

static int
dev_write(struct ex *e, const void *buf, size_t len, uint64_t off)
{
	if (e->bf)
		return blkfront_pwrite(e->bf, buf, len, off / SECTOR_SIZE, false);
	__atomic_fetch_add(&e->d_writes, 1, __ATOMIC_RELAXED);
	return ft_direct_pwrite(e->direct, buf, len, off);
}

static int
dev_flush(struct ex *e)
{
	if (e->bf)
		return blkfront_flush(e->bf);
	__atomic_fetch_add(&e->d_flushes, 1, __ATOMIC_RELAXED);
	return ft_direct_flush(e->direct);
}

/*
 * Aligned bounce I/O: [off, off+len) is expanded to the alignment, read
 * (for reads and for the edges of writes), patched, written.
 */
static int
ex_io(struct ex *e, char *buf, size_t len, uint64_t off, bool write)
{
	uint64_t a = e->align, start = off & ~(a - 1);
	uint64_t end = (off + len + a - 1) & ~(a - 1);
	bool aligned = start == off && end == off + len;
	void *b;
	int r;

	/* both devices copy through buffers of their own (the granted
	 * pages, the direct engine's): any buffer address will do */
	if (aligned) {
		if (!write)
			return dev_read(e, buf, len, off);
		pthread_rwlock_rdlock(&e->rmw);
		r = dev_write(e, buf, len, off);
		pthread_rwlock_unlock(&e->rmw);
		return r;
	}
	if (posix_memalign(&b, 4096, end - start))
		return -ENOMEM;
	if (!write) {
		r = dev_read(e, b, end - start, start);
		if (!r)
			memcpy(buf, (char *)b + (off - start), len);
		free(b);
		return r;
	}
	pthread_rwlock_wrlock(&e->rmw);
	r = 0;
	if (start != off)
		r = dev_read(e, b, a, start);
	if (!r && end != off + len && !(end - a == start && start != off))
		r = dev_read(e, (char *)b + (end - start - a), a, end - a);
	if (!r) {
		memcpy((char *)b + (off - start), buf, len);
		r = dev_write(e, b, end - start, start);
	}
	pthread_rwlock_unlock(&e->rmw);
	free(b);
	return r;
}

static void *
ex_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Never the writeback cache: dirty data in FUSE's page cache would
	 * be acknowledged to the filesystem before any request was sent. */
	conn->want &= ~FUSE_CAP_WRITEBACK_CACHE;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	cfg->kernel_cache = 0;
	cfg->direct_io = 0;
	cfg->attr_timeout = 3600;
	cfg->entry_timeout = 3600;
	cfg->use_ino = 0;
	return fuse_get_context()->private_data;
}

static int
ex_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct ex *e = ex_get();

	memset(st, 0, sizeof(*st));
	st->st_mtime = st->st_ctime = st->st_atime = e->mtime;
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, "/" EX_FILE) == 0) {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)e->size;
		st->st_blksize = 4096;
		st->st_blocks = (blkcnt_t)(e->size / 512);
		return 0;
	}
	return -ENOENT;
}

static int
ex_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
	   struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(path, "/"))
		return -ENOTDIR;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	filler(buf, EX_FILE, NULL, 0, 0);
	return 0;
}

static int
ex_open(const char *path, struct fuse_file_info *fi)
{
	struct ex *e = ex_get();

	if (strcmp(path, "/" EX_FILE))
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY && e->bf && blkfront_info(e->bf)->read_only)
		return -EROFS;
	fi->keep_cache = 0;
	fi->nonseekable = 0;
	return 0;
}

static int
ex_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct ex *e = ex_get();
	int r;

	if (off < 0)
		return -EINVAL;
	if ((uint64_t)off >= e->size)
		return 0;
	if (size > e->size - (uint64_t)off)
		size = (size_t)(e->size - (uint64_t)off);
	r = ex_io(e, buf, size, (uint64_t)off, false);
	return r ? r : (int)size;
}

static int
ex_write(const char *path, const char *buf, size_t size, off_t off,
	 struct fuse_file_info *fi)
{
	struct ex *e = ex_get();
	int r;

	if (off < 0)
		return -EINVAL;
	if ((uint64_t)off >= e->size)
		return -ENOSPC;
	if (size > e->size - (uint64_t)off)
		size = (size_t)(e->size - (uint64_t)off);
	r = ex_io(e, (char *)buf, size, (uint64_t)off, true);
	return r ? r : (int)size;
}

static int
ex_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	return dev_flush(ex_get());
}

/*
 * A discard: only PUNCH_HOLE|KEEP_SIZE (the range reads back as zeros
 * on a file; on a disk, whatever the backend's discard leaves), on whole
 * sectors: an unaligned edge is left as it is, as a disk ignores a
 * partial sector of a discard.  Preallocation, zero-range and collapse
 * have no blkif operation: EOPNOTSUPP.
 */
static int
ex_fallocate(const char *path, int mode, off_t off, off_t len, struct fuse_file_info *fi)
{
	struct ex *e = ex_get();
	uint64_t start, end, a = e->align;
	int r;

	if (mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	if (off < 0 || len <= 0)
		return -EINVAL;
	if ((uint64_t)off >= e->size)
		return 0;
	end = (uint64_t)off + (uint64_t)len;
	if (end > e->size || end < (uint64_t)off)
		end = e->size;
	start = ((uint64_t)off + a - 1) & ~(a - 1);
	end &= ~(a - 1);
	if (start >= end)
		return 0;
	if (e->bf ? !blkfront_info(e->bf)->feature_discard : !ft_direct_can_discard(e->direct))
		return -EOPNOTSUPP;
	/* a write like any other for the read-modify-write lock */
	pthread_rwlock_rdlock(&e->rmw);
	if (e->bf) {
		r = blkfront_discard(e->bf, start / SECTOR_SIZE, (end - start) / SECTOR_SIZE);
	} else {
		__atomic_fetch_add(&e->d_discards, 1, __ATOMIC_RELAXED);
		r = ft_direct_discard(e->direct, start, end - start);
	}
	pthread_rwlock_unlock(&e->rmw);
	return r;
}

static int
ex_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	/* the disk has a fixed size; O_TRUNC-free tools only */
	return (uint64_t)size == ex_get()->size ? 0 : -EPERM;
}

static int
ex_statfs(const char *path, struct statvfs *st)
{
	struct ex *e = ex_get();

	memset(st, 0, sizeof(*st));
	st->f_bsize = 4096;
	st->f_frsize = 4096;
	st->f_blocks = e->size / 4096;
	st->f_files = 1;
	st->f_namemax = 255;
	return 0;
}

static const struct fuse_operations ex_ops = {
	.init = ex_init,
	.getattr = ex_getattr,
	.readdir = ex_readdir,
	.open = ex_open,
	.read = ex_read,
	.write = ex_write,
	.fsync = ex_fsync,
	.fallocate = ex_fallocate,
	.truncate = ex_truncate,
	.statfs = ex_statfs,
};

struct ex_opts {
	const char *direct, *pidfile, *log, *stats, *cache;
	unsigned int threads;
};

static void
export_usage(FILE *f)
{
	fprintf(f, "usage: blkfront-test export [device options] [--threads N] [--pidfile FILE]\n"
		"         [--log FILE] [--stats FILE] MOUNTPOINT\n"
		"       blkfront-test export --direct PATH [--cache writethrough|writeback]\n"
		"         [--threads N] [--pidfile FILE] [--stats FILE] MOUNTPOINT\n"
		"  Serve the disk as MOUNTPOINT/disk (FUSE) until SIGINT/SIGTERM.\n%s",
		FT_COMMON_HELP);
}

static int
export_opt(void *ctx, int opt, const char *arg)
{
	struct ex_opts *o = ctx;
	uint64_t n;

	switch (opt) {
	case 'd': o->direct = arg; return 1;
	case 'c':
		if (strcmp(arg, "writethrough") && strcmp(arg, "writeback"))
			return ft_bad("writethrough or writeback");
		o->cache = arg;
		return 1;
	case 'P': o->pidfile = arg; return 1;
	case 'l': o->log = arg; return 1;
	case 's': o->stats = arg; return 1;
	case 't':
		if (ft_parse_size(arg, &n) || n == 0 || n > 4096)
			return ft_bad("a whole number in 1..4096");
		o->threads = (unsigned int)n;
		return 1;
	}
	return 0;
}

static void
write_stats(struct ex *e, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		log_error("export --stats %s: %m", path);
		return;
	}
	if (e->bf) {
		struct blkfront_stats st;

		blkfront_get_stats(e->bf, &st);
		fprintf(f, "reads=%" PRIu64 "\nwrites=%" PRIu64 "\nflushes=%" PRIu64
			"\nbarriers=%" PRIu64 "\ndiscards=%" PRIu64 "\nerrors=%" PRIu64
			"\neopnotsupp=%" PRIu64 "\n", st.reads, st.writes, st.flushes,
			st.barriers, st.discards, st.errors, st.eopnotsupp);
	} else {
		fprintf(f, "reads=%" PRIu64 "\nwrites=%" PRIu64 "\nflushes=%" PRIu64
			"\ndiscards=%" PRIu64 "\n", e->d_reads, e->d_writes, e->d_flushes,
			e->d_discards);
	}
	if (fclose(f))
		log_error("export --stats %s: %m", path);
}

int
ft_cmd_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "direct", required_argument, NULL, 'd' },
		{ "cache", required_argument, NULL, 'c' },
		{ "pidfile", required_argument, NULL, 'P' },
		{ "log", required_argument, NULL, 'l' },
		{ "stats", required_argument, NULL, 's' },
		{ "threads", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct ex_opts o = { .cache = "writeback" };
	struct ft_common c;
	struct ex e;
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse_loop_config *lc = NULL;
	struct fuse *fuse = NULL;
	const char *mnt;
	FILE *glog = NULL;
	int i, rc = 1;

	i = ft_parse(argc, argv, &c, NULL, opts, export_opt, &o, export_usage);
	if (i != argc - 1) {
		export_usage(stderr);
		return 2;
	}
	mnt = argv[i];
	/* FUSE mounts over a regular file as happily as over a directory,
	 * and the file is then unreadable to everyone until we exit; our
	 * disk is MOUNTPOINT/disk, so only a directory makes sense.
	 * Checked before the device is connected. */
	{
		struct stat st;

		if (stat(mnt, &st) < 0) {
			log_error("export: %s: %m", mnt);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			log_error("export: %s: not a directory (the disk is served as "
				  "MOUNTPOINT/%s)", mnt, EX_FILE);
			return 1;
		}
	}
	memset(&e, 0, sizeof(e));
	e.mtime = time(NULL);
	pthread_rwlock_init(&e.rmw, NULL);

	if (o.direct) {
		if (ft_direct_open(o.direct, strcmp(o.cache, "writethrough") == 0, &e.direct))
			goto out;
		/* the file store's sector size, as blkbackd would advertise */
		e.align = SECTOR_SIZE;
		e.size = ft_direct_size(e.direct);
	} else {
		if (o.log) {
			glog = fopen(o.log, "a");
			if (!glog) {
				log_error("export --log %s: %m", o.log);
				goto out;
			}
			setvbuf(glog, NULL, _IOLBF, 0);
			fprintf(glog, "%s %d\n", GUESTLOG_MAGIC, GUESTLOG_VERSION);
			c.bcfg.guestlog = glog;
		}
		e.bf = ft_common_open(&c);
		if (!e.bf)
			goto out;
		e.size = blkfront_info(e.bf)->sectors * SECTOR_SIZE;
		e.align = blkfront_info(e.bf)->sector_size;
		if (!o.threads)
			o.threads = blkfront_info(e.bf)->ring_size * blkfront_info(e.bf)->nr_queues;
	}
	if (!o.threads)
		o.threads = 32;

	if (fuse_opt_add_arg(&args, "blkfront-test") ||
	    fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, "fsname=blkfront-test,subtype=blkfront")) {
		log_error("export: out of memory");
		goto out;
	}
	fuse = fuse_new(&args, &ex_ops, sizeof(ex_ops), &e);
	if (!fuse) {
		log_error("export: fuse_new failed");
		goto out;
	}
	if (fuse_mount(fuse, mnt)) {
		log_error("export: cannot mount on %s", mnt);
		fuse_destroy(fuse);
		fuse = NULL;
		goto out;
	}
	if (fuse_set_signal_handlers(fuse_get_session(fuse))) {
		log_error("export: cannot install signal handlers");
		goto out_unmount;
	}
	if (o.pidfile) {
		FILE *pf = fopen(o.pidfile, "w");

		if (!pf || fprintf(pf, "%d\n", (int)getpid()) < 0 || fclose(pf)) {
			log_error("export --pidfile %s: %m", o.pidfile);
			goto out_signals;
		}
	}
	log_info("serving %s/%s (%" PRIu64 " bytes%s%s) with up to %u threads", mnt, EX_FILE,
		 e.size, o.direct ? ", direct " : "", o.direct ? o.cache : "", o.threads);
	lc = fuse_loop_cfg_create();
	if (!lc) {
		log_error("export: out of memory");
		goto out_signals;
	}
	fuse_loop_cfg_set_clone_fd(lc, 0);
	fuse_loop_cfg_set_max_threads(lc, o.threads);
	fuse_loop_cfg_set_idle_threads(lc, o.threads < 10 ? o.threads : 10);
	/* > 0: the signal that ended the loop (a clean stop) */
	rc = fuse_loop_mt(fuse, lc) < 0 ? 1 : 0;
	fuse_loop_cfg_destroy(lc);
	if (e.bf && blkfront_broken(e.bf))
		rc = 1;
out_signals:
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
	fuse_destroy(fuse);
	fuse = NULL;
	if (o.pidfile)
		unlink(o.pidfile);
out:
	fuse_opt_free_args(&args);
	if (o.stats)
		write_stats(&e, o.stats);
	if (e.bf)
		ft_common_close(&c, e.bf);
	ft_direct_close(e.direct);
	if (glog)
		fclose(glog);
	pthread_rwlock_destroy(&e.rmw);
	return rc;
}
