/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * options.c: blkbackd's command line (parse_options, into struct run)
 * and what this machine's system calls and clock cost (machine_costs),
 * which decide the queues' defaults.  See blkbackd.8 for every option.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "git-version.h"
#include "log.h"
#include "pgrant.h"
#include "run.h"

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
	OPT_CTL_GROUP,
	OPT_SIZE_CHECK,
	OPT_LEAVE_KERNEL_VBDS,
	OPT_IO_ENGINE,
};

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
	{ "ctl-group", required_argument, NULL, OPT_CTL_GROUP },
	{ "size-check-interval", required_argument, NULL, OPT_SIZE_CHECK },
	{ "leave-kernel-vbds", no_argument, NULL, OPT_LEAVE_KERNEL_VBDS },
	{ "io-engine", required_argument, NULL, OPT_IO_ENGINE },
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
"      --ctl-group=GROUP        the socket 0660 and GROUP's: its members may run\n"
"                               blkbackd-ctl list, stats, status (default: root only)\n"
"      --size-check-interval=SECS  read the backings' sizes every SECS seconds and\n"
"                               tell the guests of a change (default 2; 0 = only on\n"
"                               SIGHUP and blkbackd-ctl resize)\n"
"      --leave-kernel-vbds      start even though the kernel's xen-blkback is loaded,\n"
"                               and leave the vbds it serves alone (switch-over only)\n"
"      --transport=xen|sim      real Xen (default when /dev/xen/evtchn exists) or xensim\n"
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
"      --io-engine=auto|libaio|io_uring  how file and block-device stores do their\n"
"                               I/O (default auto: io_uring where the kernel has it,\n"
"                               else libaio; the choice is logged)\n"
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
"checks the backings' sizes; SIGUSR1 logs statistics; SIGUSR2 simulates a power\n"
"cut with --cache=volatile or --record, and is ignored otherwise.\n");
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
int
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
			free(r->sim_dir);
			r->sim_dir = abs_path("--sim-dir", optarg);
			if (!r->sim_dir)
				return -1;
			o->sim_dir = r->sim_dir;
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
		case OPT_CTL_GROUP: {
			struct group *g;
			char *end;
			unsigned long n;

			errno = 0;
			g = getgrnam(optarg);
			if (g) {
				r->ctl_gid = g->gr_gid;
			} else {
				n = strtoul(optarg, &end, 10);
				if (optarg[0] < '0' || optarg[0] > '9' || *end || n >= (gid_t)-1) {
					log_error("--ctl-group: no group \"%s\"", optarg);
					return -1;
				}
				r->ctl_gid = (gid_t)n;
			}
			r->ctl_group_set = true;
			break;
		}
		case OPT_SIZE_CHECK:
			if (parse_uint(optarg, 86400, &r->size_check_secs) < 0) {
				log_error("--size-check-interval: \"%s\" is not 0..86400", optarg);
				return -1;
			}
			break;
		case OPT_IO_ENGINE:
			if (bk_io_engine_parse(optarg, &o->io_engine) < 0) {
				log_error("--io-engine: \"%s\" is not one of auto, libaio, io_uring",
					  optarg);
				return -1;
			}
			break;
		case OPT_CLOSE_ON_EXIT:
			o->close_on_exit = true;
			break;
		case OPT_LEAVE_KERNEL_VBDS:
			o->leave_kernel_vbds = true;
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
			free(r->state_dir);
			r->state_dir = abs_path("--state-dir", optarg);
			if (!r->state_dir)
				return -1;
			o->state_dir = r->state_dir;
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
			printf("blkbackd %s (git %s)\n", PACKAGE_VERSION, BLKBACKD_GIT_REVISION);
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
	/* set but empty is a mistake, not a socket: libxenstore would try
	 * to connect to "" ("cannot connect to xenstore at : ...") */
	if (getenv("XENSTORED_PATH") && !*getenv("XENSTORED_PATH")) {
		log_error("XENSTORED_PATH is set but empty: unset it (the default "
			  "xenstore), or set it to xenstored's socket");
		return -1;
	}
	if (!transport_set && xenops_transport_default(&o->transport) < 0) {
		log_error("no Xen here (/dev/xen/evtchn missing); use --transport=sim with a "
			  "running xensim");
		return -1;
	}
	/* a detached daemon works from /: what it opens later (the sim's
	 * event channels, the recovery records) must not be relative */
	if (o->transport == XENOPS_SIM && !o->sim_dir && getenv("XENSIM_DIR") &&
	    *getenv("XENSIM_DIR")) {
		r->sim_dir = abs_path("$XENSIM_DIR", getenv("XENSIM_DIR"));
		if (!r->sim_dir)
			return -1;
		o->sim_dir = r->sim_dir;
	}
	if (o->record_path && check_record_dir(o->record_path) < 0)
		return -1;
	if (o->ignore_flush)
		log_error("WARNING: --unsafe-ignore-flush: flushes and barriers are "
			  "ACKNOWLEDGED WITHOUT FLUSHING; guest data WILL be lost on a "
			  "power cut.  Test mode for blkcrash only.");
	return 0;
}


/*
 * Nanoseconds one clock_gettime(CLOCK_MONOTONIC) (fine) or one trivial
 * system call takes here: the second largest of 5 rounds of 16.  Not
 * the least: in a nested PV dom0 the clock is a vDSO read at some
 * moments and a system call at others, and the least of 5 rounds found
 * it cheap at 2 of 5 daemon starts, which then made 7.7 clock system
 * calls per request (BENCHMARKS, "Where the time goes per request").  A
 * clock that is slow in 2 rounds of 5 is slow; one round preempted on a
 * fast machine is not enough to say so.
 */
static uint64_t
cost_ns(bool syscall_cost)
{
	uint64_t ns[5];
	int round, i, j;

	for (round = 0; round < 5; round++) {
		struct timespec a, b, t;

		clock_gettime(CLOCK_MONOTONIC, &a);
		for (i = 0; i < 16; i++) {
			if (syscall_cost)
				syscall(SYS_getppid);
			else
				clock_gettime(CLOCK_MONOTONIC, &t);
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		ns[round] = ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000ull +
			     (uint64_t)b.tv_nsec - (uint64_t)a.tv_nsec) / 16;
		/* insertion: ns[0..round] ascending */
		for (j = round; j > 0 && ns[j - 1] > ns[j]; j--) {
			uint64_t x = ns[j];

			ns[j] = ns[j - 1];
			ns[j - 1] = x;
		}
	}
	return ns[3];
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
void
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
