/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-backend-store.c: unit tests of blkbackd's storage drivers
 * (backend/store.h): file, memory and null, opened and driven through
 * the checked dispatch (bk_store_open, bk_store_submit...).  Each
 * sub-test checks exact bytes, exact results and the probed features.
 * Where the dispatch refuses what the contract forbids (a write on a
 * read-only store, FUA or FLUSH a store does not offer), the driver is
 * also called directly, to check what it would do on its own.
 * The file store's tests run once on each I/O engine (libaio, then
 * io_uring), the engine every open here asks for.
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "store.h"

static char tmpdir[] = "/tmp/bk-store.XXXXXX";
static enum bk_io_engine engine;	/* what the file store's opens ask for */

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, #c); \
	return 1; } } while (0)

/*
 * Submit one I/O and wait for it; returns its result.  An I/O the
 * dispatch refuses comes back at once with the error submit returned,
 * as the dataplane fails it.
 */
static int64_t
run_io(struct bk_store_queue *q, struct bk_io *io)
{
	struct bk_io *done[4];
	struct pollfd pfd = { .fd = bk_store_queue_fd(q), .events = POLLIN };
	int n;

	io->result = 12345;
	n = bk_store_submit(q, &io, 1);
	if (n < 0)
		return n;
	assert(n == 1);
	for (;;) {
		/* 60 s: an O_DSYNC write on a host whose disk is busy with
		 * other jobs once took more than 10 */
		assert(poll(&pfd, 1, 60000) == 1);
		n = bk_store_reap(q, done, 4);
		assert(n >= 0);
		if (n == 1) {
			assert(done[0] == io);
			return io->result;
		}
		assert(n == 0);
	}
}

static int64_t
do_rw(struct bk_store_queue *q, enum bk_io_op op, unsigned int flags, void *buf,
      uint64_t off, uint64_t len)
{
	struct iovec iov = { buf, len };
	struct bk_io io = { .op = op, .flags = flags, .offset = off, .len = len,
			    .iov = &iov, .iovcnt = 1 };

	return run_io(q, &io);
}

static int64_t
do_op(struct bk_store_queue *q, enum bk_io_op op, unsigned int flags, uint64_t off,
      uint64_t len, const char **action)
{
	struct bk_io io = { .op = op, .flags = flags, .offset = off, .len = len };
	int64_t r = run_io(q, &io);

	if (action)
		*action = io.host_action;
	return r;
}

/* Open a store of drv with arg through the dispatch; its features in *f. */
static int
open_store(const struct bk_store_driver *drv, struct bk_store_config *cfg,
	   struct bk_store **s, struct bk_store_features *f)
{
	struct bk_store_why why;
	int rc;

	cfg->io_engine = engine;
	rc = bk_store_open(drv, cfg, s, &why);
	if (rc == 0)
		*f = *bk_store_features(*s);
	if (rc == 0 && drv == bk_store_lookup("file") &&
	    strcmp(f->engine, engine == BK_IO_ENGINE_URING ? "io_uring" : "libaio")) {
		fprintf(stderr, "the file store took %s, not %s\n", f->engine,
			bk_io_engine_name(engine));
		bk_store_close(*s);
		return -EINVAL;
	}
	return rc;
}

/*
 * Run io on drv's own table, past the dispatch: open a store of it with
 * cfg, one queue, io, close.  For what the driver does with an I/O the
 * dispatch would refuse.
 */
static int64_t
driver_io(const struct bk_store_driver *drv, const struct bk_store_config *cfg,
	  struct bk_io *io)
{
	struct bk_store_why why;
	struct bk_store_config c = *cfg;
	struct bk_store_features f;
	struct bk_io *p = io, *done[2];
	void *priv, *qpriv;
	int n;

