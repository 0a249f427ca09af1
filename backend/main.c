/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: blkbackd, the userspace Xen block backend: options, start-up
 * (detached only once setup has succeeded), signals, the control
 * thread's event loop (xenstore, the queues' reports, the control
 * socket, timers), shutdown and upgrade.  See blkbackd.8.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xenstore.h>
#ifdef HAVE_LIBSYSTEMD
#include <systemd/sd-daemon.h>
#endif

#include "ctl.h"
#include "log.h"
#include "pgrant.h"
#include "run.h"
#include "vbd.h"
#include "xenbus.h"
#include "xbus.h"

/* real Xen: one backend daemon per domain */
#ifndef BLKBACKD_LOCK_FILE
#define BLKBACKD_LOCK_FILE "/run/blkbackd.lock"
#endif

/* Set in the environment of the program an upgrade execs. */
#define UPGRADED_ENV "BLKBACKD_UPGRADED"


static int
write_pidfile(const char *path)
{
	char tmp[PATH_MAX], buf[32];
	int fd, n;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("open %s: %m", tmp);
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, n) != n || close(fd) < 0 || rename(tmp, path) < 0) {
		log_error("write pidfile %s: %m", path);
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * A per-instance file's path: beside the xenstore socket under the
 * simulator ("XENSTORED_PATH.blkbackd-DOMID" + ext), dflt on real Xen.
 * malloc'd, or NULL (logged) when out of memory.
 */
static char *
instance_path(enum xenops_transport t, unsigned int self, const char *ext,
	      const char *dflt)
{
	const char *xsp = getenv("XENSTORED_PATH");
	char *path, real[PATH_MAX];
	int n;

	/* named after the socket itself, not the name it was given: a
	 * symlink to it must find the same lock (and control socket) */
	if (xsp && realpath(xsp, real))
		xsp = real;
	if (t == XENOPS_SIM && xsp)
		n = asprintf(&path, "%s.blkbackd-%u%s", xsp, self, ext);
	else
		n = asprintf(&path, "%s", dflt);
	if (n < 0) {
		log_error("out of memory");
		return NULL;
	}
	return path;
}

/*
 * One blkbackd per xenstore: a second one would probe the same devices,
 * reset their state and tear down what the first serves.  The lock is an
 * flock() on a file beside the xenstore socket (sim: in xensim's
 * directory) or BLKBACKD_LOCK_FILE (real Xen), so it dies with the
 * process, even on SIGKILL: it can never be left stale.  The file holds
 * the owner's pid for the message.  Returns the locked fd (kept open for
 * the daemon's life) or -1 after logging.
 */
static int
take_instance_lock(enum xenops_transport t, unsigned int self)
{
	char *path = instance_path(t, self, ".lock", BLKBACKD_LOCK_FILE), buf[32];
	int fd, n;

	if (!path)
		return -1;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("instance lock %s: %m", path);
		free(path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		n = (int)pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = '\0';
		buf[strcspn(buf, "\n")] = '\0';
		errno = e;
		if (e == EWOULDBLOCK)
			log_error("another blkbackd (pid %s) already serves this xenstore "
				  "(it holds %s); refusing to start a second one",
				  *buf ? buf : "?", path);
		else
			log_error("instance lock %s: flock: %m", path);
		close(fd);
		free(path);
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		log_info("instance lock %s: cannot record our pid: %m", path);
	free(path);
	return fd;
}

/*
 * libxenstore's reader thread closes the socket when xenstored goes away
 * but never wakes the watch fd we poll; so when no watch has fired for
 * XS_PING_MS (timers and reports do not count), one read tells.
 * ENOENT/EACCES: an answer, so alive.
 */
#define XS_PING_MS 2000
/* how long start-up waits for xenstore to fire the watches it registered */
#define FIRST_SCAN_MS 10000

static bool
xs_alive(struct xs_handle *xs)
{
	unsigned int len;
	char *v = xs_read(xs, XBT_NULL, "/local/domain/0/domid", &len);

	if (v) {
		free(v);
		return true;
	}
	return errno == ENOENT || errno == EACCES || errno == EPERM;
}

/*
 * The recovery records' directory (--state-dir, or the default: under
 * the simulator, beside the xenstore socket like the instance lock, so
 * that each xensim has its own), made if missing, root only.  0, or -1
 * after logging.
 */
static int
state_dir_setup(struct run *r)
{
	struct bk_options *o = &r->d.opt;
	struct stat st;

	if (!o->state_dir) {
		r->state_dir = instance_path(o->transport, r->d.self, ".state",
					     BLKBACKD_STATE_DIR);
		if (!r->state_dir)
			return -1;
		o->state_dir = r->state_dir;
	}
	if (mkdir(o->state_dir, 0700) < 0 && errno != EEXIST) {
		log_error("--state-dir %s: %m", o->state_dir);
		return -1;
	}
	if (stat(o->state_dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		log_error("--state-dir %s: not a directory", o->state_dir);
		return -1;
	}
	return 0;
}

/*
 * Without -f: fork, and let the parent wait on a pipe until the child
 * has set up (or failed to), then exit with the child's status: 0 only
 * once it serves, so every start-up error is an exit status before
 * anything is detached (a second blkbackd, a bad xenstore...).  Returns
 * in the child (a new session; report_ready() tells the parent), or -1
 * (logged) when it could not fork.
 */
static int
detach(struct run *r)
{
	unsigned char st;
	int p[2], ws;
	ssize_t n;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0) {
		log_error("pipe: %m");
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		log_error("fork: %m");
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid > 0) {
		/* a Ctrl-C here ends the wait, not the daemon */
		sigprocmask(SIG_UNBLOCK, &r->sigs, NULL);
		close(p[1]);
		do
			n = read(p[0], &st, 1);
		while (n < 0 && errno == EINTR);
		if (n == 1)
			_exit(st);
		/* it died before saying how it went */
		if (waitpid(pid, &ws, 0) == pid && WIFEXITED(ws) && WEXITSTATUS(ws))
			_exit(WEXITSTATUS(ws));
		_exit(1);
	}
	close(p[0]);
	r->ready_fd = p[1];
	if (setsid() < 0)
		log_info("setsid: %m");
	return 0;
}

/*
 * Setup is over (status 0) or failed (the exit status): tell the waiting
 * parent, and once serving, let go of the terminal and the working
 * directory and tell systemd (Type=notify).
 */
static void
report_ready(struct run *r, int status)
{
	unsigned char st = (unsigned char)status;

	if (r->ready_fd >= 0) {
		if (write(r->ready_fd, &st, 1) != 1)
			log_error("telling the parent that start-up %s: %m",
				  status ? "failed" : "succeeded");
		close(r->ready_fd);
		r->ready_fd = -1;
	}
	if (status)
		return;
	if (!r->foreground && !r->upgraded) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			dup2(fd, STDIN_FILENO);
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
	}
	/* (an upgraded one was exec'ed from start_cwd, upgrade_exec) */
	if (!r->foreground && chdir("/") < 0)
		log_info("chdir /: %m");
	log_set_errors_to_stderr(false);
#ifdef HAVE_LIBSYSTEMD
	sd_notifyf(0, "READY=1\nMAINPID=%d\nSTATUS=serving %s", (int)getpid(), r->d.vbd_root);
#endif
}

/*
 * The kernel's xen-blkback answers the same "vbd" kind: loaded, it
 * serves the vbds bound to it (sysfs bus/xen-backend/devices/vbd-F-D,
 * with a driver link) and takes every new one as it appears.  blkbackd
 * beside it would serve the same vbds.  So start-up refuses, naming the
 * way out, unless --leave-kernel-vbds says the kernel's vbds are to be
 * left alone (vbd.c then leaves every vbd bound to it alone).  sysfs is
 * /sys, or $BLKBACKD_SYSFS_ROOT (tests fake the tree); under the
 * simulator there is no kernel backend, and only that variable makes it
 * look.  0, or -1 after logging.
 */
#define EXIT_KERNEL_BACKEND	3	/* blkbackd.8 EXIT STATUS, the unit */

static int
kernel_backend_check(struct bk_options *o)
{
	const char *root = getenv("BLKBACKD_SYSFS_ROOT");
	char path[PATH_MAX], names[160] = "";
	unsigned int bound = 0;
	struct dirent *de;
	size_t len = 0;
	bool loaded;
	DIR *dir;

	if (!root && o->transport == XENOPS_SIM)
		return 0;
	o->sysfs_root = root ? root : "/sys";
	snprintf(path, sizeof(path), "%s/module/xen_blkback", o->sysfs_root);
	loaded = access(path, F_OK) == 0;
	snprintf(path, sizeof(path), "%s/bus/xen-backend/devices", o->sysfs_root);
	dir = opendir(path);
	while (dir && (de = readdir(dir))) {
		if (strncmp(de->d_name, "vbd-", 4))
			continue;
		snprintf(path, sizeof(path), "%s/bus/xen-backend/devices/%s/driver",
			 o->sysfs_root, de->d_name);
		if (access(path, F_OK))
			continue;
		if (bound++ < 4 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, " %s",
						de->d_name);
	}
	if (dir)
		closedir(dir);
	if (!loaded && !bound)
		return 0;
	if (o->leave_kernel_vbds) {
		log_info("the kernel's xen-blkback is loaded (%u vbd%s bound to it%s%s): "
			 "--leave-kernel-vbds: those are left alone; it also takes every vbd "
			 "added while it is loaded, so add none until it is unloaded",
			 bound, bound == 1 ? "" : "s", bound ? ":" : "", names);
		return 0;
	}
	if (bound)
		log_error("the kernel's xen-blkback serves %u vbd%s (%s%s): blkbackd would "
			  "serve the same ones.  Switch them over first (README, \"Switching "
			  "a dom0 over\": stop or migrate those guests, or detach their disks; "
			  "modprobe -r xen-blkback; keep it out with "
			  "/etc/modprobe.d/blkbackd.conf), or start with --leave-kernel-vbds to "
			  "leave its vbds alone", bound, bound == 1 ? "" : "s", names + 1,
			  bound > 4 ? " ..." : "");
	else
		log_error("the kernel's xen-blkback is loaded (%s/module/xen_blkback): it "
			  "serves no vbd now but takes every new one.  Unload it (modprobe -r "
			  "xen-blkback) and keep it out (/etc/modprobe.d/blkbackd.conf), or "
			  "start with --leave-kernel-vbds", o->sysfs_root);
	return -1;
}

/*
 * Detach (without -f), open the hypervisor and xenstore, take the
 * instance lock, the trace, the signal, report and timer fds, the
 * control socket, the watches and the pidfile.  0, or -1 after logging
 * (teardown() undoes what was done).
 */
static int
setup(struct run *r)
{
	struct bk_daemon *d = &r->d;
	struct xenops_config xc = {
		.transport = d->opt.transport,
		.sim_dir = d->opt.sim_dir,
		.domid = 0,
	};
	const struct itimerspec size_its = {
		.it_interval = { .tv_sec = r->size_check_secs },
		.it_value = { .tv_sec = r->size_check_secs },
	};
	const char *xsp;
	int rc;

	if (!r->foreground) {
		if (!r->upgraded && detach(r) < 0)
			return -1;
		log_open_syslog();	/* a --log-file still wins */
		log_set_errors_to_stderr(!r->upgraded);
	}
	d->xops = xenops_open(&xc);
	if (!d->xops) {
		log_error("cannot open the %s transport: %m",
			  d->opt.transport == XENOPS_SIM ? "sim" : "xen");
		return -1;
	}
	d->self = xenops_self_domid(d->xops);
	/* the simulator's xenstore, unless the environment names one
	 * (exported as XENSTORED_PATH, which the instance lock uses too) */
	xsp = d->opt.transport == XENOPS_SIM && !getenv("XENSTORED_PATH") ?
	      xenops_xenstore_path(d->xops) : NULL;
	d->xs = xbus_open(xsp);
	if (!d->xs) {
		log_error("cannot connect to xenstore%s%s: %m",
			  getenv("XENSTORED_PATH") ? " at " : "",
			  getenv("XENSTORED_PATH") ? getenv("XENSTORED_PATH") : "");
		return -1;
	}
	r->lockfd = take_instance_lock(d->opt.transport, d->self);
	if (r->lockfd < 0)
		return -1;
	if (r->trace_path) {
		/* an upgrade goes on with the trace of the process before */
		d->trace = bk_trace_open(r->trace_path, !r->upgraded);
		if (!d->trace)
			return -1;
	}
	d->report_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	d->size_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r->sfd = signalfd(-1, &r->sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->report_efd < 0 || d->size_efd < 0 || r->sfd < 0) {
		log_error("eventfd/signalfd: %m");
		return -1;
	}
	if (r->stats_secs) {
		struct itimerspec its = {
			.it_interval = { .tv_sec = r->stats_secs },
			.it_value = { .tv_sec = r->stats_secs },
		};

		r->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
		if (r->tfd < 0 || timerfd_settime(r->tfd, 0, &its, NULL) < 0) {
			log_error("timerfd: %m");
			return -1;
		}
	}
	if (state_dir_setup(r) < 0)
		return -1;
	machine_costs(&d->opt, r->poll_set);
	/* a file grown by an admin is noticed by itself (fstat only) */
	r->size_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (r->size_tfd < 0 ||
	    (r->size_check_secs && timerfd_settime(r->size_tfd, 0, &size_its, NULL) < 0)) {
		log_error("timerfd: %m");
		return -1;
	}
	if (!r->ctl_path &&
	    !(r->ctl_path = instance_path(d->opt.transport, d->self, ".ctl", BLKBACKD_CTL_SOCKET)))
		return -1;
	if (bk_ctl_open(d, r->ctl_path, r->ctl_group_set ? r->ctl_gid : (gid_t)-1, &r->ctl) < 0)
		return -1;
	if (bk_xenbus_init(d) < 0)
		return -1;
	rc = bk_xenbus_first_scan(d, FIRST_SCAN_MS);
	if (rc < 0) {
		log_error("xenstore, while taking stock of the vbds at start-up: %s",
			  strerror(-rc));
		bk_xenbus_shutdown(d, false, NULL, 0, NULL);
		return -1;
	}
	bk_vbd_sweep_records(d);
	if (r->pidfile && write_pidfile(r->pidfile) < 0) {
		/* whatever start-up took over stays attached for the next one */
		bk_xenbus_shutdown(d, false, NULL, 0, NULL);
		return -1;
	}
	log_info("serving %s as domain %u (%s transport)%s", d->vbd_root, d->self,
		 d->opt.transport == XENOPS_SIM ? "sim" : "xen",
		 r->upgraded ? " after an upgrade" : "");
	return 0;
}

/* SIGHUP: logrotate's files reopened; the backings' sizes read. */
static void
hangup(struct run *r)
{
	log_reopen();
	log_info("SIGHUP: reopened the log and trace files; checking the backings' sizes");
	bk_trace_reopen(r->d.trace);
	bk_xenbus_check_sizes(&r->d);
}

/* The signals the loop has read; true to stop. */
static bool
handle_signals(struct run *r)
{
	struct signalfd_siginfo si;
	bool stop = false;

	while (read(r->sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGUSR1:
			bk_xenbus_log_stats(&r->d);
			break;
		case SIGUSR2:
			/* blkcrash's power cut, for its stacks only: a stray
			 * SIGUSR2 must not stop a daemon in service (exit 0
			 * without a drain, which no supervisor restarts) */
			if (!r->d.opt.volatile_cache && !r->d.opt.record_path) {
				log_info("SIGUSR2 ignored: it simulates a power cut only with "
					 "--cache=volatile or --record");
				break;
			}
			log_info("SIGUSR2: simulated power cut");
			bk_xenbus_power_cut(&r->d);
			/* no drain, no responses: as if the power went */
			_exit(0);
		case SIGHUP:
			hangup(r);
			break;
		default:
			r->close_devs = r->d.opt.close_on_exit;
			log_info("signal %d: stopping: draining every device, then %s",
				 (int)si.ssi_signo, r->close_devs ?
				 "closing each (--close-on-exit)" :
				 "leaving them attached (xenstore untouched) for the next blkbackd");
			stop = true;
		}
	}
	return stop;
}

/* A request on the control socket; true to stop. */
static bool
handle_ctl(struct run *r)
{
	switch (bk_ctl_handle(r->ctl)) {
	case BK_CTL_SHUTDOWN:
		r->close_devs = r->d.opt.close_on_exit;
		break;
	case BK_CTL_SHUTDOWN_CLOSE:
		r->close_devs = true;
		break;
	case BK_CTL_UPGRADE:
		r->upgrade = true;
		r->close_devs = false;
		log_info("blkbackd-ctl upgrade: draining every device, then exec %s (the "
			 "devices stay attached)", bk_ctl_upgrade_path(r->ctl));
		return true;
	default:
		return false;
	}
	log_info("blkbackd-ctl shutdown: stopping: draining every device, then %s",
		 r->close_devs ? "closing each" :
		 "leaving them attached (xenstore untouched) for the next blkbackd");
	return true;
}

/*
 * The control thread's loop: xenstore watches, the queues' reports,
 * the control socket, the timers and signals.  Returns the exit status:
 * 0 after a signal or a request asked us to stop (r->close_devs,
 * r->upgrade say how), 1 when xenstore went away or poll failed.
 */
static int
loop(struct run *r)
{
	struct bk_daemon *d = &r->d;
	struct timespec now, xs_seen;

	clock_gettime(CLOCK_MONOTONIC, &xs_seen);
	for (;;) {
		struct pollfd pfd[7] = {
			{ .fd = xs_fileno(d->xs), .events = POLLIN },
			{ .fd = r->sfd, .events = POLLIN },
			{ .fd = d->report_efd, .events = POLLIN },
			{ .fd = bk_ctl_fd(r->ctl), .events = POLLIN },
			{ .fd = r->size_tfd, .events = POLLIN },
			{ .fd = d->size_efd, .events = POLLIN },
			{ .fd = r->tfd, .events = POLLIN },
		};
		int n = poll(pfd, r->tfd >= 0 ? 7 : 6, XS_PING_MS);
		uint64_t v;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %m");
			return 1;
		}
		/* quiet for XS_PING_MS (timers may wake us meanwhile): ask */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (pfd[0].revents ||
		    (now.tv_sec - xs_seen.tv_sec) * 1000 + (now.tv_nsec - xs_seen.tv_nsec) / 1000000 >=
		    XS_PING_MS) {
			if (!pfd[0].revents && !xs_alive(d->xs))
				pfd[0].revents = POLLHUP;
			xs_seen = now;
		}
		if (pfd[0].revents & (POLLERR | POLLHUP)) {
			log_error("lost the connection to xenstore (%s): draining every "
				  "device and exiting", getenv("XENSTORED_PATH") ?
				  getenv("XENSTORED_PATH") : "xenstored");
			return 1;
		}
		if (pfd[0].revents & POLLIN)
			bk_xenbus_handle_watches(d);
		if (pfd[2].revents & POLLIN) {
			bk_xenbus_handle_reports(d);
			/* a size probe's answer may be what a resize waits for */
			bk_ctl_resizes(r->ctl);
		}
		if ((pfd[4].revents & POLLIN) && read(r->size_tfd, &v, sizeof(v)) > 0)
			bk_xenbus_check_sizes(d);
		if ((pfd[5].revents & POLLIN) && read(d->size_efd, &v, sizeof(v)) > 0)
			bk_xenbus_check_sizes(d);
		if (r->tfd >= 0 && (pfd[6].revents & POLLIN) && read(r->tfd, &v, sizeof(v)) > 0)
			bk_xenbus_log_stats(d);
		if ((pfd[3].revents & POLLIN) && handle_ctl(r))
			return 0;
		if ((pfd[1].revents & POLLIN) && handle_signals(r))
			return 0;
	}
}

