/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-memory.c: the "memory" storage driver: a RAM disk for tests.
 *
 * Its arg is "SIZE[,OPTION...]" (bk_store_parse_sized(): a size in
 * bytes or with K/M/G/T, a positive multiple of 512).  A synchronous
 * driver: each I/O is done by io() inside bk_store_submit(), and
 * store.c's default queue hands the completions back.  Data lives in an
 * anonymous MAP_NORESERVE mapping (untouched parts cost nothing and
 * read as zeroes).  Nothing is volatile, so a FLUSH has nothing to do
 * and a write is durable on completion (FUA native), unless options
 * model another device for tests:
 *   fail-flush     every FLUSH completes with -EIO (case C15)
 *   no-flush       report flush unsupported (and so no emulated FUA:
 *                  fua=emulated is then none)
 *   refuse-flush   report flush supported, then answer every FLUSH with
 *                  -EOPNOTSUPP (a device that changes its mind)
 *   refuse-discard the same for DISCARD
 *   fua=MODE       report FUA as none|emulated|native
 *   no-discard     report discard unsupported
 *   delay-ms=N     every I/O takes N ms, 0..MEMORY_MAX_DELAY_MS (blocks
 *                  the queue thread), so a test can stop the daemon with
 *                  requests in flight
 *   hold=PATH      every I/O waits while the file PATH exists (an
 *                  absolute path; looked at every MEMORY_HOLD_POLL_MS,
 *                  for at most MEMORY_MAX_HOLD_MS, then it goes ahead):
 *                  a test decides when requests in flight complete, so
 *                  what happens meanwhile is asserted by order, not by
 *                  a stopwatch
 *   fail-sectors=A-B  a medium error: a READ or WRITE touching any
 *                  512-byte sector A..B (inclusive) transfers the
 *                  sectors before the first bad one, as a disk does,
 *                  then fails with -EIO (case C20)
 *   sector-size=N  the logical block size, 512 or 4096 (the size must
 *                  be a multiple of it; case C31)
 * An unknown option, or a value that is not one of these, is refused
 * (-EINVAL, with the reason for the error node).  Several queues may
 * run at once; a mutex serialises the copies.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "store.h"

/* A store slower than this is a test that hangs: draining a queue waits
 * for every request in flight (delay x queue depth). */
#define MEMORY_MAX_DELAY_MS 10000u
/* hold=: how often the file is looked at, and the longest wait (a test
 * that died without removing it must not hold a queue for ever). */
#define MEMORY_HOLD_POLL_MS 5u
#define MEMORY_MAX_HOLD_MS 120000u

struct memory_store {
	unsigned char *data;
	uint64_t size;
	pthread_mutex_t lock;		/* the copies */
	bool fail_flush, no_flush, no_fua, refuse_flush, refuse_discard;
	unsigned int delay_ms;
	char *hold;			/* hold=: NULL for none */
	uint64_t bad_first, bad_last;	/* fail-sectors, in bytes; last < first: none */
};

static const char *const memory_options[] = {
	"fail-flush", "no-flush", "delay-ms", "fua", "no-discard",
	"refuse-flush", "refuse-discard", "fail-sectors", "sector-size", "hold", NULL,
};

/* "A-B", decimal sectors, A <= B.  0 or -1. */
static int
parse_range(const char *v, uint64_t *a, uint64_t *b)
{
	char *end;

	if (!isdigit((unsigned char)v[0]))
		return -1;
	errno = 0;
	*a = strtoull(v, &end, 10);
	if (errno || *end != '-' || !isdigit((unsigned char)end[1]))
		return -1;
	*b = strtoull(end + 1, &end, 10);
	return errno || *end || *b < *a || *b >= UINT64_MAX >> 9 ? -1 : 0;
}

