/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-nbd.c: the "nbd" storage driver: any NBD export, through
 * libnbd's asynchronous API (store.h).  Built only when configure finds
 * libnbd (HAVE_LIBNBD).
 *
 * Its arg is "URI[,OPTION=VALUE]...": URI as libnbd's nbd_connect_uri
 * reads it (nbd://HOST[:PORT]/NAME, nbd+unix:///NAME?socket=PATH,
 * nbds://... with TLS where libnbd has it), then options:
 *   timeout=SECONDS  a request with no answer after this long drops the
 *                    connection, which fails everything in flight on it
 *                    (default 30, as the rbd store's op timeout).
 * A URI with a comma in it cannot be named (libnbd reads none).
 *
 * Probed once at open, from the server's handshake, into struct
 * bk_store_features (nothing advertised that the server cannot honour):
 *   size           nbd_get_size, rounded down to 512
 *   read_only      mode=r; a read-only export (nbd_is_read_only) opened
 *                  for writing is refused, as a read-only file is
 *   writeback      the server takes flushes (nbd_can_flush): its writes
 *                  may sit in a cache until NBD_CMD_FLUSH.  A server
 *                  without flush says its replies are durable (Linux's
 *                  nbd driver reads the flag the same way:
 *                  blk_queue_write_cache(false) without it); FLUSH is
 *                  then answered at once ("no server cache")
 *   fua            NATIVE with nbd_can_fua (NBD_CMD_FLAG_FUA on the
 *                  write) or without a server cache; else EMULATED (the
 *                  dataplane writes, then flushes)
 *   can_discard    read-write and nbd_can_trim: NBD_CMD_TRIM (the range
 *                  then reads old data or zeroes, as the contract allows)
 * cache=writethrough sets FUA on every write and writeback false; an
 * export that has a cache but no FUA cannot do that and is refused.
 *
 * Connections.  libnbd's handles are thread-safe (one lock each), and
 * libnbd(3) says to open several connections only when the server
 * advertises multi-conn (nbd_can_multi_conn): only then does a flush on
 * one connection cover the writes completed on the others, which the
 * store contract needs (a guest's flush goes to one queue, its writes
 * to all).  So: with multi-conn (or read-only) each queue gets its own
 * handle; without it every queue of the store drives the one handle of
 * the open.  Either way a queue drives its handle from its own event
 * loop, with no thread of its own: the queue's fd is an epoll set of
 *   - a dup of the handle's socket, polled for what
 *     nbd_aio_get_direction asks (POLLIN, and POLLOUT while libnbd has
 *     requests to send); reap calls nbd_aio_notify_read/write;
 *   - an eventfd: completions waiting to be reaped;
 *   - a timerfd, ticking while requests are in flight, for the timeout.
 * The socket is polled through a dup owned by the queue: libnbd closes
 * its own fd when the connection dies, and the dup keeps that number
 * from being reused under the epoll.
 * Completion callbacks run in whichever thread drove the handle (with a
 * shared handle, possibly another queue's): they push the request onto
 * its queue's lock-free list and, from another queue's thread, write
 * that queue's eventfd, as the rbd store's librbd callbacks do; the
 * queue's own thread takes its list without one.  Submit only hands
 * requests to libnbd (which sends them at once when the socket takes
 * them); reap reads the replies.
 *
 * iovecs: NBD takes one buffer per request.  A request with one iovec
 * (the dataplane's own buffer) goes as it is; one with several (mapped
 * guest pages, one per segment) goes through a bounce buffer per slot,
 * one copy, in one NBD request: splitting it into one NBD request per
 * 4 KiB segment would multiply the server's per-request work (a plugin
 * call in nbdkit, a coroutine in qemu) and the headers on the wire, for
 * a copy of at most a few hundred KiB that costs microseconds.
 *
 * Errors.  A request the server fails completes with the server's errno
 * (-EIO, -ENOSPC, ...).  A connection that dies (the server exits, the
 * socket closes, or a request outlives timeout=) fails every request in
 * flight on it with -ENOTCONN (libnbd retires them when the handle
 * dies), and the guest gets BLKIF_RSP_ERROR.  Nothing acknowledged is
 * lost silently: when a server with a cache (writeback) dies while
 * writes completed since the last flush, the next FLUSH fails (-EIO),
 * which fails the vbd (store.h bk_store_failed), because the server may
 * have dropped them.  A FLUSH while no connection is up and no write
 * completed since the last good flush succeeds: there is nothing for it
 * to make durable, and failing it would fail the vbd for a server's
 * restart.  A server that answers ESHUTDOWN (stopping in order, as
 * nbdkit does on SIGTERM: it waits for its clients to go) did not do
 * that request, which fails; the connection is then dropped as if it
 * had died, so that the server can exit, and a FLUSH it refused that
 * an earlier good flush already covered succeeds.  The next request
 * after a death reconnects (at most
 * one attempt a second per store, each bounded to NBD_RECONNECT_MS),
 * and the new connection is used only if the export still has the same
 * size and every flag this store advertised; meanwhile requests fail at
 * once (-ENOTCONN).
 *
 * identify: "nbd:URI" (the URI as given: two spellings of one export
 * are not recognised as one).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libnbd.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "store.h"

#define NBD_CONNECT_MS 10000	/* open: the handshake, bounded */
#define NBD_RECONNECT_MS 2000	/* a queue thread reconnecting, bounded */
#define NBD_RECONNECT_GAP_NS 1000000000ull	/* one attempt a second */
#define NBD_DEFAULT_TIMEOUT 30	/* seconds */
#define NBD_SNDBUF (4 << 20)	/* bytes: the socket's send buffer asked for */

/* epoll tags in a queue's set */
enum { EV_SOCK = 1, EV_DONE, EV_TIMER };

struct nbd_conn {
	struct nbd_handle *h;
	int fd;				/* libnbd's socket (not ours) */
	unsigned int refs;		/* store lock */
	bool dead;			/* atomic */
	bool bye;			/* atomic: the server answered ESHUTDOWN */
	/*
	 * Held around every libnbd call that may read or write the socket
	 * (nbd_aio_pread/pwrite/flush/trim, nbd_aio_notify_*), and around
	 * the poll that decides a notify.  A shared handle is driven from
	 * several queues' threads, each polling the socket through its own
	 * dup: libnbd's own handle lock makes each call atomic, but not a
	 * poll and the notify after it.  Without this, another thread could
	 * read the reply the poll saw, and the notify then finds the socket
	 * empty at the start of a reply, which leaves libnbd 1.14 waiting
	 * for no direction (drive()): every request on the connection then
	 * stalled until the timeout dropped it.  Uncontended with a
	 * connection per queue.
	 */
	pthread_mutex_t io;
};

struct nbd_store {
	char *uri;
	char *arg_copy;
	unsigned int timeout_s;
	bool per_queue;			/* multi-conn or read-only: a handle per queue */
	bool srv_flush, srv_fua, srv_trim, srv_ro;
	bool fua_all;			/* cache=writethrough: FUA on every write */
	uint64_t srv_size;		/* the export's size (bytes) */
	struct bk_store_features f;
	pthread_mutex_t lock;
	struct nbd_conn *shared;	/* !per_queue: the handle every queue drives */
	uint64_t last_attempt_ns;	/* lock */
	/* atomic: writes (without FUA) completed, and how many of them the
	 * last completed flush covered; a death with wdone > wflushed on a
	 * writeback server sets lost: FLUSH fails from then on */
	uint64_t wdone, wflushed;
	bool lost;
};

struct nbd_queue;

struct nbd_slot {
	struct nbd_queue *q;
	struct nbd_conn *c;		/* the connection it was issued on */
	struct bk_io *io;
	void *bounce;			/* several iovecs: one buffer */
	size_t bounce_cap;
	bool bounced;
	int err;			/* errno from libnbd, 0 success */
	uint64_t t0;			/* submitted (CLOCK_MONOTONIC ns) */
	uint64_t wgen;			/* FLUSH: wdone when submitted */
	bool busy;			/* handed to libnbd, callback not yet run */
	struct nbd_slot *next;
};

struct nbd_queue {
	struct nbd_store *s;
	struct nbd_conn *c;		/* NULL: none (connecting failed) */
	int ep, efd, tfd, sock;		/* sock: our dup of c->fd, or -1 */
	uint32_t sock_events;		/* what sock is registered for */
	bool timer_on;
	struct nbd_slot *slots;
	unsigned int depth;
	struct nbd_slot *free;		/* queue thread only */
	struct nbd_slot *ready;		/* taken from done, not yet reaped (FIFO) */
	struct nbd_slot *done;		/* atomic: pushed by callbacks */
	unsigned int inflight;		/* queue thread: submitted, not reaped */
	unsigned int in_cb;		/* atomic: callbacks running */
	bool efd_set;			/* atomic: efd written since reap last read it */
	uint64_t tick_at;		/* queue thread: the timer's next expiry (ns) */
};

/*
 * The queue whose thread is in a libnbd call right now (submit, reap,
 * close): a completion callback for that same queue needs no eventfd
 * write, since the thread takes q->done itself before it returns.
 */
static __thread struct nbd_queue *tls_q;

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- */
/* The arg.                                                           */
/* ---------------------------------------------------------------- */

/* Split arg into s->uri and the options.  0 or -EINVAL/-ENOMEM. */
static int
arg_parse(const struct bk_store_config *cfg, const char *arg, struct nbd_store *s)
{
	char *p, *word;
	bool timeout_seen = false;

	s->timeout_s = NBD_DEFAULT_TIMEOUT;
	s->arg_copy = strdup(arg ? arg : "");
	if (!s->arg_copy)
		return -ENOMEM;
	s->uri = s->arg_copy;
	p = strchr(s->arg_copy, ',');
	if (p)
		*p++ = '\0';
	if (!s->uri[0] || !strstr(s->uri, "://"))
		return bk_store_bad_arg(cfg, "bad URI \"%s\" for driver nbd (nbd://HOST[:PORT]/"
					"NAME or nbd+unix:///NAME?socket=PATH)", s->uri);
	/* every comma starts an option: "URI," and "URI,,..." name an empty
	 * one, refused as the other stores refuse it; an option given
	 * twice is refused rather than the last one winning unseen */
	while (p) {
		char *end;
		unsigned long v;

		word = p;
		p = strchr(p, ',');
		if (p)
			*p++ = '\0';
		if (!strncmp(word, "timeout=", 8)) {
			if (timeout_seen)
				return bk_store_bad_arg(cfg, "option timeout given twice for "
							"driver nbd");
			timeout_seen = true;
			errno = 0;
			v = strtoul(word + 8, &end, 10);
			if (errno || end == word + 8 || *end || v < 1 || v > 3600)
				return bk_store_bad_arg(cfg, "bad timeout \"%s\" for driver nbd "
							"(seconds, 1 to 3600)", word + 8);
			s->timeout_s = (unsigned int)v;
		} else {
			return bk_store_bad_arg(cfg, "unknown option \"%s\" for driver nbd "
						"(timeout=SECONDS)", word);
		}
	}
	return 0;
}

static int
nbd_identify(const char *arg, char *id, size_t len)
{
	size_t n = strcspn(arg ? arg : "", ",");
	int w;

	if (!n)
		return -EINVAL;
	w = snprintf(id, len, "nbd:%.*s", (int)n, arg);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/* ---------------------------------------------------------------- */
/* Connections.                                                       */
/* ---------------------------------------------------------------- */

/* The errno of libnbd's last error in this thread, never 0. */
static int
nbd_err(void)
{
	int e = nbd_get_errno();

	return e > 0 ? e : EIO;
}

/* Close c's handle (libnbd retires what is still in flight) and free c. */
static void
conn_free(struct nbd_conn *c)
{
	nbd_close(c->h);
	pthread_mutex_destroy(&c->io);
	free(c);
}

/*
 * Connect to uri, waiting at most ms for the handshake.  0 and *out, or
 * -errno with libnbd's message in err.
 */
static int
conn_connect(const char *uri, int ms, struct nbd_conn **out, char *err, size_t len)
{
	struct nbd_conn *c;
	uint64_t deadline = now_ns() + (uint64_t)ms * 1000000ull;
	int rc = 0;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->refs = 1;
	c->h = nbd_create();
	if (!c->h) {
		snprintf(err, len, "nbd_create: %s", nbd_get_error());
		free(c);
		return -ENOMEM;
	}
	pthread_mutex_init(&c->io, NULL);
	/* No zeroing of each read's buffer before the read (a memset of
	 * the whole request, 1 MiB for a large read).  Nothing
	 * reads a failed read's buffer: reap copies a bounce buffer out
	 * and the dataplane copies its own to the guest only on success;
	 * a guest's mapped pages hold the guest's own data or the
	 * server's, never another's. */
	nbd_set_pread_initialize(c->h, false);
	/* Simple replies: a read's answer is a 16-byte header and the data,
	 * which libnbd takes in two recv() calls (and nbdkit sends in two);
	 * a structured one adds a chunk header and an offset, two calls
	 * more each side.  Structured replies only buy what this store does
	 * not use (block status, DF, holes sent as a length: a sparse
	 * read now carries its zeroes). */
	nbd_set_request_structured_replies(c->h, false);
	if (nbd_aio_connect_uri(c->h, uri) < 0) {
		rc = -nbd_err();
		snprintf(err, len, "%s", nbd_get_error());
		goto fail;
	}
	while (nbd_aio_is_connecting(c->h)) {
		uint64_t now = now_ns();
		unsigned int dir = nbd_aio_get_direction(c->h);
		struct pollfd p = { .fd = nbd_aio_get_fd(c->h) };
		int r;

		if (now >= deadline) {
			rc = -ETIMEDOUT;
			snprintf(err, len, "no handshake within %d ms", ms);
			goto fail;
		}
		p.events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
			   (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
		if (p.fd < 0 || !p.events)
			break;
		r = poll(&p, 1, (int)((deadline - now) / 1000000ull) + 1);
		if (r < 0 && errno != EINTR) {
			rc = -errno;
			snprintf(err, len, "poll: %s", strerror(errno));
			goto fail;
		}
		if (r <= 0)
			continue;
		/* an error or hang-up goes to the side libnbd waits on: a
		 * socket still connecting (a vsock with no peer) waits to
		 * write, and libnbd then reads the connect's error itself;
		 * told "readable" there, it failed on its own state */
		if ((p.revents & POLLIN) ||
		    ((p.revents & (POLLHUP | POLLERR)) && (dir & LIBNBD_AIO_DIRECTION_READ)))
			r = nbd_aio_notify_read(c->h);
		else
			r = nbd_aio_notify_write(c->h);
		if (r < 0) {
			rc = -nbd_err();
			snprintf(err, len, "%s", nbd_get_error());
			goto fail;
		}
	}
	if (!nbd_aio_is_ready(c->h)) {
		rc = -ECONNREFUSED;
		snprintf(err, len, "%s", nbd_get_error() ? nbd_get_error() : "handshake failed");
		goto fail;
	}
	c->fd = nbd_aio_get_fd(c->h);
	{
		/* Room for a whole large write in the socket: with the
		 * default send buffer (wmem_default, 208 KiB here) a 1 MiB
		 * write's send stops four times for the server to drain it,
		 * each a wake-up on both sides.  Capped by the kernel
		 * (net.core.wmem_max) without an error; a refusal only
		 * costs speed, so it is said and the default kept. */
		int sz = NBD_SNDBUF;

		if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) < 0)
			log_error("nbd %s: SO_SNDBUF %d: %m; the socket keeps its default "
				  "send buffer", uri, sz);
	}
	*out = c;
	return 0;
fail:
	conn_free(c);
	return rc;
}

static void
conn_put(struct nbd_store *s, struct nbd_conn *c)
{
	bool last;

	if (!c)
		return;
	pthread_mutex_lock(&s->lock);
	last = --c->refs == 0;
	pthread_mutex_unlock(&s->lock);
	if (last) {
		conn_free(c);
	}
}

/*
 * Does c's export still match what s advertised?  NULL if so, else why
 * not (a reconnect to a different export is refused).
 */
static const char *
conn_mismatch(const struct nbd_store *s, struct nbd_conn *c)
{
	int64_t size = nbd_get_size(c->h);

	if (size < 0 || (uint64_t)size != s->srv_size)
		return "its size changed";
	if (!s->f.read_only && nbd_is_read_only(c->h) != 0)
		return "it is read-only now";
	if (s->srv_flush && nbd_can_flush(c->h) != 1)
		return "it cannot flush any more";
	if (s->srv_fua && nbd_can_fua(c->h) != 1)
		return "it has no FUA any more";
	if (s->f.can_discard && nbd_can_trim(c->h) != 1)
		return "it cannot trim any more";
	if (s->per_queue && !s->f.read_only && nbd_can_multi_conn(c->h) != 1)
		return "it has no multi-conn any more";
	return NULL;
}

/* The connection died (seen by whoever drove it first): log it once and
 * decide whether acknowledged writes may be gone. */
static void
conn_died(struct nbd_store *s, struct nbd_conn *c, const char *why)
{
	if (__atomic_exchange_n(&c->dead, true, __ATOMIC_ACQ_REL))
		return;
	if (s->f.writeback && __atomic_load_n(&s->wdone, __ATOMIC_ACQUIRE) >
			      __atomic_load_n(&s->wflushed, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&s->lost, true, __ATOMIC_RELEASE);
		log_error("nbd %s: connection lost (%s) with writes the server may not have "
			  "made durable: every later FLUSH fails", s->uri, why);
	} else {
		log_error("nbd %s: connection lost (%s): its requests fail; reconnecting on "
			  "the next request", s->uri, why);
	}
}

/* ---------------------------------------------------------------- */
/* open, close.                                                       */
/* ---------------------------------------------------------------- */

static void
store_free(struct nbd_store *s)
{
	if (s->shared)
		conn_put(s, s->shared);
	pthread_mutex_destroy(&s->lock);
	free(s->arg_copy);
	free(s);
}

static int
nbd_store_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	struct nbd_store *s;
	struct nbd_conn *c;
	char err[256] = "";
	int64_t size;
	int rc;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->lock, NULL);
	rc = arg_parse(cfg, cfg->arg, s);
	if (rc < 0)
		goto err;
	rc = conn_connect(s->uri, NBD_CONNECT_MS, &c, err, sizeof(err));
	if (rc < 0) {
		rc = bk_store_fail(cfg, rc, "nbd store", "cannot connect to %s: %s", s->uri, err);
		goto err;
	}
	s->shared = c;
	size = nbd_get_size(c->h);
	if (size < 0) {
		rc = bk_store_fail(cfg, -nbd_err(), "nbd store", "nbd_get_size %s: %s", s->uri,
				   nbd_get_error());
		goto err;
	}
	s->srv_size = (uint64_t)size;
	s->srv_ro = nbd_is_read_only(c->h) == 1;
	if (s->srv_ro && !cfg->read_only) {
		rc = bk_store_fail(cfg, -EROFS, "nbd store", "export %s is read-only: it needs "
				   "mode=r", s->uri);
		goto err;
	}
	s->srv_flush = !cfg->read_only && nbd_can_flush(c->h) == 1;
	s->srv_fua = !cfg->read_only && nbd_can_fua(c->h) == 1;
	s->srv_trim = nbd_can_trim(c->h) == 1;
	if (cfg->writethrough && s->srv_flush && !s->srv_fua) {
		rc = bk_store_fail(cfg, -EINVAL, "nbd store", "export %s has a write cache "
				   "and no FUA: cache=writethrough cannot be honoured", s->uri);
		goto err;
	}
	s->fua_all = cfg->writethrough && s->srv_fua;
	s->per_queue = cfg->read_only || nbd_can_multi_conn(c->h) == 1;
	if (size & 511)
		log_info("nbd %s: size %" PRId64 " is not a multiple of 512: the last %u "
			 "bytes are not served", s->uri, size, (unsigned int)(size & 511));
	s->f.size = (uint64_t)size & ~(uint64_t)511;
	if (!s->f.size) {
		rc = bk_store_fail(cfg, -EINVAL, "nbd store", "export %s is empty (%" PRId64
				   " bytes): nothing to serve", s->uri, size);
		goto err;
	}
	s->f.sector_size = 512;
	s->f.physical_sector_size = 512;
	s->f.read_only = cfg->read_only;
	s->f.can_flush = true;		/* NBD_CMD_FLUSH, or nothing to flush */
	s->f.writeback = s->srv_flush && !s->fua_all;
	s->f.fua = s->srv_fua || !s->srv_flush ? BK_FUA_NATIVE : BK_FUA_EMULATED;
	s->f.can_discard = !cfg->read_only && s->srv_trim;
	s->f.can_secure_discard = false;
	s->f.direct = true;		/* no host page cache on the way */
	log_info("nbd %s: %" PRIu64 " bytes, %s, fua %s, %s%s, %s", s->uri, s->f.size,
		 s->f.writeback ? "server cache (flushes needed)"
				: s->fua_all ? "FUA on every write (cache=writethrough)"
					     : "no server cache (writes durable on reply)",
		 s->f.fua == BK_FUA_NATIVE ? "native" : "emulated",
		 s->f.can_discard ? "trim" : "no trim", cfg->read_only ? ", read-only" : "",
		 s->per_queue ? "a connection per queue (multi-conn)" : "one shared connection");
	if (s->per_queue) {
		/* the queues connect their own */
		conn_put(s, s->shared);
		s->shared = NULL;
	}
	*f = s->f;
	*priv = s;
	return 0;
err:
	store_free(s);
	return rc;
}

