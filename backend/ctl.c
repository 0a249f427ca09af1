/*
 * ctl.c: blkbackd's control socket (ctl.h; the protocol is ctl-proto.h,
 * the commands blkbackd-ctl.8's).  Control thread only: one client at a
 * time, each step bounded by a timeout, so a stuck client costs the
 * loop at most a few seconds, and only root gets that far.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#include "ctl.h"
#include "ctl-proto.h"
#include "log.h"
#include "vbd.h"
#include "xbus.h"

#define CTL_IO_TIMEOUT_S 2

struct bk_ctl {
	struct bk_daemon *d;
	int fd;				/* listening */
	char *path;
	int held;			/* a shutdown/upgrade client, or -1 */
	char upgrade_path[PATH_MAX];
	struct timespec started;
};

/* ---------------------------------------------------------------- */
/* The socket.                                                        */
/* ---------------------------------------------------------------- */

/* Make path's directory (its last component only) when missing. */
static int
make_dir_of(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash || slash == path)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int
bk_ctl_open(struct bk_daemon *d, const char *path, struct bk_ctl **out)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct bk_ctl *c;
	mode_t old;
	int fd, r, probe;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_error("--ctl-socket %s: longer than a unix socket path may be (%zu)", path,
			  sizeof(sun.sun_path) - 1);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	r = make_dir_of(path);
	if (r < 0) {
		errno = -r;
		log_error("control socket %s: cannot make its directory: %m", path);
		return r;
	}
	/* another daemon answering there (another xenstore's blkbackd with
	 * the same --ctl-socket) keeps it; a stale socket is replaced */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0 && connect(probe, (struct sockaddr *)&sun, sizeof(sun)) == 0) {
		close(probe);
		log_error("control socket %s: another process answers there; use "
			  "--ctl-socket to give this blkbackd its own", path);
		return -EADDRINUSE;
	}
	if (probe >= 0)
		close(probe);
	/* only a socket is ours to replace: a file given by mistake is
	 * somebody's data */
	{
		struct stat st;

		if (lstat(path, &st) == 0) {
			if (!S_ISSOCK(st.st_mode)) {
				log_error("control socket %s: exists and is not a socket; "
					  "not replaced", path);
				return -EEXIST;
			}
			unlink(path);
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		r = -errno;
		log_error("control socket: socket: %m");
		return r;
	}
	old = umask(077);	/* born 0600: never a moment open to others */
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (r < 0 || chmod(path, 0600) < 0 || listen(fd, 8) < 0) {
		r = -errno;
		log_error("control socket %s: %m", path);
		close(fd);
		return r;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->path = strdup(path))) {
		free(c);
		close(fd);
		unlink(path);
		log_error("control socket: out of memory");
		return -ENOMEM;
	}
	c->d = d;
	c->fd = fd;
	c->held = -1;
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	*out = c;
	return 0;
}

int
bk_ctl_fd(const struct bk_ctl *c)
{
	return c->fd;
}

/*
 * Why PATH cannot be exec'ed, or NULL.  The upgrade drains every device
 * before the exec, and a failed exec ends the daemon: refuse here what
 * is sure to fail (root's access(X_OK) accepts any directory).
 */
static const char *
upgrade_refusal(const char *path, char *buf, size_t len)
{
	unsigned char magic[4] = { 0 };
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) < 0 || access(path, X_OK) < 0) {
		snprintf(buf, len, "%s", strerror(errno));
		return buf;
	}
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(buf, len, "%s", strerror(errno));
		return buf;
	}
	n = read(fd, magic, sizeof(magic));
	close(fd);
	if (!(n == 4 && !memcmp(magic, "\177ELF", 4)) && !(n >= 2 && !memcmp(magic, "#!", 2)))
		return "not a program (neither ELF nor #!)";
	return NULL;
}

const char *
bk_ctl_upgrade_path(const struct bk_ctl *c)
{
	return c->upgrade_path;
}

void
bk_ctl_close(struct bk_ctl *c, bool unlink_path)
{
	if (!c)
		return;
	close(c->fd);
	if (unlink_path)
		unlink(c->path);
	/* c->held stays open on purpose: its EOF is the client's "done" */
	free(c->path);
	free(c);
}

/* ---------------------------------------------------------------- */
/* Commands.                                                          */
/* ---------------------------------------------------------------- */

/* What a command answers: records in out, then "ok" or the error. */
struct reply {
	struct bk_ctl_buf out;
	int err;			/* -errno, 0 ok */
	char msg[256];
};

static int
fail(struct reply *rp, int err, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(3, 4);

static int
fail(struct reply *rp, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rp->msg, sizeof(rp->msg), fmt, ap);
	va_end(ap);
	rp->err = err;
	return err;
}