/* Release what setup() took, in reverse.  An upgrade keeps the
 * instance lock (exec releases it: O_CLOEXEC) and the pidfile. */
static void
teardown(struct run *r, int rc)
{
	struct bk_daemon *d = &r->d;

	bk_ctl_refuse_waiting(r->ctl, r->upgrade ? "an upgrade is under way: ask the new "
			      "blkbackd when it answers" : "blkbackd is stopping");
	bk_ctl_close(r->ctl, !r->upgrade);
	if (r->size_tfd >= 0)
		close(r->size_tfd);
	if (r->tfd >= 0)
		close(r->tfd);
	if (r->sfd >= 0)
		close(r->sfd);
	if (d->report_efd >= 0)
		close(d->report_efd);
	if (d->size_efd >= 0)
		close(d->size_efd);
	bk_trace_close(d->trace);
	if (d->xs)
		xs_close(d->xs);
	if (d->xops)
		xenops_close(d->xops);
	if (r->pidfile && rc == 0 && !r->upgrade)
		unlink(r->pidfile);
	if (r->lockfd >= 0 && !r->upgrade)
		close(r->lockfd);	/* releases the instance lock */
	free(r->pidfile);
	free(r->trace_path);
	free(r->log_file);
	free(r->ctl_path);
	free(r->state_dir);
	free(r->sim_dir);
	free(r->record_path);
	if (!r->upgrade) {	/* else upgrade_exec needs it, main frees it */
		free(r->start_cwd);
		r->start_cwd = NULL;
	}
}

