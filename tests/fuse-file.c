/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuse-file.c: one file through FUSE, to play a backing whose file
 * system hangs.
 *
 *   fuse-file FILE MOUNTPOINT
 *
 * Serves FILE as MOUNTPOINT/disk: read, write and fsync go to FILE
 * (flush, which every close(2) sends, is answered as done), and
 * its size is FILE's own, asked again at every stat (the kernel caches
 * no attribute and no entry), so a truncate of FILE is seen through the
 * mount at once.  Stopping this process (SIGSTOP) makes every access to
 * MOUNTPOINT/disk wait, fstat included -- what a hard NFS mount whose
 * server died does; SIGCONT lets them all finish.  Single-threaded, in
 * the foreground; SIGTERM or SIGINT unmounts and exits 0.  Exit 1 when
 * FILE cannot be opened or the mount fails, 2 on a bad command line.
 */
#include <config.h>

#define FUSE_USE_VERSION 312
#include <fuse.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DISK "/disk"

static int file_fd = -1;

static void *
ff_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	/* every stat reaches us: the size is FILE's now */
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->kernel_cache = 0;
	return NULL;
}

static int
ff_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct stat fst;

	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (strcmp(path, DISK))
		return -ENOENT;
	if (fstat(file_fd, &fst) < 0)
		return -errno;
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = fst.st_size;
	st->st_blksize = 4096;
	st->st_blocks = fst.st_blocks;
	st->st_mtim = fst.st_mtim;
	st->st_ctim = fst.st_ctim;
	return 0;
}

static int
ff_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
	   struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/"))
		return -ENOTDIR;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	filler(buf, DISK + 1, NULL, 0, 0);
	return 0;
}

static int
ff_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, DISK))
		return -ENOENT;
	fi->keep_cache = 0;
	return 0;
}

static int
ff_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	ssize_t n;

	(void)path;
	(void)fi;
	n = pread(file_fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int
ff_write(const char *path, const char *buf, size_t size, off_t off,
	 struct fuse_file_info *fi)
{
	ssize_t n;

	(void)path;
	(void)fi;
	n = pwrite(file_fd, buf, size, off);
	return n < 0 ? -errno : (int)n;
}

static int
ff_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return (datasync ? fdatasync(file_fd) : fsync(file_fd)) < 0 ? -errno : 0;
}

/* Answered, not refused: a refusal (ENOSYS) makes the kernel send no
 * FLUSH again, and a close would then never wait for this daemon. */
static int
ff_flush(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	return 0;
}

static int
ff_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, DISK))
		return -ENOENT;
	return ftruncate(file_fd, size) < 0 ? -errno : 0;
}

static const struct fuse_operations ff_ops = {
	.init = ff_init,
	.getattr = ff_getattr,
	.readdir = ff_readdir,
	.open = ff_open,
	.read = ff_read,
	.write = ff_write,
	.fsync = ff_fsync,
	.flush = ff_flush,
	.truncate = ff_truncate,
};

int
main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(0, NULL);
	struct fuse *fuse;
	int rc = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: fuse-file FILE MOUNTPOINT\n");
		return 2;
	}
	file_fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (file_fd < 0) {
		fprintf(stderr, "fuse-file: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (fuse_opt_add_arg(&args, "fuse-file") || fuse_opt_add_arg(&args, "-o") ||
	    fuse_opt_add_arg(&args, "fsname=fuse-file,subtype=fuse-file")) {
		fprintf(stderr, "fuse-file: out of memory\n");
		return 1;
	}
	fuse = fuse_new(&args, &ff_ops, sizeof(ff_ops), NULL);
	if (!fuse) {
		fprintf(stderr, "fuse-file: fuse_new failed\n");
		goto out;
	}
	if (fuse_mount(fuse, argv[2])) {
		fprintf(stderr, "fuse-file: cannot mount on %s\n", argv[2]);
		goto out_destroy;
	}
	if (fuse_set_signal_handlers(fuse_get_session(fuse))) {
		fprintf(stderr, "fuse-file: cannot install signal handlers\n");
		goto out_unmount;
	}
	/* > 0 is the signal that ended the loop: a clean stop */
	rc = fuse_loop(fuse) < 0 ? 1 : 0;
	fuse_remove_signal_handlers(fuse_get_session(fuse));
out_unmount:
	fuse_unmount(fuse);
out_destroy:
	fuse_destroy(fuse);
out:
	fuse_opt_free_args(&args);
	close(file_fd);
	return rc;
}