	c.why = &why;
	memset(&why, 0, sizeof(why));
	assert(drv->open(&c, &priv, &f) == 0);
	io->result = 12345;
	if (drv->io) {
		drv->io(priv, io);
	} else {
		struct pollfd pfd;

		assert(drv->queue_open(priv, 2, &qpriv) == 0);
		pfd.fd = drv->queue_fd(qpriv);
		pfd.events = POLLIN;
		assert(drv->submit(qpriv, &p, 1) == 1);
		do {
			assert(poll(&pfd, 1, 10000) == 1);
			n = drv->reap(qpriv, done, 2);
			assert(n >= 0);
		} while (n == 0);
		assert(n == 1 && done[0] == io);
		drv->queue_close(qpriv);
	}
	drv->close(priv);
	return io->result;
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
	const struct bk_store_driver *drv = bk_store_lookup("file");
	char *path = make_file("rw.img", 1 << 20);
	struct bk_store_config cfg = { .arg = path };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(8192, 1), *r = pattern(8192, 2), *disk = malloc(8192);
	const char *act;
	int fd;

	CHECK(drv && strcmp(drv->name, "file") == 0);
	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(strcmp(bk_store_name(s), "file") == 0);
	CHECK(f.size == 1 << 20);
	CHECK(f.sector_size == 512);
	CHECK(f.can_flush);
	CHECK(f.writeback);
	CHECK(f.fua == BK_FUA_NATIVE || f.fua == BK_FUA_EMULATED);
	CHECK(bk_store_queue_open(s, 8, &q) == 0);

	CHECK(do_rw(q, BK_IO_WRITE, 0, w, 4096, 8192) == 8192);
	CHECK(do_rw(q, BK_IO_READ, 0, r, 4096, 8192) == 8192);
	CHECK(memcmp(w, r, 8192) == 0);
	/* the bytes are on the backing, at the right place */
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	CHECK(pread(fd, disk, 8192, 4096) == 8192);
	CHECK(memcmp(disk, w, 8192) == 0);
	CHECK(pread(fd, disk, 4096, 0) == 4096);
	CHECK(((char *)disk)[0] == 0 && memcmp(disk, (char *)disk + 1, 4095) == 0);

	CHECK(do_op(q, BK_IO_FLUSH, 0, 0, 0, &act) == 0);
	CHECK(strcmp(act, "fdatasync") == 0);
	if (f.fua == BK_FUA_NATIVE) {
		struct iovec iov = { w, 512 };
		struct bk_io io = { .op = BK_IO_WRITE, .flags = BK_IO_FUA, .offset = 0,
				    .len = 512, .iov = &iov, .iovcnt = 1 };

		CHECK(run_io(q, &io) == 512);
		CHECK(strcmp(io.host_action, "pwritev+RWF_DSYNC") == 0);
		CHECK(pread(fd, disk, 512, 0) == 512 && memcmp(disk, w, 512) == 0);
	}
	/* discard: a hole reads back as zeroes */
	if (f.can_discard) {
		CHECK(do_op(q, BK_IO_DISCARD, 0, 4096, 4096, &act) == 0);
		CHECK(strcmp(act, "fallocate-punch-hole") == 0);
		CHECK(pread(fd, disk, 8192, 4096) == 8192);
		CHECK(((char *)disk)[0] == 0 && memcmp(disk, (char *)disk + 1, 4095) == 0);
		CHECK(memcmp((char *)disk + 4096, (char *)w + 4096, 4096) == 0);
	}
	/* a read past the end is an error, not a short success */
	CHECK(do_rw(q, BK_IO_READ, 0, r, (1 << 20) - 4096, 8192) < 0);
	close(fd);
	bk_store_queue_close(q);
	bk_store_close(s);
	free(w);
	free(r);
	free(disk);
	unlink(path);
	free(path);
	return 0;
}

/*
 * The file store's size op: growth is seen (and accepted by the
 * dispatch), a shrink bounds I/O at the new end with -EIO (a write
 * there must not give the file its old size back), a removed file says
 * -ENOENT.  A stack with a wrapper cannot tell (-EOPNOTSUPP).
 */
