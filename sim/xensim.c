/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xensim.c: the simulated hypervisor daemon (see sim.h and xensim.1).
 *
 *   xensim --dir DIR [--pidfile FILE] [--daemon] [-v] [-D MASK]
 *
 * One process, one epoll loop: the xenstore server (xstore*.c), the
 * hypervisor (hv*.c) and the control socket (ctl.c).  SIGTERM or SIGINT
 * stops it cleanly (exit 0, sockets unlinked).  The pidfile is written
 * once every socket listens.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "compiler.h"
#include "ctl.h"
#include "log.h"
#include "sim.h"
#include "xstore.h"

struct xensim {
	struct sim_loop *loop;
	int sigfd;
};

static void
usage(FILE *f)
{
	fprintf(f,
"Usage: xensim --dir DIR [OPTIONS]\n"
"Simulated Xen: xenstore, grant tables, event channels, domains.\n"
"\n"
"  -d, --dir DIR        state directory (sockets); created if missing\n"
"  -p, --pidfile FILE   write the pid to FILE once every socket listens\n"
"      --daemon         detach into the background\n"
"  -v, --verbose        also log xenstore connections\n"
"  -D, --debug-mask M   debug categories: sim,grant,evtchn,... or all\n"
"      --xs-changes FILE append every xenstore change to FILE, in order,\n"
"                       one line each (xensim(1) CHANGES)\n"
"  -h, --help           this help\n"
"\n"
"Sockets: DIR/xenstore.sock (dom0), DIR/dom<N>/xenstore.sock (domain N),\n"
"DIR/hv.sock, DIR/ctl.sock (xensim-ctl).  See xensim(1).\n");
}

/* --xs-changes: one line per change of the live tree, written (one
 * write(2), O_APPEND) before the change is answered or any watch fires,
 * so a test that saw an answer or an event finds the line in the file:
 * "GEN pid=PID dom=D write PATH=VALUE" or "GEN pid=PID dom=D rm PATH";
 * the value's bytes outside printable ASCII, and '\\', as \\xNN. */
struct xs_changes {
	int fd;
	bool failed;
};

static void
xs_change(void *opaque, const struct xstore_conn *by, uint64_t gen, const char *path,
	  const void *value, size_t len, bool removed)
{
	struct xs_changes *xc = opaque;
	const unsigned char *v = value;
	char *line;
	size_t n = 0, cap;
	int k;

	if (xc->failed)
		return;
	cap = 128 + strlen(path) + 4 * len;
	line = malloc(cap);
	if (!line)
		goto fail;
	k = snprintf(line, cap, "%llu pid=%llu dom=%u %s %s%s", (unsigned long long)gen,
		     by ? (unsigned long long)xstore_conn_tag(by) : 0ULL,
		     by ? xstore_conn_domid(by) : 0u, removed ? "rm" : "write", path,
		     removed ? "" : "=");
	if (k < 0 || (size_t)k >= cap)
		goto fail;
	n = (size_t)k;
	for (size_t i = 0; !removed && i < len; i++) {
		if (v[i] >= 0x20 && v[i] < 0x7f && v[i] != '\\')
			line[n++] = (char)v[i];
		else
			n += (size_t)snprintf(line + n, cap - n, "\\x%02x", v[i]);
	}
	line[n++] = '\n';
	if (write(xc->fd, line, n) != (ssize_t)n)
		goto fail;
	free(line);
	return;
fail:
	free(line);
	/* said once; the file is short of lines from here on */
	log_error("--xs-changes: cannot record a change of %s: %m; no more are recorded", path);
	xc->failed = true;
}

static void
on_signal(void *opaque, uint32_t events)
{
	struct xensim *x = opaque;
	struct signalfd_siginfo si;

	if (read(x->sigfd, &si, sizeof(si)) == sizeof(si)) {
		log_info("signal %u: shutting down", si.ssi_signo);
		sim_loop_stop(x->loop);
	}
}

static int
write_pidfile(const char *path)
{
	char tmp[PATH_MAX], buf[32];
	int fd, n;

	/* Atomically: readers never see an empty or partial file. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (write(fd, buf, (size_t)n) != n || close(fd) < 0 ||
	    rename(tmp, path) < 0) {
		int e = errno ? errno : EIO;

		unlink(tmp);
		return -e;
	}
	return 0;
}

/* Does a live xensim serve dir already?  (Its sockets must not be stolen.) */
static bool
dir_in_use(const char *dir)
{
	static const char *const socks[] = { "xenstore.sock", "ctl.sock" };

	for (size_t i = 0; i < ARRAY_SIZE(socks); i++) {
		struct sockaddr_un sun = { .sun_family = AF_UNIX };
		int fd, r;

		if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s",
				     dir, socks[i]) >= sizeof(sun.sun_path))
			continue;	/* reported when listening */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		r = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
		close(fd);
		if (r == 0) {
			log_error("%s: another xensim is serving it", sun.sun_path);
			return true;
		}
	}
	return false;
}

