/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkbackd-ctl.c: the client of blkbackd's control socket: list the
 * vbds, their statistics (a table, JSON or Prometheus's text format:
 * blkbackd-ctl-output.c prints them), resize, shutdown, upgrade.  Here:
 * the options, the socket exchange and the commands.  See
 * blkbackd-ctl.8; the protocol is ctl-proto.h's.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "blkbackd-ctl-output.h"
#include "ctl.h"
#include "ctl-proto.h"

enum { OUT_TABLE, OUT_JSON, OUT_PROMETHEUS };
/* blkbackd-ctl.8 EXIT STATUS */
enum {
	EXIT_REFUSED = 1,	/* blkbackd answered an error (or: a shrink) */
	EXIT_USAGE = 2,		/* the command line */
	EXIT_UNREACHABLE = 3,	/* no blkbackd on the socket, or no answer from it */
	EXIT_TIMEOUT = 4,	/* no answer in time; shutdown/upgrade not done */
};

static const char *prog = "blkbackd-ctl";
static int out_mode = OUT_TABLE;

/*
 * Say why we fail: "blkbackd-ctl: MESSAGE" on stderr and, with --json,
 * {"error": {"errno": ERRNAME, "message": MESSAGE, "exit": rc}} on
 * stdout, where a pipe into jq sees it.  Returns rc.
 */
static int
failure(int rc, const char *ename, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(3, 4);

/* With --json, the error object on stdout.  Returns rc.  Out of memory
 * for the object, stdout stays empty (stderr has said why already, or
 * getopt has). */
static int
json_error(int rc, const char *ename, const char *msg)
{
	if (out_mode == OUT_JSON)
		ctlout_json_error(rc, ename, msg);
	return rc;
}

static int
failure(int rc, const char *ename, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, msg);
	return json_error(rc, ename, msg);
}

/* A JSON document printed (ok), or the failure: out of memory.  0 or an
 * exit status. */
static int
json_printed(bool ok)
{
	return ok ? 0 : failure(EXIT_REFUSED, "ENOMEM", "out of memory");
}

static const char *
errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EIO";
}

/* DOMID/DEVID: two decimal numbers that fit 32 bits, a slash between. */
static bool
vbd_name_ok(const char *s)
{
	const char *p = s;
	int part;

	for (part = 0; part < 2; part++) {
		unsigned long long v = 0;
		const char *start = p;

		while (*p >= '0' && *p <= '9' && p - start < 11)
			v = v * 10 + (unsigned long long)(*p++ - '0');
		if (p == start || v > UINT32_MAX || (*p >= '0' && *p <= '9'))
			return false;
		if (part == 0 && *p++ != '/')
			return false;
	}
	return *p == '\0';
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: blkbackd-ctl [OPTION]... COMMAND [ARG]...\n"
"Talk to a running blkbackd through its control socket (root; with\n"
"blkbackd --ctl-group, that group may list, stats and status).\n"
"\n"
"Commands:\n"
"  list                 every vbd: domid, devid, vdev, backing, state, features,\n"
"                       queues, ring pages, persistent grants mapped\n"
"  stats [DOMID/DEVID]  the counters and latency percentiles (p50/p90/p99)\n"
"  resize DOMID/DEVID   read the backing's size; tell the guest if it changed\n"
"  status               the daemon's pid, version, uptime, number of vbds\n"
"  shutdown [--close]   stop as for SIGTERM; --close: close every vbd first\n"
"  upgrade [PATH]       stop without closing and exec PATH (default: the same\n"
"                       binary, /proc/self/exe) with the same options\n"
"\n"
"Options:\n"
"  -s, --socket=PATH    the control socket (default " BLKBACKD_CTL_SOCKET ";\n"
"                       with --transport=sim: $XENSTORED_PATH" ".blkbackd-0.ctl,\n"
"                       XENSTORED_PATH defaulting to $XENSIM_DIR/xenstore.sock)\n"
"      --transport=xen|sim  which default socket (default: sim when\n"
"                       /dev/xen/evtchn is missing and XENSTORED_PATH or\n"
"                       XENSIM_DIR is set)\n"
"      --json           list, stats, status: JSON (errors too, on stdout)\n"
"      --prometheus     stats, status: Prometheus text exposition format\n"
"      --timeout=SECS   shutdown, upgrade: wait this long (default 120)\n"
"      --state-dir=DIR  status, blkbackd down: its recovery records (default\n"
"                       " BLKBACKD_STATE_DIR "; with --transport=sim beside the socket\n"
"                       as for --socket: $XENSTORED_PATH.blkbackd-0.state)\n"
"  -h, --help           this help\n"
"  -V, --version        print the version\n"
"Options may come before or after the command and its argument.\n"
"\n"
"Exit status: 0 done, 1 blkbackd refused (an error it answered), 2 usage,\n"
"3 blkbackd not running or not answering, 4 timed out.  status with blkbackd\n"
"not running also says which vbds it left attached, their guests' disks\n"
"stalled until it starts again (its records in the state directory).\n");
}

