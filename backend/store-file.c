/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-file.c: the "file" storage driver: a regular file or a block
 * device, asynchronous I/O through io_uring or libaio (store.h).
 *
 * The engine is chosen per store at open (cfg->io_engine): io_uring
 * when asked for or, with "auto", when the kernel takes it (probed
 * once per process: io_uring_setup works and supports READV, WRITEV
 * and FSYNC; the choice and its reason are logged once); otherwise
 * libaio.  An explicit io_uring that the kernel refuses fails the open.
 *   io_uring  READ/WRITE are READV/WRITEV SQEs (RWF_DSYNC in rw_flags
 *             for FUA), FLUSH an FSYNC SQE with IORING_FSYNC_DATASYNC.
 *             A submit call prepares one SQE per I/O and enters the
 *             kernel once (io_uring_submit); completions are read from
 *             the CQ ring in userspace.  How the queue's thread
 *             learns of completions (uring_wait_mode, said in the
 *             engine's log line): by default, where the kernel has
 *             multishot poll (5.13), the queue's fd is the ring's own,
 *             readable while a CQE waits there, so a completion taken
 *             right after its submit leaves nothing to wake for; the
 *             worker's eventfd is a multishot POLL_ADD in the ring.
 *             Otherwise (or BLKBACKD_URING_WAIT=eventfd) the queue's
 *             eventfd is registered with the ring
 *             (io_uring_register_eventfd), so the caller's epoll sees
 *             completions as it sees libaio's.  BLKBACKD_URING_WAIT=1
 *             (not the default): the queue thread sleeps in our ring
 *             (queue_wait_setup/queue_wait), its event channel and stop
 *             fds and our worker's eventfd multishot POLL_ADDs there.
 *             No SQPOLL: nothing spins on an idle disk.
 *   libaio    one io_submit per submit call; completions read from the
 *             kernel's aio ring in userspace (ring_getevents).
 * Both map results the same way: res < 0 is the result, a short
 * READ/WRITE is -EIO, a FLUSH is 0.  An SQE or iocb points at the
 * bk_io and its iovec, which the caller keeps until reap hands the
 * bk_io back (store.h); queue_close waits for every completion.
 *
 * Its arg is the path.  Open: O_DIRECT (a clear log line and buffered
 * I/O where the file system refuses it), O_DSYNC in writethrough cache
 * mode.  Probed once at open into struct bk_store_features:
 *   size           fstat, or BLKGETSIZE64 for a block device
 *   sector sizes   BLKSSZGET / BLKPBSZGET; 512 / st_blksize for files
 *   can_flush      fdatasync() succeeds on the fd
 *   writeback      not with cache=writethrough, nor on a block device
 *                  whose queue/write_cache says "write through"
 *   fua            NATIVE when the kernel accepts RWF_DSYNC on an aio
 *                  write (probed with a zero-length pwritev2), else
 *                  EMULATED (write, then fdatasync) when it can flush
 *   discard        files: fallocate(PUNCH_HOLE|KEEP_SIZE) past EOF
 *                  succeeds; block devices: queue/discard_max_bytes > 0
 *                  (BLKSECDISCARD: never advertised, not probed safely)
 * FLUSH is an IOCB_CMD_FDSYNC iocb where the kernel takes one (probed
 * once per store), else done by the queue's worker thread (logged once).
 * DISCARD always goes to the worker thread (fallocate/ioctl block).
 * identify: a block device by its st_rdev, a file by st_dev and st_ino
 * (the same backing through any path or symlink).
 * size: fstat (st_size; a file with no link left is gone: -ENOENT), or
 * BLKGETSIZE64; the control thread asks it periodically.  The last size
 * seen bounds READ and WRITE from then on: past it they fail with -EIO
 * (host action "past-end") instead of reading short or writing the file
 * back to its old size, after the backing shrank.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libaio.h>
#include <liburing.h>
#include <linux/fs.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#ifdef HAVE_VALGRIND_MEMCHECK_H
#include <valgrind/memcheck.h>
#endif

#include "barrier.h"
#include "compiler.h"
#include "log.h"
#include "store.h"

#ifndef RWF_DSYNC
#define RWF_DSYNC 0x00000002
#endif

struct file_store {
	int fd;
	char *path;
	bool is_blk;
	bool blk_no_cache;	/* a block device whose queue has no write cache */
	bool uring;		/* io_uring, else libaio */
	int uring_mode;		/* io_uring: enum uring_wait_mode */
	bool fdsync_aio;	/* the engine's fdatasync (FDSYNC iocb, FSYNC SQE) works */
	bool rwf_dsync;		/* RWF_DSYNC works on the engine's writes */
	bool writethrough;
	struct bk_store_features f;
	uint64_t end;		/* bytes: the size last seen (atomic) */
};

struct file_worker_item {
	struct bk_io *io;
	struct file_worker_item *next;
};

struct file_queue {
	struct file_store *s;
	bool uring;			/* s->uring: ring below, else ctx */
	struct io_uring ring;
	io_context_t ctx;
	int efd;			/* io_set_eventfd / registered eventfd + worker completions */
	unsigned int depth;
	struct iocb *iocbs;		/* depth entries */
	struct iocb **free_iocbs;
	unsigned int nr_free;
	struct io_event *events;

	/* Completed without an iocb (submit errors, worker). */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct bk_io **done;		/* ring of depth */
	unsigned int done_head, done_count;
	struct bk_io **work;		/* ring of depth, for the worker */
	unsigned int work_head, work_count;
	bool worker_running, worker_stop;
	pthread_t worker;
	unsigned int aio_inflight;	/* iocbs or SQEs in the kernel */
	bool edge;			/* efd polled edge-triggered: never read */
	/*
	 * UW_RINGFD: the caller polls the ring's fd (file_queue_fd); the
	 * efd, never read, is wfd[0] (nwfd 1), a multishot poll armed in
	 * the ring by the queue's own thread (ringfd_arm) so that what
	 * writes it (the worker, queue_fail) makes a CQE; waits stays
	 * false.
	 */
	bool ringfd;
	bool ringfd_gave_up;		/* logged: the efd's poll failed WAIT_FAIL_MAX times */

	/*
	 * The queue thread sleeps in our ring (file_queue_wait_setup): no
	 * eventfd registered with the ring; wfd[0..nwfd-2] are the
	 * caller's fds, wfd[nwfd-1] our efd (the worker's completions),
	 * each a multishot POLL_ADD whose CQEs carry WAIT_TAG(i) and are
	 * taken wherever the CQ is walked (wait_cqe).
	 */
	bool waits;
	unsigned int nwfd;
	int wfd[BK_STORE_WAIT_FDS + 1];
	bool armed[BK_STORE_WAIT_FDS + 1];	/* its poll is in the kernel */
	unsigned int wfail[BK_STORE_WAIT_FDS + 1];	/* failed arms in a row */
	unsigned int fired;		/* the caller's fds seen readable (bits) */
	unsigned int enter_fail;	/* EAGAIN/EBUSY from the wait's enter in a row */
};

/* CQE user_data of the wait's polls: small numbers, never a bk_io's address. */
#define WAIT_TAG(i)	((uint64_t)(i) + 1)
#define WAIT_TAG_REMOVE	((uint64_t)BK_STORE_WAIT_FDS + 2)	/* a POLL_REMOVE's own CQE */
#define IS_WAIT_TAG(u)	((u) >= 1 && (u) <= WAIT_TAG_REMOVE)
/* A poll that fails this many times in a row without an event: the
 * wait gives up (no busy loop re-arming a poll the kernel refuses). */
#define WAIT_FAIL_MAX	3

/* The first line of a block device's queue/ATTR in sysfs into buf. */
static int
read_sysfs_line(dev_t rdev, const char *attr, char *buf, int len)
{
	char path[128];
	FILE *fp;
	int rc = -ENOENT;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s",
		 major(rdev), minor(rdev), attr);
	fp = fopen(path, "re");
	if (!fp) {
		/* a partition: its queue/ is the parent's */
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/../queue/%s",
			 major(rdev), minor(rdev), attr);
		fp = fopen(path, "re");
	}
	if (!fp)
		return -errno;
	if (fgets(buf, len, fp))
		rc = 0;
	fclose(fp);
	return rc;
}