/*
 * How the file driver's queue fd is polled, as the data plane's queue
 * thread polls it (it asks bk_store_queue_edge first).
 * libaio, and io_uring on a kernel without multishot poll (5.13): an
 * eventfd, edge-triggered: every completion is an edge, also while the
 * fd is still readable from an earlier one, and reap leaves the fd as it
 * is (so a level-triggered poll would spin).
 * io_uring otherwise: the ring's own fd, level-triggered: readable while
 * a completion waits, not after reap takes it -- and never for a
 * completion taken before anyone waited (the wake-up for nothing an
 * eventfd the ring writes per CQE gave).  The worker's completions (a
 * discard) make it readable too.
 * The memory driver (synchronous: the default queue) stays
 * level-triggered.
 */
static bool
kernel_has_multishot_poll(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	return uname(&u) == 0 && sscanf(u.release, "%u.%u", &major, &minor) == 2 &&
	       (major > 5 || (major == 5 && minor >= 13));
}

/* epoll_wait on ep for up to timeout_ms (EINTR: again); what it returned. */
static int
wait_readable(int ep, int timeout_ms)
{
	struct epoll_event out;
	int n;

	/* io_uring posts a completion as task work of the thread that
	 * submitted, which interrupts its epoll_wait (EINTR, as the data
	 * plane's loop expects); the readiness follows */
	do
		n = epoll_wait(ep, &out, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	return n;
}

static int
test_file_edge(void)
{
	const struct bk_store_driver *drv = bk_store_lookup("file");
	char *path = make_file("edge.img", 1 << 20);
	struct bk_store_config cfg = { .arg = path };
	struct epoll_event ev = { .events = EPOLLIN };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(4096, 3);
	struct iovec iov = { w, 4096 };
	struct bk_io io = { .op = BK_IO_WRITE, .len = 4096, .iov = &iov, .iovcnt = 1 };
	struct bk_io *p = &io, *done[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), round, n;
	bool ringfd = engine == BK_IO_ENGINE_URING && kernel_has_multishot_poll();

	CHECK(ep >= 0);
	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(bk_store_queue_edge(q) == !ringfd);
	if (!ringfd)
		ev.events |= EPOLLET;
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, bk_store_queue_fd(q), &ev) == 0);
	for (round = 0; round < 3; round++) {
		io.offset = 4096 * (uint64_t)round;
		io.result = 0;
		CHECK(bk_store_submit(q, &p, 1) == 1);
		CHECK(wait_readable(ep, 10000) == 1);	/* an edge, or the CQE, each time */
		CHECK(bk_store_reap(q, done, 4) == 1 && done[0] == &io && io.result == 4096);
		CHECK(wait_readable(ep, 0) == 0);	/* and only one */
	}
	if (ringfd) {
		/* taken before anyone waited: nothing left to wake for */
		io.result = 0;
		CHECK(bk_store_submit(q, &p, 1) == 1);
		for (round = 0; round < 100000; round++) {
			n = bk_store_reap(q, done, 4);
			CHECK(n >= 0);
			if (n)
				break;
			sched_yield();	/* a system call: the kernel runs our task work */
		}
		CHECK(n == 1 && done[0] == &io && io.result == 4096);
		CHECK(wait_readable(ep, 0) == 0);
		/* the worker's: a discard */
		if (f.can_discard) {
			struct bk_io d = { .op = BK_IO_DISCARD, .offset = 0, .len = 4096 };

			p = &d;
			d.result = 12345;
			CHECK(bk_store_submit(q, &p, 1) == 1);
			CHECK(wait_readable(ep, 10000) == 1);
			CHECK(bk_store_reap(q, done, 4) == 1 && done[0] == &d && d.result == 0);
			CHECK(wait_readable(ep, 0) == 0);
		}
	}
	bk_store_queue_close(q);
	bk_store_close(s);
	close(ep);

	cfg.arg = "1M";
	CHECK(open_store(bk_store_lookup("memory"), &cfg, &s, &f) == 0);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(!bk_store_queue_edge(q));
	bk_store_queue_close(q);
	bk_store_close(s);
	unlink(path);
	free(path);
	free(w);
	return 0;
}

