/*
 * test-backend-store.c: unit tests of blkbackd's storage drivers
 * (backend/store.h): file, memory and null.  Each sub-test checks exact
 * bytes, exact results and the probed features.
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store.h"

static char tmpdir[] = "/tmp/bk-store.XXXXXX";

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, #c); \
	return 1; } } while (0)

/* Submit one I/O and wait for it; returns its result. */
static int64_t
run_io(const struct bk_store_ops *ops, struct bk_store_queue *q, struct bk_io *io)
{
	struct bk_io *done[4];
	struct pollfd pfd = { .fd = ops->queue_fd(q), .events = POLLIN };
	int n;

	io->result = 12345;
	n = ops->submit(q, &io, 1);
	assert(n == 1);
	for (;;) {
		assert(poll(&pfd, 1, 10000) == 1);
		n = ops->reap(q, done, 4);
		assert(n >= 0);
		if (n == 1) {
			assert(done[0] == io);
			return io->result;
		}
		assert(n == 0);
	}
}

static int64_t
do_rw(const struct bk_store_ops *ops, struct bk_store_queue *q, enum bk_io_op op,
      unsigned int flags, void *buf, uint64_t off, uint64_t len)
{
	struct iovec iov = { buf, len };
	struct bk_io io = { .op = op, .flags = flags, .offset = off, .len = len,
			    .iov = &iov, .iovcnt = 1 };

	return run_io(ops, q, &io);
}

static int64_t
do_op(const struct bk_store_ops *ops, struct bk_store_queue *q, enum bk_io_op op,
      unsigned int flags, uint64_t off, uint64_t len, const char **action)
{
	struct bk_io io = { .op = op, .flags = flags, .offset = off, .len = len };
	int64_t r = run_io(ops, q, &io);

	if (action)
		*action = io.host_action;
	return r;
}

static void *
pattern(size_t len, unsigned int seed)
{
	unsigned char *p;
	size_t i;

	assert(posix_memalign((void **)&p, 4096, len) == 0);
	for (i = 0; i < len; i++)
		p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 9));
	return p;
}

static char *
make_file(const char *name, off_t size)
{
	char *path;
	int fd;

	assert(asprintf(&path, "%s/%s", tmpdir, name) > 0);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	assert(fd >= 0);
	assert(ftruncate(fd, size) == 0);
	close(fd);
	return path;
}

static int
test_file_rw(void)
{
	const struct bk_store_ops *ops = bk_store_lookup("file");
	char *path = make_file("rw.img", 1 << 20);
	struct bk_store_config cfg = { .path = path };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(8192, 1), *r = pattern(8192, 2), *disk = malloc(8192);
	const char *act;
	int fd;

	CHECK(ops && strcmp(ops->name, "file") == 0);
	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(f.size == 1 << 20);
	CHECK(f.sector_size == 512);
	CHECK(f.can_flush);
	CHECK(f.writeback);
	CHECK(f.fua == BK_FUA_NATIVE || f.fua == BK_FUA_EMULATED);
	CHECK(ops->queue_open(s, 8, &q) == 0);

	CHECK(do_rw(ops, q, BK_IO_WRITE, 0, w, 4096, 8192) == 8192);
	CHECK(do_rw(ops, q, BK_IO_READ, 0, r, 4096, 8192) == 8192);
	CHECK(memcmp(w, r, 8192) == 0);
	/* the bytes are on the backing, at the right place */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(pread(fd, disk, 8192, 4096) == 8192);
	CHECK(memcmp(disk, w, 8192) == 0);
	CHECK(pread(fd, disk, 4096, 0) == 4096);
	CHECK(((char *)disk)[0] == 0 && memcmp(disk, (char *)disk + 1, 4095) == 0);

	CHECK(do_op(ops, q, BK_IO_FLUSH, 0, 0, 0, &act) == 0);
	CHECK(strcmp(act, "fdatasync") == 0);
	if (f.fua == BK_FUA_NATIVE) {
		struct iovec iov = { w, 512 };
		struct bk_io io = { .op = BK_IO_WRITE, .flags = BK_IO_FUA, .offset = 0,
				    .len = 512, .iov = &iov, .iovcnt = 1 };

		CHECK(run_io(ops, q, &io) == 512);
		CHECK(strcmp(io.host_action, "pwritev+RWF_DSYNC") == 0);
		CHECK(pread(fd, disk, 512, 0) == 512 && memcmp(disk, w, 512) == 0);
	}
	/* discard: a hole reads back as zeroes */
	if (f.can_discard) {
		CHECK(do_op(ops, q, BK_IO_DISCARD, 0, 4096, 4096, &act) == 0);
		CHECK(strcmp(act, "fallocate-punch-hole") == 0);
		CHECK(pread(fd, disk, 8192, 4096) == 8192);
		CHECK(((char *)disk)[0] == 0 && memcmp(disk, (char *)disk + 1, 4095) == 0);
		CHECK(memcmp((char *)disk + 4096, (char *)w + 4096, 4096) == 0);
	}
	/* a read past the end is an error, not a short success */
	CHECK(do_rw(ops, q, BK_IO_READ, 0, r, (1 << 20) - 4096, 8192) < 0);
	close(fd);
	ops->queue_close(q);
	ops->close(s);
	free(w);
	free(r);
	free(disk);
	unlink(path);
	free(path);
	return 0;
}