/*
 * --daemon: fork; the parent waits until the child reports that it is
 * serving (one byte on a pipe) and exits 0, or 1 if the child failed.
 */
static int
daemonize(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		_exit(read(p[0], &c, 1) == 1 ? 0 : 1);
	}
	close(p[0]);
	if (setsid() < 0)
		return -errno;
	*ready_fd = p[1];
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dir", required_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "daemon", no_argument, NULL, 256 },
		{ "verbose", no_argument, NULL, 'v' },
		{ "debug-mask", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "xs-changes", required_argument, NULL, 257 },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir_arg = NULL, *pidfile = NULL, *changes = NULL;
	struct xs_changes xc = { .fd = -1 };
	char dir[PATH_MAX];
	bool daemon_mode = false;
	struct xensim x = { .sigfd = -1 };
	struct hv *hv = NULL;
	struct xstore *store = NULL;
	struct xsock *xsock = NULL;
	struct ctl *ctl = NULL;
	int ready_fd = -1, opt, rc = 1, e;
	sigset_t mask;

	log_init(argv[0]);
	while ((opt = getopt_long(argc, argv, "d:p:vD:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			dir_arg = optarg;
			break;
		case 'p':
			pidfile = optarg;
			break;
		case 256:
			daemon_mode = true;
			break;
		case 257:
			changes = optarg;
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'D':
			if (log_parse_debug_mask(optarg, &log_debug_mask) < 0) {
				log_error("bad --debug-mask '%s'", optarg);
				return 1;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!dir_arg || optind != argc) {
		usage(stderr);
		return 1;
	}
	if (mkdir(dir_arg, 0755) < 0 && errno != EEXIST) {
		log_error("mkdir %s: %m", dir_arg);
		return 1;
	}
	if (!realpath(dir_arg, dir)) {
		log_error("%s: %m", dir_arg);
		return 1;
	}
	if (dir_in_use(dir))
		return 1;
	if (daemon_mode && (e = daemonize(&ready_fd)) < 0) {
		log_error("daemonize: %s", strerror(-e));
		return 1;
	}

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0 ||
	    (x.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
		log_error("signalfd: %m");
		goto out;
	}
	x.loop = sim_loop_new();
	if (!x.loop) {
		log_error("epoll: %m");
		goto out;
	}
	if (sim_loop_add(x.loop, x.sigfd, EPOLLIN, on_signal, &x) < 0)
		goto out;
	store = xstore_new();
	if (!store) {
		log_error("xenstore: %m");
		goto out;
	}
	if (changes) {
		xc.fd = open(changes, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (xc.fd < 0) {
			log_error("--xs-changes %s: %m", changes);
			goto out;
		}
		xstore_set_change_hook(store, xs_change, &xc);
	}
	xsock = xsock_new(x.loop, store, dir);
	if (!xsock) {
		log_error("xenstore sockets: %m");
		goto out;
	}
	hv = hv_new(x.loop, dir);
	if (!hv) {
		log_error("hypervisor: %m");
		goto out;
	}
	ctl = ctl_new(x.loop, dir, hv, store, xsock);
	if (!ctl) {
		log_error("control socket / dom0: %m");
		goto out;
	}
	if (pidfile && (e = write_pidfile(pidfile)) < 0) {
		log_error("pidfile %s: %s", pidfile, strerror(-e));
		goto out;
	}
	log_info("serving %s", dir);
	if (ready_fd >= 0) {
		int devnull = open("/dev/null", O_RDWR);

		if (write(ready_fd, "1", 1) != 1)
			log_error("cannot tell the parent we are ready: %m");
		close(ready_fd);
		ready_fd = -1;
		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
			close(devnull);
		}
	}
	e = sim_loop_run(x.loop);
	if (e < 0) {
		log_error("epoll_wait: %s", strerror(-e));
		goto out;
	}
	rc = 0;
out:
	ctl_free(ctl);
	xsock_free(xsock);
	hv_free(hv);
	xstore_free(store);
	if (xc.fd >= 0)
		close(xc.fd);
	sim_loop_free(x.loop);
	if (x.sigfd >= 0)
		close(x.sigfd);
	if (pidfile && rc == 0)
		unlink(pidfile);
	return rc;
}