static void
nbd_store_close(void *priv)
{
	store_free(priv);
}

/* ---------------------------------------------------------------- */
/* Queues.                                                            */
/* ---------------------------------------------------------------- */

/* Make q's fd readable: completions wait to be reaped.  Any thread.
 * The flag is set after the write, so that reap, which reads the
 * eventfd only when the flag says so, never leaves it readable. */
static void
signal_efd(struct nbd_queue *q)
{
	uint64_t one = 1;

	if (write(q->efd, &one, sizeof(one)) != sizeof(one)) {
		/* the counter cannot overflow here; nothing to do */
	}
	__atomic_store_n(&q->efd_set, true, __ATOMIC_RELEASE);
}

/* Any thread holding the handle's lock: one request is done. */
static int
slot_done(void *user_data, int *error)
{
	struct nbd_slot *sl = user_data;
	struct nbd_queue *q = sl->q;
	struct nbd_store *s = q->s;
	struct nbd_slot *head;

	__atomic_add_fetch(&q->in_cb, 1, __ATOMIC_SEQ_CST);
	sl->err = *error;
	if (sl->err == ESHUTDOWN) {
		/* The server is shutting down (nbdkit answers so to every
		 * request once it has a SIGTERM, and waits for its clients
		 * to go): it did not do this request.  The connection is
		 * dropped (conn_check) and the next request reconnects.  A
		 * FLUSH that an earlier good flush already covered has
		 * nothing to make durable: it is no failure, which would
		 * fail the vbd for a server's orderly restart. */
		__atomic_store_n(&sl->c->bye, true, __ATOMIC_RELEASE);
		if (sl->io->op == BK_IO_FLUSH && !__atomic_load_n(&s->lost, __ATOMIC_ACQUIRE) &&
		    __atomic_load_n(&s->wflushed, __ATOMIC_ACQUIRE) >= sl->wgen)
			sl->err = 0;
	}
	if (!sl->err && sl->io->op == BK_IO_WRITE && !(sl->io->flags & BK_IO_FUA) &&
	    !s->fua_all)
		__atomic_add_fetch(&s->wdone, 1, __ATOMIC_ACQ_REL);
	if (!sl->err && sl->io->op == BK_IO_FLUSH) {
		uint64_t cur = __atomic_load_n(&s->wflushed, __ATOMIC_ACQUIRE);

		while (cur < sl->wgen &&
		       !__atomic_compare_exchange_n(&s->wflushed, &cur, sl->wgen, true,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			;
	}
	head = __atomic_load_n(&q->done, __ATOMIC_RELAXED);
	do {
		sl->next = head;
	} while (!__atomic_compare_exchange_n(&q->done, &head, sl, true, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	/* q's own thread takes q->done after this libnbd call returns;
	 * another queue's thread (a shared handle) must wake q's */
	if (tls_q != q)
		signal_efd(q);
	__atomic_sub_fetch(&q->in_cb, 1, __ATOMIC_SEQ_CST);
	return 1;	/* retire the command */
}

/* Stop polling the socket of q's connection. */
static void
sock_drop(struct nbd_queue *q)
{
	if (q->sock < 0)
		return;
	epoll_ctl(q->ep, EPOLL_CTL_DEL, q->sock, NULL);
	close(q->sock);
	q->sock = -1;
	q->sock_events = 0;
}

/* Poll q->c's socket (through a dup of ours).  0/-errno. */
static int
sock_add(struct nbd_queue *q)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = EV_SOCK };

	q->sock = fcntl(q->c->fd, F_DUPFD_CLOEXEC, 0);
	if (q->sock < 0)
		return -errno;
	if (epoll_ctl(q->ep, EPOLL_CTL_ADD, q->sock, &ev) < 0) {
		int rc = -errno;

		close(q->sock);
		q->sock = -1;
		return rc;
	}
	q->sock_events = EPOLLIN;
	return 0;
}

/* Register the socket for what libnbd waits for next. */
static void
sock_update(struct nbd_queue *q)
{
	unsigned int dir;
	uint32_t want;

	if (q->sock < 0)
		return;
	dir = nbd_aio_get_direction(q->c->h);
	want = (dir & LIBNBD_AIO_DIRECTION_READ ? EPOLLIN : 0) |
	       (dir & LIBNBD_AIO_DIRECTION_WRITE ? EPOLLOUT : 0);
	if (want != q->sock_events) {
		struct epoll_event ev = { .events = want, .data.u32 = EV_SOCK };

		if (epoll_ctl(q->ep, EPOLL_CTL_MOD, q->sock, &ev) == 0)
			q->sock_events = want;
	}
}

/* Is q's connection dead?  Notices it first if it just died. */
static bool
conn_check(struct nbd_queue *q)
{
	struct nbd_conn *c = q->c;

	if (!c)
		return true;
	if (!__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&c->bye, __ATOMIC_ACQUIRE)) {
			conn_died(q->s, c, "the server is shutting down (ESHUTDOWN)");
		} else if (nbd_aio_is_dead(c->h) || nbd_aio_is_closed(c->h)) {
			const char *e = nbd_get_error();

			conn_died(q->s, c, e ? e : "closed");
		}
	}
	if (__atomic_load_n(&c->dead, __ATOMIC_ACQUIRE)) {
		/* a server shutting down waits for its clients to go */
		if (q->sock >= 0 && __atomic_load_n(&c->bye, __ATOMIC_ACQUIRE))
			shutdown(q->sock, SHUT_RDWR);
		sock_drop(q);
		return true;
	}
	return false;
}