static int
memory_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	struct memory_store *s;
	char buf[16], fbuf[16], rbuf[48], zbuf[16], hbuf[PATH_MAX];
	const char *opts, *fua, *delay, *range, *ssize, *hold;
	unsigned long delay_ms = 0;
	unsigned int sector_size = 512;
	uint64_t size, bad_a = 1, bad_b = 0;
	char *end;
	int rc;

	rc = bk_store_parse_sized(cfg, "memory", memory_options, &size, &opts);
	if (rc < 0)
		return rc;
	if (size == 0 || size % 512) {
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "size %llu is not a positive multiple of 512",
				     (unsigned long long)size);
	}
	delay = bk_opt_get(opts, "delay-ms", buf, sizeof(buf));
	if (delay) {
		errno = 0;
		delay_ms = strtoul(delay, &end, 10);
		/* digits only: strtoul would take " 5", "+5" and "-5" */
		if (!isdigit((unsigned char)delay[0]) || *end || errno ||
		    delay_ms > MEMORY_MAX_DELAY_MS) {
			return bk_store_fail(cfg, -EINVAL, "memory store",
					     "delay-ms=\"%s\" is not a number of milliseconds "
					     "in 0..%u", delay, MEMORY_MAX_DELAY_MS);
		}
	}
	range = bk_opt_get(opts, "fail-sectors", rbuf, sizeof(rbuf));
	if (range && parse_range(range, &bad_a, &bad_b) < 0)
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "fail-sectors=\"%s\" is not a sector range FIRST-LAST", range);
	ssize = bk_opt_get(opts, "sector-size", zbuf, sizeof(zbuf));
	if (ssize && strcmp(ssize, "512") && strcmp(ssize, "4096"))
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "sector-size=\"%s\" is not 512 or 4096", ssize);
	if (ssize)
		sector_size = (unsigned int)atoi(ssize);
	if (size % sector_size)
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "size %llu is not a multiple of sector-size %u",
				     (unsigned long long)size, sector_size);
	hold = bk_opt_get(opts, "hold", hbuf, sizeof(hbuf));
	if (hold && hold[0] != '/')
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "hold=\"%s\" is not an absolute path", hold);
	fua = bk_opt_get(opts, "fua", fbuf, sizeof(fbuf));
	if (fua && strcmp(fua, "none") && strcmp(fua, "emulated") && strcmp(fua, "native")) {
		return bk_store_fail(cfg, -EINVAL, "memory store",
				     "fua=\"%s\" is not one of none, emulated, native", fua);
	}
	s = calloc(1, sizeof(*s));
	if (!s || (hold && !(s->hold = strdup(hold)))) {
		free(s);
		return -ENOMEM;
	}
	s->size = size;
	s->data = mmap(NULL, s->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->data == MAP_FAILED) {
		int err = -errno;

		bk_store_fail(cfg, err, "memory store", "mmap %llu bytes: %m",
			      (unsigned long long)s->size);
		free(s->hold);
		free(s);
		return err;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->fail_flush = bk_opt_has(opts, "fail-flush");
	s->no_flush = bk_opt_has(opts, "no-flush");
	s->refuse_flush = bk_opt_has(opts, "refuse-flush");
	s->refuse_discard = bk_opt_has(opts, "refuse-discard");
	s->delay_ms = (unsigned int)delay_ms;
	s->bad_first = range ? bad_a << 9 : 1;
	s->bad_last = range ? (bad_b << 9) + 511 : 0;

	memset(f, 0, sizeof(*f));
	f->size = s->size;
	f->sector_size = sector_size;
	f->physical_sector_size = 4096;
	f->read_only = cfg->read_only;
	f->can_flush = !s->no_flush;
	f->writeback = !cfg->writethrough;
	f->fua = BK_FUA_NATIVE;
	if (fua && strcmp(fua, "none") == 0)
		f->fua = BK_FUA_NONE;
	else if (fua && strcmp(fua, "emulated") == 0)
		/* a write, then a flush: nothing without a flush */
		f->fua = f->can_flush ? BK_FUA_EMULATED : BK_FUA_NONE;
	s->no_fua = f->fua != BK_FUA_NATIVE;
	f->can_discard = !bk_opt_has(opts, "no-discard") && !cfg->read_only;
	f->can_secure_discard = f->can_discard;
	f->direct = false;
	*priv = s;
	return 0;
}