/*
 * The thread that opens and closes an io_uring file store and its queue
 * (in blkbackd the control thread, which serves every vbd's xenstore)
 * is left alone afterwards: Linux interrupts a task that made or used a
 * ring when the ring goes away, tens of milliseconds after its close
 * (its epoll_wait fails with EINTR; a fallocate on tmpfs, where the
 * control thread makes recovery records, may too).  Run on a thread of
 * its own that has touched no ring yet: the engine's once-per-process
 * probes run here too when this is the process's first io_uring open.
 */
static void *
uring_quiet_thread(void *arg)
{
	const struct bk_store_driver *drv = bk_store_lookup("file");
	char *path = make_file("quiet.img", 1 << 20);
	struct bk_store_config cfg = { .arg = path, .io_engine = BK_IO_ENGINE_URING };
	struct epoll_event ev;
	struct bk_store *s;
	struct bk_store_queue *q;
	struct bk_store_why why;
	int ep = epoll_create1(EPOLL_CLOEXEC), n, *rc = arg;

	*rc = 1;
	if (ep < 0 || bk_store_open(drv, &cfg, &s, &why) != 0) {
		fprintf(stderr, "uring_quiet: cannot open %s with io_uring\n", path);
		goto out;
	}
	if (bk_store_queue_open(s, 4, &q) != 0) {
		fprintf(stderr, "uring_quiet: cannot open a queue\n");
		bk_store_close(s);
		goto out;
	}
	bk_store_queue_close(q);
	bk_store_close(s);
	/* 300 ms: six times the latest interruption seen */
	n = epoll_wait(ep, &ev, 1, 300);
	if (n != 0)
		fprintf(stderr, "uring_quiet: epoll_wait after the store's close: %d (%s)\n",
			n, n < 0 ? strerror(errno) : "an event on an empty epoll");
	*rc = n != 0;
out:
	if (ep >= 0)
		close(ep);
	unlink(path);
	free(path);
	return NULL;
}

static int
test_uring_quiet(void)
{
	pthread_t t;
	int rc = 1;

	CHECK(pthread_create(&t, NULL, uring_quiet_thread, &rc) == 0);
	CHECK(pthread_join(t, NULL) == 0);
	return rc;
}

static int
test_file_size(void)
{
	const struct bk_store_driver *drv = bk_store_lookup("file");
	char *path = make_file("size.img", 1 << 20);
	struct bk_store_config cfg = { .arg = path };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(4096, 3), *r = pattern(4096, 4);
	const char *act;
	struct stat st;
	uint64_t bytes;

	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(f.size == 1 << 20);
	CHECK(bk_store_queue_open(s, 8, &q) == 0);
	CHECK(bk_store_size(s, &bytes) == 0 && bytes == 1 << 20);
	/* past the end: refused by the dispatch */
	CHECK(do_rw(q, BK_IO_WRITE, 0, w, 1 << 20, 4096) == -EINVAL);

	/* grown (truncate, and not a multiple of 512) */
	CHECK(truncate(path, (2 << 20) + 100) == 0);
	CHECK(bk_store_size(s, &bytes) == 0 && bytes == 2 << 20);
	CHECK(bk_store_size_now(s) == 2 << 20);
	CHECK(do_rw(q, BK_IO_WRITE, 0, w, (2 << 20) - 4096, 4096) == 4096);
	CHECK(do_rw(q, BK_IO_READ, 0, r, (2 << 20) - 4096, 4096) == 4096);
	CHECK(memcmp(w, r, 4096) == 0);

	/* shrunk: I/O past the new end fails, the file keeps its size */
	CHECK(truncate(path, 1 << 19) == 0);
	CHECK(bk_store_size(s, &bytes) == 0 && bytes == 1 << 19);
	CHECK(bk_store_size_now(s) == 2 << 20);	/* the dispatch keeps the larger */
	{
		struct iovec iov = { w, 4096 };
		struct bk_io io = { .op = BK_IO_WRITE, .offset = 1 << 19, .len = 4096,
				    .iov = &iov, .iovcnt = 1 };

		CHECK(run_io(q, &io) == -EIO);
		CHECK(strcmp(io.host_action, "past-end") == 0);
	}
	CHECK(do_rw(q, BK_IO_READ, 0, r, (1 << 19) - 512, 1024) == -EIO);
	CHECK(stat(path, &st) == 0 && st.st_size == 1 << 19);
	CHECK(do_rw(q, BK_IO_WRITE, 0, w, (1 << 19) - 4096, 4096) == 4096);
	CHECK(do_op(q, BK_IO_FLUSH, 0, 0, 0, &act) == 0);

	/* removed: -ENOENT; I/O on the open file goes on */
	CHECK(unlink(path) == 0);
	CHECK(bk_store_size(s, &bytes) == -ENOENT);
	CHECK(do_rw(q, BK_IO_READ, 0, r, 0, 4096) == 4096);
	bk_store_queue_close(q);
	bk_store_close(s);

	/* a stack with a wrapper keeps the size of the open */
	{
		char *p2 = make_file("size2.img", 1 << 20);
		struct bk_params params = { .driver = drv, .arg = p2 };
		struct bk_stack_config sc = { .volatile_cache = true };
		struct bk_store_why why;
		struct bk_store *top;

		CHECK(bk_stack_open(&params, &sc, false, &top, &why) == 0);
		CHECK(bk_store_size(top, &bytes) == -EOPNOTSUPP);
		bk_stack_close(top);
		unlink(p2);
		free(p2);
	}
	free(w);
	free(r);
	free(path);
	return 0;
}

