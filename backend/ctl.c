/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ctl.c: blkbackd's control socket (ctl.h; the protocol is ctl-proto.h,
 * the commands blkbackd-ctl.8's).  Control thread only: up to
 * CTL_MAX_PENDING clients at once, each read and written as its socket
 * lets it within a deadline, so a stuck client holds up nothing.  Root
 * may do everything; with --ctl-group, that group's members may list,
 * stats and status only.
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

#include "ctl.h"
#include "ctl-proto.h"
#include "log.h"
#include "vbd.h"
#include "xenbus.h"
#include "xbus.h"

#define CTL_IO_TIMEOUT_S 2
/* Clients being served: their request line coming in, or their answer
 * going out.  Each is read, and written, as its socket lets it, so that
 * one that says nothing or reads nothing (a stuck scraper) never holds
 * up the control thread, whose xenstore work is every guest's
 * handshake.  Each has CTL_IO_TIMEOUT_S for its line, then
 * CTL_ANSWER_TIMEOUT_S to take its answer.  While all slots are taken,
 * new connections wait in the listen backlog. */
#define CTL_MAX_PENDING 16
#define CTL_ANSWER_TIMEOUT_S 10
/* A resize waits this long for the backing's size (its probe runs on a
 * queue thread: bk_vbd_size_ask), then answers ETIMEDOUT; blkbackd-ctl
 * waits 10 s for an answer. */
#define CTL_RESIZE_WAIT_S 5
#define CTL_TICK_MS 250			/* their deadlines are looked at this often */

enum { CTL_EV_LISTEN = CTL_MAX_PENDING, CTL_EV_TIMER };

struct ctl_client {
	int fd;				/* -1: a free slot */
	bool refused;			/* neither root nor --ctl-group: answered EPERM */
	bool readonly;			/* --ctl-group, not root: list, stats, status */
	size_t have;
	struct timespec deadline;	/* CLOCK_MONOTONIC */
	char line[BK_CTL_MAX_LINE + 1];	/* the line, newline included, and a NUL */
	/* the answer, once the line was carried out: what is left of it
	 * goes out as the socket takes it (EPOLLOUT) */
	struct bk_ctl_buf answer;
	size_t sent;
	/* a resize waiting for the answer to size probe rs_gen (or a later
	 * one) of vbd rs_f/rs_id, until deadline (bk_ctl_resizes); the vbd
	 * is looked up again each time, never held */
	bool resizing;
	uint32_t rs_f, rs_id;
	uint64_t rs_gen;
};