static int
test_file_writethrough_ro(void)
{
	const struct bk_store_ops *ops = bk_store_lookup("file");
	char *path = make_file("wt.img", 65536);
	struct bk_store_config cfg = { .path = path, .writethrough = true };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(4096, 3);
	struct iovec iov = { w, 4096 };
	struct bk_io io = { .op = BK_IO_WRITE, .offset = 0, .len = 4096, .iov = &iov, .iovcnt = 1 };

	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(!f.writeback);
	CHECK(ops->queue_open(s, 4, &q) == 0);
	CHECK(run_io(ops, q, &io) == 4096);
	CHECK(strcmp(io.host_action, "pwritev+O_DSYNC") == 0);
	ops->queue_close(q);
	ops->close(s);

	cfg.writethrough = false;
	cfg.read_only = true;
	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(!f.can_discard);
	CHECK(ops->queue_open(s, 4, &q) == 0);
	CHECK(run_io(ops, q, &io) == -EBADF);
	ops->queue_close(q);
	ops->close(s);

	cfg.path = "/nonexistent/blkbackd-test";
	CHECK(ops->open(&cfg, &s, &f) == -ENOENT);
	unlink(path);
	free(path);
	free(w);
	return 0;
}

static int
test_memory(void)
{
	const struct bk_store_ops *ops = bk_store_lookup("memory");
	struct bk_store_config cfg = { .size = 1 << 20 };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(45056, 4), *r = pattern(45056, 5);
	const char *act;

	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(f.size == 1 << 20 && f.can_flush && f.fua == BK_FUA_NATIVE && f.can_discard);
	CHECK(ops->queue_open(s, 4, &q) == 0);
	CHECK(do_rw(ops, q, BK_IO_WRITE, 0, w, 512, 45056) == 45056);
	CHECK(do_rw(ops, q, BK_IO_READ, 0, r, 512, 45056) == 45056);
	CHECK(memcmp(w, r, 45056) == 0);
	CHECK(do_op(ops, q, BK_IO_FLUSH, 0, 0, 0, &act) == 0);
	CHECK(strcmp(act, "mem-flush") == 0);
	CHECK(do_op(ops, q, BK_IO_DISCARD, 0, 512, 512, &act) == 0);
	CHECK(do_rw(ops, q, BK_IO_READ, 0, r, 0, 4096) == 4096);
	CHECK(((char *)r)[511] == 0 && ((char *)r)[512] == 0 && ((char *)r)[1023] == 0);
	CHECK(memcmp((char *)r + 1024, (char *)w + 512, 3072) == 0);
	CHECK(do_rw(ops, q, BK_IO_WRITE, 0, w, (1 << 20) - 512, 1024) == -EINVAL);
	ops->queue_close(q);
	ops->close(s);

	cfg.options = "fail-flush,fua=emulated";
	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(f.fua == BK_FUA_EMULATED);
	CHECK(ops->queue_open(s, 4, &q) == 0);
	CHECK(do_op(ops, q, BK_IO_FLUSH, 0, 0, 0, NULL) == -EIO);
	CHECK(do_rw(ops, q, BK_IO_WRITE, BK_IO_FUA, w, 0, 512) == -EOPNOTSUPP);
	ops->queue_close(q);
	ops->close(s);

	cfg.options = "no-flush,no-discard";
	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(!f.can_flush && !f.can_discard);
	CHECK(ops->queue_open(s, 4, &q) == 0);
	CHECK(do_op(ops, q, BK_IO_FLUSH, 0, 0, 0, NULL) == -EOPNOTSUPP);
	ops->queue_close(q);
	ops->close(s);

	cfg.size = 1000;
	CHECK(ops->open(&cfg, &s, &f) == -EINVAL);
	free(w);
	free(r);
	return 0;
}

static int
test_null(void)
{
	const struct bk_store_ops *ops = bk_store_lookup("null");
	struct bk_store_config cfg = { .size = 1 << 30 };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *r = pattern(4096, 6);

	CHECK(ops->open(&cfg, &s, &f) == 0);
	CHECK(f.size == 1 << 30);
	CHECK(ops->queue_open(s, 2, &q) == 0);
	CHECK(do_rw(ops, q, BK_IO_WRITE, 0, r, 0, 4096) == 4096);
	CHECK(do_rw(ops, q, BK_IO_READ, 0, r, 0, 4096) == 4096);
	CHECK(((char *)r)[0] == 0 && memcmp(r, (char *)r + 1, 4095) == 0);
	CHECK(do_op(ops, q, BK_IO_FLUSH, 0, 0, 0, NULL) == 0);
	ops->queue_close(q);
	ops->close(s);
	CHECK(bk_store_lookup("nosuch") == NULL);
	free(r);
	return 0;
}

int
main(void)
{
	static const struct { const char *name; int (*fn)(void); } tests[] = {
		{ "file_rw", test_file_rw },
		{ "file_writethrough_ro", test_file_writethrough_ro },
		{ "memory", test_memory },
		{ "null", test_null },
	};
	int failed = 0;
	size_t i;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		int rc = tests[i].fn();

		printf("%s: %s\n", tests[i].name, rc ? "FAIL" : "ok");
		failed |= rc;
	}
	rmdir(tmpdir);
	return failed ? 1 : 0;
}
