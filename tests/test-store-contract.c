/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-store-contract.c: unit tests of the checked store dispatch
 * (backend/store.h, store.c, store-stack.c), over small fake drivers
 * written here and the real file and memory drivers.
 *
 *  - each contract violation bk_store_submit() lists is refused with
 *    -EINVAL, the ios before it in the batch are submitted, and it is
 *    logged once per queue;
 *  - bk_store_open() refuses a driver table or features that break the
 *    contract, and fills the reason with strerror when the driver gave
 *    none;
 *  - the default queue of a synchronous driver: its fd is readable
 *    exactly while completions wait, it holds depth I/Os;
 *  - a short READ/WRITE comes back as -EIO; a failed FLUSH makes
 *    bk_store_failed() true, an EOPNOTSUPP one does not;
 *  - claims: one writer per backing, read-only users share, a draining
 *    holder means wait, a symlink is the same backing;
 *  - bk_params_parse and bk_stack_open with the messages the error
 *    node shows;
 *  - the real file store on each I/O engine (libaio, io_uring): the
 *    engine it says, data written (with FUA) read back, a FLUSH, a
 *    completion short of len (the file shrank behind the store) and
 *    I/O past the end it last saw come back as -EIO, the kernel's
 *    error (a write past RLIMIT_FSIZE: -EFBIG) as it is, a batch of I/Os
 *    in one submit (test-backend-io-engine.sh: a kernel that refuses
 *    io_uring).
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "store.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, #c); \
	return 1; } } while (0)

#define MIB		(1u << 20)

static char tmpdir[] = "/tmp/bk-contract.XXXXXX";

/* ---- fake drivers ---- */

/*
 * What the fake drivers report and do; the tests set it before each
 * open.  open() copies f as it is (so a test can make it inconsistent).
 */
static struct {
	struct bk_store_features f;
	int open_rc;			/* open() fails with it, no reason given */
	uint64_t short_by;		/* READ/WRITE transfer len - short_by */
	int64_t flush_result;
	unsigned int ios;		/* I/Os the driver was given */
} fake;

static void
fake_reset(void)
{
	memset(&fake, 0, sizeof(fake));
	fake.f.size = MIB;
	fake.f.sector_size = 512;
	fake.f.physical_sector_size = 512;
	fake.f.can_flush = true;
	fake.f.writeback = true;
	fake.f.fua = BK_FUA_NATIVE;
	fake.f.can_discard = true;
	fake.f.can_secure_discard = true;
}

static int
fake_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	static int handle;

	(void)cfg;
	if (fake.open_rc)
		return fake.open_rc;
	*f = fake.f;
	*priv = &handle;
	return 0;
}

static void
fake_close(void *priv)
{
	(void)priv;
}

/* What the fake does with io: the result it completes with. */
static void
fake_io(void *priv, struct bk_io *io)
{
	(void)priv;
	fake.ios++;
	io->host_action = "fake";
	switch (io->op) {
	case BK_IO_READ:
	case BK_IO_WRITE:
		io->result = (int64_t)(io->len - fake.short_by);
		break;
	case BK_IO_FLUSH:
		io->result = fake.flush_result;
		break;
	default:
		io->result = 0;
	}
}

/* Synchronous: store.c's default queue. */
static const struct bk_store_driver fake_driver = {
	.name = "fake",
	.open = fake_open,
	.close = fake_close,
	.io = fake_io,
};

/* Asynchronous, without a poll op: completes at submit, signals an eventfd. */
struct afake_queue {
	int efd;
	struct bk_io *done[16];
	unsigned int n;
};

static int
afake_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct afake_queue *q = calloc(1, sizeof(*q));

	(void)priv;
	(void)depth;
	assert(q);
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	assert(q->efd >= 0);
	*qpriv = q;
	return 0;
}

static void
afake_queue_close(void *qpriv)
{
	struct afake_queue *q = qpriv;

	close(q->efd);
	free(q);
}

static int
afake_queue_fd(void *qpriv)
{
	return ((struct afake_queue *)qpriv)->efd;
}

static int
afake_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct afake_queue *q = qpriv;
	uint64_t one = 1;
	unsigned int i;

	for (i = 0; i < n && q->n < ARRAY_SIZE(q->done); i++) {
		fake_io(NULL, ios[i]);
		q->done[q->n++] = ios[i];
	}
	if (i)
		assert(write(q->efd, &one, sizeof(one)) == sizeof(one));
	return i ? (int)i : -EAGAIN;
}

static int
afake_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct afake_queue *q = qpriv;
	unsigned int n = q->n < max ? q->n : max;
	uint64_t v;

	memcpy(done, q->done, n * sizeof(*done));
	memmove(q->done, q->done + n, (q->n - n) * sizeof(*done));
	q->n -= n;
	if (q->n == 0)
		(void)!read(q->efd, &v, sizeof(v));
	return (int)n;
}

static const struct bk_store_driver afake_driver = {
	.name = "afake",
	.open = fake_open,
	.close = fake_close,
	.queue_open = afake_queue_open,
	.queue_close = afake_queue_close,
	.queue_fd = afake_queue_fd,
	.submit = afake_submit,
	.reap = afake_reap,
};

/* io() and submit() both: neither kind. */
static const struct bk_store_driver mixed_driver = {
	.name = "mixed",
	.open = fake_open,
	.close = fake_close,
	.io = fake_io,
	.queue_open = afake_queue_open,
	.queue_close = afake_queue_close,
	.queue_fd = afake_queue_fd,
	.submit = afake_submit,
	.reap = afake_reap,
};

/* ---- helpers ---- */

static struct bk_store *
open_fake(const struct bk_store_driver *drv, bool read_only)
{
	struct bk_store_config cfg = { .read_only = read_only };
	struct bk_store_why why;
	struct bk_store *s;

	fake.f.read_only = read_only;
	if (bk_store_open(drv, &cfg, &s, &why) != 0) {
		fprintf(stderr, "open %s: %s\n", drv->name, why.msg);
		abort();
	}
	return s;
}

/* Is fd readable right now? */
static bool
readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* Reap until n I/Os came back (each waits for the fd).  The count. */
static int
reap_all(struct bk_store_queue *q, unsigned int n)
{
	struct bk_io *done[16];
	unsigned int got = 0;

	while (got < n) {
		struct pollfd pfd = { .fd = bk_store_queue_fd(q), .events = POLLIN };
		int r;

		if (poll(&pfd, 1, 5000) != 1)
			break;
		r = bk_store_reap(q, done, ARRAY_SIZE(done));
		if (r < 0)
			return r;
		got += (unsigned int)r;
	}
	return (int)got;
}