struct bk_ctl {
	struct bk_daemon *d;
	int fd;				/* listening */
	int epfd;			/* fd, tfd and the pending clients: bk_ctl_fd */
	int tfd;			/* ticks while clients are pending */
	unsigned int npending;
	bool accepting;			/* the listening socket is in epfd */
	struct ctl_client pending[CTL_MAX_PENDING];
	char *path;
	int held;			/* a shutdown/upgrade client, or -1 */
	char upgrade_path[PATH_MAX];
	/* a --version probe SIGKILL did not end in time (upgrade_not_blkbackd),
	 * reaped at the next probe or at exit; 0: none */
	pid_t stray;
	struct timespec started;
	gid_t group;			/* --ctl-group, or (gid_t)-1 */
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

/*
 * --ctl-group: the socket is the group's, but its members must also get
 * through its directory.  The default one, /run/blkbackd, is the state
 * directory too, which blkbackd makes 0700 (before the socket): no member
 * could connect (EACCES) to a socket 0660 and theirs.  When the socket's
 * directory is the state directory and shuts the group out, it is given
 * to the group with search permission only (0710: no listing; the
 * records in it stay 0600).  Any other directory is the admin's: left
 * alone, and said.
 */
static void
let_group_through(const char *path, const char *state_dir, gid_t group)
{
	const char *slash = strrchr(path, '/');
	struct stat st, sst;
	char dir[PATH_MAX];

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	if (stat(dir, &st) < 0)
		return;
	if ((st.st_mode & S_IXOTH) || (st.st_gid == group && (st.st_mode & S_IXGRP)))
		return;
	if (!state_dir || stat(state_dir, &sst) < 0 ||
	    sst.st_dev != st.st_dev || sst.st_ino != st.st_ino) {
		log_info("control socket %s: --ctl-group's members cannot reach it while its "
			 "directory %s (mode %04o) shuts them out", path, dir,
			 (unsigned int)(st.st_mode & 07777));
		return;
	}
	if (chown(dir, (uid_t)-1, group) < 0 || chmod(dir, (st.st_mode & 07777) | S_IXGRP) < 0)
		log_error("control socket %s: letting --ctl-group through %s: %m", path, dir);
	else
		log_info("control socket %s: %s (the state directory) made mode %04o and "
			 "--ctl-group's, so that the group's members reach the socket", path, dir,
			 (unsigned int)((st.st_mode & 07777) | S_IXGRP));
}

int
bk_ctl_open(struct bk_daemon *d, const char *path, gid_t group, struct bk_ctl **out)
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
	/* the group first, then its bits: never open to a group not meant */
	if (r == 0 && group != (gid_t)-1 && chown(path, (uid_t)-1, group) < 0)
		r = -1;
	if (r < 0 || chmod(path, group != (gid_t)-1 ? 0660 : 0600) < 0 || listen(fd, 64) < 0) {
		r = -errno;
		log_error("control socket %s: %m", path);
		close(fd);
		return r;
	}
	if (group != (gid_t)-1)
		let_group_through(path, d->opt.state_dir, group);
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
	c->group = group;
	c->accepting = true;
	for (unsigned int i = 0; i < CTL_MAX_PENDING; i++)
		c->pending[i].fd = -1;
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (c->epfd < 0 || c->tfd < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.u32 = CTL_EV_LISTEN }) < 0 ||
	    epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->tfd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.u32 = CTL_EV_TIMER }) < 0) {
		r = -errno;
		log_error("control socket: epoll/timerfd: %m");
		bk_ctl_close(c, true);
		return r;
	}
	clock_gettime(CLOCK_MONOTONIC, &c->started);
	*out = c;
	return 0;
}