static int
test_file_writethrough_ro(void)
{
	const struct bk_store_driver *drv = bk_store_lookup("file");
	char *path = make_file("wt.img", 65536);
	struct bk_store_config cfg = { .arg = path, .writethrough = true };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(4096, 3);
	struct iovec iov = { w, 4096 };
	struct bk_io io = { .op = BK_IO_WRITE, .offset = 0, .len = 4096, .iov = &iov, .iovcnt = 1 };

	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(!f.writeback);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(run_io(q, &io) == 4096);
	CHECK(strcmp(io.host_action, "pwritev+O_DSYNC") == 0);
	bk_store_queue_close(q);
	bk_store_close(s);

	cfg.writethrough = false;
	cfg.read_only = true;
	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(!f.can_discard);
	CHECK(f.read_only);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	/* the dispatch refuses it; the driver's fd is read-only as well */
	CHECK(run_io(q, &io) == -EINVAL);
	CHECK(strcmp(io.host_action, "refused") == 0);
	bk_store_queue_close(q);
	bk_store_close(s);
	CHECK(driver_io(drv, &cfg, &io) == -EBADF);

	cfg.arg = "/nonexistent/blkbackd-test";
	CHECK(open_store(drv, &cfg, &s, &f) == -ENOENT);
	{
		struct bk_store_why why;

		CHECK(bk_store_open(drv, &cfg, &s, &why) == -ENOENT);
		CHECK(strcmp(why.msg, "No such file or directory") == 0 && !why.bad_arg);
	}
	unlink(path);
	free(path);
	free(w);
	return 0;
}