/* "DOMID/DEVID" -> the vbd, or NULL after fail(). */
static struct bk_dev *
find_vbd(struct bk_daemon *d, const char *arg, struct reply *rp)
{
	unsigned long f, id;
	char *end;
	struct bk_dev *dev;

	errno = 0;
	f = strtoul(arg, &end, 10);
	if (errno || end == arg || *end != '/' || f > UINT32_MAX)
		goto bad;
	arg = end + 1;
	id = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || id > UINT32_MAX)
		goto bad;
	dev = bk_xenbus_find(d, (uint32_t)f, (uint32_t)id);
	if (!dev)
		fail(rp, -ENOENT, "no vbd %lu/%lu", f, id);
	return dev;
bad:
	fail(rp, -EINVAL, "\"%.64s\" is not a vbd: DOMID/DEVID (e.g. 1/51712)", arg);
	return NULL;
}

static const char *
phase_name(enum bk_dev_phase p)
{
	switch (p) {
	case DEV_CONNECTED:
		return "connected";
	case DEV_DRAINING:
		return "draining";
	default:
		return "disconnected";
	}
}

/* dir/key from xenstore into the record (nothing when absent). */
static void
kv_xs(struct reply *rp, struct bk_daemon *d, const char *dir, const char *key,
      const char *name)
{
	char *v;

	if (!*dir)
		return;
	v = xbus_read(d->xs, XBT_NULL, dir, key);
	bk_ctl_buf_kv(&rp->out, name, v);
	free(v);
}

static void
cmd_list(struct bk_ctl *c, struct reply *rp)
{
	struct bk_daemon *d = c->d;
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next) {
		struct bk_ctl_buf *b = &rp->out;
		struct bk_stats st;
		unsigned int order = 0;

		bk_vbd_stats(dev, &st);
		bk_ctl_buf_printf(b, "vbd");
		bk_ctl_buf_kv(b, "vbd", dev->name);
		bk_ctl_buf_kvu(b, "domid", dev->frontid);
		bk_ctl_buf_kvu(b, "devid", dev->devid);
		kv_xs(rp, d, dev->be, "dev", "vdev");
		kv_xs(rp, d, dev->be, "params", "params");
		bk_ctl_buf_kvu(b, "state", dev->state < 0 ? 0 : (uint64_t)dev->state);
		bk_ctl_buf_kv(b, "state_name", dev->state < 0 ? "none" :
			      xbus_state_name((unsigned int)dev->state));
		kv_xs(rp, d, dev->fe, "state", "frontend_state");
		bk_ctl_buf_kv(b, "phase", phase_name(dev->phase));
		bk_ctl_buf_kvu(b, "queues", dev->nr_queues);
		if (dev->phase != DEV_DISCONNECTED) {
			const struct bk_features *f = &dev->feat;

			xbus_read_uint(d->xs, XBT_NULL, dev->fe, "ring-page-order", 0, &order);
			bk_ctl_buf_kvu(b, "ring_pages", 1u << (order < 8 ? order : 0));
			bk_ctl_buf_kvu(b, "sectors", f->sectors);
			bk_ctl_buf_kvu(b, "flush_cache", f->flush_cache);
			bk_ctl_buf_kvu(b, "barrier", f->barrier);
			bk_ctl_buf_kvu(b, "discard", f->discard);
			bk_ctl_buf_kvu(b, "persistent", dev->persistent);
			bk_ctl_buf_kv(b, "fua", f->fua == BK_FUA_NATIVE ? "native" :
				      f->fua == BK_FUA_EMULATED ? "emulated" : "none");
			bk_ctl_buf_kvu(b, "writeback", f->writeback);
			bk_ctl_buf_kvu(b, "read_only", f->read_only);
		} else {
			bk_ctl_buf_kvu(b, "ring_pages", 0);
		}
		bk_ctl_buf_kvu(b, "pgrants", st.pgrant_mapped);
		bk_ctl_buf_kvu(b, "failed", dev->failed);
		kv_xs(rp, d, dev->be, "error", "error");
		bk_ctl_buf_printf(b, "\n");
	}
}