int
bk_ctl_fd(const struct bk_ctl *c)
{
	return c->epfd;
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

/* How long "PATH --version" may take (an ASan build starts in ~0.1 s). */
#define UPGRADE_PROBE_MS	10000
/* How long a probe killed with SIGKILL is waited for.  A child that
 * SIGKILL cannot end is stuck in the kernel: its exec closes the
 * backings' descriptors it inherited (close-on-exec), and a FUSE
 * file's close waits for its daemon's answer to FLUSH, uninterruptibly.
 * The control thread must not wait for that (it held every guest's
 * handshake, the socket and SIGTERM): the child is left to be reaped
 * later (bk_ctl's stray). */
#define UPGRADE_REAP_MS		1000
/* What blkbackd --version prints first (options.c). */
#define UPGRADE_BANNER		"blkbackd "

extern char **environ;

/*
 * Is PATH a blkbackd?  Every device is drained before the exec, and a
 * program that is not one ends the daemon with its guests' disks
 * stalled (/bin/false "upgrades" fine as far as exec can tell).  So run
 * "PATH --version" first, its stdin and stderr /dev/null, no signal
 * blocked or ignored (ours are, for the signalfd), and want blkbackd's
 * own banner ("blkbackd VERSION (git REV)": any version, as an upgrade
 * goes to another) and exit status 0 within UPGRADE_PROBE_MS; else it is
 * killed.  Runs on the control thread, which waits for it: the
 * admin's request, once.  NULL when it is; else why not, in buf.  A
 * probe that outlives its SIGKILL by UPGRADE_REAP_MS is left in *stray.
 */
static const char *
upgrade_not_blkbackd(const char *path, char *buf, size_t len, pid_t *stray)
{
	char *const argv[] = { (char *)path, (char *)"--version", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, all;
	char out[128], shown[65];
	size_t got = 0;
	int pfd[2], st = 0, r, ms;
	struct timespec t0, t;
	bool timed_out = false;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(buf, len, "cannot run it with --version: pipe: %s", strerror(errno));
		return buf;
	}
	sigemptyset(&none);
	sigfillset(&all);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], STDOUT_FILENO);
	posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &all);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawn(&pid, path, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(pfd[1]);
	if (r) {
		close(pfd[0]);
		snprintf(buf, len, "cannot run it with --version: %s", strerror(r));
		return buf;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd p = { .fd = pfd[0], .events = POLLIN };
		char scratch[512];
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		ms = UPGRADE_PROBE_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 +
					      (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (ms <= 0) {
			timed_out = true;
			break;
		}
		r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			timed_out = r == 0;
			break;
		}
		/* the first bytes kept, the rest read and dropped */
		if (got < sizeof(out) - 1)
			n = read(pfd[0], out + got, sizeof(out) - 1 - got);
		else
			n = read(pfd[0], scratch, sizeof(scratch));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;	/* EOF: it closed its stdout (exited) */
		if (got < sizeof(out) - 1)
			got += (size_t)n;
	}
	close(pfd[0]);
	out[got] = '\0';
	if (timed_out)
		kill(pid, SIGKILL);
	/* after EOF: a program that closes its stdout and lives on is
	 * waited for no longer than the rest of the time; once killed, no
	 * longer than UPGRADE_REAP_MS */
	for (;;) {
		r = waitpid(pid, &st, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (r == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			ms = (int)((t.tv_sec - t0.tv_sec) * 1000 +
				   (t.tv_nsec - t0.tv_nsec) / 1000000);
			if (!timed_out && ms >= UPGRADE_PROBE_MS) {
				timed_out = true;
				kill(pid, SIGKILL);
			} else if (timed_out && ms >= UPGRADE_PROBE_MS + UPGRADE_REAP_MS) {
				*stray = pid;
				break;
			}
			usleep(10000);
		}
	}
	out[strcspn(out, "\n")] = '\0';
	xbus_printable(shown, sizeof(shown), out);
	if (timed_out && *stray == pid)
		snprintf(buf, len, "not a blkbackd, or stuck: its --version did not finish "
			 "within %d s, and SIGKILL does not end it (a backing's file system "
			 "that hangs: its exec closes the descriptors it inherited)",
			 UPGRADE_PROBE_MS / 1000);
	else if (timed_out)
		snprintf(buf, len, "not a blkbackd (its --version did not finish within %d s)",
			 UPGRADE_PROBE_MS / 1000);
	else if (r != pid)
		snprintf(buf, len, "cannot tell whether it is a blkbackd (its --version: "
			 "waitpid: %s)", strerror(errno));
	else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
		 strncmp(out, UPGRADE_BANNER, strlen(UPGRADE_BANNER)))
		snprintf(buf, len, "not a blkbackd (its --version %s %d and printed "
			 "\"%s\"%s, not \"" UPGRADE_BANNER "VERSION ...\")",
			 WIFEXITED(st) ? "exited with status" : "was killed by signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), shown,
			 strlen(out) > 64 ? "..." : "");
	else
		return NULL;
	return buf;
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
	for (unsigned int i = 0; i < CTL_MAX_PENDING; i++) {
		if (c->pending[i].fd >= 0)
			close(c->pending[i].fd);
		if (!c->pending[i].answer.oom)
			bk_ctl_buf_free(&c->pending[i].answer);
	}
	if (c->epfd >= 0)
		close(c->epfd);
	if (c->tfd >= 0)
		close(c->tfd);
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
	/* no answer yet: a resize waits for size probe wait_gen of vbd
	 * wait_f/wait_id (bk_ctl_resizes answers) */
	bool wait;
	uint32_t wait_f, wait_id;
	uint64_t wait_gen;
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
	const char *p;
	char *end;
	struct bk_dev *dev;

	errno = 0;
	f = strtoul(arg, &end, 10);
	if (errno || end == arg || *end != '/' || f > UINT32_MAX || !isdigit((unsigned char)*arg))
		goto bad;
	p = end + 1;
	id = strtoul(p, &end, 10);
	if (errno || end == p || *end || id > UINT32_MAX || !isdigit((unsigned char)*p))
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

/* A label of the vbd's (vbd.h), nothing when it has none. */
static void
kv_label(struct bk_ctl_buf *b, const char *name, const char *v)
{
	bk_ctl_buf_kv(b, name, *v ? v : NULL);
}

static void
cmd_list(struct bk_ctl *c, struct reply *rp)
{
	struct bk_daemon *d = c->d;
	struct bk_dev *dev;

	for (dev = d->devs; dev; dev = dev->next) {
		struct bk_ctl_buf *b = &rp->out;
		struct bk_stats st;

		bk_vbd_stats(dev, &st);
		bk_ctl_buf_printf(b, "vbd");
		bk_ctl_buf_kv(b, "vbd", dev->name);
		bk_ctl_buf_kvu(b, "domid", dev->frontid);
		bk_ctl_buf_kvu(b, "devid", dev->devid);
		kv_label(b, "guest", dev->guest);
		kv_label(b, "vdev", dev->vdev);
		/* what it serves, once probed; not what xenstore says now */
		bk_ctl_buf_kv(b, "params", dev->cfg.params_raw ? dev->cfg.params_raw :
			      dev->params_found);
		bk_ctl_buf_kvu(b, "state", dev->state < 0 ? 0 : (uint64_t)dev->state);
		/* another backend's vbd (vbd.c leave_alone): not ours to show */
		bk_ctl_buf_kv(b, "state_name", dev->foreign ? "left-alone" :
			      dev->state < 0 ? "none" :
			      xbus_state_name((unsigned int)dev->state));
		/* the guest's node as last read: a state, or nothing (junk
		 * stays out of the admin's table) */
		if (dev->fe_value >= 0)
			bk_ctl_buf_kvu(b, "frontend_state", (unsigned int)dev->fe_value);
		/* an open out is what a vbd that stays Initialising or
		 * InitWait waits for (a server that does not answer); a
		 * backing still drained or closed by another vbd, or by this
		 * one's last connection, is the other thing it may wait for */
		bk_ctl_buf_kv(b, "phase", bk_vbd_opening(dev) ? "opening" :
			      dev->backing_wait ? "waiting" : phase_name(dev->phase));
		bk_ctl_buf_kvu(b, "queues", dev->nr_queues);
		if (dev->phase != DEV_DISCONNECTED) {
			const struct bk_features *f = &dev->feat;

			bk_ctl_buf_kvu(b, "ring_pages", dev->ring_pages);
			bk_ctl_buf_kvu(b, "sectors", f->sectors);
			bk_ctl_buf_kvu(b, "flush_cache", f->flush_cache);
			bk_ctl_buf_kvu(b, "barrier", f->barrier);
			bk_ctl_buf_kvu(b, "discard", f->discard);
			bk_ctl_buf_kvu(b, "persistent", dev->persistent);
			bk_ctl_buf_kv(b, "fua", f->fua == BK_FUA_NATIVE ? "native" :
				      f->fua == BK_FUA_EMULATED ? "emulated" : "none");
			bk_ctl_buf_kvu(b, "writeback", f->writeback);
			bk_ctl_buf_kvu(b, "read_only", f->read_only);
			/* the file store's I/O engine (no key for the others) */
			if (dev->store && bk_stack_engine(dev->store))
				bk_ctl_buf_kv(b, "engine", bk_stack_engine(dev->store));
		} else {
			bk_ctl_buf_kvu(b, "ring_pages", 0);
		}
		bk_ctl_buf_kvu(b, "pgrants", st.pgrant_mapped);
		bk_ctl_buf_kvu(b, "failed", dev->failed);
		/* the toolstack removed its directory; it answers what it had
		 * taken before it goes (its state is the last one written) */
		bk_ctl_buf_kvu(b, "removed", dev->gone);
		kv_label(b, "error", dev->error);
		bk_ctl_buf_printf(b, "\n");
	}
}

static void
stats_record(struct reply *rp, struct bk_daemon *d, const struct bk_dev *dev)
{
	struct bk_ctl_buf *b = &rp->out;
	struct bk_stats s;
	unsigned int i;

	bk_vbd_stats(dev, &s);
	bk_ctl_buf_printf(b, "stats");
	bk_ctl_buf_kv(b, "vbd", dev->name);
	bk_ctl_buf_kvu(b, "domid", dev->frontid);
	bk_ctl_buf_kvu(b, "devid", dev->devid);
	kv_label(b, "guest", dev->guest);
	kv_label(b, "vdev", dev->vdev);
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
	bk_ctl_buf_kvu(b, "lat_sum_ns", s.lat_sum_ns);
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
			stats_record(rp, c->d, dev);
		return;
	}
	for (dev = c->d->devs; dev; dev = dev->next)
		stats_record(rp, c->d, dev);
}