/*
 * Move the handle's state machine on as far as the socket lets it,
 * without blocking.  Called when the queue's fd polled readable (reap),
 * not after every submit: libnbd sends a request inside nbd_aio_*
 * already when the socket takes it, and asks for POLLOUT (sock_update)
 * when it did not.  Each notify comes after a poll that saw the socket
 * ready: libnbd 1.14 must not be told "readable" when it is not (a
 * recv that finds nothing at the start of a reply leaves the handle in
 * a state that waits for no direction at all, and the queue would
 * never be woken for that connection again).
 */
static void
drive(struct nbd_queue *q)
{
	struct nbd_conn *c = q->c;
	int i;

	if (conn_check(q))
		return;
	/* the poll and the notify after it under c->io (struct nbd_conn) */
	pthread_mutex_lock(&c->io);
	for (i = 0; i < 64; i++) {
		unsigned int dir = nbd_aio_get_direction(c->h);
		struct pollfd p = { .fd = q->sock };
		int r;

		/* another queue's thread saw it die (shared handle) */
		if (nbd_aio_is_dead(c->h) || nbd_aio_is_closed(c->h))
			break;
		p.events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
			   (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0);
		if (!p.events || poll(&p, 1, 0) <= 0)
			break;
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			r = nbd_aio_notify_read(c->h);
		else if (p.revents & POLLOUT)
			r = nbd_aio_notify_write(c->h);
		else
			break;
		if (r < 0) {
			/* this thread's error is the death's reason: say it
			 * before another thread notices with a vaguer one */
			conn_died(q->s, c, nbd_get_error());
			break;
		}
	}
	pthread_mutex_unlock(&c->io);
	if (!conn_check(q))
		sock_update(q);
}