static int
read_sysfs_u64(dev_t rdev, const char *attr, uint64_t *out)
{
	char buf[64];
	unsigned long long v;

	if (read_sysfs_line(rdev, attr, buf, sizeof(buf)) < 0 || sscanf(buf, "%llu", &v) != 1)
		return -ENOENT;
	*out = v;
	return 0;
}

/* One aio round trip for the probes: submit, wait up to 10 s. */
static int
probe_aio(int fd, struct iocb *cb)
{
	io_context_t ctx = 0;
	struct iocb *cbs[1] = { cb };
	struct io_event ev;
	struct timespec ts = { .tv_sec = 10 };
	int rc;

	rc = io_setup(1, &ctx);
	if (rc < 0)
		return rc;
	rc = io_submit(ctx, 1, cbs);
	if (rc == 1) {
		rc = io_getevents(ctx, 1, 1, &ev, &ts);
		rc = rc == 1 ? (int)(long)ev.res : -ETIMEDOUT;
	} else if (rc == 0) {
		rc = -EAGAIN;
	}
	io_destroy(ctx);
	return rc;
}

/*
 * fn(arg) on a thread of its own, ended before this returns: fn's value,
 * or -errno (logged) when no thread could be made.
 *
 * Every io_uring made here (the probes' and the queues' rings) is made,
 * and a probe's used, this way, never by the caller: the control
 * thread, which serves every vbd's xenstore.  Linux counts each task
 * that made or used a ring as one of the ring's, and when the ring goes
 * away (io_ring_exit_work, within some 50 ms of its last close) queues task
 * work on each such task still alive.  That is no signal, but it
 * interrupts what the task is doing: its epoll_wait returns EINTR, and
 * a fallocate on tmpfs fails with it (Linux 6.1): once the recovery
 * record of a vbd's second queue, under /run, just after the first
 * queue's open had run a probe.  A thread that has ended gets nothing;
 * a queue's ring is then the queue thread's alone (it submits).
 */
struct own_thread {
	int (*fn)(void *);
	void *arg;
	int rc;
};

static void *
own_thread_main(void *arg)
{
	struct own_thread *t = arg;

	t->rc = t->fn(t->arg);
	return NULL;
}

static int
run_on_own_thread(int (*fn)(void *), void *arg)
{
	struct own_thread t = { .fn = fn, .arg = arg };
	pthread_t th;
	int rc;

	rc = pthread_create(&th, NULL, own_thread_main, &t);
	if (rc) {
		log_error("io_uring: no thread to make a ring on: %s", strerror(rc));
		return -rc;
	}
	pthread_join(th, NULL);
	return t.rc;
}

/* One io_uring round trip for the probes: submit, wait up to 10 s. */
static int
probe_uring(int fd, bool fsync)
{
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	struct iovec iov = { .iov_base = NULL, .iov_len = 0 };
	struct __kernel_timespec ts = { .tv_sec = 10 };
	int rc;

	rc = io_uring_queue_init(2, &ring, 0);
	if (rc < 0)
		return rc;
	sqe = io_uring_get_sqe(&ring);
	if (fsync) {
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	} else {
		io_uring_prep_writev(sqe, fd, &iov, 1, 0);
		sqe->rw_flags = RWF_DSYNC;
	}
	rc = io_uring_submit(&ring);
	if (rc == 1) {
		rc = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
		if (rc == 0) {
			rc = cqe->res < 0 ? cqe->res : 0;
			io_uring_cqe_seen(&ring, cqe);
		} else if (rc == -ETIME) {
			rc = -ETIMEDOUT;
		}
	} else if (rc >= 0) {
		rc = -EAGAIN;
	}
	io_uring_queue_exit(&ring);
	return rc;
}

/* A store's io_uring probes at open, run together on one thread of their
 * own (run_on_own_thread): each result 0 or -errno. */
struct uring_open_probes {
	int fd;
	bool fsync, dsync;	/* which to try: FSYNC, a WRITEV with RWF_DSYNC */
	int fsync_rc, dsync_rc;
};

static int
uring_open_probes(void *arg)
{
	struct uring_open_probes *p = arg;

	if (p->fsync)
		p->fsync_rc = probe_uring(p->fd, true);
	if (p->dsync)
		p->dsync_rc = probe_uring(p->fd, false);
	return 0;
}

/*
 * Does this kernel give us io_uring with the operations the store
 * needs?  Asked once per process (under uring_lock: vbds open their
 * stores on threads of their own, vbd-backing.c); the answer and its
 * reason are kept, and never change once set.  BLKBACKD_TEST_NO_IO_URING (tests
 * only) makes it say no, as a kernel without io_uring does.
 */
static pthread_mutex_t uring_lock = PTHREAD_MUTEX_INITIALIZER;
static int uring_avail;		/* 0: not asked yet; 1: yes; -errno: no */
static char uring_why[160];	/* why not, or what was checked */

static int
uring_ops_probe(void *unused)
{
	static const struct {
		int op;
		const char *name;
	} ops[] = {
		{ IORING_OP_READV, "READV" },
		{ IORING_OP_WRITEV, "WRITEV" },
		{ IORING_OP_FSYNC, "FSYNC" },
	};
	struct io_uring ring;
	struct io_uring_probe *p;
	unsigned int i;
	int rc;

	(void)unused;
	rc = io_uring_queue_init(2, &ring, 0);
	if (rc < 0) {
		snprintf(uring_why, sizeof(uring_why), "io_uring_setup: %s", strerror(-rc));
		return rc;
	}
	p = io_uring_get_probe_ring(&ring);
	if (!p) {
		snprintf(uring_why, sizeof(uring_why), "IORING_REGISTER_PROBE refused "
			 "(a kernel older than 5.6)");
		rc = -EOPNOTSUPP;
	} else {
		rc = 1;
		snprintf(uring_why, sizeof(uring_why), "io_uring_setup works and takes "
			 "READV, WRITEV and FSYNC");
		for (i = 0; i < ARRAY_SIZE(ops); i++)
			if (!io_uring_opcode_supported(p, ops[i].op)) {
				snprintf(uring_why, sizeof(uring_why), "the kernel's io_uring "
					 "has no %s operation", ops[i].name);
				rc = -EOPNOTSUPP;
				break;
			}
		io_uring_free_probe(p);
	}
	io_uring_queue_exit(&ring);
	return rc;
}

static int
uring_available_locked(void)
{
	const char *env = getenv("BLKBACKD_TEST_NO_IO_URING");

	if (uring_avail)
		return uring_avail;
	if (env && *env) {
		snprintf(uring_why, sizeof(uring_why), "io_uring_setup: %s "
			 "(BLKBACKD_TEST_NO_IO_URING is set)", strerror(ENOSYS));
		return uring_avail = -ENOSYS;
	}
	uring_avail = run_on_own_thread(uring_ops_probe, NULL);
	if (uring_avail < 0 && !uring_why[0])
		snprintf(uring_why, sizeof(uring_why), "no thread for the probe: %s",
			 strerror(-uring_avail));
	return uring_avail;
}