static void
cmd_resize(struct bk_ctl *c, struct reply *rp, char **argv, int argc)
{
	struct bk_dev *dev;
	uint64_t gen;

	if (argc != 2) {
		fail(rp, -EINVAL, "usage: resize DOMID/DEVID");
		return;
	}
	dev = find_vbd(c->d, argv[1], rp);
	if (!dev)
		return;
	/* the size is read on the vbd's queue thread, never here: the
	 * answer waits for it (bk_ctl_resizes), the control thread not */
	gen = bk_vbd_size_ask(dev, true);
	if (!gen) {
		fail(rp, -ENOTCONN, "vbd %s is not connected (its size is read when it connects)",
		     dev->name);
		return;
	}
	rp->wait = true;
	rp->wait_f = dev->frontid;
	rp->wait_id = dev->devid;
	rp->wait_gen = gen;
}

/* The answer of a resize whose probe was answered (dev->size). */
static void
resize_result(struct reply *rp, const struct bk_dev *dev)
{
	int r = dev->size.rc;

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
		bk_ctl_buf_kvu(&rp->out, "old_sectors", dev->size.old_sectors);
		bk_ctl_buf_kvu(&rp->out, "sectors", dev->size.new_sectors);
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
		char err[512];
		const char *why = upgrade_refusal(path, err, sizeof(err));

		/* an earlier probe's child that SIGKILL could not end yet */
		if (c->stray && waitpid(c->stray, NULL, WNOHANG) != 0)
			c->stray = 0;
		if (!why && c->stray) {
			snprintf(err, sizeof(err), "the --version probe of an earlier upgrade "
				 "(pid %ld) is still stuck, SIGKILLed (a backing's file system "
				 "that hangs?)", (long)c->stray);
			why = err;
		}
		if (!why)
			why = upgrade_not_blkbackd(path, err, sizeof(err), &c->stray);
		if (why) {
			fail(rp, -EINVAL, "upgrade: %.200s: %s", path, why);
			return BK_CTL_NONE;
		}
		snprintf(c->upgrade_path, sizeof(c->upgrade_path), "%s", path);
		return BK_CTL_UPGRADE;
	} else if (!strcmp(argv[0], "list") || !strcmp(argv[0], "status")) {
		fail(rp, -EINVAL, "usage: %s (no argument)", argv[0]);
	} else if (!strcmp(argv[0], "shutdown")) {
		fail(rp, -EINVAL, "usage: shutdown [--close]");
	} else if (!strcmp(argv[0], "upgrade")) {
		fail(rp, -EINVAL, "usage: upgrade [PATH] (an absolute path without spaces)");
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

/* The whole answer into *ans (records, then "ok" or the error line);
 * rp->out is moved into it.  An answer that cannot be built is the
 * ENOMEM line alone, which needs no memory. */
static void
compose(struct reply *rp, struct bk_ctl_buf *ans)
{
	static const char nomem[] = "error ENOMEM out of memory\n";
	bool oom = rp->out.oom;

	if (!oom && !rp->err)
		*ans = rp->out;
	else
		bk_ctl_buf_free(&rp->out);
	memset(&rp->out, 0, sizeof(rp->out));
	if (!oom && rp->err)
		bk_ctl_buf_printf(ans, "error %s %s\n",
				  strerrorname_np(-rp->err) ? strerrorname_np(-rp->err) : "EIO",
				  rp->msg);
	else if (!oom)
		bk_ctl_buf_printf(ans, "ok\n");
	if (oom || ans->oom) {
		bk_ctl_buf_free(ans);
		ans->p = (char *)nomem;	/* never freed: client_drop checks oom */
		ans->len = sizeof(nomem) - 1;
		ans->oom = true;
	}
}

static bool
ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void
ticks(struct bk_ctl *c, bool on)
{
	struct itimerspec its = { 0 };

	if (on) {
		its.it_value.tv_nsec = CTL_TICK_MS * 1000000L;
		its.it_interval = its.it_value;
	}
	timerfd_settime(c->tfd, 0, &its, NULL);
}

static void
listening(struct bk_ctl *c, bool on)
{
	if (c->accepting == on)
		return;
	if (on)
		epoll_ctl(c->epfd, EPOLL_CTL_ADD, c->fd,
			  &(struct epoll_event){ .events = EPOLLIN, .data.u32 = CTL_EV_LISTEN });
	else
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	c->accepting = on;
}

/* Forget a client; its fd is closed unless keep.  A slot is free again:
 * connections waiting in the backlog are taken. */
static void
client_drop(struct bk_ctl *c, struct ctl_client *cl, bool keep)
{
	epoll_ctl(c->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	if (!keep)
		close(cl->fd);
	cl->fd = -1;
	cl->resizing = false;
	if (!cl->answer.oom)
		bk_ctl_buf_free(&cl->answer);
	memset(&cl->answer, 0, sizeof(cl->answer));
	cl->sent = 0;
	if (--c->npending == 0)
		ticks(c, false);
	listening(c, true);
}

/* Send what the socket takes of cl's answer, without blocking; the
 * client is forgotten once all of it went, or its reader went. */
static void
client_write(struct bk_ctl *c, struct ctl_client *cl)
{
	while (cl->sent < cl->answer.len) {
		ssize_t n = send(cl->fd, cl->answer.p + cl->sent, cl->answer.len - cl->sent,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;		/* EPOLLOUT brings us back */
		if (n <= 0)
			break;		/* the client went: nothing more to do */
		cl->sent += (size_t)n;
	}
	client_drop(c, cl, false);
}

/*
 * Answer a client.  What the socket takes now goes at once; the rest
 * when it can take more (EPOLLOUT), within CTL_ANSWER_TIMEOUT_S.  A
 * shutdown or upgrade client (keep) gets its short answer whole, the
 * socket blocking for at most CTL_IO_TIMEOUT_S, and its fd stays open.
 */
static void
client_answer(struct bk_ctl *c, struct ctl_client *cl, struct reply *rp, bool keep)
{
	compose(rp, &cl->answer);
	cl->sent = 0;
	if (keep) {
		struct timeval tv = { .tv_sec = CTL_IO_TIMEOUT_S };
		int fl = fcntl(cl->fd, F_GETFL);

		if (fl >= 0)
			fcntl(cl->fd, F_SETFL, fl & ~O_NONBLOCK);
		setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		send_all(cl->fd, cl->answer.p, cl->answer.len);
		client_drop(c, cl, true);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &cl->deadline);
	cl->deadline.tv_sec += CTL_ANSWER_TIMEOUT_S;
	epoll_ctl(c->epfd, EPOLL_CTL_MOD, cl->fd,
		  &(struct epoll_event){ .events = EPOLLOUT,
					 .data.u32 = (uint32_t)(cl - c->pending) });
	client_write(c, cl);
}

/*
 * A resize waits for its size probe (rp->wait), within
 * CTL_RESIZE_WAIT_S.  Nothing is read from the client meanwhile: its fd
 * stays in epfd for nothing but a hang-up or an error (which drop it).
 */
static void
client_wait(struct bk_ctl *c, struct ctl_client *cl, const struct reply *rp)
{
	cl->resizing = true;
	cl->rs_f = rp->wait_f;
	cl->rs_id = rp->wait_id;
	cl->rs_gen = rp->wait_gen;
	clock_gettime(CLOCK_MONOTONIC, &cl->deadline);
	cl->deadline.tv_sec += CTL_RESIZE_WAIT_S;
	epoll_ctl(c->epfd, EPOLL_CTL_MOD, cl->fd,
		  &(struct epoll_event){ .events = 0,
					 .data.u32 = (uint32_t)(cl - c->pending) });
}

/* (ctl.h) */
void
bk_ctl_resizes(struct bk_ctl *c)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	for (unsigned int i = 0; i < CTL_MAX_PENDING; i++) {
		struct ctl_client *cl = &c->pending[i];
		struct reply rp = { .err = 0 };
		const struct bk_dev *dev;

		if (cl->fd < 0 || !cl->resizing)
			continue;
		dev = bk_xenbus_find(c->d, cl->rs_f, cl->rs_id);
		if (!dev || dev->phase != DEV_CONNECTED) {
			fail(&rp, -ENOTCONN, "vbd %u/%u is not connected any more", cl->rs_f,
			     cl->rs_id);
		} else if (dev->size.done_gen >= cl->rs_gen) {
			resize_result(&rp, dev);
		} else if (!dev->size.asked) {
			/* the probe it waited for died with a disconnect */
			fail(&rp, -ENOTCONN, "vbd %s was disconnected before its size was read",
			     dev->name);
		} else if (!ts_before(&now, &cl->deadline)) {
			fail(&rp, -ETIMEDOUT, "vbd %s: its backing has not told its size within "
			     "%d s (a file system that hangs?); the guest is told when it does",
			     dev->name, CTL_RESIZE_WAIT_S);
		} else {
			continue;
		}
		cl->resizing = false;
		client_answer(c, cl, &rp, false);
	}
}

/*
 * Whether the peer on fd is in --ctl-group: its gid, or one of its
 * supplementary groups (SO_PEERGROUPS), as they were at connect().
 */
static bool
in_group(const struct bk_ctl *c, int fd, const struct ucred *cred)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (c->group == (gid_t)-1 || cred->uid == (uid_t)-1)
		return false;
	if (cred->gid == c->group)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0)
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == c->group)
			return true;
	return false;
}