/* ---------------------------------------------------------------- */
/* Talking.                                                           */
/* ---------------------------------------------------------------- */

/* The fd, or -errno (after a failure() unless quiet). */
static int
ctl_connect(const char *path, bool quiet)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, e;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		if (!quiet)
			failure(EXIT_USAGE, "ENAMETOOLONG", "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	/* a path that exists and is no socket (a directory, a file) is
	 * the command line's mistake, not a blkbackd that is down: connect
	 * would say ECONNREFUSED and "is blkbackd running?" */
	if (stat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		if (!quiet)
			failure(EXIT_USAGE, "ENOTSOCK", "%s is a %s, not a socket (--socket "
				"names blkbackd's control socket)", path,
				S_ISDIR(st.st_mode) ? "directory" : "file");
		return -ENOTSOCK;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		if (!quiet)
			failure(EXIT_UNREACHABLE, errname(e), "socket: %s", strerror(e));
		return -e;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		e = errno;
		if (!quiet)
			failure(EXIT_UNREACHABLE, errname(e), "cannot connect to %s: %s%s", path,
				strerror(e), e == EACCES ?
				" (blkbackd's control socket is root's, or --ctl-group's)" :
				e == ENOENT || e == ECONNREFUSED ? " (is blkbackd running?)" : "");
		close(fd);
		return -e;
	}
	return fd;
}

/* Read everything until the result line ("ok" / "error ..."): the lines
 * into *out (malloc'd).  0, or an exit status after a failure(). */
static int
ctl_read_reply(int fd, char **out, int timeout_ms)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf)
		return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char *last;
		ssize_t n;

		buf[len] = '\0';
		/* complete once the last full line is ok/error */
		if (len && buf[len - 1] == '\n') {
			buf[len - 1] = '\0';
			last = strrchr(buf, '\n');
			last = last ? last + 1 : buf;
			buf[len - 1] = '\n';
			if (!strncmp(last, "ok\n", 3) || !strncmp(last, "error ", 6)) {
				*out = buf;
				return 0;
			}
		}
		if (poll(&pfd, 1, timeout_ms) <= 0) {
			free(buf);
			return failure(EXIT_TIMEOUT, "ETIMEDOUT", "no answer from blkbackd within %d s",
				       timeout_ms / 1000);
		}
		if (cap - len < 2048) {
			char *p = realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
			}
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : ECONNRESET;

			free(buf);
			return failure(EXIT_UNREACHABLE, errname(e),
				       "blkbackd closed the connection without an answer%s%s",
				       n < 0 ? ": " : "", n < 0 ? strerror(e) : "");
		}
		len += (size_t)n;
	}
}