static void
stats_record(struct bk_ctl_buf *b, const struct bk_dev *dev)
{
	struct bk_stats s;
	unsigned int i;

	bk_vbd_stats(dev, &s);
	bk_ctl_buf_printf(b, "stats");
	bk_ctl_buf_kv(b, "vbd", dev->name);
	bk_ctl_buf_kvu(b, "domid", dev->frontid);
	bk_ctl_buf_kvu(b, "devid", dev->devid);
	bk_ctl_buf_kvu(b, "connected", dev->phase == DEV_CONNECTED);
	bk_ctl_buf_kvu(b, "rd_req", s.rd_req);
	bk_ctl_buf_kvu(b, "wr_req", s.wr_req);
	bk_ctl_buf_kvu(b, "flush_req", s.flush_req);
	bk_ctl_buf_kvu(b, "barrier_req", s.barrier_req);
	bk_ctl_buf_kvu(b, "discard_req", s.discard_req);
	bk_ctl_buf_kvu(b, "rd_sect", s.rd_sect);
	bk_ctl_buf_kvu(b, "wr_sect", s.wr_sect);
	bk_ctl_buf_kvu(b, "discard_sect", s.discard_sect);
	bk_ctl_buf_kvu(b, "oo_req", s.oo_req);
	bk_ctl_buf_kvu(b, "errors", s.err_rsp);
	bk_ctl_buf_kvu(b, "eopnotsupp", s.eopnotsupp_rsp);
	bk_ctl_buf_kvu(b, "pgrants", s.pgrant_mapped);
	bk_ctl_buf_kvu(b, "pgrant_maps", s.pgrant_maps);
	bk_ctl_buf_printf(b, " lat_us=");
	for (i = 0; i < BK_LAT_BUCKETS; i++)
		bk_ctl_buf_printf(b, "%s%" PRIu64, i ? "," : "", s.lat_us[i]);
	bk_ctl_buf_printf(b, "\n");
}

static void
cmd_stats(struct bk_ctl *c, struct reply *rp, char **argv, int argc)
{
	struct bk_dev *dev;

	if (argc > 2) {
		fail(rp, -EINVAL, "usage: stats [DOMID/DEVID]");
		return;
	}
	if (argc == 2) {
		dev = find_vbd(c->d, argv[1], rp);
		if (dev)
			stats_record(&rp->out, dev);
		return;
	}
	for (dev = c->d->devs; dev; dev = dev->next)
		stats_record(&rp->out, dev);
}

static void
cmd_resize(struct bk_ctl *c, struct reply *rp, char **argv, int argc)
{
	uint64_t old, now;
	struct bk_dev *dev;
	int r;

	if (argc != 2) {
		fail(rp, -EINVAL, "usage: resize DOMID/DEVID");
		return;
	}
	dev = find_vbd(c->d, argv[1], rp);
	if (!dev)
		return;
	r = bk_vbd_check_size(dev, &old, &now);
	if (r == -ENOTCONN) {
		fail(rp, r, "vbd %s is not connected (its size is read when it connects)",
		     dev->name);
	} else if (r == -EOPNOTSUPP) {
		fail(rp, r, "vbd %s: its store cannot tell a new size (memory, null, or a "
		     "--record/--cache=volatile stack)", dev->name);
	} else if (r < 0) {
		fail(rp, r, "vbd %s: %s", dev->name, strerror(-r));
	} else {
		bk_ctl_buf_printf(&rp->out, "resize");
		bk_ctl_buf_kv(&rp->out, "vbd", dev->name);
		bk_ctl_buf_kvu(&rp->out, "old_sectors", old);
		bk_ctl_buf_kvu(&rp->out, "sectors", now);
		bk_ctl_buf_printf(&rp->out, "\n");
	}
}

static void
cmd_status(struct bk_ctl *c, struct reply *rp)
{
	struct bk_daemon *d = c->d;
	unsigned int n = 0, conn = 0;
	struct timespec now;
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next) {
		n++;
		conn += dev->phase == DEV_CONNECTED;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	bk_ctl_buf_printf(&rp->out, "daemon");
	bk_ctl_buf_kvu(&rp->out, "pid", (uint64_t)getpid());
	bk_ctl_buf_kv(&rp->out, "version", PACKAGE_VERSION);
	bk_ctl_buf_kvu(&rp->out, "uptime_s", (uint64_t)(now.tv_sec - c->started.tv_sec));
	bk_ctl_buf_kv(&rp->out, "transport", d->opt.transport == XENOPS_SIM ? "sim" : "xen");
	bk_ctl_buf_kvu(&rp->out, "domid", d->self);
	bk_ctl_buf_kvu(&rp->out, "vbds", n);
	bk_ctl_buf_kvu(&rp->out, "connected", conn);
	bk_ctl_buf_kvu(&rp->out, "close_on_exit", d->opt.close_on_exit);
	bk_ctl_buf_printf(&rp->out, "\n");
}