/* Take every connection waiting (the listening socket is non-blocking). */
static void
clients_accept(struct bk_ctl *c)
{
	for (;;) {
		struct ctl_client *cl = NULL;
		struct ucred cred;
		socklen_t cl_len = sizeof(cred);
		unsigned int i;
		int fd;

		for (i = 0; i < CTL_MAX_PENDING && !cl; i++)
			if (c->pending[i].fd < 0)
				cl = &c->pending[i];
		if (!cl) {
			/* every slot taken: the others wait in the backlog
			 * until one is free (within the slots' deadlines),
			 * rather than drop a client whose line may be there
			 * already */
			listening(c, false);
			return;
		}
		fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				log_error("control socket: accept: %m");
			return;
		}
		cl->fd = fd;
		cl->have = 0;
		cl->readonly = false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl_len) < 0 ||
		    cl_len != sizeof(cred))
			cred = (struct ucred){ .pid = -1, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		cl->refused = cred.uid != 0;
		if (cl->refused && in_group(c, fd, &cred)) {
			cl->refused = false;
			cl->readonly = true;
		}
		if (cl->refused)
			log_info("control socket: refused a client (pid %d, uid %d): only root%s may "
				 "control blkbackd", (int)cred.pid, (int)cred.uid,
				 c->group != (gid_t)-1 ? " and --ctl-group" : "");
		clock_gettime(CLOCK_MONOTONIC, &cl->deadline);
		cl->deadline.tv_sec += CTL_IO_TIMEOUT_S;
		if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd,
			      &(struct epoll_event){ .events = EPOLLIN,
						     .data.u32 = (uint32_t)(cl - c->pending) }) < 0) {
			log_error("control socket: epoll_ctl: %m");
			close(fd);
			cl->fd = -1;
			continue;
		}
		if (c->npending++ == 0)
			ticks(c, true);
	}
}