/* 0, or an exit status after a failure(). */
static int
send_line(int fd, const char *line)
{
	size_t len = strlen(line);

	while (len) {
		ssize_t n = send(fd, line, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EPIPE;

			return failure(EXIT_UNREACHABLE, errname(e), "sending the request: %s",
				       strerror(e));
		}
		line += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Records (blkbackd-ctl-output.h prints them).                       */
/* ---------------------------------------------------------------- */

/* Split the reply's lines (in place) into records; the result line is
 * left in *result.  0, or an exit status after a failure(). */
static int
parse_reply(char *buf, struct recs *rs, char **result)
{
	char *save = NULL, *line;

	memset(rs, 0, sizeof(*rs));
	*result = NULL;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct bk_ctl_record *r;

		if (!strcmp(line, "ok") || !strncmp(line, "error ", 6)) {
			*result = line;
			break;
		}
		r = realloc(rs->r, (rs->n + 1) * sizeof(*r));
		if (!r)
			return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
		rs->r = r;
		if (bk_ctl_parse_record(line, &rs->r[rs->n]) < 0)
			return failure(EXIT_UNREACHABLE, "EPROTO",
				       "cannot parse blkbackd's answer \"%.80s\"", line);
		rs->n++;
	}
	return *result ? 0 : failure(EXIT_UNREACHABLE, "EPROTO", "blkbackd's answer has no result line");
}

/* ---------------------------------------------------------------- */
/* blkbackd down: what it left behind.                                */
/* ---------------------------------------------------------------- */

struct stalled {
	unsigned int vbds, guests;
	char names[256];	/* "DOMID/DEVID ...", cut short with "..." */
};

/*
 * The vbds blkbackd left attached when it stopped without closing them:
 * each queue of a vbd it serves has a recovery record in its state
 * directory, "vbd-DOMID-DEVID-qQUEUE" (backend/qstate.h, vbd.c
 * record_path), removed when the vbd is closed and kept by a stop that
 * leaves it Connected for the next blkbackd -- so while no blkbackd
 * runs, a record names a vbd whose guest waits for a backend -- unless
 * the toolstack destroyed that guest meanwhile: we do not ask xenstore,
 * and such records stay until the next blkbackd starts and removes
 * them (vbd.c bk_vbd_sweep_records; blkbackd-ctl.8 status).  Returns 0 with *st filled, or -errno when dir cannot be
 * read (-ENOENT: no directory, so no records).
 */
static int
find_stalled(const char *dir, struct stalled *st)
{
	struct { unsigned int dom, dev; } *seen = NULL, *grown;
	size_t nseen = 0, used = 0, i;
	struct dirent *de;
	DIR *dp = opendir(dir);

	memset(st, 0, sizeof(*st));
	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		unsigned int dom, dev, q;
		int end = 0;
		bool new_dom = true;

		if (sscanf(de->d_name, "vbd-%u-%u-q%u%n", &dom, &dev, &q, &end) != 3 ||
		    de->d_name[end])
			continue;
		for (i = 0; i < nseen; i++) {
			if (seen[i].dom == dom)
				new_dom = false;
			if (seen[i].dom == dom && seen[i].dev == dev)
				break;
		}
		if (i < nseen)		/* another queue of a vbd counted */
			continue;
		grown = realloc(seen, (nseen + 1) * sizeof(*seen));
		if (!grown)
			break;		/* counted so far: still "some" */
		seen = grown;
		seen[nseen].dom = dom;
		seen[nseen++].dev = dev;
		st->vbds++;
		st->guests += new_dom;
		if (used + 1 < sizeof(st->names)) {
			int n = snprintf(st->names + used, sizeof(st->names) - used, "%s%u/%u",
					 used ? " " : "", dom, dev);

			if (n >= 0 && (size_t)n < sizeof(st->names) - used) {
				used += (size_t)n;
			} else {
				strcpy(st->names + sizeof(st->names) - 4, "...");
				used = sizeof(st->names);
			}
		}
	}
	closedir(dp);
	free(seen);
	return 0;
}

/* The state directory blkbackd uses by default, found as
 * default_socket() finds its socket: malloc'd, or NULL (unknown). */
static char *
default_state_dir(int transport_sim)
{
	const char *xsp = getenv("XENSTORED_PATH"), *simdir = getenv("XENSIM_DIR");
	char *fromdir = NULL, *real = NULL, *dir = NULL;

	if (!xsp && simdir && *simdir && asprintf(&fromdir, "%s/xenstore.sock", simdir) >= 0)
		xsp = fromdir;
	if (transport_sim < 0)
		transport_sim = access("/dev/xen/evtchn", F_OK) < 0 && xsp;
	if (!transport_sim) {
		dir = strdup(BLKBACKD_STATE_DIR);
	} else if (xsp) {
		real = realpath(xsp, NULL);
		if (asprintf(&dir, "%s" BK_STATE_SIM_SUFFIX, real ? real : xsp, 0u) < 0)
			dir = NULL;
	}
	free(real);
	free(fromdir);
	return dir;
}

