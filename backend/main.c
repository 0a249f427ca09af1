/*
 * main.c: blkbackd, the userspace Xen block backend: options, start-up
 * (detached only once setup has succeeded), signals, the control
 * thread's event loop (xenstore, the queues' reports, the control
 * socket, timers), shutdown and upgrade.  See blkbackd.8.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#include "vbd.h"
#include "xbus.h"

/* real Xen: one backend daemon per domain */
#ifndef BLKBACKD_LOCK_FILE
#define BLKBACKD_LOCK_FILE "/run/blkbackd.lock"
#endif
/* real Xen: the queues' recovery records (tmpfs: they outlive the
 * process, not the machine) */
#ifndef BLKBACKD_STATE_DIR
#define BLKBACKD_STATE_DIR "/run/blkbackd"
#endif

enum {
	OPT_TRANSPORT = 256,
	OPT_SIM_DIR,
	OPT_TRACE,
	OPT_STATS,
	OPT_UNSAFE_IGNORE_FLUSH,
	OPT_MAX_QUEUES,
	OPT_MAX_RING_ORDER,
	OPT_MAX_INDIRECT,
	OPT_MAP_THRESHOLD,
	OPT_POLL_MAX_US,
	OPT_FEATURE_PERSISTENT,
	OPT_STATE_DIR,
	OPT_TEST_CRASH_AT,
	OPT_MAX_PGRANTS,
	OPT_RECORD,
	OPT_CACHE,
	OPT_LOG_FILE,
	OPT_CLOSE_ON_EXIT,
	OPT_CTL_SOCKET,
	OPT_SIZE_CHECK,
};
/* Set in the environment of the program an upgrade execs. */
#define UPGRADED_ENV "BLKBACKD_UPGRADED"

static const struct option long_options[] = {
	{ "foreground", no_argument, NULL, 'f' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "pidfile", required_argument, NULL, 'P' },
	{ "transport", required_argument, NULL, OPT_TRANSPORT },
	{ "sim-dir", required_argument, NULL, OPT_SIM_DIR },
	{ "trace", required_argument, NULL, OPT_TRACE },
	{ "stats", optional_argument, NULL, OPT_STATS },
	{ "debug-mask", required_argument, NULL, 'D' },
	{ "unsafe-ignore-flush", no_argument, NULL, OPT_UNSAFE_IGNORE_FLUSH },
	{ "max-queues", required_argument, NULL, OPT_MAX_QUEUES },
	{ "max-ring-page-order", required_argument, NULL, OPT_MAX_RING_ORDER },
	{ "max-indirect-segments", required_argument, NULL, OPT_MAX_INDIRECT },
	{ "map-threshold", required_argument, NULL, OPT_MAP_THRESHOLD },
	{ "poll-max-us", required_argument, NULL, OPT_POLL_MAX_US },
	{ "feature-persistent", required_argument, NULL, OPT_FEATURE_PERSISTENT },
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
	{ "test-crash-at", required_argument, NULL, OPT_TEST_CRASH_AT },
	{ "max-persistent-grants", required_argument, NULL, OPT_MAX_PGRANTS },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "close-on-exit", no_argument, NULL, OPT_CLOSE_ON_EXIT },
	{ "ctl-socket", required_argument, NULL, OPT_CTL_SOCKET },
	{ "size-check-interval", required_argument, NULL, OPT_SIZE_CHECK },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: blkbackd [OPTION]...\n"