/* Clients past their deadline: told so, and dropped. */
static void
clients_expire(struct bk_ctl *c)
{
	struct timespec now;
	uint64_t v;

	if (read(c->tfd, &v, sizeof(v)) < 0) {
		/* EAGAIN: a tick already taken */
	}
	bk_ctl_resizes(c);	/* those past their wait */
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (unsigned int i = 0; i < CTL_MAX_PENDING; i++) {
		struct ctl_client *cl = &c->pending[i];
		struct reply rp = { .err = 0 };

		if (cl->fd < 0 || cl->resizing || ts_before(&now, &cl->deadline))
			continue;
		if (cl->answer.p) {	/* it did not take its answer in time */
			client_drop(c, cl, false);
			continue;
		}
		fail(&rp, -ETIMEDOUT, "no request line within %d s", CTL_IO_TIMEOUT_S);
		client_answer(c, cl, &rp, false);
	}
}

/* Whether line (a request) only reads: list, stats, status. */
static bool
read_only_request(const char *line)
{
	static const char *const ro[] = { "list", "stats", "status" };
	size_t n = strcspn(line, " ");

	for (unsigned int i = 0; i < ARRAY_SIZE(ro); i++)
		if (n == strlen(ro[i]) && !strncmp(line, ro[i], n))
			return true;
	return false;
}