/* Switch q to connection c (a reference the caller passes on). */
static int
queue_use(struct nbd_queue *q, struct nbd_conn *c)
{
	sock_drop(q);
	conn_put(q->s, q->c);
	q->c = c;
	return c ? sock_add(q) : 0;
}

/*
 * q's connection is dead or missing: find or make a live one, at most
 * one attempt a second per store.  True when q has a live connection.
 */
static bool
reconnect(struct nbd_queue *q)
{
	struct nbd_store *s = q->s;
	struct nbd_conn *c = NULL;
	char err[256] = "";
	const char *bad;
	uint64_t now = now_ns();
	int rc;

	pthread_mutex_lock(&s->lock);
	if (!s->per_queue && s->shared && s->shared != q->c &&
	    !__atomic_load_n(&s->shared->dead, __ATOMIC_ACQUIRE)) {
		/* another queue reconnected the shared handle already */
		c = s->shared;
		c->refs++;
	} else if (now - s->last_attempt_ns >= NBD_RECONNECT_GAP_NS || !s->last_attempt_ns) {
		s->last_attempt_ns = now;
		rc = conn_connect(s->uri, NBD_RECONNECT_MS, &c, err, sizeof(err));
		if (rc == 0 && (bad = conn_mismatch(s, c))) {
			log_error("nbd %s: reconnected, but %s: not using it", s->uri, bad);
			conn_free(c);
			c = NULL;
		} else if (rc == 0) {
			log_info("nbd %s: reconnected", s->uri);
			if (!s->per_queue) {
				struct nbd_conn *old = s->shared;

				s->shared = c;
				c->refs++;	/* the store's and q's */
				if (old && --old->refs == 0) {
					conn_free(old);
				}
			}
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (!c)
		return false;
	return queue_use(q, c) == 0;
}

static int
nbd_queue_open(void *priv, unsigned int depth, void **qpriv)
{
	struct nbd_store *s = priv;
	struct nbd_queue *q;
	struct nbd_conn *c = NULL;
	struct epoll_event ev;
	char err[256];
	unsigned int i;
	int rc;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->s = s;
	q->depth = depth;
	q->sock = -1;
	q->slots = calloc(depth, sizeof(*q->slots));
	q->ep = epoll_create1(EPOLL_CLOEXEC);
	q->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	q->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	rc = !q->slots ? -ENOMEM : (q->ep < 0 || q->efd < 0 || q->tfd < 0) ? -errno : 0;
	if (rc == 0) {
		ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = EV_DONE };
		if (epoll_ctl(q->ep, EPOLL_CTL_ADD, q->efd, &ev) < 0)
			rc = -errno;
		ev = (struct epoll_event){ .events = EPOLLIN, .data.u32 = EV_TIMER };
		if (rc == 0 && epoll_ctl(q->ep, EPOLL_CTL_ADD, q->tfd, &ev) < 0)
			rc = -errno;
	}
	if (rc == 0 && s->per_queue) {
		const char *bad;

		rc = conn_connect(s->uri, NBD_CONNECT_MS, &c, err, sizeof(err));
		if (rc < 0) {
			log_error("nbd %s: a queue's connection: %s", s->uri, err);
		} else if ((bad = conn_mismatch(s, c))) {
			log_error("nbd %s: a queue's connection: the export changed since the "
				  "open (%s)", s->uri, bad);
			conn_free(c);
			c = NULL;
			rc = -EIO;
		}
	} else if (rc == 0) {
		pthread_mutex_lock(&s->lock);
		c = s->shared;
		if (c)
			c->refs++;
		pthread_mutex_unlock(&s->lock);
	}
	/* shared: a dead shared handle is replaced by the first submit
	 * (reconnect); per queue: no connection, no queue (the vbd's
	 * connect fails with the reason logged) */
	if (rc == 0 && c)
		rc = queue_use(q, c);
	if (rc < 0) {
		if (q->ep >= 0)
			close(q->ep);
		if (q->efd >= 0)
			close(q->efd);
		if (q->tfd >= 0)
			close(q->tfd);
		conn_put(s, q->c);
		free(q->slots);
		free(q);
		return rc;
	}
	for (i = 0; i < depth; i++) {
		q->slots[i].q = q;
		q->slots[i].next = q->free;
		q->free = &q->slots[i];
	}
	*qpriv = q;
	return 0;
}

/* Move what the callbacks finished onto q->ready, oldest first. */
static void
take_done(struct nbd_queue *q)
{
	struct nbd_slot *list, *rev = NULL, **tail;

	list = __atomic_exchange_n(&q->done, NULL, __ATOMIC_ACQUIRE);
	while (list) {			/* pushed newest first */
		struct nbd_slot *next = list->next;

		list->busy = false;
		list->next = rev;
		rev = list;
		list = next;
	}
	for (tail = &q->ready; *tail; tail = &(*tail)->next)
		;
	*tail = rev;
}

/* Complete sl now, without libnbd (refused, or nothing to do). */
static void
complete_now(struct nbd_queue *q, struct nbd_slot *sl, int err)
{
	struct nbd_slot **tail;

	sl->err = err;
	sl->next = NULL;
	for (tail = &q->ready; *tail; tail = &(*tail)->next)
		;
	*tail = sl;
	signal_efd(q);
}

/* The timer's period: a quarter of the timeout. */
static uint64_t
tick_ns(const struct nbd_queue *q)
{
	return (uint64_t)q->s->timeout_s * 1000000000ull / 4;
}

/*
 * The timer: ticks while requests are in flight; a request older than
 * the timeout drops the connection (libnbd then fails all of its).
 * The timerfd is read only once its next expiry has passed (or when
 * force): it is armed on an absolute schedule, so q->tick_at says when
 * it can be readable, and a reap in between costs no read() for it.
 * Whenever it polls readable, tick_at has passed, so it is drained
 * (a tick left behind would keep the epoll readable).
 */
static void
timer_check(struct nbd_queue *q, bool force)
{
	uint64_t ticks, now, limit = (uint64_t)q->s->timeout_s * 1000000000ull;
	unsigned int i;

	if (!force && (!q->timer_on || now_ns() < q->tick_at))
		return;
	if (read(q->tfd, &ticks, sizeof(ticks)) != sizeof(ticks) || !q->timer_on)
		return;
	q->tick_at += ticks * tick_ns(q);
	if (q->sock < 0)
		return;
	now = now_ns();
	for (i = 0; i < q->depth; i++) {
		struct nbd_slot *sl = &q->slots[i];

		if (__atomic_load_n(&sl->busy, __ATOMIC_ACQUIRE) && now - sl->t0 > limit) {
			log_error("nbd %s: a request got no answer in %u s: dropping the "
				  "connection", q->s->uri, q->s->timeout_s);
			shutdown(q->sock, SHUT_RDWR);
			return;
		}
	}
}

/* Arm (every tick_ns from now) or disarm the timer; disarming also
 * clears a tick not yet read. */
static void
timer_set(struct nbd_queue *q, bool on)
{
	uint64_t ns = tick_ns(q), at = 0;
	struct itimerspec its = { 0 };

	if (on == q->timer_on)
		return;
	if (on) {
		at = now_ns() + ns;
		its.it_interval.tv_sec = (time_t)(ns / 1000000000ull);
		its.it_interval.tv_nsec = (long)(ns % 1000000000ull);
		its.it_value.tv_sec = (time_t)(at / 1000000000ull);
		its.it_value.tv_nsec = (long)(at % 1000000000ull);
	}
	if (timerfd_settime(q->tfd, on ? TFD_TIMER_ABSTIME : 0, &its, NULL) == 0) {
		q->timer_on = on;
		q->tick_at = at;
	}
}

static void
nbd_queue_close(void *qpriv)
{
	struct nbd_queue *q = qpriv;
	struct pollfd pfd = { .fd = q->ep, .events = POLLIN };
	struct nbd_queue *outer = tls_q;
	unsigned int i;
	uint64_t v;

	/* Wait for everything in flight (the contract), bounded by the
	 * timeout: a callback must not find q freed. */
	tls_q = q;
	for (;;) {
		__atomic_store_n(&q->efd_set, false, __ATOMIC_RELEASE);
		if (read(q->efd, &v, sizeof(v)) < 0) {
			/* EAGAIN: nothing new */
		}
		timer_check(q, true);
		drive(q);
		take_done(q);
		while (q->ready) {
			q->ready = q->ready->next;
			q->inflight--;
		}
		if (!q->inflight && !__atomic_load_n(&q->in_cb, __ATOMIC_SEQ_CST))
			break;
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
	}
	tls_q = outer;
	sock_drop(q);
	conn_put(q->s, q->c);
	close(q->ep);
	close(q->efd);
	close(q->tfd);
	for (i = 0; i < q->depth; i++)
		free(q->slots[i].bounce);
	free(q->slots);
	free(q);
}

static int
nbd_queue_fd(void *qpriv)
{
	struct nbd_queue *q = qpriv;

	return q->ep;
}

/* A buffer of len bytes for sl (several iovecs).  NULL: out of memory. */
static void *
bounce(struct nbd_slot *sl, size_t len)
{
	if (sl->bounce_cap < len) {
		void *b = NULL;

		if (posix_memalign(&b, 4096, len))
			return NULL;
		free(sl->bounce);
		sl->bounce = b;
		sl->bounce_cap = len;
	}
	return sl->bounce;
}

/* Hand io to libnbd in sl.  0, or an errno (not started). */
static int
issue(struct nbd_queue *q, struct nbd_slot *sl, struct bk_io *io)
{
	struct nbd_store *s = q->s;
	nbd_completion_callback cb = { .callback = slot_done, .user_data = sl };
	struct nbd_handle *h = q->c->h;
	void *buf = NULL;
	uint32_t flags = 0;
	int64_t cookie = -1;
	int i;

	if (io->op != BK_IO_READ && io->op != BK_IO_WRITE && io->op != BK_IO_FLUSH &&
	    io->op != BK_IO_DISCARD)
		return EOPNOTSUPP;
	sl->bounced = false;
	if (io->op == BK_IO_READ || io->op == BK_IO_WRITE) {
		if (io->iovcnt == 1) {
			buf = io->iov[0].iov_base;
		} else {
			buf = bounce(sl, io->len);
			if (!buf)
				return ENOMEM;
			sl->bounced = true;
		}
	}
	if (io->op == BK_IO_WRITE && sl->bounced) {
		char *p = buf;

		for (i = 0; i < io->iovcnt; i++) {
			memcpy(p, io->iov[i].iov_base, io->iov[i].iov_len);
			p += io->iov[i].iov_len;
		}
	}
	sl->t0 = now_ns();
	sl->c = q->c;
	__atomic_store_n(&sl->busy, true, __ATOMIC_RELEASE);
	/* a send may read replies too (libnbd pauses it for them) */
	pthread_mutex_lock(&q->c->io);
	switch (io->op) {
	case BK_IO_READ:
		io->host_action = sl->bounced ? "nbd_aio_pread+copy" : "nbd_aio_pread";
		cookie = nbd_aio_pread(h, buf, io->len, io->offset, cb, 0);
		break;
	case BK_IO_WRITE:
		/* FUA where the server has it; NATIVE without it means no
		 * server cache: every write is durable on reply */
		if (s->srv_fua && ((io->flags & BK_IO_FUA) || s->fua_all))
			flags = LIBNBD_CMD_FLAG_FUA;
		io->host_action = flags ? "nbd_aio_pwrite+FUA" : "nbd_aio_pwrite";
		cookie = nbd_aio_pwrite(h, buf, io->len, io->offset, cb, flags);
		break;
	case BK_IO_FLUSH:
		io->host_action = "nbd_aio_flush";
		sl->wgen = __atomic_load_n(&s->wdone, __ATOMIC_ACQUIRE);
		cookie = nbd_aio_flush(h, cb, 0);
		break;
	case BK_IO_DISCARD:
		io->host_action = "nbd_aio_trim";
		cookie = nbd_aio_trim(h, io->len, io->offset, cb, 0);
		break;
	default:
		break;	/* refused above */
	}
	pthread_mutex_unlock(&q->c->io);
	if (cookie < 0) {
		/* not issued: libnbd will not call slot_done */
		__atomic_store_n(&sl->busy, false, __ATOMIC_RELEASE);
		return nbd_err();
	}
	return 0;
}

static int
nbd_submit(void *qpriv, struct bk_io **ios, unsigned int n)
{
	struct nbd_queue *q = qpriv;
	struct nbd_store *s = q->s;
	struct nbd_queue *outer = tls_q;
	bool live;
	unsigned int i;

	tls_q = q;
	live = !conn_check(q) || reconnect(q);
	for (i = 0; i < n && q->free; i++) {
		struct bk_io *io = ios[i];
		struct nbd_slot *sl = q->free;
		int err;

		q->free = sl->next;
		sl->io = io;
		q->inflight++;
		if (io->op == BK_IO_FLUSH && __atomic_load_n(&s->lost, __ATOMIC_ACQUIRE)) {
			io->host_action = "lost-writes";
			complete_now(q, sl, EIO);
		} else if (io->op == BK_IO_FLUSH && !s->srv_flush) {
			io->host_action = "none (no server cache)";
			complete_now(q, sl, 0);
		} else if (!live && io->op == BK_IO_FLUSH &&
			   __atomic_load_n(&s->wdone, __ATOMIC_ACQUIRE) ==
			   __atomic_load_n(&s->wflushed, __ATOMIC_ACQUIRE)) {
			/* no write completed since the last good flush:
			 * nothing for this one to make durable, so it is no
			 * failure (a failed flush fails the vbd for good).
			 * Unflushed writes on a connection that died set
			 * s->lost above instead. */
			io->host_action = "none (not connected; nothing written since the last flush)";
			complete_now(q, sl, 0);
		} else if (!live) {
			io->host_action = "not-connected";
			complete_now(q, sl, ENOTCONN);
		} else if ((err = issue(q, sl, io)) != 0) {
			complete_now(q, sl, err);
		}
	}
	/* libnbd sent what it could inside nbd_aio_*; poll for the rest
	 * (POLLOUT) and for the replies.  No drive here: replies are read
	 * when the socket polls readable, and the caller polls our fd
	 * before it sleeps. */
	if (live && !conn_check(q)) {
		sock_update(q);
		timer_set(q, true);
	}
	/* a send that found the socket full may have read replies meanwhile
	 * (libnbd pauses a send for them): their callbacks ran in this
	 * thread without a wake-up */
	if (__atomic_load_n(&q->done, __ATOMIC_ACQUIRE))
		signal_efd(q);
	tls_q = outer;
	return i ? (int)i : (n ? -EAGAIN : 0);
}

static int
nbd_reap(void *qpriv, struct bk_io **done, unsigned int max)
{
	struct nbd_queue *q = qpriv;
	struct nbd_queue *outer = tls_q;
	unsigned int n = 0;
	uint64_t v;
	int i;

	/* clear readiness first, then collect: a later completion re-arms.
	 * The eventfd is read only when written: with a handle of its own
	 * the queue's callbacks run in its own thread, which takes them
	 * without one.  A shared handle's callbacks may run on another
	 * queue's thread: always read then (its flag is set after its
	 * write, and could be seen unset while the fd is readable). */
	if ((!q->s->per_queue || __atomic_exchange_n(&q->efd_set, false, __ATOMIC_ACQ_REL)) &&
	    read(q->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		return -errno;
	tls_q = q;
	timer_check(q, false);
	drive(q);
	tls_q = outer;
	take_done(q);
	while (n < max && q->ready) {
		struct nbd_slot *sl = q->ready;
		struct bk_io *io = sl->io;

		q->ready = sl->next;
		if (sl->err) {
			io->result = -sl->err;
		} else if (io->op == BK_IO_READ) {
			if (sl->bounced) {
				const char *p = sl->bounce;

				for (i = 0; i < io->iovcnt; i++) {
					memcpy(io->iov[i].iov_base, p, io->iov[i].iov_len);
					p += io->iov[i].iov_len;
				}
			}
			io->result = (int64_t)io->len;
		} else if (io->op == BK_IO_WRITE) {
			io->result = (int64_t)io->len;
		} else {
			io->result = 0;
		}
		sl->next = q->free;
		q->free = sl;
		q->inflight--;
		done[n++] = io;
	}
	if (!q->inflight)
		timer_set(q, false);
	if (q->ready)	/* more than max: keep the fd readable */
		signal_efd(q);
	return (int)n;
}

static const struct bk_store_driver nbd_driver = {
	.name = "nbd",
	.open = nbd_store_open,
	.close = nbd_store_close,
	.identify = nbd_identify,
	.queue_open = nbd_queue_open,
	.queue_close = nbd_queue_close,
	.queue_fd = nbd_queue_fd,
	.submit = nbd_submit,
	.reap = nbd_reap,
};

/* A module (store.h): blkbackd loads store-nbd.so for "nbd:" params. */
const struct bk_store_driver *const bk_store_module_driver = &nbd_driver;
const unsigned int bk_store_module_abi = BK_STORE_ABI;