/*
 * status, nothing on the socket (e: connect's errno): say so, and when
 * blkbackd is not running (ENOENT, ECONNREFUSED: no one listens) and
 * its state directory names vbds it left attached, that those guests'
 * disks are stalled.  *nstalled: how many vbds (0 when none or unknown).
 * Returns EXIT_UNREACHABLE.
 */
static int
status_down(const char *sock, int e, const char *state_dir, unsigned int *nstalled)
{
	char *msg = NULL, *more = NULL, *both = NULL;
	struct stalled st;
	int r, rc;

	*nstalled = 0;
	if (asprintf(&msg, "cannot connect to %s: %s%s", sock, strerror(e),
		     e == EACCES ? " (blkbackd's control socket is root's, or --ctl-group's)" :
		     e == ENOENT || e == ECONNREFUSED ? " (is blkbackd running?)" : "") < 0)
		return failure(EXIT_UNREACHABLE, "ENOMEM", "out of memory");
	if ((e == ENOENT || e == ECONNREFUSED) && state_dir) {
		r = find_stalled(state_dir, &st);
		if (r == 0 && st.vbds) {
			*nstalled = st.vbds;
			if (asprintf(&more, "GUESTS' DISKS STALLED: blkbackd is not running and "
				     "left %u vbd%s of %u guest%s attached without a backend "
				     "(%s; records in %s): %s I/O waits until blkbackd starts "
				     "again", st.vbds, st.vbds == 1 ? "" : "s", st.guests,
				     st.guests == 1 ? "" : "s", st.names, state_dir,
				     st.guests == 1 ? "the guest's" : "those guests'") < 0)
				more = NULL;
		} else if (r < 0 && r != -ENOENT) {
			if (asprintf(&more, "cannot read blkbackd's state directory %s (%s): "
				     "whether guests' disks are stalled is unknown", state_dir,
				     strerror(-r)) < 0)
				more = NULL;
		}
	}
	fprintf(stderr, "%s: %s\n", prog, msg);
	if (more)
		fprintf(stderr, "%s: %s\n", prog, more);
	/* one message for --json: both */
	if (more && asprintf(&both, "%s; %s", msg, more) < 0)
		both = NULL;
	rc = json_error(EXIT_UNREACHABLE, errname(e), both ? both : msg);
	free(both);
	free(more);
	free(msg);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Main.                                                              */
/* ---------------------------------------------------------------- */

static int
default_socket(int transport_sim, char *buf, size_t len)
{
	const char *xsp = getenv("XENSTORED_PATH"), *simdir = getenv("XENSIM_DIR");
	char *fromdir = NULL, *real = NULL;
	int rc = 0;

	/* as blkbackd finds xensim's xenstore: XENSTORED_PATH, else the
	 * dom0 socket in XENSIM_DIR */
	if (!xsp && simdir && *simdir && asprintf(&fromdir, "%s/xenstore.sock", simdir) >= 0)
		xsp = fromdir;
	if (transport_sim < 0)	/* not given: as blkbackd decides */
		transport_sim = access("/dev/xen/evtchn", F_OK) < 0 && xsp;
	if (!transport_sim) {
		snprintf(buf, len, "%s", BLKBACKD_CTL_SOCKET);
	} else if (!xsp) {
		failure(EXIT_USAGE, "EINVAL", "--transport=sim: neither XENSTORED_PATH (xensim's "
			"dom0 socket) nor XENSIM_DIR is set; give --socket");
		rc = -1;
	} else {
		/* beside the socket itself, as blkbackd names it */
		real = realpath(xsp, NULL);
		if ((size_t)snprintf(buf, len, "%s" BK_CTL_SIM_SUFFIX, real ? real : xsp, 0u) >= len) {
			failure(EXIT_USAGE, "ENAMETOOLONG", "XENSTORED_PATH is too long for a socket "
				"path; give --socket");
			rc = -1;
		}
	}
	free(real);
	free(fromdir);
	return rc;
}

/* The pid of the process that listens on fd's other end (the daemon;
 * an upgrade keeps it), 0 when it cannot be told (another pid
 * namespace). */
static pid_t
peer_pid(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 || len != sizeof(cr))
		return 0;
	return cr.pid > 0 ? cr.pid : 0;
}