/* What a pending client sent; a whole line is carried out. */
static enum bk_ctl_action
client_input(struct bk_ctl *c, struct ctl_client *cl)
{
	struct reply rp = { .err = 0 };
	enum bk_ctl_action act;
	bool keep;
	ssize_t n;
	char *nl;
	int fd;

	n = recv(cl->fd, cl->line + cl->have, sizeof(cl->line) - 1 - cl->have, 0);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return BK_CTL_NONE;
	if (n <= 0) {
		client_drop(c, cl, false);	/* gone before its line */
		return BK_CTL_NONE;
	}
	cl->have += (size_t)n;
	cl->line[cl->have] = '\0';
	nl = memchr(cl->line, '\n', cl->have);
	if (!nl) {
		if (cl->have == sizeof(cl->line) - 1) {
			fail(&rp, -E2BIG, "request too long");
			client_answer(c, cl, &rp, false);
		}
		return BK_CTL_NONE;
	}
	*nl = '\0';
	if (cl->refused) {
		fail(&rp, -EPERM, "only root may control blkbackd");
		client_answer(c, cl, &rp, false);
		return BK_CTL_NONE;
	}
	if (cl->readonly && !read_only_request(cl->line)) {
		fail(&rp, -EPERM, "only root may do that; the control group may list, stats "
		     "and status");
		client_answer(c, cl, &rp, false);
		return BK_CTL_NONE;
	}
	bk_dbg(BK_DBG_XENBUS, "control socket: \"%s\"", cl->line);
	act = dispatch(c, cl->line, &rp);
	if (rp.wait) {
		client_wait(c, cl, &rp);
		return act;
	}
	/* a shutdown or upgrade client is kept: its EOF, at exit or exec,
	 * is its "done" */
	keep = act != BK_CTL_NONE && c->held < 0;
	fd = cl->fd;
	client_answer(c, cl, &rp, keep);
	if (keep)
		c->held = fd;
	return act;
}