"Serve Xen paravirtual block devices (blkif) from files, block devices or RAM.\n"
"\n"
"  -f, --foreground             do not daemonize; log to stderr\n"
"  -v, --verbose                more log messages\n"
"  -P, --pidfile=FILE           write the pid to FILE once ready\n"
"      --log-file=FILE          log to FILE (reopened on SIGHUP) instead of syslog/stderr\n"
"      --close-on-exit          SIGTERM/SIGINT close every device (default: leave them\n"
"                               attached for the next blkbackd)\n"
"      --ctl-socket=PATH        blkbackd-ctl's socket (default " BLKBACKD_CTL_SOCKET ";\n"
"                               sim: beside the xenstore socket)\n"
"      --size-check-interval=SECS  read the backings' sizes every SECS seconds and\n"
"                               tell the guests of a change (default 2; 0 = only on\n"
"                               SIGHUP and blkbackd-ctl resize)\n"
"      --transport=xen|sim      real Xen (default when /dev/xen exists) or xensim\n"
"      --sim-dir=DIR            xensim's directory (default $XENSIM_DIR)\n"
"      --trace=FILE             one line per protocol event (blkbackd.8 TRACE FORMAT)\n"
"      --stats[=SECS]           log per-vbd counters every SECS seconds (default 10)\n"
"  -D, --debug-mask=MASK        debug categories: ring,xenbus,io,grant,evtchn,all or a number\n"
"      --max-queues=N           multi-queue-max-queues to offer (default 4)\n"
"      --max-ring-page-order=N  max-ring-page-order to offer, 0..4 (default 4)\n"
"      --max-indirect-segments=N  feature-max-indirect-segments, 0 (off)..256 (default 256)\n"
"      --feature-persistent=0|1 offer persistent grants (default 1)\n"
"      --max-persistent-grants=N  grants a queue keeps mapped, 1..32768 (default 1056)\n"
"      --map-threshold=BYTES    map (zero-copy) requests of at least BYTES; 0 = always copy\n"
"                               (default 65536)\n"
"      --poll-max-us=N          poll ring and completions up to N us before sleeping,\n"
"                               adaptively; 0 = never poll (default 50)\n"
"      --state-dir=DIR          the queues' recovery records, for a restart or an\n"
"                               upgrade the guests never notice (default /run/blkbackd;\n"
"                               sim: beside xensim's xenstore socket)\n"
"      --record=FILE            blkcrash: record every host write/flush to FILE\n"
"      --cache=volatile         blkcrash: model a volatile disk cache (power cut on SIGUSR2)\n"
"      --unsafe-ignore-flush    TEST ONLY: acknowledge flushes/barriers without flushing\n"
"      --test-crash-at=POINT:N  TEST ONLY: SIGKILL a queue thread the Nth time it reaches\n"
"                               POINT (taken, responded, recorded, pushed)\n"
"  -h, --help                   this help\n"
"  -V, --version                print the version\n"
"\n"
"Signals: SIGTERM/SIGINT drain every device and exit 0 (the guests keep their\n"
"devices unless --close-on-exit); SIGHUP reopens the log and trace files and\n"
"checks the backings' sizes; SIGUSR1 logs statistics.\n");
}

static int
parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

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
 * One blkbackd per xenstore: a second one would probe the same devices,
 * reset their state and tear down what the first serves.  The lock is an
 * flock() on a file beside the xenstore socket (sim: in xensim's
 * directory) or BLKBACKD_LOCK_FILE (real Xen), so it dies with the
 * process, even on SIGKILL: it can never be left stale.  The file holds
 * the owner's pid for the message.  Returns the locked fd (kept open for
 * the daemon's life) or -1 after logging.
 */
/*
 * A per-instance file's path: beside the xenstore socket under the
 * simulator ("XENSTORED_PATH.blkbackd-DOMID" + ext), dflt on real Xen.
 * 0, or -1 when too long.
 */