/* Has process pid ended (gone, or a zombie its parent has not reaped)? */
static bool
pid_ended(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		/* no /proc: ask the kernel (EPERM: it is there, not ours) */
		return errno == ENOENT || (kill(pid, 0) < 0 && errno == ESRCH);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold ')' and blanks */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Wait until fd sees EOF (the daemon exited or exec'ed). */
static bool
wait_eof(int fd, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	char c;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)(end - time(NULL));

		if (left <= 0 || poll(&pfd, 1, left * 1000) <= 0)
			return false;
		if (recv(fd, &c, 1, 0) <= 0)
			return true;
	}
}

int
main(int argc, char **argv)
{
	enum { O_TRANSPORT = 256, O_JSON, O_PROM, O_CLOSE, O_TIMEOUT, O_STATE_DIR };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "transport", required_argument, NULL, O_TRANSPORT },
		{ "json", no_argument, NULL, O_JSON },
		{ "prometheus", no_argument, NULL, O_PROM },
		{ "close", no_argument, NULL, O_CLOSE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "state-dir", required_argument, NULL, O_STATE_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char sock[PATH_MAX], req[BK_CTL_MAX_LINE], *reply = NULL, *result;
	const char *socket_path = NULL, *state_dir = NULL, *cmd;
	char *sdir = NULL;
	unsigned int stalled = 0;
	pid_t daemon_pid = 0;
	int out = OUT_TABLE, transport_sim = -1, timeout_s = 120, c, fd, rc = EXIT_REFUSED;
	char *tend;
	long lt;
	bool close_all = false;
	struct recs rs = { 0 };

	/* --json anywhere makes every failure JSON, a bad option before it too */
	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)
		if (!strcmp(argv[c], "--json"))
			out_mode = OUT_JSON;
	/* options anywhere (GNU getopt permutes): "stats 1/51712 --json";
	 * an argument that starts with '-' goes after "--" */
	while ((c = getopt_long(argc, argv, "s:hV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case O_TRANSPORT:
			if (strcmp(optarg, "xen") && strcmp(optarg, "sim"))
				return failure(EXIT_USAGE, "EINVAL",
					       "--transport: \"%s\" is neither xen nor sim", optarg);
			transport_sim = !strcmp(optarg, "sim");
			break;
		case O_JSON:
		case O_PROM:
			/* two output formats: neither silently wins */
			if (out != OUT_TABLE && out != (c == O_JSON ? OUT_JSON : OUT_PROMETHEUS))
				return failure(EXIT_USAGE, "EINVAL",
					       "--json and --prometheus: one output format only");
			out = c == O_JSON ? OUT_JSON : OUT_PROMETHEUS;
			break;
		case O_CLOSE:
			close_all = true;
			break;
		case O_STATE_DIR:
			state_dir = optarg;
			break;
		case O_TIMEOUT:
			errno = 0;
			lt = strtol(optarg, &tend, 10);
			timeout_s = errno || tend == optarg || *tend || lt < 1 || lt > 86400 ? 0 : (int)lt;
			if (timeout_s < 1 || timeout_s > 86400)
				return failure(EXIT_USAGE, "EINVAL", "--timeout: \"%s\" is not 1..86400",
					       optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("blkbackd-ctl %s\n", PACKAGE_VERSION);
			return 0;
		default:	/* getopt said what on stderr */
			if (out_mode != OUT_JSON)
				usage(stderr);
			return json_error(EXIT_USAGE, "EINVAL", "bad option (see --help)");
		}
	}
	if (optind >= argc) {
		if (out_mode != OUT_JSON)
			usage(stderr);
		return failure(EXIT_USAGE, "EINVAL", "no command (see --help)");
	}
	cmd = argv[optind++];
#define ARGS(min, max) (argc - optind >= (min) && argc - optind <= (max))
	if (!strcmp(cmd, "list") && ARGS(0, 0) && out != OUT_PROMETHEUS && !close_all) {
		snprintf(req, sizeof(req), "list\n");
	} else if (!strcmp(cmd, "stats") && ARGS(0, 1) && !close_all) {
		snprintf(req, sizeof(req), "stats%s%s\n", optind < argc ? " " : "",
			 optind < argc ? argv[optind] : "");
	} else if (!strcmp(cmd, "resize") && ARGS(1, 1) && out == OUT_TABLE && !close_all) {
		snprintf(req, sizeof(req), "resize %s\n", argv[optind]);
	} else if (!strcmp(cmd, "status") && ARGS(0, 0) && !close_all) {
		snprintf(req, sizeof(req), "status\n");
	} else if (!strcmp(cmd, "shutdown") && ARGS(0, 0) && out == OUT_TABLE) {
		snprintf(req, sizeof(req), "shutdown%s\n", close_all ? " --close" : "");
	} else if (!strcmp(cmd, "upgrade") && ARGS(0, 1) && out == OUT_TABLE && !close_all) {
		char path[PATH_MAX] = "";

		if (optind < argc && !realpath(argv[optind], path))
			return failure(EXIT_USAGE, errname(errno), "upgrade %s: %s", argv[optind],
				       strerror(errno));
		snprintf(req, sizeof(req), "upgrade%s%s\n", *path ? " " : "", path);
	} else {
		return failure(EXIT_USAGE, "EINVAL", "bad command line for \"%s\" (see --help)", cmd);
	}
#undef ARGS
	for (c = optind; c < argc; c++)
		if (strpbrk(argv[c], " \t\n"))
			return failure(EXIT_USAGE, "EINVAL", "\"%s\": arguments may not contain blanks",
				       argv[c]);
	/* a vbd's name is the command line's to get right (blkbackd would
	 * refuse it too, but that would read as its error, exit 1) */
	if ((!strcmp(cmd, "stats") || !strcmp(cmd, "resize")) && optind < argc &&
	    !vbd_name_ok(argv[optind]))
		return failure(EXIT_USAGE, "EINVAL", "\"%s\" is not a vbd: DOMID/DEVID "
			       "(e.g. 1/51712)", argv[optind]);
	if (!socket_path) {
		if (default_socket(transport_sim, sock, sizeof(sock)) < 0)
			return EXIT_USAGE;
		socket_path = sock;
	}
	fd = ctl_connect(socket_path, !strcmp(cmd, "status"));
	if (fd < 0) {
		rc = fd == -ENAMETOOLONG || fd == -ENOTSOCK ? EXIT_USAGE : EXIT_UNREACHABLE;
		if (!strcmp(cmd, "status") && fd == -ENAMETOOLONG) {
			failure(EXIT_USAGE, "ENAMETOOLONG", "%s: path too long", socket_path);
		} else if (!strcmp(cmd, "status") && fd == -ENOTSOCK) {
			failure(EXIT_USAGE, "ENOTSOCK", "%s is not a socket (--socket names "
				"blkbackd's control socket)", socket_path);
		} else if (!strcmp(cmd, "status")) {
			if (!state_dir)
				state_dir = sdir = default_state_dir(transport_sim);
			rc = status_down(socket_path, -fd, state_dir, &stalled);
			free(sdir);
		}
		goto out_down;
	}
	daemon_pid = peer_pid(fd);
	rc = send_line(fd, req);
	if (!rc)
		/* upgrade: blkbackd first runs "PATH --version" for up to
		 * 10 s, and waits 1 s more for one it had to kill (ctl.c) */
		rc = ctl_read_reply(fd, &reply, strcmp(cmd, "upgrade") ? 10000 : 15000);
	if (!rc)
		rc = parse_reply(reply, &rs, &result);
	if (rc)
		goto out;
	if (strcmp(result, "ok")) {
		/* "error ENAME MESSAGE" */
		char *en = result + 6, *msg = strchr(en, ' ');

		/* stderr as blkbackd said it; the JSON with the name apart */
		fprintf(stderr, "%s: %s\n", prog, en);
		if (msg)
			*msg++ = '\0';
		rc = json_error(EXIT_REFUSED, en, msg ? msg : "");
		goto out;
	}
	rc = 0;
	if (!strcmp(cmd, "list")) {
		if (out == OUT_JSON)
			rc = json_printed(ctlout_json_vbds(&rs, false));
		else
			ctlout_table_list(&rs);
	} else if (!strcmp(cmd, "stats")) {
		if (out == OUT_JSON)
			rc = json_printed(ctlout_json_vbds(&rs, true));
		else if (out == OUT_PROMETHEUS)
			ctlout_prom_stats(&rs);
		else
			ctlout_table_stats(&rs);
	} else if (!strcmp(cmd, "resize") && rs.n) {
		uint64_t o = ctlout_u64(&rs.r[0], "old_sectors");
		uint64_t n = ctlout_u64(&rs.r[0], "sectors");

		if (o == n) {
			printf("vbd %s: %" PRIu64 " sectors (unchanged)\n",
			       ctlout_str(&rs.r[0], "vbd", "?"), n);
		} else if (n < o) {
			/* announced, but an admin's mistake: say it as one */
			rc = failure(EXIT_REFUSED, "ENOSPC", "vbd %s: BACKING SHRANK: %" PRIu64
				     " -> %" PRIu64 " sectors under a connected guest; its I/O "
				     "past the new end fails (see its error node)",
				     ctlout_str(&rs.r[0], "vbd", "?"), o, n);
		} else
			printf("vbd %s: %" PRIu64 " -> %" PRIu64 " sectors\n",
			       ctlout_str(&rs.r[0], "vbd", "?"), o, n);
	} else if (!strcmp(cmd, "status") && rs.n) {
		if (out == OUT_JSON)
			rc = json_printed(ctlout_json_status(&rs.r[0]));
		else if (out == OUT_PROMETHEUS)
			ctlout_prom_status(&rs.r[0], 0);
		else
			ctlout_table_status(&rs.r[0]);
	} else if (!strcmp(cmd, "shutdown") || !strcmp(cmd, "upgrade")) {
		/* the daemon keeps the connection until it exits or execs */
		if (!wait_eof(fd, timeout_s)) {
			rc = failure(EXIT_TIMEOUT, "ETIMEDOUT", "blkbackd is still draining after %d s",
				     timeout_s);
		} else if (!strcmp(cmd, "upgrade")) {
			time_t end = time(NULL) + timeout_s;
			int nfd = -1;
			bool died = false;

			/* the new program listens once its setup is done; a
			 * daemon that died instead (its exec failed, or the new
			 * program exited) is said at once, not after the wait */
			while (time(NULL) < end && (nfd = ctl_connect(socket_path, true)) < 0) {
				if (daemon_pid && pid_ended(daemon_pid)) {
					died = true;
					break;
				}
				usleep(50000);
			}
			if (died) {
				rc = failure(EXIT_UNREACHABLE, "ESRCH", "blkbackd (pid %ld) exited "
					     "during the upgrade, and nothing serves %s (see its "
					     "log): its guests' disks are stalled until a blkbackd "
					     "is started", (long)daemon_pid, socket_path);
			} else if (nfd < 0) {
				rc = failure(EXIT_TIMEOUT, "ETIMEDOUT", "the upgraded blkbackd does not "
					     "answer on %s within %d s", socket_path, timeout_s);
			} else {
				printf("blkbackd upgraded\n");
				close(nfd);
			}
		} else {
			printf("blkbackd stopped\n");
		}
	}
out:
	free(rs.r);
	free(reply);
	close(fd);
out_down:
	/* a scrape of status says "down" in its own format, with the status */
	if ((rc == EXIT_UNREACHABLE || rc == EXIT_TIMEOUT) && out == OUT_PROMETHEUS &&
	    !strcmp(cmd, "status"))
		ctlout_prom_status(NULL, stalled);
	return rc;
}