static int
test_memory(void)
{
	const struct bk_store_driver *drv = bk_store_lookup("memory");
	struct bk_store_config cfg = { .arg = "1M" };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *w = pattern(45056, 4), *r = pattern(45056, 5);
	const char *act;

	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(f.size == 1 << 20 && f.can_flush && f.fua == BK_FUA_NATIVE && f.can_discard);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(do_rw(q, BK_IO_WRITE, 0, w, 512, 45056) == 45056);
	CHECK(do_rw(q, BK_IO_READ, 0, r, 512, 45056) == 45056);
	CHECK(memcmp(w, r, 45056) == 0);
	CHECK(do_op(q, BK_IO_FLUSH, 0, 0, 0, &act) == 0);
	CHECK(strcmp(act, "mem-flush") == 0);
	CHECK(do_op(q, BK_IO_DISCARD, 0, 512, 512, &act) == 0);
	CHECK(do_rw(q, BK_IO_READ, 0, r, 0, 4096) == 4096);
	CHECK(((char *)r)[511] == 0 && ((char *)r)[512] == 0 && ((char *)r)[1023] == 0);
	CHECK(memcmp((char *)r + 1024, (char *)w + 512, 3072) == 0);
	CHECK(do_rw(q, BK_IO_WRITE, 0, w, (1 << 20) - 512, 1024) == -EINVAL);
	bk_store_queue_close(q);
	bk_store_close(s);

	cfg.arg = "1M,fail-flush,fua=emulated";
	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(f.fua == BK_FUA_EMULATED);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(!bk_store_failed(s));
	CHECK(do_op(q, BK_IO_FLUSH, 0, 0, 0, NULL) == -EIO);
	CHECK(bk_store_failed(s));
	/* FUA where the store has none: refused by the dispatch, and the
	 * device modelled has none either */
	CHECK(do_rw(q, BK_IO_WRITE, BK_IO_FUA, w, 0, 512) == -EINVAL);
	bk_store_queue_close(q);
	bk_store_close(s);
	{
		struct iovec iov = { w, 512 };
		struct bk_io io = { .op = BK_IO_WRITE, .flags = BK_IO_FUA, .len = 512,
				    .iov = &iov, .iovcnt = 1 };

		CHECK(driver_io(drv, &cfg, &io) == -EOPNOTSUPP);
	}

	cfg.arg = "1M,no-flush,no-discard";
	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(!f.can_flush && !f.can_discard);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	/* FLUSH where the store cannot: refused; the driver says so too */
	CHECK(do_op(q, BK_IO_FLUSH, 0, 0, 0, NULL) == -EINVAL);
	bk_store_queue_close(q);
	bk_store_close(s);
	{
		struct bk_io io = { .op = BK_IO_FLUSH };

		CHECK(driver_io(drv, &cfg, &io) == -EOPNOTSUPP);
	}

	cfg.arg = "1000";
	CHECK(open_store(drv, &cfg, &s, &f) == -EINVAL);
	free(w);
	free(r);
	return 0;
}

static int
test_null(void)
{
	const struct bk_store_driver *drv = bk_store_lookup("null");
	struct bk_store_config cfg = { .arg = "1G" };
	struct bk_store_features f;
	struct bk_store *s;
	struct bk_store_queue *q;
	void *r = pattern(4096, 6);

	CHECK(open_store(drv, &cfg, &s, &f) == 0);
	CHECK(f.size == 1 << 30);
	CHECK(bk_store_queue_open(s, 2, &q) == 0);
	CHECK(do_rw(q, BK_IO_WRITE, 0, r, 0, 4096) == 4096);
	CHECK(do_rw(q, BK_IO_READ, 0, r, 0, 4096) == 4096);
	CHECK(((char *)r)[0] == 0 && memcmp(r, (char *)r + 1, 4095) == 0);
	CHECK(do_op(q, BK_IO_FLUSH, 0, 0, 0, NULL) == 0);
	bk_store_queue_close(q);
	bk_store_close(s);
	CHECK(bk_store_lookup("nosuch") == NULL);
	free(r);
	return 0;
}

int
main(void)
{
	static const struct { const char *name; int (*fn)(void); bool file; } tests[] = {
		{ "file_rw", test_file_rw, true },
		{ "file_edge", test_file_edge, true },
		{ "file_size", test_file_size, true },
		{ "file_writethrough_ro", test_file_writethrough_ro, true },
		{ "memory", test_memory, false },
		{ "null", test_null, false },
	};
	static const enum bk_io_engine engines[] = { BK_IO_ENGINE_LIBAIO, BK_IO_ENGINE_URING };
	int failed = 0;
	size_t i, e;

	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	/* first: no io_uring probe has run in this process yet */
	failed |= test_uring_quiet();
	printf("uring_quiet (io_uring): %s\n", failed ? "FAIL" : "ok");
	for (e = 0; e < sizeof(engines) / sizeof(engines[0]); e++) {
		engine = engines[e];
		for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
			int rc;

			if (e && !tests[i].file)
				continue;	/* no engine: once is enough */
			rc = tests[i].fn();
			printf("%s (%s): %s\n", tests[i].name, bk_io_engine_name(engine),
			       rc ? "FAIL" : "ok");
			failed |= rc;
		}
	}
	rmdir(tmpdir);
	return failed ? 1 : 0;
}