/*
 * blkbackd-ctl upgrade, after the shutdown without closing: exec the new
 * program with our argv; it finds the devices as we left them.  Returns
 * only when exec failed (logged): the caller exits 1, the devices still
 * attached, for a supervisor to restart blkbackd.
 */
static void
upgrade_exec(struct run *r, const char *path)
{
	log_info("upgrade: exec %s", path);
#ifdef HAVE_LIBSYSTEMD
	sd_notify(0, "RELOADING=1\nSTATUS=upgrading");
#endif
	/* the signals stay blocked: one sent meanwhile waits for the new
	 * program's signalfd instead of killing it */
	setenv(UPGRADED_ENV, "1", 1);
	/* argv's relative paths were relative to this */
	if (r->start_cwd && chdir(r->start_cwd) < 0)
		log_error("upgrade: chdir %s: %m (relative paths on the command line will "
			  "be taken from /)", r->start_cwd);
	execv(path, r->argv);
	log_error("upgrade: exec %s: %m; exiting (the devices are still attached: "
		  "start blkbackd again)", path);
	unsetenv(UPGRADED_ENV);
}

int
main(int argc, char **argv)
{
	struct run r = {
		.d = {
			.opt = {
				.max_queues = 4,
				.max_ring_order = BLKRING_MAX_PAGE_ORDER,
				.max_indirect = BLKRING_MAX_INDIRECT_SEGMENTS,
				.map_threshold = 65536,
				.poll_max_us = 50,
				.feature_persistent = true,
				.max_pgrants = BK_PGRANT_DEFAULT_MAX,
			},
			.report_efd = -1,
			.size_efd = -1,
			.closes = {
				.lock = PTHREAD_MUTEX_INITIALIZER,
				.done = PTHREAD_COND_INITIALIZER,
			},
		},
		.argv = argv,
		.size_check_secs = 2,
		.sfd = -1, .tfd = -1, .size_tfd = -1, .lockfd = -1, .ready_fd = -1,
	};
	char *upgrade_path = NULL;
	int rc;

	/* Every thread inherits the blocked set; the loop reads a signalfd.
	 * Blocked first thing: a SIGUSR1 (default action: terminate) sent
	 * by a supervisor while we parse options must wait, not kill us. */
	sigemptyset(&r.sigs);
	sigaddset(&r.sigs, SIGTERM);
	sigaddset(&r.sigs, SIGINT);
	sigaddset(&r.sigs, SIGUSR1);
	sigaddset(&r.sigs, SIGUSR2);
	sigaddset(&r.sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &r.sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_init(argv[0]);
	log_set_timestamps(true);
	if (getenv(UPGRADED_ENV)) {
		const char *base = strrchr(argv[0], '/');

		r.upgraded = true;
		unsetenv(UPGRADED_ENV);	/* not for our children */
		/* exec'ed as /proc/self/exe (upgrade's default), our name
		 * would be "exe": keep the one ps, pgrep and monitoring
		 * knew us by */
		prctl(PR_SET_NAME, base ? base + 1 : argv[0]);
	}

	r.start_cwd = getcwd(NULL, 0);
	rc = parse_options(argc, argv, &r);
	if (rc) {
		teardown(&r, 1);
		return rc > 0 ? 0 : 1;
	}
	if (r.log_file) {
		rc = log_open_file(r.log_file);
		if (rc < 0) {
			log_error("--log-file=%s: %s", r.log_file, strerror(-rc));
			teardown(&r, 1);
			return 1;
		}
	}
	rc = 1;
	/* before anything else: the refusal is start-up's own exit status,
	 * which the unit does not restart (RestartPreventExitStatus) */
	if (kernel_backend_check(&r.d.opt) < 0) {
		rc = EXIT_KERNEL_BACKEND;
		report_ready(&r, rc);
	} else if (setup(&r) == 0) {
		report_ready(&r, 0);
		rc = loop(&r);
#ifdef HAVE_LIBSYSTEMD
		if (!r.upgrade)
			sd_notify(0, "STOPPING=1");
#endif
		char left[256];
		unsigned int stalled, guests;

		/* logs each device's final counters */
		stalled = bk_xenbus_shutdown(&r.d, r.close_devs, left, sizeof(left), &guests);
		/* a warning (the journal's priority 4): the admin who stopped
		 * us must learn that disks now hang, and whose; blkbackd-ctl
		 * status says it again, from the records, while we are down */
		if (stalled && !r.upgrade)
			log_warning("stopped with %u vbd%s of %u guest%s left Connected without a "
				    "backend (%s): %s I/O waits until a blkbackd starts again",
				    stalled, stalled == 1 ? "" : "s", guests, guests == 1 ? "" : "s",
				    left, guests == 1 ? "the guest's" : "those guests'");
	} else {
		report_ready(&r, 1);
	}
	if (r.upgrade && !(upgrade_path = strdup(bk_ctl_upgrade_path(r.ctl)))) {
		log_error("upgrade: out of memory; exiting (the devices are still attached)");
		rc = 1;
	}
	teardown(&r, rc);
	if (upgrade_path && rc == 0) {
		upgrade_exec(&r, upgrade_path);
		rc = 1;
	}
	free(upgrade_path);
	free(r.start_cwd);
	return rc;
}