/* Send ans whole if the socket takes it now; never waits. */
static void
send_now(int fd, const struct bk_ctl_buf *ans)
{
	if (send(fd, ans->p, ans->len, MSG_NOSIGNAL | MSG_DONTWAIT) < (ssize_t)ans->len)
		bk_dbg(BK_DBG_XENBUS, "control socket: a waiting client was not told we stop");
}

void
bk_ctl_refuse_waiting(struct bk_ctl *c, const char *why)
{
	struct bk_ctl_buf busy = { 0 };
	int fd;

	if (!c)
		return;
	bk_ctl_buf_printf(&busy, "error EBUSY busy: %s\n", why);
	if (busy.oom)
		return;
	for (unsigned int i = 0; i < CTL_MAX_PENDING; i++) {
		struct ctl_client *cl = &c->pending[i];

		if (cl->fd < 0)
			continue;
		if (cl->answer.p)
			client_write(c, cl);	/* what the socket takes of its own */
		else {
			send_now(cl->fd, &busy);
			client_drop(c, cl, false);
		}
	}
	while ((fd = accept4(c->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		send_now(fd, &busy);
		close(fd);
	}
	bk_ctl_buf_free(&busy);
}

enum bk_ctl_action
bk_ctl_handle(struct bk_ctl *c)
{
	struct epoll_event evs[CTL_MAX_PENDING + 2];
	int n, i;

	n = epoll_wait(c->epfd, evs, CTL_MAX_PENDING + 2, 0);
	for (i = 0; i < n; i++) {
		uint32_t ev = evs[i].data.u32;
		enum bk_ctl_action act;

		if (ev == CTL_EV_LISTEN) {
			clients_accept(c);
		} else if (ev == CTL_EV_TIMER) {
			clients_expire(c);
		} else if (ev < CTL_MAX_PENDING && c->pending[ev].fd >= 0 &&
			   c->pending[ev].resizing) {
			/* a hang-up or an error while its resize waits: gone */
			client_drop(c, &c->pending[ev], false);
		} else if (ev < CTL_MAX_PENDING && c->pending[ev].fd >= 0 &&
			   c->pending[ev].answer.p) {
			client_write(c, &c->pending[ev]);
		} else if (ev < CTL_MAX_PENDING && c->pending[ev].fd >= 0) {
			act = client_input(c, &c->pending[ev]);
			if (act != BK_CTL_NONE)
				return act;	/* the rest: the next call (level-triggered) */
		}
	}
	return BK_CTL_NONE;
}