/* Log lines: stderr into a file while the test runs, then read back. */
static int saved_stderr = -1;
static char log_path[64];

static void
log_capture(void)
{
	int fd;

	snprintf(log_path, sizeof(log_path), "%s/log", tmpdir);
	fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert(fd >= 0);
	saved_stderr = dup(STDERR_FILENO);
	assert(saved_stderr >= 0 && dup2(fd, STDERR_FILENO) == STDERR_FILENO);
	close(fd);
}

/* Stop capturing; the number of lines that contain what. */
static unsigned int
log_count(const char *what)
{
	char line[512];
	unsigned int n = 0;
	FILE *f;

	assert(dup2(saved_stderr, STDERR_FILENO) == STDERR_FILENO);
	close(saved_stderr);
	saved_stderr = -1;
	f = fopen(log_path, "r");
	assert(f);
	while (fgets(line, sizeof(line), f)) {
		fputs(line, stderr);	/* still in the test's log */
		n += strstr(line, what) != NULL;
	}
	fclose(f);
	unlink(log_path);
	return n;
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

/* ---- submit: the contract ---- */

static unsigned char buf[4096] __attribute__((aligned(4096)));

struct violation {
	const char *name;
	bool read_only;
	/* features changed from fake_reset()'s */
	bool fua_emulated, fua_none, no_flush, no_discard, no_secure;
	struct bk_io io;		/* iov: set by the test unless iovcnt < 0 */
	unsigned int iov_len;		/* 0: io.len */
	const char *log;		/* the exact log line's text */
};

/*
 * Batch [READ, READ, bad, READ]: the two before it are submitted, the
 * bad one (first in the next call) is refused with -EINVAL and
 * host_action "refused" without reaching the driver, the one after it
 * goes in next.  Logged once on its queue.
 */
static int
test_violations(void)
{
	static const struct violation v[] = {
		{ "unknown op", .io = { .op = (enum bk_io_op)9 },
		  .log = "fake store: unknown op 9" },
		{ "read of 0 bytes", .io = { .op = BK_IO_READ, .offset = 512, .len = 0 },
		  .log = "fake store: READ of 0 bytes at 512" },
		{ "unaligned offset", .io = { .op = BK_IO_READ, .offset = 100, .len = 512 },
		  .log = "fake store: READ of 512 bytes at 100: not a multiple of 512" },
		{ "unaligned length", .io = { .op = BK_IO_WRITE, .offset = 0, .len = 1000 },
		  .log = "fake store: WRITE of 1000 bytes at 0: not a multiple of 512" },
		{ "past the end", .io = { .op = BK_IO_READ, .offset = MIB - 512, .len = 1024 },
		  .log = "fake store: READ of 1024 bytes at 1048064: past the end "
			 "(1048576 bytes)" },
		{ "wrapping", .io = { .op = BK_IO_WRITE, .offset = UINT64_MAX - 511,
				      .len = 1024 },
		  .log = "fake store: WRITE of 1024 bytes at 18446744073709551104: past the "
			 "end (1048576 bytes)" },
		{ "iovecs short of len", .io = { .op = BK_IO_READ, .len = 1024 },
		  .iov_len = 512,
		  .log = "fake store: READ of 1024 bytes with iovecs of 512 bytes" },
		{ "iovecs past len", .io = { .op = BK_IO_WRITE, .len = 1024 },
		  .iov_len = 2048,
		  .log = "fake store: WRITE of 1024 bytes with iovecs of more than 1024 bytes" },
		{ "no iovec", .io = { .op = BK_IO_READ, .len = 512, .iovcnt = -1 },
		  .log = "fake store: READ with 0 iovecs" },
		{ "write on read-only", .read_only = true,
		  .io = { .op = BK_IO_WRITE, .len = 512 },
		  .log = "fake store: WRITE on a read-only store" },
		{ "discard on read-only", .read_only = true, .no_discard = true,
		  .no_secure = true, .io = { .op = BK_IO_DISCARD, .len = 512 },
		  .log = "fake store: DISCARD on a read-only store" },
		{ "FUA, fua emulated", .fua_emulated = true,
		  .io = { .op = BK_IO_WRITE, .flags = BK_IO_FUA, .len = 512 },
		  .log = "fake store: WRITE with FUA on a store whose fua is emulated" },
		{ "FUA, fua none", .fua_none = true,
		  .io = { .op = BK_IO_WRITE, .flags = BK_IO_FUA, .len = 512 },
		  .log = "fake store: WRITE with FUA on a store whose fua is none" },
		{ "flush, cannot", .no_flush = true,
		  .io = { .op = BK_IO_FLUSH },
		  .log = "fake store: FLUSH on a store that cannot flush" },
		{ "discard, cannot", .no_discard = true, .no_secure = true,
		  .io = { .op = BK_IO_DISCARD, .offset = 4096, .len = 4096 },
		  .log = "fake store: DISCARD on a store that cannot discard" },
		{ "secure discard, cannot", .no_secure = true,
		  .io = { .op = BK_IO_DISCARD, .flags = BK_IO_SECURE, .len = 4096 },
		  .log = "fake store: DISCARD with SECURE on a store that cannot "
			 "secure-discard" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		struct iovec iov[4], biov;
		struct bk_io good[3], bad = v[i].io, *batch[4];
		struct bk_store *s;
		struct bk_store_queue *q;
		char want[256];
		unsigned int k;

		fake_reset();
		if (v[i].fua_emulated)
			fake.f.fua = BK_FUA_EMULATED;
		if (v[i].fua_none)
			fake.f.fua = BK_FUA_NONE;
		fake.f.can_flush = !v[i].no_flush;
		fake.f.can_discard = !v[i].no_discard;
		fake.f.can_secure_discard = !v[i].no_secure;
		s = open_fake(&fake_driver, v[i].read_only);
		CHECK(bk_store_queue_open(s, 8, &q) == 0);
		for (k = 0; k < 3; k++) {
			iov[k].iov_base = buf;
			iov[k].iov_len = 512;
			good[k] = (struct bk_io){ .op = BK_IO_READ, .offset = 512 * k,
						  .len = 512, .iov = &iov[k], .iovcnt = 1 };
		}
		if (bad.op == BK_IO_READ || bad.op == BK_IO_WRITE) {
			if (bad.iovcnt < 0) {
				bad.iovcnt = 0;
			} else {
				biov.iov_base = buf;
				biov.iov_len = v[i].iov_len ? v[i].iov_len : bad.len;
				bad.iov = &biov;
				bad.iovcnt = 1;
			}
		}
		bad.result = 12345;
		batch[0] = &good[0];
		batch[1] = &good[1];
		batch[2] = &bad;
		batch[3] = &good[2];

		log_capture();
		CHECK(bk_store_submit(q, batch, 4) == 2);
		CHECK(fake.ios == 2);
		CHECK(bad.result == 12345);	/* not touched yet */
		CHECK(bk_store_submit(q, batch + 2, 2) == -EINVAL);
		CHECK(bad.result == -EINVAL && strcmp(bad.host_action, "refused") == 0);
		CHECK(fake.ios == 2);
		/* the caller fails it and goes on with the rest */
		CHECK(bk_store_submit(q, batch + 2, 1) == -EINVAL);
		CHECK(bk_store_submit(q, batch + 3, 1) == 1);
		CHECK(fake.ios == 3);
		snprintf(want, sizeof(want), "error: store contract: %s", v[i].log);
		if (log_count(want) != 1) {
			fprintf(stderr, "%s: not logged once as \"%s\"\n", v[i].name, want);
			return 1;
		}
		CHECK(bk_store_inflight(q) == 3);
		CHECK(reap_all(q, 3) == 3);
		CHECK(bk_store_inflight(q) == 0);
		for (k = 0; k < 3; k++)
			CHECK(good[k].result == 512);
		bk_store_queue_close(q);
		bk_store_close(s);
	}
	return 0;
}

/* Once per queue: a second queue logs again; a good batch is untouched. */
static int
test_violation_logged_once_per_queue(void)
{
	struct bk_io bad = { .op = BK_IO_FLUSH }, *p = &bad;
	struct bk_store_queue *q1, *q2;
	struct bk_store *s;

	fake_reset();
	fake.f.can_flush = false;
	fake.f.fua = BK_FUA_NONE;
	s = open_fake(&fake_driver, false);
	CHECK(bk_store_queue_open(s, 4, &q1) == 0);
	CHECK(bk_store_queue_open(s, 4, &q2) == 0);
	log_capture();
	CHECK(bk_store_submit(q1, &p, 1) == -EINVAL);
	CHECK(bk_store_submit(q1, &p, 1) == -EINVAL);
	CHECK(bk_store_submit(q1, &p, 1) == -EINVAL);
	CHECK(bk_store_submit(q2, &p, 1) == -EINVAL);
	CHECK(bk_store_submit(q1, &p, 0) == 0);
	CHECK(log_count("store contract: fake store: FLUSH on a store that cannot flush") == 2);
	CHECK(fake.ios == 0 && bk_store_inflight(q1) == 0);
	bk_store_queue_close(q1);
	bk_store_queue_close(q2);
	bk_store_close(s);
	return 0;
}

/* ---- open: the driver's table and features ---- */

static int
expect_open_refused(const struct bk_store_driver *drv, struct bk_store_config *cfg,
		    int err, const char *msg)
{
	struct bk_store_why why;
	struct bk_store *s = (struct bk_store *)&why;

	CHECK(bk_store_open(drv, cfg, &s, &why) == err);
	CHECK(s == NULL);
	if (strcmp(why.msg, msg)) {
		fprintf(stderr, "why is \"%s\", expected \"%s\"\n", why.msg, msg);
		return 1;
	}
	CHECK(!why.bad_arg);
	return 0;
}

static int
test_open_checks(void)
{
	struct bk_store_config cfg = { 0 }, ro = { .read_only = true };
	struct bk_store *s;
	int rc = 0;

	log_capture();
	fake_reset();
	fake.f.size = MIB + 100;
	rc |= expect_open_refused(&fake_driver, &cfg, -EINVAL,
				  "store contract: fake store: size 1048676 is not a "
				  "multiple of 512");
	fake_reset();
	fake.f.fua = BK_FUA_EMULATED;
	fake.f.can_flush = false;
	rc |= expect_open_refused(&fake_driver, &cfg, -EINVAL,
				  "store contract: fake store: fua emulated without can_flush");
	fake_reset();
	fake.f.can_discard = false;
	rc |= expect_open_refused(&fake_driver, &cfg, -EINVAL,
				  "store contract: fake store: can_secure_discard without "
				  "can_discard");
	fake_reset();		/* a driver that forgets read_only */
	rc |= expect_open_refused(&fake_driver, &ro, -EINVAL,
				  "store contract: fake store: opened read-only, reports "
				  "read_only=0");
	fake_reset();
	rc |= expect_open_refused(&mixed_driver, &cfg, -EINVAL,
				  "store contract: mixed driver: needs an io op or all the "
				  "queue ops, not both");
	rc |= expect_open_refused(&bk_store_record_driver, &cfg, -EINVAL,
				  "store contract: record driver: a wrapper opened without a "
				  "store below");
	/* a driver that gives no reason: strerror, never "" */
	fake.open_rc = -ENOSPC;
	rc |= expect_open_refused(&fake_driver, &cfg, -ENOSPC, "No space left on device");
	CHECK(log_count("store contract: ") == 6);
	if (rc)
		return rc;

	/* a non-wrapper on a store below */
	fake_reset();
	s = open_fake(&fake_driver, false);
	cfg.lower = s;
	log_capture();
	rc = expect_open_refused(&fake_driver, &cfg, -EINVAL,
				 "store contract: fake driver: not a wrapper, opened on a "
				 "store below");
	CHECK(log_count("store contract: fake driver: not a wrapper") == 1);
	bk_store_close(s);
	return rc;
}

/* ---- the default queue ---- */

static int
test_default_queue(void)
{
	struct iovec iov = { buf, 512 };
	struct bk_io io[4], *batch[4], *done[4];
	struct bk_store_queue *q;
	struct bk_store *s;
	unsigned int i;
	int fd;

	fake_reset();
	s = open_fake(&fake_driver, false);
	CHECK(bk_store_can_poll(s));
	CHECK(bk_store_queue_open(s, 2, &q) == 0);
	fd = bk_store_queue_fd(q);
	CHECK(fd >= 0);
	CHECK(!readable(fd) && !bk_store_poll(q));
	for (i = 0; i < 4; i++) {
		io[i] = (struct bk_io){ .op = BK_IO_READ, .offset = 512 * i, .len = 512,
					.iov = &iov, .iovcnt = 1 };
		batch[i] = &io[i];
	}
	/* depth 2: the third waits for a reap */
	CHECK(bk_store_submit(q, batch, 3) == 2);
	CHECK(readable(fd) && bk_store_poll(q));
	CHECK(bk_store_inflight(q) == 2);
	CHECK(bk_store_submit(q, batch + 2, 2) == -EAGAIN);
	CHECK(bk_store_reap(q, done, 1) == 1 && done[0] == &io[0]);
	CHECK(readable(fd) && bk_store_poll(q));	/* one still waits */
	CHECK(bk_store_submit(q, batch + 2, 2) == 1);
	CHECK(bk_store_reap(q, done, 4) == 2 && done[0] == &io[1] && done[1] == &io[2]);
	CHECK(!readable(fd) && !bk_store_poll(q));	/* none waits */
	CHECK(bk_store_inflight(q) == 0);
	CHECK(bk_store_reap(q, done, 4) == 0);
	CHECK(!readable(fd));
	CHECK(bk_store_submit(q, batch + 3, 1) == 1);
	CHECK(readable(fd) && bk_store_poll(q));
	CHECK(bk_store_reap(q, done, 4) == 1 && done[0] == &io[3]);
	CHECK(!readable(fd) && !bk_store_poll(q));
	for (i = 0; i < 4; i++)
		CHECK(io[i].result == 512 && strcmp(io[i].host_action, "fake") == 0);
	bk_store_queue_close(q);
	CHECK(bk_store_queue_open(s, 0, &q) == -EINVAL && q == NULL);
	bk_store_close(s);

	/* an asynchronous driver without a poll op cannot be polled */
	fake_reset();
	s = open_fake(&afake_driver, false);
	CHECK(!bk_store_can_poll(s));
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(bk_store_submit(q, batch, 1) == 1);
	CHECK(readable(bk_store_queue_fd(q)) && !bk_store_poll(q));
	CHECK(bk_store_reap(q, done, 4) == 1);
	bk_store_queue_close(q);
	bk_store_close(s);
	return 0;
}

/* ---- reap: short counts, failed flushes ---- */

static int
short_counts(const struct bk_store_driver *drv)
{
	static unsigned char two[1024] __attribute__((aligned(4096)));
	struct iovec iov = { two, 1024 };
	struct bk_io rd = { .op = BK_IO_READ, .len = 1024, .iov = &iov, .iovcnt = 1 };
	struct bk_io wr = { .op = BK_IO_WRITE, .offset = 4096, .len = 1024, .iov = &iov,
			    .iovcnt = 1 };
	struct bk_io fl = { .op = BK_IO_FLUSH };
	struct bk_io *batch[3] = { &rd, &wr, &fl };
	struct bk_store_queue *q;
	struct bk_store *s;

	fake_reset();
	fake.short_by = 512;
	s = open_fake(drv, false);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(bk_store_submit(q, batch, 3) == 3);
	CHECK(reap_all(q, 3) == 3);
	CHECK(rd.result == -EIO);
	CHECK(wr.result == -EIO);
	CHECK(fl.result == 0);
	CHECK(!bk_store_failed(s));
	/* a full count, and an error, pass unchanged */
	fake.short_by = 0;
	CHECK(bk_store_submit(q, batch, 1) == 1 && reap_all(q, 1) == 1);
	CHECK(rd.result == 1024);
	fake.short_by = 1024 + ENOSPC;	/* len - that: -ENOSPC */
	CHECK(bk_store_submit(q, batch + 1, 1) == 1 && reap_all(q, 1) == 1);
	CHECK(wr.result == -ENOSPC);
	bk_store_queue_close(q);
	bk_store_close(s);
	return 0;
}

static int
test_short_count_is_eio(void)
{
	return short_counts(&fake_driver) || short_counts(&afake_driver);
}

static int
failed_flush(const struct bk_store_driver *drv)
{
	struct bk_io fl = { .op = BK_IO_FLUSH }, *p = &fl;
	struct bk_store_queue *q, *q2;
	struct bk_store *s;

	fake_reset();
	s = open_fake(drv, false);
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	CHECK(bk_store_queue_open(s, 4, &q2) == 0);
	CHECK(!bk_store_failed(s));
	fake.flush_result = 0;
	CHECK(bk_store_submit(q, &p, 1) == 1 && reap_all(q, 1) == 1);
	CHECK(fl.result == 0 && !bk_store_failed(s));
	fake.flush_result = -EOPNOTSUPP;	/* refused: nothing was lost */
	CHECK(bk_store_submit(q, &p, 1) == 1 && reap_all(q, 1) == 1);
	CHECK(fl.result == -EOPNOTSUPP && !bk_store_failed(s));
	fake.flush_result = -EIO;		/* on the other queue */
	CHECK(bk_store_submit(q2, &p, 1) == 1 && reap_all(q2, 1) == 1);
	CHECK(fl.result == -EIO && bk_store_failed(s));
	fake.flush_result = 0;			/* sticky */
	CHECK(bk_store_submit(q, &p, 1) == 1 && reap_all(q, 1) == 1);
	CHECK(fl.result == 0 && bk_store_failed(s));
	bk_store_queue_close(q);
	bk_store_queue_close(q2);
	bk_store_close(s);

	/* any error but EOPNOTSUPP; a fresh store is not failed */
	s = open_fake(drv, false);
	CHECK(!bk_store_failed(s));
	CHECK(bk_store_queue_open(s, 4, &q) == 0);
	fake.flush_result = -ENOSPC;
	CHECK(bk_store_submit(q, &p, 1) == 1 && reap_all(q, 1) == 1);
	CHECK(bk_store_failed(s));
	bk_store_queue_close(q);
	bk_store_close(s);
	return 0;
}

static int
test_failed_flush(void)
{
	return failed_flush(&fake_driver) || failed_flush(&afake_driver);
}

/* ---- claims ---- */

static int
parse(const char *params, struct bk_params *p)
{
	struct bk_store_why why;

	return bk_params_parse(params, p, &why);
}

static int
test_claims(void)
{
	struct bk_claims reg = { NULL };
	struct bk_params file, link, phy, other, mem, missing;
	const struct bk_claim *holder;
	struct bk_claim *a, *b, *c;
	char *path = make_file("claim.img", MIB), *path2 = make_file("other.img", MIB);
	char *lpath, *params;

	assert(asprintf(&lpath, "%s/claim-link", tmpdir) > 0);
	CHECK(symlink(path, lpath) == 0);
	CHECK(parse(path, &file) == 0);
	CHECK(parse(lpath, &link) == 0);
	assert(asprintf(&params, "phy:%s", path) > 0);
	CHECK(parse(params, &phy) == 0);
	CHECK(parse(path2, &other) == 0);
	CHECK(parse("memory:1M", &mem) == 0);
	CHECK(parse("/nonexistent/blkbackd-claim", &missing) == 0);

	/* a read-write claim refuses any second vbd */
	a = bk_claim_take(&reg, &file, false, "1/51712");
	CHECK(a && !a->read_only && !a->draining && strcmp(a->owner, "1/51712") == 0);
	holder = NULL;
	CHECK(bk_claim_check(&reg, &file, false, &holder) == -EBUSY && holder == a);
	holder = NULL;
	CHECK(bk_claim_check(&reg, &file, true, &holder) == -EBUSY && holder == a);
	/* the same file through a symlink, or with libxl's phy: prefix */
	holder = NULL;
	CHECK(bk_claim_check(&reg, &link, true, &holder) == -EBUSY && holder == a);
	CHECK(bk_claim_check(&reg, &phy, false, &holder) == -EBUSY && holder == a);
	/* another file, and stores without a backing, are free */
	CHECK(bk_claim_check(&reg, &other, false, &holder) == 0 && holder == NULL);
	CHECK(bk_claim_check(&reg, &mem, false, &holder) == 0 && holder == NULL);
	CHECK(bk_claim_take(&reg, &mem, false, "2/1") == NULL);
	/* cannot identify: free (the open says why), nothing to hold */
	CHECK(bk_claim_check(&reg, &missing, false, &holder) == 0);
	CHECK(bk_claim_take(&reg, &missing, false, "2/2") == NULL);

	/* draining: wait for it, then free once released */
	a->draining = true;
	holder = NULL;
	CHECK(bk_claim_check(&reg, &link, false, &holder) == -EINPROGRESS && holder == a);
	bk_claim_release(&reg, a);
	CHECK(reg.head == NULL);
	CHECK(bk_claim_check(&reg, &file, false, &holder) == 0 && holder == NULL);

	/* read-only users share; a writer is refused by either */
	a = bk_claim_take(&reg, &file, true, "1/1");
	CHECK(a && a->read_only);
	CHECK(bk_claim_check(&reg, &link, true, &holder) == 0);
	b = bk_claim_take(&reg, &link, true, "1/2");
	CHECK(b && strcmp(a->id, b->id) == 0);
	CHECK(bk_claim_check(&reg, &file, false, &holder) == -EBUSY &&
	      (holder == a || holder == b) && holder->read_only);
	/* a connected holder is a refusal even when another one drains */
	b->draining = true;
	CHECK(bk_claim_check(&reg, &file, false, &holder) == -EBUSY && holder == a);
	a->draining = true;
	CHECK(bk_claim_check(&reg, &file, false, &holder) == -EINPROGRESS);
	CHECK(bk_claim_check(&reg, &file, true, &holder) == 0);	/* ro shares */
	c = bk_claim_take(&reg, &other, false, "3/3");
	CHECK(c && strcmp(c->id, a->id) != 0);
	bk_claim_release(&reg, b);
	bk_claim_release(&reg, NULL);
	CHECK(reg.head && bk_claim_check(&reg, &file, false, &holder) == -EINPROGRESS &&
	      holder == a);
	bk_claim_release(&reg, a);
	bk_claim_release(&reg, c);
	CHECK(reg.head == NULL);

	bk_params_free(&file);
	bk_params_free(&link);
	bk_params_free(&phy);
	bk_params_free(&other);
	bk_params_free(&mem);
	bk_params_free(&missing);
	CHECK(file.arg == NULL && file.driver == NULL);
	unlink(lpath);
	unlink(path);
	unlink(path2);
	free(lpath);
	free(path);
	free(path2);
	free(params);
	return 0;
}

/* ---- params ---- */

static int
expect_params(const char *params, const struct bk_store_driver *drv, const char *arg)
{
	struct bk_store_why why;
	struct bk_params p;

	CHECK(bk_params_parse(params, &p, &why) == 0);
	if (p.driver != drv || strcmp(p.arg, arg)) {
		fprintf(stderr, "params \"%s\": %s \"%s\", expected %s \"%s\"\n", params,
			p.driver ? p.driver->name : "?", p.arg, drv->name, arg);
		return 1;
	}
	bk_params_free(&p);
	return 0;
}

static int
expect_params_unknown(const char *params)
{
	struct bk_store_why why;
	struct bk_params p;
	char want[200];

	CHECK(bk_params_parse(params, &p, &why) == -EINVAL);
	CHECK(p.driver == NULL && p.arg == NULL);
	snprintf(want, sizeof(want), "unknown storage driver in \"%s\"", params);
	if (strcmp(why.msg, want)) {
		fprintf(stderr, "params \"%s\": why \"%s\"\n", params, why.msg);
		return 1;
	}
	return 0;
}

static int
test_params(void)
{
	const struct bk_store_driver *file = &bk_store_file_driver;

	CHECK(bk_store_lookup("file") == file);
	CHECK(bk_store_lookup("memory") == &bk_store_memory_driver);
	CHECK(bk_store_lookup("null") == &bk_store_null_driver);
	CHECK(bk_store_lookup("record") == &bk_store_record_driver);
	CHECK(bk_store_lookup("volatile") == &bk_store_volatile_driver);
	CHECK(bk_store_lookup("phy") == NULL && bk_store_lookup("nosuch") == NULL);
	return expect_params("phy:/dev/vg/disk", file, "/dev/vg/disk") ||
	       expect_params("aio:/srv/a.img", file, "/srv/a.img") ||
	       expect_params("raw:/srv/b.img", file, "/srv/b.img") ||
	       expect_params("file:/srv/c.img", file, "/srv/c.img") ||
	       expect_params("/srv/plain.img", file, "/srv/plain.img") ||
	       expect_params("relative.img", file, "relative.img") ||
	       expect_params("phy:", file, "") ||
	       expect_params("memory:1M,fail-flush", &bk_store_memory_driver, "1M,fail-flush") ||
	       expect_params("null:4G", &bk_store_null_driver, "4G") ||
	       expect_params("file:/a:b", file, "/a:b") ||
	       expect_params_unknown("bogus:/x") ||
	       expect_params_unknown("qcow2:/srv/d.qcow2") ||
	       expect_params_unknown("record:/x") ||
	       expect_params_unknown("volatile:1M") ||
	       expect_params_unknown("averyveryverylongdrivername:/x") ||
	       expect_params_unknown(":/x") ||
	       expect_params_unknown("/path/with:colon");
}

/* ---- stacks ---- */

static int
expect_stack(const char *params, const struct bk_stack_config *c, bool check_only,
	     int err, const char *msg, bool bad_arg)
{
	struct bk_store_why why;
	struct bk_store *top = (struct bk_store *)&why;
	struct bk_params p;

	CHECK(parse(params, &p) == 0);
	CHECK(bk_stack_open(&p, c, check_only, &top, &why) == err);
	bk_params_free(&p);
	CHECK(top == NULL);
	if (strcmp(why.msg, msg) || why.bad_arg != bad_arg) {
		fprintf(stderr, "params \"%s\": why \"%s\" (bad_arg %d), expected \"%s\"\n",
			params, why.msg, why.bad_arg, msg);
		return 1;
	}
	return 0;
}

static int
test_stack_messages(void)
{
	struct bk_stack_config c = { 0 };
	char *empty = make_file("empty.img", 0), *tiny = make_file("tiny.img", 511);
	char *dir, *missing, *m1, *m2, *m3, *m4, *rec;
	bool zero = access("/dev/zero", R_OK | W_OK) == 0;
	int rc;

	assert(asprintf(&dir, "%s", tmpdir) > 0);
	assert(asprintf(&missing, "%s/missing", tmpdir) > 0);
	assert(asprintf(&m1, "cannot open file store \"%s\": No such file or directory",
			missing) > 0);
	assert(asprintf(&m2, "file store \"%s\" is empty (0 bytes): nothing to serve",
			empty) > 0);
	assert(asprintf(&m3, "file store \"%s\" is empty (0 bytes): nothing to serve",
			tiny) > 0);
	assert(asprintf(&m4, "cannot open file store \"%s\": Is a directory", dir) > 0);
	log_capture();
	rc = expect_stack("memory:abc", &c, true, -EINVAL,
			  "bad size \"abc\" for driver memory (bytes, or with K/M/G/T)", true) ||
	     expect_stack("memory:", &c, true, -EINVAL,
			  "bad size \"\" for driver memory (bytes, or with K/M/G/T)", true) ||
	     expect_stack("null:1M,fast", &c, true, -EINVAL,
			  "unknown option \"fast\" for driver null in \"1M,fast\"", true) ||
	     expect_stack("memory:1M,bogus=1", &c, true, -EINVAL,
			  "unknown option \"bogus=1\" for driver memory in \"1M,bogus=1\"",
			  true) ||
	     expect_stack("memory:1M,no-flush,fua=nonsense-ok,delay=3", &c, true, -EINVAL,
			  "unknown option \"delay=3\" for driver memory in "
			  "\"1M,no-flush,fua=nonsense-ok,delay=3\"", true) ||
	     expect_stack("memory:0", &c, true, -EINVAL,
			  "cannot open memory store \"0\": size 0 is not a positive multiple "
			  "of 512", false) ||
	     expect_stack("null:1000", &c, false, -EINVAL,
			  "cannot open null store \"1000\": size 1000 is not a positive "
			  "multiple of 512", false) ||
	     expect_stack("memory:1M,delay-ms=-5", &c, true, -EINVAL,
			  "cannot open memory store \"1M,delay-ms=-5\": delay-ms=\"-5\" is not "
			  "a number of milliseconds in 0..10000", false) ||
	     expect_stack("memory:1M,fua=bogus", &c, false, -EINVAL,
			  "cannot open memory store \"1M,fua=bogus\": fua=\"bogus\" is not one "
			  "of none, emulated, native", false) ||
	     expect_stack(missing, &c, true, -ENOENT, m1, false) ||
	     expect_stack(empty, &c, true, -EINVAL, m2, false) ||
	     expect_stack(tiny, &c, false, -EINVAL, m3, false) ||
	     expect_stack(dir, &c, true, -EISDIR, m4, false) ||
	     (zero && expect_stack("/dev/zero", &c, true, -EINVAL,
				   "cannot open file store \"/dev/zero\": neither a regular "
				   "file nor a block device", false));
	CHECK(log_count("memory store: delay-ms=\"-5\" is not a number of milliseconds "
			"in 0..10000") == 1);
	if (rc)
		return rc;

	/* --record into a directory that is not there */
	assert(asprintf(&rec, "%s/nodir/rec.log", tmpdir) > 0);
	c.record_path = rec;
	log_capture();
	rc = expect_stack("memory:1M", &c, false, -ENOENT,
			  "cannot stack the record store: No such file or directory", false);
	log_count("");
	/* check_only opens the base only: the record log is not touched */
	if (!rc)
		rc = expect_stack("memory:1M", &c, true, 0, "", false);
	unlink(empty);
	unlink(tiny);
	free(empty);
	free(tiny);
	free(dir);
	free(missing);
	free(m1);
	free(m2);
	free(m3);
	free(m4);
	free(rec);
	return rc;
}

/* volatile(record(memory)): the layers, their features, the cut. */
static int
test_stack_layers(void)
{
	struct bk_stack_config c = { .read_only = false };
	struct bk_store_why why;
	struct bk_params p;
	struct bk_store *top;
	const struct bk_store_features *f;
	char *rec;
	struct stat st;
	struct iovec iov = { buf, 4096 };
	struct bk_io wr = { .op = BK_IO_WRITE, .flags = BK_IO_FUA, .len = 4096, .iov = &iov,
			    .iovcnt = 1 };
	struct bk_io *p1 = &wr;
	struct bk_store_queue *q;

	CHECK(parse("memory:1M,fua=none,no-discard", &p) == 0);
	CHECK(bk_stack_open(&p, &c, false, &top, &why) == 0);
	CHECK(strcmp(bk_store_name(top), "memory") == 0);
	f = bk_store_features(top);
	CHECK(f->fua == BK_FUA_NONE && !f->can_discard && !f->read_only);
	bk_stack_close(top);

	assert(asprintf(&rec, "%s/rec.log", tmpdir) > 0);
	c.record_path = rec;
	c.volatile_cache = true;
	log_capture();
	CHECK(bk_stack_open(&p, &c, false, &top, &why) == 0);
	CHECK(strcmp(bk_store_name(top), "volatile") == 0);
	f = bk_store_features(top);
	/* the cache honours FUA whatever is below */
	CHECK(f->size == MIB && f->writeback && f->can_flush && f->fua == BK_FUA_NATIVE);
	CHECK(!f->can_discard);
	CHECK(stat(rec, &st) == 0 && st.st_size > 0);
	CHECK(bk_store_queue_open(top, 4, &q) == 0);
	CHECK(bk_store_submit(q, &p1, 1) == 1 && reap_all(q, 1) == 1 && wr.result == 4096);
	bk_store_queue_close(q);
	bk_stack_power_cut(top);
	bk_stack_power_cut(NULL);
	bk_stack_close(top);
	bk_stack_close(NULL);
	CHECK(log_count("power cut (seed") == 1);

	/* read-only all the way up */
	c.read_only = true;
	c.volatile_cache = false;
	CHECK(bk_stack_open(&p, &c, false, &top, &why) == 0);
	CHECK(strcmp(bk_store_name(top), "record") == 0 && bk_store_features(top)->read_only);
	bk_stack_close(top);
	bk_params_free(&p);
	unlink(rec);
	free(rec);
	return 0;
}

/* bk_store_parse_sized, bk_parse_size and the option helpers. */
static int
test_parse_helpers(void)
{
	static const char *const known[] = { "a", "bee", NULL };
	struct bk_store_why why = { .msg = "" };
	struct bk_store_config cfg = { .why = &why };
	const char *opts;
	uint64_t v;
	char b[8];

	CHECK(bk_parse_size("512", &v) == 0 && v == 512);
	CHECK(bk_parse_size("4k", &v) == 0 && v == 4096);
	CHECK(bk_parse_size("3M", &v) == 0 && v == 3u * MIB);
	CHECK(bk_parse_size("2G", &v) == 0 && v == 2ull << 30);
	CHECK(bk_parse_size("1T", &v) == 0 && v == 1ull << 40);
	CHECK(bk_parse_size("", &v) == -EINVAL && bk_parse_size("-1", &v) == -EINVAL);
	CHECK(bk_parse_size("1X", &v) == -EINVAL && bk_parse_size("1MB", &v) == -EINVAL);
	CHECK(bk_parse_size("16777216T", &v) == -EINVAL);

	cfg.arg = "8K,a,bee=3";
	CHECK(bk_store_parse_sized(&cfg, "t", known, &v, &opts) == 0);
	CHECK(v == 8192 && strcmp(opts, "a,bee=3") == 0 && why.msg[0] == '\0');
	CHECK(bk_opt_has(opts, "a") && !bk_opt_has(opts, "bee") && !bk_opt_has(opts, "b"));
	CHECK(bk_opt_get(opts, "bee", b, sizeof(b)) == b && strcmp(b, "3") == 0);
	CHECK(bk_opt_get(opts, "a", b, sizeof(b)) == NULL);
	CHECK(bk_opt_get("bee=12345678", "bee", b, sizeof(b)) == b && b[0] == '\0');
	cfg.arg = "1M";
	CHECK(bk_store_parse_sized(&cfg, "t", known, &v, &opts) == 0);
	CHECK(v == MIB && opts == NULL);
	cfg.arg = "1M,";
	CHECK(bk_store_parse_sized(&cfg, "t", known, &v, &opts) == 0 && strcmp(opts, "") == 0);
	cfg.arg = "1M,a,,bee";
	CHECK(bk_store_parse_sized(&cfg, "t", known, &v, &opts) == -EINVAL);
	CHECK(strcmp(why.msg, "unknown option \"\" for driver t in \"1M,a,,bee\"") == 0);
	CHECK(why.bad_arg);
	memset(&why, 0, sizeof(why));
	cfg.arg = "1M,be";
	CHECK(bk_store_parse_sized(&cfg, "t", known, &v, &opts) == -EINVAL);
	CHECK(strcmp(why.msg, "unknown option \"be\" for driver t in \"1M,be\"") == 0);
	memset(&why, 0, sizeof(why));
	cfg.arg = "12Q,a";
	CHECK(bk_store_parse_sized(&cfg, "t", known, &v, &opts) == -EINVAL);
	CHECK(strcmp(why.msg, "bad size \"12Q\" for driver t (bytes, or with K/M/G/T)") == 0);
	CHECK(why.bad_arg);
	memset(&why, 0, sizeof(why));
	cfg.arg = "1M,a";
	CHECK(bk_store_parse_sized(&cfg, "t", NULL, &v, &opts) == -EINVAL);
	CHECK(strcmp(why.msg, "unknown option \"a\" for driver t in \"1M,a\"") == 0);

	/* bk_store_fail: logged with who, the reason alone in why */
	memset(&why, 0, sizeof(why));
	log_capture();
	errno = ENOENT;
	CHECK(bk_store_fail(&cfg, -EIO, "x store", "reason %d: %m", 7) == -EIO);
	CHECK(errno == ENOENT);
	CHECK(log_count("error: x store: reason 7: No such file or directory") == 1);
	CHECK(strcmp(why.msg, "reason 7: No such file or directory") == 0 && !why.bad_arg);
	return 0;
}

/* ---- the file store on each engine ---- */

/* Submit n ios, reap them all; 0 or 1 (a failed check). */
static int
file_io(struct bk_store_queue *q, struct bk_io **ios, unsigned int n)
{
	CHECK(bk_store_submit(q, ios, n) == (int)n);
	CHECK(reap_all(q, n) == (int)n);
	return 0;
}

static int
file_engine(enum bk_io_engine e, const char *name)
{
	static unsigned char wbuf[8][4096] __attribute__((aligned(4096)));
	static unsigned char rbuf[8][4096] __attribute__((aligned(4096)));
	struct bk_store_config cfg = { .io_engine = e };
	struct bk_store_why why;
	struct iovec wv[8], rv[8];
	struct bk_io wr[8], rd[8], fl = { .op = BK_IO_FLUSH }, *b[8], *p;
	struct bk_store_queue *q;
	struct bk_store *s;
	const struct bk_store_features *f;
	unsigned int i;
	char *path = make_file("engine.img", 64 * 4096);
	uint64_t size;
	int fd, rc;

	cfg.arg = path;
	CHECK(bk_store_open(&bk_store_file_driver, &cfg, &s, &why) == 0);
	f = bk_store_features(s);
	CHECK(f->engine && strcmp(f->engine, name) == 0);
	CHECK(strcmp(bk_stack_engine(s), name) == 0);
	CHECK(f->batch_submit == (e == BK_IO_ENGINE_URING));
	CHECK(bk_store_queue_open(s, 8, &q) == 0);
	/* eight writes in one submit, the last with FUA where native */
	for (i = 0; i < 8; i++) {
		memset(wbuf[i], 'a' + (int)i, sizeof(wbuf[i]));
		wv[i] = (struct iovec){ wbuf[i], 4096 };
		wr[i] = (struct bk_io){ .op = BK_IO_WRITE, .offset = (uint64_t)i * 8192,
					.len = 4096, .iov = &wv[i], .iovcnt = 1 };
		if (i == 7 && f->fua == BK_FUA_NATIVE)
			wr[i].flags = BK_IO_FUA;
		b[i] = &wr[i];
	}
	CHECK(file_io(q, b, 8) == 0);
	for (i = 0; i < 8; i++)
		CHECK(wr[i].result == 4096);
	CHECK(strcmp(wr[0].host_action, "pwritev") == 0);
	if (f->fua == BK_FUA_NATIVE)
		CHECK(strcmp(wr[7].host_action, "pwritev+RWF_DSYNC") == 0);
	p = &fl;
	CHECK(file_io(q, &p, 1) == 0);
	CHECK(fl.result == 0 && strcmp(fl.host_action, "fdatasync") == 0);
	/* read back, in one submit, two iovecs each */
	for (i = 0; i < 8; i++) {
		memset(rbuf[i], 0, sizeof(rbuf[i]));
		rv[i] = (struct iovec){ rbuf[i], 4096 };
		rd[i] = (struct bk_io){ .op = BK_IO_READ, .offset = (uint64_t)i * 8192,
					.len = 4096, .iov = &rv[i], .iovcnt = 1 };
		b[i] = &rd[i];
	}
	CHECK(file_io(q, b, 8) == 0);
	for (i = 0; i < 8; i++)
		CHECK(rd[i].result == 4096 && memcmp(rbuf[i], wbuf[i], 4096) == 0);
	/* the file shrinks behind the store's back: a read across the new
	 * end completes short, which is -EIO, never a short count */
	fd = open(path, O_RDWR);
	CHECK(fd >= 0 && ftruncate(fd, 60 * 4096 + 2048) == 0);
	close(fd);
	rd[0].offset = 60 * 4096;
	p = &rd[0];
	CHECK(file_io(q, &p, 1) == 0);
	CHECK(rd[0].result == -EIO && strcmp(rd[0].host_action, "preadv") == 0);
	/* once the size was read again, I/O past it is refused before the
	 * kernel sees it (host action "past-end") */
	CHECK(bk_store_size(s, &size) == 0 && size == 60 * 4096 + 2048);
	rd[0].offset = 61 * 4096;
	CHECK(file_io(q, &p, 1) == 0);
	CHECK(rd[0].result == -EIO && strcmp(rd[0].host_action, "past-end") == 0);
	/* the kernel's error is the result: a write at or past
	 * RLIMIT_FSIZE fails with -EFBIG (SIGXFSZ ignored), inside the
	 * file too (generic_write_check_limits) */
	{
		struct rlimit old, lim;

		CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
		lim = old;
		lim.rlim_cur = 32 * 4096;
		signal(SIGXFSZ, SIG_IGN);
		CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		wr[0].offset = 40 * 4096;
		wr[0].flags = 0;
		p = &wr[0];
		rc = file_io(q, &p, 1);
		CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
		signal(SIGXFSZ, SIG_DFL);
		CHECK(rc == 0 && wr[0].result == -EFBIG);
	}
	CHECK(bk_store_inflight(q) == 0);
	bk_store_queue_close(q);
	bk_store_close(s);
	unlink(path);
	free(path);
	return 0;
}

static int
test_file_engines(void)
{
	struct bk_store_config cfg = { .io_engine = BK_IO_ENGINE_URING };
	struct bk_store_why why;
	struct bk_store *s;
	enum bk_io_engine e;
	char *path;

	CHECK(bk_io_engine_parse("auto", &e) == 0 && e == BK_IO_ENGINE_AUTO);
	CHECK(bk_io_engine_parse("libaio", &e) == 0 && e == BK_IO_ENGINE_LIBAIO);
	CHECK(bk_io_engine_parse("io_uring", &e) == 0 && e == BK_IO_ENGINE_URING);
	CHECK(bk_io_engine_parse("uring", &e) == -EINVAL);
	if (file_engine(BK_IO_ENGINE_LIBAIO, "libaio") ||
	    file_engine(BK_IO_ENGINE_URING, "io_uring"))
		return 1;
	/* auto, where the kernel has io_uring (this test needs one that does) */
	cfg.io_engine = BK_IO_ENGINE_AUTO;
	path = make_file("auto.img", MIB);
	cfg.arg = path;
	CHECK(bk_store_open(&bk_store_file_driver, &cfg, &s, &why) == 0);
	CHECK(strcmp(bk_store_features(s)->engine, "io_uring") == 0);
	bk_store_close(s);
	unlink(path);
	free(path);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct { const char *name; int (*fn)(void); } tests[] = {
		{ "violations", test_violations },
		{ "violation_logged_once_per_queue", test_violation_logged_once_per_queue },
		{ "open_checks", test_open_checks },
		{ "default_queue", test_default_queue },
		{ "short_count_is_eio", test_short_count_is_eio },
		{ "failed_flush", test_failed_flush },
		{ "claims", test_claims },
		{ "params", test_params },
		{ "stack_messages", test_stack_messages },
		{ "stack_layers", test_stack_layers },
		{ "parse_helpers", test_parse_helpers },
		{ "file_engines", test_file_engines },
	};
	int failed = 0;
	size_t i;

	(void)argc;
	log_init(argv[0]);
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		int rc = tests[i].fn();

		if (saved_stderr >= 0)
			log_count("");	/* a check failed while capturing */
		printf("%s: %s\n", tests[i].name, rc ? "FAIL" : "ok");
		failed |= rc;
	}
	rmdir(tmpdir);
	return failed ? 1 : 0;
}