/* The command in line: its records and result in rp; the loop's action. */
static enum bk_ctl_action
dispatch(struct bk_ctl *c, char *line, struct reply *rp)
{
	char *argv[8];
	int argc = bk_ctl_split(line, argv, ARRAY_SIZE(argv));

	if (argc < 0) {
		fail(rp, -E2BIG, "too many words");
		return BK_CTL_NONE;
	}
	if (argc == 0) {
		fail(rp, -EINVAL, "empty request");
		return BK_CTL_NONE;
	}
	if (!strcmp(argv[0], "list") && argc == 1) {
		cmd_list(c, rp);
	} else if (!strcmp(argv[0], "stats")) {
		cmd_stats(c, rp, argv, argc);
	} else if (!strcmp(argv[0], "resize")) {
		cmd_resize(c, rp, argv, argc);
	} else if (!strcmp(argv[0], "status") && argc == 1) {
		cmd_status(c, rp);
	} else if (!strcmp(argv[0], "shutdown") && argc <= 2) {
		if (argc == 2 && strcmp(argv[1], "--close")) {
			fail(rp, -EINVAL, "usage: shutdown [--close]");
			return BK_CTL_NONE;
		}
		return argc == 2 ? BK_CTL_SHUTDOWN_CLOSE : BK_CTL_SHUTDOWN;
	} else if (!strcmp(argv[0], "upgrade") && argc <= 2) {
		const char *path = argc == 2 ? argv[1] : "/proc/self/exe";

		if (path[0] != '/') {
			fail(rp, -EINVAL, "upgrade: \"%.200s\" is not an absolute path", path);
			return BK_CTL_NONE;
		}
		char err[128];
		const char *why = upgrade_refusal(path, err, sizeof(err));

		if (why) {
			fail(rp, -EINVAL, "upgrade: %.200s: %s", path, why);
			return BK_CTL_NONE;
		}
		snprintf(c->upgrade_path, sizeof(c->upgrade_path), "%s", path);
		return BK_CTL_UPGRADE;
	} else {
		fail(rp, -EINVAL, "unknown request \"%.64s\" (list, stats [VBD], resize VBD, "
		     "status, shutdown [--close], upgrade [PATH])", argv[0]);
	}
	return BK_CTL_NONE;
}

/* ---------------------------------------------------------------- */
/* One client.                                                        */
/* ---------------------------------------------------------------- */

static bool
send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

static void
send_result(int fd, const struct reply *rp)
{
	char line[400];
	int n;

	if (rp->out.oom)
		n = snprintf(line, sizeof(line), "error ENOMEM out of memory\n");
	else if (rp->err)
		n = snprintf(line, sizeof(line), "error %s %s\n",
			     strerrorname_np(-rp->err) ? strerrorname_np(-rp->err) : "EIO",
			     rp->msg);
	else
		n = snprintf(line, sizeof(line), "ok\n");
	if (!rp->out.oom && !rp->err && rp->out.len &&
	    !send_all(fd, rp->out.p, rp->out.len))
		return;
	send_all(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/* Read one line (without its newline) into buf.  0 or -errno. */
static int
read_request(int fd, char *buf, size_t len)
{
	size_t have = 0;

	for (;;) {
		ssize_t n = recv(fd, buf + have, len - 1 - have, 0);
		char *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		if (n == 0)
			return -ECONNRESET;
		have += (size_t)n;
		buf[have] = '\0';
		nl = memchr(buf, '\n', have);
		if (nl) {
			*nl = '\0';
			return 0;
		}
		if (have == len - 1)
			return -E2BIG;
	}
}

enum bk_ctl_action
bk_ctl_handle(struct bk_ctl *c)
{
	struct timeval tv = { .tv_sec = CTL_IO_TIMEOUT_S };
	struct reply rp = { .err = 0 };
	enum bk_ctl_action act = BK_CTL_NONE;
	char line[BK_CTL_MAX_LINE];
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	int fd, r;

	fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_error("control socket: accept: %m");
		return BK_CTL_NONE;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != 0) {
		log_info("control socket: refused a client (pid %d, uid %d): only root may "
			 "control blkbackd", cl == sizeof(cred) ? (int)cred.pid : -1,
			 cl == sizeof(cred) ? (int)cred.uid : -1);
		fail(&rp, -EPERM, "only root may control blkbackd");
		/* take its request first: an answer before it would be lost
		 * in the client's failed send */
		read_request(fd, line, sizeof(line));
		send_result(fd, &rp);
		close(fd);
		return BK_CTL_NONE;
	}
	r = read_request(fd, line, sizeof(line));
	if (r < 0) {
		if (r != -ECONNRESET) {
			fail(&rp, r, "%s", r == -E2BIG ? "request too long" :
			     "no request line within 2 s");
			send_result(fd, &rp);
		}
		close(fd);
		return BK_CTL_NONE;
	}
	bk_dbg(BK_DBG_XENBUS, "control socket: \"%s\"", line);
	act = dispatch(c, line, &rp);
	send_result(fd, &rp);
	bk_ctl_buf_free(&rp.out);
	if (act != BK_CTL_NONE && c->held < 0)
		c->held = fd;	/* closed by exit or exec: the client's "done" */
	else
		close(fd);
	return act;
}