/*
 * How an io_uring queue's thread learns that I/O completed (the wait
 * mode), chosen once per process after uring_available() said yes; the
 * engine's log line ends with which and why:
 *   UW_RINGFD   the default where the kernel has multishot poll (5.13):
 *               the caller polls the ring's own fd, readable while the
 *               CQ holds a CQE (level-triggered), so a completion reaped
 *               right after its submit leaves nothing to wake for.  The
 *               worker eventfd reaches the CQ through a multishot poll.
 *   UW_EVENTFD  an older kernel, or BLKBACKD_URING_WAIT=eventfd: the
 *               queue's eventfd is registered with the ring, which
 *               writes it for every CQE, reaped or not, so a thread that
 *               reaped its completion after the submit comes back from
 *               its next epoll_wait once for nothing.
 *   UW_ENTER    BLKBACKD_URING_WAIT=1: the queue thread sleeps in
 *               io_uring_enter with its fds as multishot POLL_ADDs in the
 *               ring (file_queue_wait).  Not the default: its nested-Xen
 *               A/B did not show it faster (BENCHMARKS.md "io_uring
 *               queues that sleep in their ring").
 * Multishot poll is probed with an eventfd written once: its poll must
 * complete with POLLIN and IORING_CQE_F_MORE (an older kernel fails it
 * with -EINVAL).
 */
enum uring_wait_mode { UW_EVENTFD, UW_RINGFD, UW_ENTER };

static int uring_mode = -1;		/* enum uring_wait_mode; -1: not chosen yet */
static char uring_mode_why[160];

struct multishot_args {
	char *why;
	size_t len;
};

/* Multishot poll works here: 1, or -errno with why[] saying why not. */
static int
uring_multishot_probe_fn(void *arg)
{
	const struct multishot_args *a = arg;
	char *why = a->why;
	size_t len = a->len;
	struct __kernel_timespec ts = { .tv_sec = 10 };
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct io_uring_cqe *cqe;
	uint64_t one = 1;
	int efd, rc;

	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (efd < 0) {
		rc = -errno;
		snprintf(why, len, "eventfd: %s", strerror(-rc));
		return rc;
	}
	rc = io_uring_queue_init(2, &ring, 0);
	if (rc < 0) {
		close(efd);
		snprintf(why, len, "io_uring_setup: %s", strerror(-rc));
		return rc;
	}
	sqe = io_uring_get_sqe(&ring);
	io_uring_prep_poll_multishot(sqe, efd, POLLIN);
	rc = io_uring_submit(&ring);
	if (rc == 1 && write(efd, &one, sizeof(one)) == sizeof(one))
		rc = io_uring_wait_cqe_timeout(&ring, &cqe, &ts);
	else if (rc >= 0)
		rc = -EIO;
	if (rc == 0) {
		if (cqe->res > 0 && (cqe->res & POLLIN) && (cqe->flags & IORING_CQE_F_MORE)) {
			rc = 1;
		} else {
			rc = cqe->res < 0 ? cqe->res : -EOPNOTSUPP;
			snprintf(why, len, "multishot poll %s%s", cqe->res < 0 ?
				 "refused: " : "not kept armed", cqe->res < 0 ?
				 strerror(-cqe->res) : "");
		}
		io_uring_cqe_seen(&ring, cqe);
	} else {
		snprintf(why, len, "multishot poll probe: %s", strerror(-rc));
	}
	io_uring_queue_exit(&ring);
	close(efd);
	return rc;
}

static int
uring_multishot_probe(char *why, size_t len)
{
	struct multishot_args a = { .why = why, .len = len };
	int rc = run_on_own_thread(uring_multishot_probe_fn, &a);

	if (rc < 0 && !why[0])
		snprintf(why, len, "no thread for the probe: %s", strerror(-rc));
	return rc;
}

static enum uring_wait_mode
uring_wait_mode_locked(void)
{
	const char *env = getenv("BLKBACKD_URING_WAIT");
	char why[120] = "";
	bool enter = env && (!strcmp(env, "1") || !strcmp(env, "enter"));
	const char *ignored = "";

	if (uring_mode >= 0)
		return uring_mode;
	if (env && *env && !enter && strcmp(env, "eventfd") && strcmp(env, "ring"))
		ignored = " (BLKBACKD_URING_WAIT's value is none of 1, enter, ring, "
			  "eventfd: ignored)";
	if (env && !strcmp(env, "eventfd")) {
		snprintf(uring_mode_why, sizeof(uring_mode_why), "queue threads wait in "
			 "epoll_wait on an eventfd the ring writes per completion "
			 "(BLKBACKD_URING_WAIT=eventfd)");
		return uring_mode = UW_EVENTFD;
	}
	if (uring_multishot_probe(why, sizeof(why)) < 0) {
		snprintf(uring_mode_why, sizeof(uring_mode_why), "queue threads wait in "
			 "epoll_wait on an eventfd the ring writes per completion: %s%s",
			 why, ignored);
		return uring_mode = UW_EVENTFD;
	}
#ifdef HAVE_VALGRIND_MEMCHECK_H
	/* valgrind (3.19 here) runs one thread at a time and does not let
	 * the others run while one sleeps in io_uring_enter: the control
	 * thread would stop with the first queue that sleeps */
	if (enter && RUNNING_ON_VALGRIND) {
		snprintf(uring_mode_why, sizeof(uring_mode_why), "queue threads wait "
			 "in epoll_wait on the ring's fd: under valgrind, which runs no "
			 "other thread while one sleeps in io_uring_enter");
		return uring_mode = UW_RINGFD;
	}
#endif
	if (enter) {
		snprintf(uring_mode_why, sizeof(uring_mode_why), "queue threads wait in "
			 "io_uring_enter (multishot poll; BLKBACKD_URING_WAIT=%s)", env);
		return uring_mode = UW_ENTER;
	}
	snprintf(uring_mode_why, sizeof(uring_mode_why), "queue threads wait in "
		 "epoll_wait on the ring's fd (the default)%s", ignored);
	return uring_mode = UW_RINGFD;
}

static int
uring_available(void)
{
	int r;

	pthread_mutex_lock(&uring_lock);
	r = uring_available_locked();
	pthread_mutex_unlock(&uring_lock);
	return r;
}

static enum uring_wait_mode
uring_wait_mode(void)
{
	enum uring_wait_mode m;

	pthread_mutex_lock(&uring_lock);
	m = uring_wait_mode_locked();
	pthread_mutex_unlock(&uring_lock);
	return m;
}

/*
 * The engine for a store opened with cfg: s->uring.  Logs the choice
 * once per process for each io-engine value (one line: the engine and
 * why).  0, or -errno through bk_store_fail() when io_uring was asked
 * for and the kernel cannot give it.
 */
static int
choose_engine(const struct bk_store_config *cfg, struct file_store *s)
{
	static bool logged[3];
	unsigned int e = cfg->io_engine <= BK_IO_ENGINE_URING ? cfg->io_engine : 0;
	int rc;

	if (cfg->io_engine == BK_IO_ENGINE_LIBAIO) {
		s->uring = false;
		if (!logged[e])
			log_info("I/O engine: libaio for file stores (io-engine libaio, as asked)");
		logged[e] = true;
		return 0;
	}
	rc = uring_available();
	if (cfg->io_engine == BK_IO_ENGINE_URING) {
		if (rc < 0)
			return bk_store_fail(cfg, rc, s->path, "io-engine io_uring: io_uring is "
					     "unavailable: %s", uring_why);
		s->uring = true;
		s->uring_mode = uring_wait_mode();
		if (!logged[e])
			log_info("I/O engine: io_uring for file stores (io-engine io_uring, as "
				 "asked: %s; %s)", uring_why, uring_mode_why);
		logged[e] = true;
		return 0;
	}
	s->uring = rc > 0;
	if (s->uring)
		s->uring_mode = uring_wait_mode();
	if (!logged[e])
		log_info("I/O engine: %s for file stores (io-engine auto: %s%s%s%s)",
			 s->uring ? "io_uring" : "libaio", s->uring ? "" : "io_uring is unavailable: ",
			 uring_why, s->uring ? "; " : "", s->uring ? uring_mode_why : "");
	logged[e] = true;
	return 0;
}