static void
memory_close(void *priv)
{
	struct memory_store *s = priv;

	munmap(s->data, s->size);
	pthread_mutex_destroy(&s->lock);
	free(s->hold);
	free(s);
}

/*
 * fail-sectors: how many bytes of the transfer precede the bad range
 * (the disk transfers those, then fails), or the whole length when it
 * does not touch the range.
 */
static uint64_t
good_prefix(const struct memory_store *s, const struct bk_io *io)
{
	if (s->bad_last < s->bad_first || io->offset > s->bad_last ||
	    io->offset + io->len <= s->bad_first)
		return io->len;
	return io->offset >= s->bad_first ? 0 : s->bad_first - io->offset;
}

/* Copy between the iovecs and the disk at off, at most max bytes. */
static void
memory_copy(struct memory_store *s, struct bk_io *io, bool to_disk, uint64_t max)
{
	uint64_t off = io->offset;
	int i;

	for (i = 0; i < io->iovcnt && max; i++) {
		size_t n = io->iov[i].iov_len < max ? io->iov[i].iov_len : (size_t)max;

		if (to_disk)
			memcpy(s->data + off, io->iov[i].iov_base, n);
		else
			memcpy(io->iov[i].iov_base, s->data + off, n);
		off += n;
		max -= n;
	}
}

/* The I/O itself, under s->lock.  store.c has checked it against the
 * features; what is refused here is the device modelled (a FLUSH or a
 * FUA it does not have, the refuse-* options, fail-sectors). */
static void
memory_do(struct memory_store *s, struct bk_io *io)
{
	uint64_t off = io->offset, good;

	if (io->op != BK_IO_FLUSH &&
	    (io->offset > s->size || io->len > s->size - io->offset)) {
		io->result = -EINVAL;	/* DISCARD: its range is not checked above */
		return;
	}
	switch (io->op) {
	case BK_IO_READ:
		io->host_action = "mem-read";
		good = good_prefix(s, io);
		memory_copy(s, io, false, good);
		io->result = good == io->len ? (int64_t)io->len : -EIO;
		break;
	case BK_IO_WRITE:
		io->host_action = (io->flags & BK_IO_FUA) ? "mem-write+fua" : "mem-write";
		if ((io->flags & BK_IO_FUA) && s->no_fua) {
			io->result = -EOPNOTSUPP;	/* the device modelled has none */
			break;
		}
		good = good_prefix(s, io);
		memory_copy(s, io, true, good);
		io->result = good == io->len ? (int64_t)io->len : -EIO;
		break;
	case BK_IO_FLUSH:
		io->host_action = "mem-flush";
		io->result = s->fail_flush ? -EIO :
			     s->no_flush || s->refuse_flush ? -EOPNOTSUPP : 0;
		break;
	case BK_IO_DISCARD:
		io->host_action = (io->flags & BK_IO_SECURE) ? "mem-secure-discard" : "mem-discard";
		if (s->refuse_discard) {
			io->result = -EOPNOTSUPP;
			break;
		}
		memset(s->data + off, 0, io->len);
		io->result = 0;
		break;
	default:
		io->result = -EOPNOTSUPP;
	}
}

static void
sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * 1000000,
	};

	nanosleep(&ts, NULL);
}

static void
memory_io(void *priv, struct bk_io *io)
{
	struct memory_store *s = priv;
	unsigned int waited;

	for (waited = 0; s->hold && waited < MEMORY_MAX_HOLD_MS &&
			 access(s->hold, F_OK) == 0; waited += MEMORY_HOLD_POLL_MS)
		sleep_ms(MEMORY_HOLD_POLL_MS);
	if (s->delay_ms)
		sleep_ms(s->delay_ms);
	pthread_mutex_lock(&s->lock);
	memory_do(s, io);
	pthread_mutex_unlock(&s->lock);
}

const struct bk_store_driver bk_store_memory_driver = {
	.name = "memory",
	.process_lifetime = true,	/* RAM: gone with the process */
	.open = memory_open,
	.close = memory_close,
	.io = memory_io,
};