static int
instance_path(enum xenops_transport t, unsigned int self, const char *ext,
	      const char *dflt, char *path, size_t len)
{
	const char *xsp = getenv("XENSTORED_PATH");
	int n;

	if (t == XENOPS_SIM && xsp) {
		n = snprintf(path, len, "%s.blkbackd-%u%s", xsp, self, ext);
	} else {
		n = snprintf(path, len, "%s", dflt);
	}
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

static int
take_instance_lock(enum xenops_transport t, unsigned int self)
{
	char path[PATH_MAX], buf[32];
	int fd, n;

	if (instance_path(t, self, ".lock", BLKBACKD_LOCK_FILE, path,
			  sizeof(path)) < 0) {
		log_error("instance lock: path too long");
		return -1;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_error("instance lock %s: %m", path);
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
		return -1;
	}
	n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		log_info("instance lock %s: cannot record our pid: %m", path);
	return fd;
}

/*
 * --record=FILE is opened (truncated) only when a device connects: say
 * now, at start, when its directory cannot hold it.  0, or -1 after
 * logging.
 */
static int
check_record_dir(const char *file)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(file, '/');
	struct stat st;

	if (!*file || (slash && !slash[1])) {
		log_error("--record=%s: not a file name", file);
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == file ? 1 : (int)(slash - file), file);
	if (stat(dir, &st) < 0) {
		log_error("--record=%s: directory %s: %m", file, dir);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_error("--record=%s: %s is not a directory", file, dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		log_error("--record=%s: directory %s is not writable: %m", file, dir);
		return -1;
	}
	return 0;
}

/*
 * libxenstore's reader thread closes the socket when xenstored goes away
 * but never wakes the watch fd we poll; so when no watch has fired for
 * XS_PING_MS (timers and reports do not count), one read tells.
 * ENOENT/EACCES: an answer, so alive.
 */
#define XS_PING_MS 2000

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

/* Everything main() sets up, for its helpers below. */
struct run {
	struct bk_daemon d;
	char **argv;			/* as given: an upgrade execs it again */
	bool foreground;
	bool upgraded;			/* exec'ed by an upgrade: detached already */
	/* absolute (the daemon works from /): malloc'd, or NULL */
	char *pidfile, *trace_path, *log_file, *ctl_path, *record_path;
	unsigned int stats_secs;
	unsigned int size_check_secs;	/* --size-check-interval; 0: never */
	sigset_t sigs;			/* blocked in every thread; read from sfd */
	char state_dir[PATH_MAX];	/* --state-dir's default */
	bool poll_set;			/* --poll-max-us was given */
	int sfd, tfd, size_tfd, lockfd;
	int ready_fd;			/* detached: the waiting parent's pipe, or -1 */
	struct bk_ctl *ctl;
	/* how the loop ended */
	bool close_devs;		/* write Closed for every vbd */
	bool upgrade;			/* exec bk_ctl_upgrade_path() */
};

/* path made absolute against the working directory, malloc'd; NULL
 * (logged) when out of memory or the directory is unknown. */
static char *
abs_path(const char *opt, const char *path)
{
	char cwd[PATH_MAX], *p;

	if (path[0] == '/')
		p = strdup(path);
	else if (!getcwd(cwd, sizeof(cwd)))
		p = NULL;
	else if (asprintf(&p, "%s/%s", cwd, path) < 0)
		p = NULL;
	if (!p)
		log_error("%s=%s: cannot make it an absolute path: %m", opt, path);
	return p;
}

/*
 * The command line into r.  0 to go on, 1 to exit 0 at once (--help,
 * --version), -1 to exit 1 (after a message).
 */
static int
parse_options(int argc, char **argv, struct run *r)
{
	struct bk_options *o = &r->d.opt;
	bool transport_set = false;
	int c;

	while ((c = getopt_long(argc, argv, "fvP:D:hV", long_options, NULL)) != -1) {
		switch (c) {
		case 'f':
			r->foreground = true;
			break;
		case 'v':
			log_verbose = true;
			break;
		case 'P':
			free(r->pidfile);
			r->pidfile = abs_path("--pidfile", optarg);
			if (!r->pidfile)
				return -1;
			break;
		case 'D':
			if (log_parse_debug_mask(optarg, &log_debug_mask) < 0) {
				log_error("--debug-mask: cannot parse \"%s\"", optarg);
				return -1;
			}
			break;
		case OPT_TRANSPORT:
			if (xenops_transport_parse(optarg, &o->transport) < 0) {
				log_error("--transport: \"%s\" is neither xen nor sim", optarg);
				return -1;
			}
			transport_set = true;
			break;
		case OPT_SIM_DIR:
			o->sim_dir = optarg;
			break;
		case OPT_TRACE:
			free(r->trace_path);
			r->trace_path = abs_path("--trace", optarg);
			if (!r->trace_path)
				return -1;
			break;
		case OPT_LOG_FILE:
			free(r->log_file);
			r->log_file = abs_path("--log-file", optarg);
			if (!r->log_file)
				return -1;
			break;
		case OPT_CTL_SOCKET:
			free(r->ctl_path);
			r->ctl_path = abs_path("--ctl-socket", optarg);
			if (!r->ctl_path)
				return -1;
			break;
		case OPT_SIZE_CHECK:
			if (parse_uint(optarg, 86400, &r->size_check_secs) < 0) {
				log_error("--size-check-interval: \"%s\" is not 0..86400", optarg);
				return -1;
			}
			break;
		case OPT_CLOSE_ON_EXIT:
			o->close_on_exit = true;
			break;
		case OPT_STATS:
			r->stats_secs = 10;
			if (optarg && (parse_uint(optarg, 86400, &r->stats_secs) < 0 ||
				       !r->stats_secs)) {
				log_error("--stats: \"%s\" is not a number of seconds (1..86400)", optarg);
				return -1;
			}
			break;
		case OPT_UNSAFE_IGNORE_FLUSH:
			o->ignore_flush = true;
			break;
		case OPT_MAX_QUEUES:
			if (parse_uint(optarg, BK_MAX_QUEUES, &o->max_queues) < 0 || !o->max_queues) {
				log_error("--max-queues: \"%s\" is not in 1..%u", optarg, BK_MAX_QUEUES);
				return -1;
			}
			break;
		case OPT_MAX_RING_ORDER:
			if (parse_uint(optarg, BLKRING_MAX_PAGE_ORDER, &o->max_ring_order) < 0) {
				log_error("--max-ring-page-order: \"%s\" is not in 0..%u", optarg,
					  BLKRING_MAX_PAGE_ORDER);
				return -1;
			}
			break;
		case OPT_MAX_INDIRECT:
			if (parse_uint(optarg, BLKRING_MAX_INDIRECT_SEGMENTS, &o->max_indirect) < 0) {
				log_error("--max-indirect-segments: \"%s\" is not in 0..%u", optarg,
					  BLKRING_MAX_INDIRECT_SEGMENTS);
				return -1;
			}
			break;
		case OPT_MAP_THRESHOLD:
			if (bk_parse_size(optarg, &o->map_threshold) < 0) {
				log_error("--map-threshold: \"%s\" is not a size in bytes", optarg);
				return -1;
			}
			break;
		case OPT_POLL_MAX_US:
			r->poll_set = true;
			if (parse_uint(optarg, 1000000, &o->poll_max_us) < 0) {
				log_error("--poll-max-us: \"%s\" is not 0..1000000", optarg);
				return -1;
			}
			break;
		case OPT_FEATURE_PERSISTENT:
			if (strcmp(optarg, "0") && strcmp(optarg, "1")) {
				log_error("--feature-persistent: \"%s\" is neither 0 nor 1", optarg);
				return -1;
			}
			o->feature_persistent = optarg[0] == '1';
			break;
		case OPT_MAX_PGRANTS:
			if (parse_uint(optarg, 32768, &o->max_pgrants) < 0 || !o->max_pgrants) {
				log_error("--max-persistent-grants: \"%s\" is not in 1..32768", optarg);
				return -1;
			}
			break;
		case OPT_STATE_DIR:
			o->state_dir = optarg;
			break;
		case OPT_TEST_CRASH_AT: {
			char name[16];
			int n = 0;

			if (sscanf(optarg, "%15[a-z]:%n", name, &n) != 1 || !n ||
			    !(o->crash_point = bk_crash_point_parse(name)) ||
			    parse_uint(optarg + n, 1000000000, &o->crash_after) < 0 || !o->crash_after) {
				log_error("--test-crash-at: \"%s\" is not POINT:N with POINT one of "
					  "taken, responded, recorded, pushed and N >= 1", optarg);
				return -1;
			}
			break;
		}
		case OPT_RECORD:
			free(r->record_path);
			r->record_path = abs_path("--record", optarg);
			if (!r->record_path)
				return -1;
			o->record_path = r->record_path;
			break;
		case OPT_CACHE:
			if (strcmp(optarg, "volatile")) {
				log_error("--cache: only \"volatile\" is known (per-device write "
					  "caching is the xenstore key \"cache\")");
				return -1;
			}
			o->volatile_cache = true;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case 'V':
			printf("blkbackd %s\n", PACKAGE_VERSION);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		log_error("unexpected argument \"%s\"", argv[optind]);
		usage(stderr);
		return -1;
	}
	if (!transport_set && xenops_transport_default(&o->transport) < 0) {
		log_error("no Xen here (/dev/xen/evtchn missing); use --transport=sim with a "
			  "running xensim");
		return -1;
	}
	if (o->record_path && check_record_dir(o->record_path) < 0)
		return -1;
	if (o->ignore_flush)
		log_error("WARNING: --unsafe-ignore-flush: flushes and barriers are "
			  "ACKNOWLEDGED WITHOUT FLUSHING; guest data WILL be lost on a "
			  "power cut.  Test mode for blkcrash only.");
	return 0;
}

/* Nanoseconds one clock_gettime(CLOCK_MONOTONIC) (fine) or one
 * trivial system call takes here, the least of 5 rounds of 16. */
static uint64_t
cost_ns(bool syscall_cost)
{
	uint64_t best = UINT64_MAX;
	int round, i;

	for (round = 0; round < 5; round++) {
		struct timespec a, b, t;
		uint64_t ns;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < 16; i++) {
			if (syscall_cost)
				syscall(SYS_getppid);
			else
				clock_gettime(CLOCK_MONOTONIC, &t);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns = ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull + (uint64_t)b.tv_nsec -
		      (uint64_t)a.tv_nsec) / 16;
		if (ns < best)
			best = ns;
	}
	return best;
}

/*
 * What a system call and a look at the clock cost on this machine,
 * decided once.  In a PV domain a system call traps to the hypervisor,
 * and CLOCK_MONOTONIC is one too where Xen cannot offer a stable TSC to
 * the vDSO (measured under emulation: ~60 us each, against ~0.1 us on
 * hardware): then the queues never poll (the window is timed by that
 * clock), submit a ring pass's I/O in one io_submit, and time the
 * latency histogram with CLOCK_MONOTONIC_COARSE.
 */
static void
machine_costs(struct bk_options *o, bool poll_set)
{
	uint64_t clock_ns = cost_ns(false), sys_ns = cost_ns(true);

	o->lat_clock = clock_ns > 1000 ? CLOCK_MONOTONIC_COARSE : CLOCK_MONOTONIC;
	o->batch_submit = sys_ns > 2000;
	if (clock_ns > 1000 && o->poll_max_us && !poll_set)
		o->poll_max_us = 0;
	if (clock_ns > 1000 || sys_ns > 2000)
		log_info("a system call costs %.1f us here, a look at the clock %.1f us: "
			 "queues %s, one io_submit per %s", sys_ns / 1e3, clock_ns / 1e3,
			 o->poll_max_us ? "poll before they sleep" : "do not poll",
			 o->batch_submit ? "pass over the ring" : "request");
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
	const char *xsp = getenv("XENSTORED_PATH");
	struct stat st;

	if (!o->state_dir) {
		if (o->transport == XENOPS_SIM && xsp)
			snprintf(r->state_dir, sizeof(r->state_dir), "%s.blkbackd-%u.state", xsp,
				 r->d.self);
		else
			snprintf(r->state_dir, sizeof(r->state_dir), "%s", BLKBACKD_STATE_DIR);
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
		if (chdir("/") < 0)
			log_info("chdir /: %m");
	}
	log_set_errors_to_stderr(false);
#ifdef HAVE_LIBSYSTEMD
	sd_notifyf(0, "READY=1\nMAINPID=%d\nSTATUS=serving %s", (int)getpid(), r->d.vbd_root);
#endif
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
	char ctl_path[PATH_MAX];
	const char *xsp;

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
	r->sfd = signalfd(-1, &r->sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (d->report_efd < 0 || r->sfd < 0) {
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
	if (r->ctl_path)
		snprintf(ctl_path, sizeof(ctl_path), "%s", r->ctl_path);
	else if (instance_path(d->opt.transport, d->self, ".ctl",
			       BLKBACKD_CTL_SOCKET, ctl_path, sizeof(ctl_path)) < 0) {
		log_error("control socket: path too long (give --ctl-socket)");
		return -1;
	}
	if (bk_ctl_open(d, ctl_path, &r->ctl) < 0)
		return -1;
	if (bk_xenbus_init(d) < 0)
		return -1;
	if (r->pidfile && write_pidfile(r->pidfile) < 0)
		return -1;
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
		struct pollfd pfd[6] = {
			{ .fd = xs_fileno(d->xs), .events = POLLIN },
			{ .fd = r->sfd, .events = POLLIN },
			{ .fd = d->report_efd, .events = POLLIN },
			{ .fd = bk_ctl_fd(r->ctl), .events = POLLIN },
			{ .fd = r->size_tfd, .events = POLLIN },
			{ .fd = r->tfd, .events = POLLIN },
		};
		int n = poll(pfd, r->tfd >= 0 ? 6 : 5, XS_PING_MS);
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
		if (pfd[2].revents & POLLIN)
			bk_xenbus_handle_reports(d);
		if ((pfd[4].revents & POLLIN) && read(r->size_tfd, &v, sizeof(v)) > 0)
			bk_xenbus_check_sizes(d);
		if (r->tfd >= 0 && (pfd[5].revents & POLLIN) && read(r->tfd, &v, sizeof(v)) > 0)
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

	bk_ctl_close(r->ctl, !r->upgrade);
	if (r->size_tfd >= 0)
		close(r->size_tfd);
	if (r->tfd >= 0)
		close(r->tfd);
	if (r->sfd >= 0)
		close(r->sfd);
	if (d->report_efd >= 0)
		close(d->report_efd);
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
	free(r->record_path);
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
		r.upgraded = true;
		unsetenv(UPGRADED_ENV);	/* not for our children */
	}

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
	if (setup(&r) == 0) {
		report_ready(&r, 0);
		rc = loop(&r);
#ifdef HAVE_LIBSYSTEMD
		if (!r.upgrade)
			sd_notify(0, "STOPPING=1");
#endif
		bk_xenbus_shutdown(&r.d, r.close_devs);	/* logs each device's final counters */
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
	return rc;
}