static int
file_identify(const char *arg, char *id, size_t len)
{
	struct stat st;
	int n;

	if (stat(arg, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		n = snprintf(id, len, "blk:%u:%u", major(st.st_rdev), minor(st.st_rdev));
	else
		n = snprintf(id, len, "file:%ju:%ju", (uintmax_t)st.st_dev,
			     (uintmax_t)st.st_ino);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int
file_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	struct uring_open_probes up = { .fsync_rc = -EOPNOTSUPP, .dsync_rc = -EOPNOTSUPP };
	struct file_store *s;
	struct stat st;
	int flags, rc;

	if (!cfg->arg)
		return bk_store_fail(cfg, -EINVAL, "file store", "no path");
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fd = -1;
	s->path = strdup(cfg->arg);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	s->writethrough = cfg->writethrough;
	/* O_NONBLOCK until the type is known: opening a FIFO (or a tty)
	 * must not block the open (and the vbd) for ever */
	flags = (cfg->read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK;
	if (cfg->writethrough)
		flags |= O_DSYNC;
	s->fd = open(s->path, flags | O_DIRECT);
	if (s->fd >= 0) {
		s->f.direct = true;
	} else if (errno == EINVAL) {
		log_info("%s: O_DIRECT refused by the file system; using buffered I/O "
			 "(flushes still reach the disk through fdatasync)", s->path);
		s->fd = open(s->path, flags);
	}
	if (s->fd < 0) {
		rc = -errno;
		log_error("open %s: %m", s->path);	/* the errno says it all */
		goto err;
	}
	if (fstat(s->fd, &st) < 0) {
		rc = bk_store_fail(cfg, -errno, s->path, "fstat: %m");
		goto err;
	}
	if (S_ISBLK(st.st_mode)) {
		uint64_t bytes = 0, v = 0;
		char wc[32];
		int ss = 512, ro = 0;
		unsigned int pss = 512;

		s->is_blk = true;
		/* A read-only device (losetup -r, a write-protected disk)
		 * opens O_RDWR all the same and refuses every write later:
		 * refused here, as a read-only file is at open */
		if (!cfg->read_only && ioctl(s->fd, BLKROGET, &ro) == 0 && ro) {
			rc = bk_store_fail(cfg, -EROFS, s->path,
					   "the block device is read-only; writable (mode=w) asked");
			goto err;
		}
		if (ioctl(s->fd, BLKGETSIZE64, &bytes) < 0) {
			rc = bk_store_fail(cfg, -errno, s->path, "BLKGETSIZE64: %m");
			goto err;
		}
		if (ioctl(s->fd, BLKSSZGET, &ss) < 0)
			ss = 512;
		if (ioctl(s->fd, BLKPBSZGET, &pss) < 0)
			pss = ss;
		s->f.size = bytes;
		s->f.sector_size = ss;
		s->f.physical_sector_size = pss;
		s->f.can_discard = !cfg->read_only &&
			read_sysfs_u64(st.st_rdev, "discard_max_bytes", &v) == 0 && v > 0;
		/* A device without a volatile write cache (a RAM disk, a
		 * battery-backed controller: queue/write_cache "write
		 * through") needs no flush, and is offered none under the
		 * default flush-mode, as Linux blkback offers
		 * feature-flush-cache only where bdev_write_cache() says so.
		 * Unknown: a cache is assumed. */
		s->blk_no_cache = read_sysfs_line(st.st_rdev, "write_cache", wc, sizeof(wc)) == 0 &&
				  !strncmp(wc, "write through", 13);
	} else if (S_ISREG(st.st_mode)) {
		s->f.size = st.st_size;
		s->f.sector_size = 512;
		s->f.physical_sector_size = 512;
		if (!cfg->read_only) {
			/* Punching a hole past EOF with KEEP_SIZE changes nothing. */
			off_t past = ((st.st_size + 4095) & ~(off_t)4095) + 4096;

			s->f.can_discard = fallocate(s->fd, FALLOC_FL_PUNCH_HOLE |
						     FALLOC_FL_KEEP_SIZE, past, 4096) == 0;
		}
	} else {
		rc = bk_store_fail(cfg, -EINVAL, s->path,
				   "neither a regular file nor a block device");
		goto err;
	}
	flags = fcntl(s->fd, F_GETFL);
	if (flags < 0 || fcntl(s->fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		rc = bk_store_fail(cfg, -errno, s->path, "fcntl: %m");
		goto err;
	}
	if (s->f.size & 511)	/* Linux blkback: sectors = size >> 9 */
		log_info("%s: size %llu is not a multiple of 512: the last %u bytes are "
			 "not served", s->path, (unsigned long long)s->f.size,
			 (unsigned int)(s->f.size & 511));
	s->f.size &= ~(uint64_t)511;
	s->end = s->f.size;
	s->f.writeback = !cfg->writethrough && !s->blk_no_cache;

	/* Can it flush? */
	if (fdatasync(s->fd) == 0) {
		s->f.can_flush = true;
	} else {
		log_info("%s: fdatasync: %m; flush and barrier will not be offered", s->path);
	}
	rc = choose_engine(cfg, s);
	if (rc < 0)
		goto err;
	if (s->uring) {
		up.fd = s->fd;
		up.fsync = s->f.can_flush;
		up.dsync = !cfg->read_only;
		rc = run_on_own_thread(uring_open_probes, &up);
		if (rc < 0)
			up.fsync_rc = up.dsync_rc = rc;
	}
	if (s->f.can_flush && s->uring) {
		s->fdsync_aio = up.fsync_rc == 0;
		if (!s->fdsync_aio)
			log_info("%s: IORING_OP_FSYNC unavailable (%s); flushes run on a worker thread",
				 s->path, strerror(-up.fsync_rc));
	} else if (s->f.can_flush) {
		struct iocb cb;

		io_prep_fdsync(&cb, s->fd);
		rc = probe_aio(s->fd, &cb);
		s->fdsync_aio = rc == 0;
		if (!s->fdsync_aio)
			log_info("%s: IOCB_CMD_FDSYNC unavailable (%s); flushes run on a worker thread",
				 s->path, strerror(-rc));
	}
	if (!cfg->read_only && s->uring) {
		s->rwf_dsync = up.dsync_rc == 0;
	} else if (!cfg->read_only) {
		struct iocb cb;
		struct iovec iov = { .iov_base = NULL, .iov_len = 0 };

		io_prep_pwritev2(&cb, s->fd, &iov, 1, 0, RWF_DSYNC);
		rc = probe_aio(s->fd, &cb);
		s->rwf_dsync = rc == 0;
	}
	s->f.engine = s->uring ? "io_uring" : "libaio";
	s->f.batch_submit = s->uring;
	if (s->rwf_dsync)
		s->f.fua = BK_FUA_NATIVE;
	else if (s->f.can_flush)
		s->f.fua = BK_FUA_EMULATED;
	else
		s->f.fua = BK_FUA_NONE;
	if (!s->rwf_dsync && !cfg->read_only)
		log_info("%s: RWF_DSYNC refused; FUA writes are emulated with fdatasync",
			 s->path);
	s->f.can_secure_discard = false;
	s->f.read_only = cfg->read_only;
	*f = s->f;
	*priv = s;
	return 0;
err:
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	free(s);
	return rc;
}

static void
file_close(void *priv)
{
	struct file_store *s = priv;

	close(s->fd);
	free(s->path);
	free(s);
}

static int
file_size(void *priv, uint64_t *bytes)
{
	struct file_store *s = priv;
	struct stat st;
	uint64_t b;

	if (s->is_blk) {
		if (ioctl(s->fd, BLKGETSIZE64, &b) < 0)
			return -errno;
	} else {
		if (fstat(s->fd, &st) < 0)
			return -errno;
		if (st.st_nlink == 0)
			return -ENOENT;	/* removed: the open inode still serves */
		b = st.st_size;
	}
	b &= ~(uint64_t)511;
	__atomic_store_n(&s->end, b, __ATOMIC_RELAXED);
	*bytes = b;
	return 0;
}

static void
queue_signal(struct file_queue *q)
{
	uint64_t one = 1;

	if (write(q->efd, &one, sizeof(one)) != sizeof(one)) {
		/* eventfd counter cannot overflow here; nothing to do */
	}
}

/* Caller holds q->lock. */
static void
queue_done_locked(struct file_queue *q, struct bk_io *io)
{
	q->done[(q->done_head + q->done_count) % q->depth] = io;
	q->done_count++;
	queue_signal(q);
}

static void
worker_do(struct file_store *s, struct bk_io *io)
{
	int rc = 0;

	switch (io->op) {
	case BK_IO_FLUSH:
		io->host_action = "fdatasync";
		rc = fdatasync(s->fd) < 0 ? -errno : 0;
		break;
	case BK_IO_DISCARD:
		if (s->is_blk) {
			uint64_t range[2] = { io->offset, io->len };
			unsigned long req = (io->flags & BK_IO_SECURE) ? BLKSECDISCARD : BLKDISCARD;

			io->host_action = (io->flags & BK_IO_SECURE) ? "BLKSECDISCARD" : "BLKDISCARD";
			rc = ioctl(s->fd, req, range) < 0 ? -errno : 0;
		} else {
			io->host_action = "fallocate-punch-hole";
			rc = fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				       io->offset, io->len) < 0 ? -errno : 0;
		}
		break;
	default:
		rc = -EOPNOTSUPP;
	}
	io->result = rc;
}

static void *
worker_main(void *opaque)
{
	struct file_queue *q = opaque;
	struct bk_io *io;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		while (!q->work_count && !q->worker_stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->work_count && q->worker_stop)
			break;
		io = q->work[q->work_head];
		q->work_head = (q->work_head + 1) % q->depth;
		q->work_count--;
		pthread_mutex_unlock(&q->lock);
		worker_do(q->s, io);
		pthread_mutex_lock(&q->lock);
		queue_done_locked(q, io);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

/*
 * The kernel's completion ring sits at the io_context_t address (struct
 * aio_ring in fs/aio.c, a stable user ABI: libaio's own zero-timeout
 * io_getevents reads it the same way to skip the system call).
 */
struct aio_ring_hdr {
	unsigned int id, nr, head, tail;
	unsigned int magic, compat_features, incompat_features, header_length;
};
#define AIO_RING_MAGIC 0xa10a10a1u

/*
 * valgrind sizes the completion ring by the nr_events io_setup asked
 * for, the kernel makes it at least twice that (fs/aio.c ioctx_alloc):
 * once head passes valgrind's idea of its end, ring_getevents' reads
 * look like reads of unmapped memory.  Tell memcheck the whole ring is
 * there.  Nothing outside valgrind.
 */
static void
ring_tell_valgrind(io_context_t ctx)
{
#ifdef HAVE_VALGRIND_MEMCHECK_H
	const struct aio_ring_hdr *r = (const void *)ctx;

	if (RUNNING_ON_VALGRIND && r->magic == AIO_RING_MAGIC)
		VALGRIND_MAKE_MEM_DEFINED(r, sizeof(*r) + (size_t)r->nr * sizeof(struct io_event));
#else
	(void)ctx;
#endif
}

/*
 * The queue's ring: depth SQEs (the kernel rounds up to a power of two)
 * and twice that many CQEs, so that the CQ never overflows with at most
 * depth I/Os in flight, and at most depth more from the efd's poll
 * (UW_RINGFD: one per write of the efd, one write per request the
 * worker or queue_fail finishes).  UW_EVENTFD and UW_ENTER: the eventfd
 * registered, so that every CQE writes it as libaio's io_set_eventfd
 * does (UW_ENTER takes it out again at wait_setup).  SUBMIT_ALL (5.18) where
 * the kernel has it: an SQE the kernel refuses at submission gets its
 * CQE and the ones after it still go in (older kernels stop there:
 * uring_enter() gives the rest back).  0 or -errno (logged).  Run on a
 * thread of its own (run_on_own_thread).
 */
static int
uring_queue_init(void *arg)
{
	struct file_queue *q = arg;
	struct io_uring_params p;
	int rc;

	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SUBMIT_ALL;
	rc = io_uring_queue_init_params(q->depth, &q->ring, &p);
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof(p));
		rc = io_uring_queue_init_params(q->depth, &q->ring, &p);
	}
	if (rc < 0) {
		errno = -rc;
		log_error("io_uring_setup(%u) for %s: %m", q->depth, q->s->path);
		return rc;
	}
	if (q->s->uring_mode == UW_RINGFD) {
		q->ringfd = true;
		q->wfd[0] = q->efd;
		q->nwfd = 1;
		return 0;
	}
	rc = io_uring_register_eventfd(&q->ring, q->efd);
	if (rc < 0) {
		errno = -rc;
		log_error("io_uring_register_eventfd for %s: %m", q->s->path);
		io_uring_queue_exit(&q->ring);
		return rc;
	}
	return 0;
}

static void
engine_destroy(struct file_queue *q)
{
	if (q->uring)
		io_uring_queue_exit(&q->ring);
	else
		io_destroy(q->ctx);
}

static int
file_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct file_store *s = priv;
	struct file_queue *q;
	unsigned int i;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->s = s;
	q->depth = depth ? depth : 1;
	q->efd = -1;
	q->iocbs = calloc(q->depth, sizeof(*q->iocbs));
	q->free_iocbs = calloc(q->depth, sizeof(*q->free_iocbs));
	q->events = calloc(q->depth, sizeof(*q->events));
	q->done = calloc(q->depth, sizeof(*q->done));
	q->work = calloc(q->depth, sizeof(*q->work));
	if (!q->iocbs || !q->free_iocbs || !q->events || !q->done || !q->work) {
		rc = -ENOMEM;
		goto err;
	}
	for (i = 0; i < q->depth; i++)
		q->free_iocbs[i] = &q->iocbs[i];
	q->nr_free = q->depth;
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (q->efd < 0) {
		rc = -errno;
		goto err;
	}
	q->uring = s->uring;
	if (q->uring) {
		rc = run_on_own_thread(uring_queue_init, q);
		if (rc < 0)
			goto err;
	} else {
		rc = io_setup(q->depth, &q->ctx);
		if (rc < 0) {
			errno = -rc;
			log_error("io_setup(%u) for %s: %m", q->depth, s->path);
			goto err;
		}
		ring_tell_valgrind(q->ctx);
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	rc = -pthread_create(&q->worker, NULL, worker_main, q);
	if (rc < 0) {
		engine_destroy(q);
		pthread_mutex_destroy(&q->lock);
		pthread_cond_destroy(&q->cond);
		goto err;
	}
	q->worker_running = true;
	*qpriv = q;
	return 0;
err:
	if (q->efd >= 0)
		close(q->efd);
	free(q->iocbs);
	free(q->free_iocbs);
	free(q->events);
	free(q->done);
	free(q->work);
	free(q);
	return rc;
}

static void
file_queue_close(void *qpriv)
{
	struct file_queue *q = qpriv;
	struct timespec ts = { .tv_sec = 1 };

	/* Wait for everything in flight (the contract). */
	while (q->aio_inflight && q->uring) {
		struct io_uring_cqe *cqe;
		struct __kernel_timespec uts = { .tv_sec = 1 };
		int n = io_uring_wait_cqe_timeout(&q->ring, &cqe, &uts);

		if (n == 0) {
			if (!IS_WAIT_TAG(cqe->user_data))
				q->aio_inflight--;
			io_uring_cqe_seen(&q->ring, cqe);
		} else if (n != -EINTR && n != -ETIME) {
			break;
		}
	}
	while (q->aio_inflight && !q->uring) {
		int n = io_getevents(q->ctx, 1, q->depth, q->events, &ts);

		if (n > 0)
			q->aio_inflight -= n;
		else if (n < 0 && n != -EINTR)
			break;
	}
	pthread_mutex_lock(&q->lock);
	q->worker_stop = true;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->worker, NULL);
	engine_destroy(q);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	close(q->efd);
	free(q->iocbs);
	free(q->free_iocbs);
	free(q->events);
	free(q->done);
	free(q->work);
	free(q);
}

static int
file_queue_fd(void *qpriv)
{
	struct file_queue *q = qpriv;

	return q->ringfd ? q->ring.ring_fd : q->efd;
}

static bool
file_queue_edge(void *qpriv)
{
	struct file_queue *q = qpriv;

	if (q->ringfd)
		return false;	/* the ring's fd: level-triggered, never read */
	q->edge = true;
	return true;
}

/* A CQE of one of the wait's polls (any thread walking the CQ: ours). */
static void
wait_cqe(struct file_queue *q, const struct io_uring_cqe *cqe)
{
	unsigned int i = (unsigned int)cqe->user_data - 1;

	if (cqe->user_data == WAIT_TAG_REMOVE)
		return;
	if (cqe->res > 0) {
		q->wfail[i] = 0;
		if (i + 1 < q->nwfd)
			q->fired |= 1u << i;	/* ours (efd): done_count tells */
	} else if (cqe->res < 0) {
		q->wfail[i]++;		/* never a stop or an event: arm again */
	}
	/* Multishot ends (an error, a full CQ, a cancel): arm it again
	 * before the next sleep; the kernel polls the fd once when it
	 * arms, so readiness meanwhile is not lost. */
	if (!(cqe->flags & IORING_CQE_F_MORE))
		q->armed[i] = false;
}

/* The wait's CQEs at the head of the CQ (up to the first I/O's). */
static void
wait_cqes_at_head(struct file_queue *q)
{
	struct io_uring_cqe *cqe;
	unsigned int head, seen = 0;

	io_uring_for_each_cqe(&q->ring, head, cqe) {
		if (!IS_WAIT_TAG(cqe->user_data))
			break;
		wait_cqe(q, cqe);
		seen++;
	}
	if (seen)
		io_uring_cq_advance(&q->ring, seen);
}

/*
 * Take the SQEs the kernel did not consume back out of the SQ (its tail
 * back to its head): how many.  Only the queue's thread moves the tail,
 * and without SQPOLL the kernel reads the SQ only inside our
 * io_uring_enter, so nothing else moves either end meanwhile.
 */
static unsigned int
sq_take_back(struct io_uring_sq *sq)
{
	unsigned int khead = io_uring_smp_load_acquire(sq->khead);
	unsigned int left = *sq->ktail - khead;

	if (left) {
		sq->sqe_tail = sq->sqe_head = khead;
		io_uring_smp_store_release(sq->ktail, khead);
	}
	return left;
}

/*
 * UW_RINGFD: put the efd's multishot poll into the ring if it is not
 * there (before the queue's first submit, and again after the kernel
 * ended it: an error, a full CQ), in an io_uring_enter of its own from
 * the queue's thread, whose task the kernel completes the poll in.  The
 * SQ is empty here (every submit enters what it prepared).  Arming polls
 * the efd once: a write while it was not armed is seen then (the efd is
 * never read, so it stays readable).  After WAIT_FAIL_MAX failures in a
 * row without an event it is left out, said once: the worker's
 * completions are then seen at the queue's next wake-up for another
 * reason (a request, a completion), never by spinning.
 */
static void
ringfd_arm(struct file_queue *q)
{
	struct io_uring_sqe *sqe;
	int rc;

	if (q->armed[0])
		return;
	if (q->wfail[0] >= WAIT_FAIL_MAX) {
		if (!q->ringfd_gave_up)
			log_error("%s: the kernel refused to poll the queue's worker eventfd "
				  "in its io_uring %u times: discards and worker flushes are "
				  "answered at the queue's next wake-up", q->s->path,
				  WAIT_FAIL_MAX);
		q->ringfd_gave_up = true;
		return;
	}
	sqe = io_uring_get_sqe(&q->ring);
	if (!sqe)
		return;		/* cannot happen: the SQ is empty */
	io_uring_prep_poll_multishot(sqe, q->efd, POLLIN);
	io_uring_sqe_set_data64(sqe, WAIT_TAG(0));
	do
		rc = io_uring_submit(&q->ring);
	while (rc == -EINTR);
	if (rc == 1) {
		q->armed[0] = true;
		return;
	}
	/* not taken (out of memory): out of the SQ again, tried next time */
	sq_take_back(&q->ring.sq);
	q->wfail[0]++;
}

/*
 * The queue thread ends: take every poll out of the ring, and wait
 * until the kernel has let go of them (their last CQE), here in the
 * thread that armed them, whose task the kernel completes them in.
 * Left armed, they would hold the caller's files (the event channel:
 * its ports stay bound) until the ring's teardown, which the kernel
 * finishes asynchronously after the thread is gone.
 */
static int
wait_teardown(struct file_queue *q)
{
	struct __kernel_timespec ts = { .tv_sec = 1 };
	unsigned int i, tries;
	bool any = false;

	for (i = 0; i < q->nwfd; i++) {
		struct io_uring_sqe *sqe;

		if (!q->armed[i])
			continue;
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			return -EBUSY;
		io_uring_prep_poll_remove(sqe, WAIT_TAG(i));
		io_uring_sqe_set_data64(sqe, WAIT_TAG_REMOVE);
		any = true;
	}
	if (any && io_uring_submit(&q->ring) < 0)
		return -EIO;
	/* a bounded wait: one CQE per poll, its last (-ECANCELED, or an
	 * event that ended it first) */
	for (tries = 0; tries < 10; tries++) {
		struct io_uring_cqe *cqe;

		wait_cqes_at_head(q);
		for (i = 0; i < q->nwfd && !q->armed[i]; i++)
			;
		if (i == q->nwfd)
			break;
		if (io_uring_wait_cqe_timeout(&q->ring, &cqe, &ts) == -ETIME)
			continue;
	}
	q->nwfd = 0;
	q->fired = 0;
	return tries < 10 ? 0 : -ETIMEDOUT;
}

static int
file_queue_wait_setup(void *qpriv, const int *fds, unsigned int n)
{
	struct file_queue *q = qpriv;
	unsigned int i;
	int rc;

	if (q->waits && n == 0)
		return wait_teardown(q);
	if (!q->uring || q->s->uring_mode != UW_ENTER)
		return -EOPNOTSUPP;
	/* our completions are seen in the CQ; the efd is only the worker's */
	rc = io_uring_unregister_eventfd(&q->ring);
	if (rc < 0)
		return rc;
	for (i = 0; i < n; i++)
		q->wfd[i] = fds[i];
	q->wfd[n] = q->efd;
	q->nwfd = n + 1;
	q->edge = true;		/* nobody reads the efd: its poll fires per write */
	q->waits = true;
	return 0;
}

static int
file_queue_wait(void *qpriv, bool block, unsigned int *fired)
{
	struct file_queue *q = qpriv;
	unsigned int i, arming[BK_STORE_WAIT_FDS + 1], na = 0, left;
	int rc = 0;

	for (i = 0; i < q->nwfd; i++)
		if (!q->armed[i] && q->wfail[i] >= WAIT_FAIL_MAX)
			return -EIO;	/* before any SQE is prepared */
	/* the polls that are not in the kernel, in the same enter */
	for (i = 0; i < q->nwfd; i++) {
		struct io_uring_sqe *sqe;

		if (q->armed[i])
			continue;
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			return -EBUSY;	/* cannot happen: I/O SQEs are entered at once */
		io_uring_prep_poll_multishot(sqe, q->wfd[i], POLLIN);
		io_uring_sqe_set_data64(sqe, WAIT_TAG(i));
		q->armed[i] = true;
		arming[na++] = i;
	}
	wait_cqes_at_head(q);
	/* Sleep only with nothing to do: no event or completion seen and
	 * not taken.  One that comes after this look completes a CQE (an
	 * I/O, or a poll: the event channel, the stop, the worker's efd),
	 * which ends the kernel's wait. */
	if (block && !q->fired && !io_uring_cq_ready(&q->ring) && !READ_ONCE(q->done_count))
		rc = io_uring_submit_and_wait(&q->ring, 1);
	else if (na)
		rc = io_uring_submit(&q->ring);
	/* What the kernel did not take goes back out of the SQ (only this
	 * thread moves its tail, and no I/O SQE waits there): armed again
	 * next time. */
	left = sq_take_back(&q->ring.sq);
	if (left) {
		for (i = na - (left < na ? left : na); i < na; i++)
			q->armed[arming[i]] = false;
	}
	if (rc == -EAGAIN || rc == -EBUSY) {
		/* the kernel is short of memory, or its CQ overflowed: the
		 * caller reaps and comes back, a bounded number of times */
		if (++q->enter_fail > 100)
			return rc;
		rc = -EINTR;
	} else if (rc >= 0) {
		q->enter_fail = 0;
	}
	wait_cqes_at_head(q);
	*fired = q->fired;
	q->fired = 0;
	return rc < 0 ? rc : 0;
}

static void
queue_fail(struct file_queue *q, struct bk_io *io, int err)
{
	io->result = err;
	pthread_mutex_lock(&q->lock);
	queue_done_locked(q, io);
	pthread_mutex_unlock(&q->lock);
}

static void
queue_work(struct file_queue *q, struct bk_io *io)
{
	pthread_mutex_lock(&q->lock);
	q->work[(q->work_head + q->work_count) % q->depth] = io;
	q->work_count++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

static int
aio_submit(struct file_queue *q, struct bk_io **ios, unsigned int n)
{
	struct file_store *s = q->s;
	struct iocb *batch[64];
	uint64_t end = __atomic_load_n(&s->end, __ATOMIC_RELAXED);
	unsigned int i = 0, nb, j;
	int rc;

	while (i < n) {
		/* Collect a batch of iocbs; worker ops are handed over as met. */
		nb = 0;
		while (i < n && nb < ARRAY_SIZE(batch) && q->nr_free) {
			struct bk_io *io = ios[i];
			struct iocb *cb;

			if ((io->op == BK_IO_FLUSH && !s->fdsync_aio) ||
			    io->op == BK_IO_DISCARD) {
				if (nb)
					break;	/* keep submission order */
				queue_work(q, io);
				i++;
				continue;
			}
			if ((io->op == BK_IO_READ || io->op == BK_IO_WRITE) &&
			    (io->len > end || io->offset > end - io->len)) {
				/* the backing shrank under the guest */
				if (nb)
					break;	/* keep submission order */
				io->host_action = "past-end";
				queue_fail(q, io, -EIO);
				i++;
				continue;
			}
			cb = q->free_iocbs[--q->nr_free];
			switch (io->op) {
			case BK_IO_READ:
				io_prep_preadv(cb, s->fd, io->iov, io->iovcnt, io->offset);
				io->host_action = "preadv";
				break;
			case BK_IO_WRITE:
				if (io->flags & BK_IO_FUA) {
					io_prep_pwritev2(cb, s->fd, io->iov, io->iovcnt,
							 io->offset, RWF_DSYNC);
					io->host_action = "pwritev+RWF_DSYNC";
				} else {
					io_prep_pwritev(cb, s->fd, io->iov, io->iovcnt, io->offset);
					io->host_action = s->writethrough ? "pwritev+O_DSYNC" : "pwritev";
				}
				break;
			case BK_IO_FLUSH:
				io_prep_fdsync(cb, s->fd);
				io->host_action = "fdatasync";
				break;
			default:
				break;
			}
			io_set_eventfd(cb, q->efd);
			cb->data = io;
			batch[nb++] = cb;
			i++;
		}
		if (!nb) {
			if (!q->nr_free)
				break;
			continue;
		}
		j = 0;
		while (j < nb) {
			rc = io_submit(q->ctx, nb - j, batch + j);
			if (rc > 0) {
				q->aio_inflight += rc;
				j += rc;
				continue;
			}
			if (rc == -EAGAIN || rc == 0) {
				/* give back what did not go in; report fewer */
				unsigned int k;

				for (k = j; k < nb; k++)
					q->free_iocbs[q->nr_free++] = batch[k];
				i -= nb - j;
				return i ? (int)i : -EAGAIN;
			}
			/* The first iocb of the rest was refused: complete it. */
			q->free_iocbs[q->nr_free++] = batch[j];
			queue_fail(q, batch[j]->data, rc);
			j++;
		}
	}
	return i ? (int)i : (n ? -EAGAIN : 0);
}

/*
 * Hand the nb SQEs prepared since the last call to the kernel, in one
 * io_uring_enter.  How many it took; those it did not (a kernel without
 * SUBMIT_ALL stops at an SQE it refuses, or it is out of memory) are
 * taken back out of the SQ ring, so that the caller submits them again
 * later, as libaio's io_submit leaves them.  Only this thread moves the
 * SQ tail, and without SQPOLL the kernel reads the ring only inside our
 * io_uring_enter: putting the tail back is safe.
 */
static unsigned int
uring_enter(struct file_queue *q, unsigned int nb)
{
	int rc;

	if (!nb)
		return 0;
	do
		rc = io_uring_submit(&q->ring);
	while (rc == -EINTR);
	if (rc >= (int)nb)
		return nb;
	if (rc < 0)
		rc = 0;
	sq_take_back(&q->ring.sq);
	q->aio_inflight -= nb - (unsigned int)rc;
	return (unsigned int)rc;
}

static int
uring_submit(struct file_queue *q, struct bk_io **ios, unsigned int n)
{
	struct file_store *s = q->s;
	uint64_t end = __atomic_load_n(&s->end, __ATOMIC_RELAXED);
	unsigned int i = 0, nb = 0, took;

	if (q->ringfd && !q->armed[0])
		ringfd_arm(q);

	while (i < n && q->aio_inflight < q->depth) {
		struct bk_io *io = ios[i];
		struct io_uring_sqe *sqe;

		if ((io->op == BK_IO_FLUSH && !s->fdsync_aio) || io->op == BK_IO_DISCARD ||
		    ((io->op == BK_IO_READ || io->op == BK_IO_WRITE) &&
		     (io->len > end || io->offset > end - io->len))) {
			/* keep submission order: what is prepared goes first */
			took = uring_enter(q, nb);
			if (took < nb) {
				i -= nb - took;
				return i ? (int)i : -EAGAIN;
			}
			nb = 0;
			if (io->op == BK_IO_READ || io->op == BK_IO_WRITE) {
				/* the backing shrank under the guest */
				io->host_action = "past-end";
				queue_fail(q, io, -EIO);
			} else {
				queue_work(q, io);
			}
			i++;
			continue;
		}
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe)
			break;	/* cannot happen: depth SQEs, at most depth in flight */
		switch (io->op) {
		case BK_IO_READ:
			io_uring_prep_readv(sqe, s->fd, io->iov, (unsigned int)io->iovcnt, io->offset);
			io->host_action = "preadv";
			break;
		case BK_IO_WRITE:
			io_uring_prep_writev(sqe, s->fd, io->iov, (unsigned int)io->iovcnt, io->offset);
			if (io->flags & BK_IO_FUA) {
				sqe->rw_flags = RWF_DSYNC;
				io->host_action = "pwritev+RWF_DSYNC";
			} else {
				io->host_action = s->writethrough ? "pwritev+O_DSYNC" : "pwritev";
			}
			break;
		case BK_IO_FLUSH:
			io_uring_prep_fsync(sqe, s->fd, IORING_FSYNC_DATASYNC);
			io->host_action = "fdatasync";
			break;
		default:
			break;
		}
		io_uring_sqe_set_data(sqe, io);
		q->aio_inflight++;
		nb++;
		i++;
	}
	took = uring_enter(q, nb);
	i -= nb - took;
	return i ? (int)i : (n ? -EAGAIN : 0);
}

static int
file_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct file_queue *q = qpriv;

	return q->uring ? uring_submit(q, ios, n) : aio_submit(q, ios, n);
}

/*
 * Take up to max completions straight from the kernel's aio ring, as
 * io_getevents would, without its system call (fio's userspace_reap):
 * the events between head and tail are complete, the kernel writes them
 * before it moves tail, and only we move head (one thread per queue; we
 * never call io_getevents meanwhile).  -ENOSYS when the ring's layout is
 * not the one we know (the caller uses io_getevents).
 */
static int
ring_getevents(struct file_queue *q, struct io_event *ev, unsigned int max)
{
	struct aio_ring_hdr *r = (void *)q->ctx;
	const struct io_event *events = (const struct io_event *)(r + 1);
	unsigned int head, tail, n = 0;

	if (READ_ONCE(r->magic) != AIO_RING_MAGIC || r->incompat_features)
		return -ENOSYS;
	head = READ_ONCE(r->head);
	/* pairs with the kernel's smp_wmb() before it moves tail */
	tail = smp_load_acquire(&r->tail);
	while (head != tail && n < max) {
		ev[n++] = events[head];
		head = head + 1 < r->nr ? head + 1 : 0;
	}
	/* the events are copied before the kernel may reuse their slots */
	smp_store_release(&r->head, head);
	return (int)n;
}

/* The result of a READ/WRITE/FLUSH from the kernel's res (both engines). */
static int64_t
engine_result(const struct bk_io *io, long res)
{
	if (res < 0)
		return res;
	if ((io->op == BK_IO_READ || io->op == BK_IO_WRITE) && (uint64_t)res != io->len)
		return -EIO;	/* short transfer: past the end */
	return io->op == BK_IO_FLUSH ? 0 : res;
}

static int
file_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct file_queue *q = qpriv;
	struct timespec ts0 = { 0, 0 };
	unsigned int n = 0;
	uint64_t v;
	int rc, k;

	/* Level-triggered: clear readiness first, then collect (a later
	 * completion re-arms).  Edge-triggered: every completion writes the
	 * fd (the aio's eventfd, queue_signal), which is all the caller
	 * needs; the counter is never read and cannot reach 2^64 - 1. */
	if (!q->edge && !q->ringfd && read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	pthread_mutex_lock(&q->lock);
	while (n < max && q->done_count) {
		done[n++] = q->done[q->done_head];
		q->done_head = (q->done_head + 1) % q->depth;
		q->done_count--;
	}
	pthread_mutex_unlock(&q->lock);
	if (n < max && (q->aio_inflight || q->waits || q->ringfd) && q->uring) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0, ios = 0;

		/* the CQEs between head and tail are complete (liburing's
		 * acquire of the tail pairs with the kernel's release) */
		io_uring_for_each_cqe(&q->ring, head, cqe) {
			struct bk_io *io = io_uring_cqe_get_data(cqe);

			if (IS_WAIT_TAG(cqe->user_data)) {
				wait_cqe(q, cqe);	/* file_queue_wait reports it */
				seen++;
				continue;
			}
			if (n == max)
				break;
			io->result = engine_result(io, cqe->res);
			done[n++] = io;
			seen++;
			ios++;
		}
		/* the slots are the kernel's again */
		io_uring_cq_advance(&q->ring, seen);
		q->aio_inflight -= ios;
		/* More left than we took: keep the fd readable (the ring's
		 * fd stays readable by itself while a CQE is left). */
		if (n == max && !q->ringfd && io_uring_cq_ready(&q->ring))
			queue_signal(q);
		if (q->ringfd) {
			/* a CQ that overflowed keeps the ring's fd readable
			 * with nothing in it until the kernel flushes it
			 * into the CQ (not with our sizes; never spin) */
			if (n < max && io_uring_cq_has_overflow(&q->ring))
				io_uring_get_events(&q->ring);
			if (!q->armed[0])
				ringfd_arm(q);
		}
	} else if (n < max && q->aio_inflight) {
		unsigned int want = max - n;

		if (want > q->depth)
			want = q->depth;
		rc = ring_getevents(q, q->events, want);
		if (rc == -ENOSYS)
			rc = io_getevents(q->ctx, 0, want, q->events, &ts0);
		if (rc < 0 && rc != -EINTR)
			return n ? (int)n : rc;
		for (k = 0; k < rc; k++) {
			struct iocb *cb = q->events[k].obj;
			struct bk_io *io = cb->data;
			long res = (long)q->events[k].res;

			io->result = engine_result(io, res);
			q->free_iocbs[q->nr_free++] = cb;
			q->aio_inflight--;
			done[n++] = io;
		}
		/* More left than we took: keep the fd readable. */
		if (rc > 0 && n == max)
			queue_signal(q);
	}
	return n;
}

static bool
file_poll(void *qpriv)
{
	struct file_queue *q = qpriv;
	const struct aio_ring_hdr *r = (const void *)q->ctx;

	if (READ_ONCE(q->done_count))
		return true;	/* a worker (flush/discard) finished */
	if (!q->aio_inflight)
		return false;
	if (q->uring)
		return io_uring_cq_ready(&q->ring) != 0;
	if (READ_ONCE(r->magic) != AIO_RING_MAGIC)
		return false;	/* cannot look: the eventfd will tell */
	return READ_ONCE(r->head) != READ_ONCE(r->tail);
}

const struct bk_store_driver bk_store_file_driver = {
	.name = "file",
	.open = file_open,
	.close = file_close,
	.identify = file_identify,
	.queue_open = file_queue_open,
	.queue_close = file_queue_close,
	.queue_fd = file_queue_fd,
	.submit = file_submit,
	.reap = file_reap,
	.poll = file_poll,
	.queue_edge = file_queue_edge,
	.queue_wait_setup = file_queue_wait_setup,
	.queue_wait = file_queue_wait,
	.size = file_size,
};
