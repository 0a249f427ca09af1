/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-control.c: a stateful fuzzer of blkbackd's control plane
 * (DESIGN-NOTES.md "Stateful control-plane fuzzing").
 *
 *   fuzz-control --seed S --seconds T [--sequences N] [--replay SEQ]
 *                [--verbose] [--check-every N] [--rss-slack KIB]
 *                [--frontend BLKFRONT-TEST] [--slow N] [--min-sequences N]
 *                --pidfile FILE --log FILE -- BLKBACKD-COMMAND...
 * (--slow multiplies every timeout: 5 under valgrind.)
 *
 * It starts blkbackd itself (BLKBACKD-COMMAND, which must be a
 * foreground blkbackd writing FILE as its --pidfile; its stdout and
 * stderr are appended to the --log FILE), because its daemon steps stop
 * and start it again with the same command.  XENSIM_DIR names the
 * running xensim; dom0's xenstore socket is XENSIM_DIR/xenstore.sock.
 *
 * A run is a series of sequences.  Sequence i draws everything from its
 * own generator, seeded from (S, i) with splitmix64, so --replay i runs
 * exactly that sequence again.  A sequence is 10..40 steps, each followed
 * by a pause (none, up to 1 ms or up to 5 ms) so that the steps race
 * blkbackd's reactions:
 *   toolstack: create a domain; add a vbd with the keys xl-add writes
 *              (sometimes junk or missing params, junk mode, no
 *              online, no hotplug-status); remove it libxl's way
 *              (online=0 + state 5, wait for Closed, rm) or abruptly
 *              (rm -r); write online=0; destroy a domain;
 *   frontend:  (the domain itself, through its own unprivileged
 *              xenstore socket and xenops handle) state writes 0..6,
 *              junk ("9", "", "abc", "2") or the node removed; a reset
 *              (Closed, then Initialising: after junk, once the
 *              backend's Closed has held for 20 ms);
 *              ring keys that are valid (a granted, initialised ring of
 *              1 or 2 pages and a bound event channel; one queue or
 *              multi-queue-num-queues=2 with queue-N/), stale (a ref
 *              whose access was ended, a closed port) or junk, protocol
 *              junk; a connect (valid ring + Connected);
 *   daemon:    SIGHUP; SIGTERM or SIGKILL, blkbackd started again at a
 *              later step (the restarted daemon takes the kept devices
 *              over).
 * Then it settles and checks (a failure prints the seed, the sequence,
 * its steps and blkbackd's log lines of the sequence):
 *   1. blkbackd is alive (checked after every step as well);
 *   2. a vbd directory the toolstack removed stays absent (checked
 *      before every step and after the quiesce);
 *   3. every vbd's backend state settles where DESIGN-NOTES' table makes
 *      it exact (expect_states below); nothing is asserted elsewhere;
 *   4. once every vbd is removed and the domains destroyed, blkbackd has
 *      unmapped every page the frontends granted (a SIGKILLed blkbackd's
 *      pins too: xensim releases them from its pin ledger, as gntdev
 *      does on real Xen), and its fds and threads are back to
 *      the baseline of a blkbackd serving nothing; with --rss-slack,
 *      its RSS is within that many KiB of what the same process had
 *      after its first sequence;
 *   5. every --check-every sequences and at the end, blkfront-test
 *      verify on a fresh domain's memory:1M vbd (byte-exact);
 * and blkbackd's log of the sequence holds no sanitizer report and none
 * of the messages that mean an internal failure (bad_log_lines).
 * Not asserted, on purpose: what follows ring keys rewritten after a
 * Connected (blkbackd, as Linux blkback, reads them one by one: it may
 * see half of each layout, a fatal error), or junk whose Closed was not
 * seen to hold (a Closed read before blkbackd took the junk in): such a
 * vbd's history is not "clean" until a reset the backend answered.
 * The summary counts what was checked: sequences, vbd states found
 * exact (invariant 3) and handshake checks (invariant 5).  With
 * --min-sequences N a run that did fewer than N sequences fails: a
 * fuzzer starved of time has proven little, and must not look green.
 * Exit: 0, 1 on a failed invariant or too few sequences, 2 on a usage
 * or setup error.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>
#include <xen/io/xenbus.h>

#include "blkring.h"
#include "compiler.h"
#include "log.h"
#include "xbus.h"
#include "xenops.h"

#define MAX_DOMS	3	/* per sequence */
#define DEVIDS		2	/* xvda, xvdb */
#define MAX_VBDS	(MAX_DOMS * DEVIDS)
#define MAX_SHARES	96	/* ring page sets per domain and sequence */
#define MAX_STALE	32	/* stale ports, refs per domain remembered (then: all suspect) */
#define MAX_STEPS	40
#define STEP_LEN	160
#define BE_ROOT		"/local/domain/0/backend/vbd"
/* How long anything blkbackd must do may take before it is a failure
 * (times --slow): long, as the machine may be busy; only a failure
 * waits that long. */
#define PATIENCE_S	10.0

static const uint32_t devids[DEVIDS] = { 51712, 51728 };

#define ST(x) (1u << XenbusState##x)

/* ------------------------------------------------------------------ */
/* The generator: splitmix64, one stream per sequence.                */
/* ------------------------------------------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t
rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static unsigned int
rng_below(struct rng *r, unsigned int n)
{
	return n ? (unsigned int)(rng_next(r) % n) : 0;
}

/* Sequence idx of the run seeded with seed: its own stream. */
static void
rng_for_sequence(struct rng *r, uint64_t seed, uint64_t idx)
{
	r->s = seed;
	r->s = rng_next(r) ^ (idx * 0xD1B54A32D192ED03ull);
	rng_next(r);
}

/* ------------------------------------------------------------------ */
/* State.                                                             */
/* ------------------------------------------------------------------ */

struct fz_share {
	void *addr;
	unsigned int count;
};

/* A domain of the sequence, and the frontend acting as it. */
struct fz_dom {
	uint32_t id;
	bool alive;
	struct xs_handle *xs;	/* its own xenstore socket */
	xenops_t *x;		/* xenops as that domain */
	xenops_evtchn_t *ev;	/* every port it binds */
	struct fz_share shares[MAX_SHARES];
	unsigned int nshares;
	/* destroyed, and then a blkbackd that may have mapped its pages
	 * was SIGKILLed: nothing can give them back (dom_take_back_pages) */
	bool pages_orphaned;
	/* the port numbers and refs published in stale rings: closed and
	 * ended then, but free for the next port or share to reuse */
	int stale_ports[MAX_STALE];
	grant_ref_t stale_refs[MAX_STALE];
	unsigned int nstale_ports, nstale_refs;
};

/* The frontend's last state write, as the expectations need it. */
enum fe_last {
	FE_INIT,	/* 1, as xl-add wrote it */
	FE_1,		/* 1 */
	FE_CLOSEDISH,	/* 6 or 0 (Unknown: taken as Closed) */
	FE_ABSENT,	/* the node removed */
	FE_CLOSING,	/* 5 */
	FE_CONN,	/* 3 or 4 */
	FE_JUNK,	/* not a frontend's state: not a number in 0..6, or 2 */
};

struct fz_vbd {
	unsigned int dom;	/* index in fz_seq.doms */
	uint32_t devid;
	bool present;		/* added by the toolstack, not removed */
	bool removed;		/* removed: the directory must stay absent */
	bool cfg_ok;		/* params and mode valid */
	bool ram;		/* memory: params: gone with the daemon */
	bool offline;		/* online=0 written */
	bool clean;		/* reset seen, no junk since */
	bool conn_written;	/* 3/4 written since: blkbackd may be connecting */
	bool ring_ok;		/* a valid ring published while clean */
	bool conn_ok;		/* 3/4 written while clean with ring_ok */
	/* a restarted daemon left it alone (its log says so: Connected on
	 * a ring it has no record of, as a vbd of another backend looks):
	 * it writes nothing to it until the toolstack adds it again, so
	 * the backend state stays alone_state (daemon_start) */
	bool left_alone;
	int alone_state;
	enum fe_last last;
};

struct fz_seq {
	uint64_t idx;
	struct rng rng;
	struct fz_dom doms[MAX_DOMS];
	unsigned int ndoms;
	struct fz_vbd vbds[MAX_VBDS];
	unsigned int nvbds;
	char steps[MAX_STEPS + 8][STEP_LEN];
	unsigned int nsteps;
	off_t log_start;
	unsigned int names;	/* domains created, for unique names */
};

struct fz_daemon {
	char **argv;
	const char *pidfile, *log;
	pid_t pid;		/* 0: not running */
	unsigned int fds0, thr0;	/* baseline: serving nothing */
	long rss_ref;		/* KiB after this process's first sequence */
};

struct fz_opts {
	uint64_t seed;
	double seconds;
	uint64_t max_seq;	/* 0: no limit */
	int64_t replay;		/* -1: all */
	bool verbose;
	unsigned int check_every;
	long rss_slack;		/* KiB; 0: RSS not checked */
	const char *frontend;	/* blkfront-test */
	unsigned int slow;	/* timeouts multiplied (valgrind) */
	uint64_t min_seq;	/* --min-sequences: fewer fails the run */
};

/* The steps of a sequence: toolstack (T_), frontend (F_), daemon (D_). */
enum step {
	T_CREATE, T_ADD, T_REMOVE, T_REMOVE_RM, T_ONLINE0, T_DESTROY,
	F_STATE, F_RESET, F_RING, F_STALE, F_JUNK, F_CONNECT,
	D_HUP, D_STOP, D_START,
	NSTEPS
};

static const char *const step_name[NSTEPS] = {
	[T_CREATE] = "create", [T_ADD] = "add", [T_REMOVE] = "remove",
	[T_REMOVE_RM] = "remove-rm", [T_ONLINE0] = "online0", [T_DESTROY] = "destroy",
	[F_STATE] = "fe-state", [F_RESET] = "fe-reset", [F_RING] = "fe-ring",
	[F_STALE] = "fe-stale", [F_JUNK] = "fe-junk", [F_CONNECT] = "fe-connect",
	[D_HUP] = "hup", [D_STOP] = "stop", [D_START] = "start",
};

struct fz_ctx {
	struct fz_opts o;
	struct fz_daemon dm;
	const char *sim_dir;
	char xs0_path[256];
	struct xs_handle *xs;	/* dom0, the toolstack */
	struct fz_seq seq;
	uint64_t sequences, steps_done;
	uint64_t states_checked;	/* invariant 3: vbd states found exact */
	uint64_t handshakes_checked;	/* invariant 5: verify runs that passed */
	/* where the time goes (printed at the end) */
	uint64_t restarts, nudges;
	double t_steps, t_states, t_quiesce;
	double t_step_kind[NSTEPS];	/* t_steps by kind of step */
	unsigned int verify_names;
};

/* ------------------------------------------------------------------ */
/* Small helpers.                                                     */
/* ------------------------------------------------------------------ */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
sleep_us(unsigned int us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static void fail(struct fz_ctx *c, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(2, 3)
	__attribute__((noreturn));

/* Record step text (printed on failure, and as it runs with --verbose). */
static void step_note(struct fz_ctx *c, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(2, 3);
static void
step_note(struct fz_ctx *c, const char *fmt, ...)
{
	struct fz_seq *s = &c->seq;
	va_list ap;

	if (s->nsteps >= ARRAY_SIZE(s->steps))
		return;
	va_start(ap, fmt);
	vsnprintf(s->steps[s->nsteps], STEP_LEN, fmt, ap);
	va_end(ap);
	if (c->o.verbose)
		printf("  %2u %s\n", s->nsteps, s->steps[s->nsteps]);
	s->nsteps++;
}

/* Append to the current step's text. */
static void step_more(struct fz_ctx *c, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(2, 3);
static void
step_more(struct fz_ctx *c, const char *fmt, ...)
{
	struct fz_seq *s = &c->seq;
	char *t;
	size_t l;
	va_list ap;

	if (!s->nsteps)
		return;
	t = s->steps[s->nsteps - 1];
	l = strlen(t);
	va_start(ap, fmt);
	vsnprintf(t + l, STEP_LEN - l, fmt, ap);
	va_end(ap);
	if (c->o.verbose)
		printf("     ... %s\n", t);
}

static void
be_dir(const struct fz_seq *s, const struct fz_vbd *v, char *buf, size_t len)
{
	snprintf(buf, len, BE_ROOT "/%u/%u", s->doms[v->dom].id, v->devid);
}

static void
fe_dir(const struct fz_seq *s, const struct fz_vbd *v, char *buf, size_t len)
{
	snprintf(buf, len, "/local/domain/%u/device/vbd/%u", s->doms[v->dom].id, v->devid);
}

/* The backend state node as a number; -1 absent, -2 not a number. */
static int
be_state(struct fz_ctx *c, const struct fz_vbd *v)
{
	char dir[128];
	unsigned int st;
	int r;

	be_dir(&c->seq, v, dir, sizeof(dir));
	r = xbus_read_uint(c->xs, XBT_NULL, dir, "state", 0, &st);
	if (r == -ENOENT)
		return -1;
	return r < 0 ? -2 : (int)st;
}

/* ------------------------------------------------------------------ */
/* blkbackd: start, stop, resources.                                  */
/* ------------------------------------------------------------------ */

static pid_t
read_pidfile(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

/* In the child: dom0's xenstore, the log as stdout and stderr, exec. */
static void __attribute__((noreturn))
exec_logged(const char *xs0, const char *log, char **argv)
{
	int fd = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		_exit(126);
	if (setenv("XENSTORED_PATH", xs0, 1) < 0)
		_exit(126);
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "fuzz-control: exec %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Has the daemon exited?  Then say how (buf) and forget its pid. */
static bool
daemon_exited(struct fz_daemon *dm, char *buf, size_t len)
{
	int ws;
	pid_t r;

	if (!dm->pid)
		return false;
	r = waitpid(dm->pid, &ws, WNOHANG);
	if (r == 0)
		return false;
	if (r < 0)
		snprintf(buf, len, "waitpid: %s", strerror(errno));
	else if (WIFEXITED(ws))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(ws));
	else
		snprintf(buf, len, "killed by signal %d", WTERMSIG(ws));
	dm->pid = 0;
	return true;
}

static off_t log_size(const struct fz_ctx *c);

/*
 * The vbds the daemon started at log offset from says it left alone
 * (vbd.c leave_alone: "vbd D/X: ...: left alone;").  Whether a Connected
 * vbd's recovery record still matches the ring its frontend shows
 * depends on timing (did the old daemon see the frontend's last ring
 * before it died?): the daemon's own word decides, and the state it
 * found must then stay.
 */
static void
mark_left_alone(struct fz_ctx *c, off_t from)
{
	struct fz_seq *s = &c->seq;
	FILE *f = fopen(c->dm.log, "re");
	char line[1024];

	if (!f)
		fail(c, "open %s: %s", c->dm.log, strerror(errno));
	if (fseeko(f, from, SEEK_SET) < 0)
		fail(c, "seek %s: %s", c->dm.log, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, " vbd ");
		bool alone = strstr(line, ": left alone;") != NULL;
		unsigned int domid, devid, i;

		/* (and served again once the toolstack made it new) */
		if (!p || (!alone && !strstr(line, ": Initialising again")) ||
		    sscanf(p, " vbd %u/%u:", &domid, &devid) != 2)
			continue;
		for (i = 0; i < s->nvbds; i++) {
			struct fz_vbd *v = &s->vbds[i];

			if (!v->present || v->devid != devid || s->doms[v->dom].id != domid)
				continue;
			v->left_alone = alone;
			if (!alone)
				continue;
			v->alone_state = be_state(c, v);
			step_more(c, "(vbd %u/%u left alone at backend state %d)", domid, devid,
				  v->alone_state);
		}
	}
	fclose(f);
}

static void
daemon_start(struct fz_ctx *c)
{
	struct fz_daemon *dm = &c->dm;
	double end = now_s() + 60.0 * c->o.slow;
	off_t from = log_size(c);
	char why[96];
	pid_t pid;

	/* A RAM disk the new daemon finds Connected lost its data with the
	 * old one: it is served failed, Closing with an error, until the
	 * frontend starts over (vbd.c connect); whether the old daemon had
	 * it Connected when it stopped depends on timing, so nothing is
	 * expected of such a vbd until its frontend's next reset. */
	for (unsigned int i = 0; i < c->seq.nvbds; i++) {
		struct fz_vbd *v = &c->seq.vbds[i];

		if (v->present && v->ram) {
			v->clean = false;
			v->ring_ok = false;
			v->conn_ok = false;
		}
	}
	if (unlink(dm->pidfile) < 0 && errno != ENOENT)
		fail(c, "unlink %s: %s", dm->pidfile, strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail(c, "fork: %s", strerror(errno));
	if (pid == 0)
		exec_logged(c->xs0_path, dm->log, dm->argv);
	dm->pid = pid;
	dm->rss_ref = -1;	/* a new process: its own reference */
	while (read_pidfile(dm->pidfile) != pid) {
		if (daemon_exited(dm, why, sizeof(why)))
			fail(c, "blkbackd %s during start-up", why);
		if (now_s() > end)
			fail(c, "blkbackd (pid %d) did not write %s within %.0f s", (int)pid,
			     dm->pidfile, 60.0 * c->o.slow);
		sleep_us(1000);
	}
	/* start-up judged the vbds it found before it wrote its pidfile */
	mark_left_alone(c, from);
}

/* SIGTERM (must exit 0) or SIGKILL; waits for the exit. */
static void
daemon_stop(struct fz_ctx *c, int sig)
{
	struct fz_daemon *dm = &c->dm;
	double end = now_s() + 30.0 * c->o.slow;
	pid_t pid = dm->pid;
	int ws;
	pid_t r;

	if (kill(pid, sig) < 0)
		fail(c, "kill(blkbackd %d, %d): %s", (int)pid, sig, strerror(errno));
	while ((r = waitpid(pid, &ws, WNOHANG)) == 0) {
		if (now_s() > end) {
			kill(pid, SIGKILL);
			fail(c, "blkbackd did not exit within %.0f s of signal %d",
			     30.0 * c->o.slow, sig);
		}
		sleep_us(1000);
	}
	dm->pid = 0;
	if (r < 0)
		fail(c, "waitpid(blkbackd): %s", strerror(errno));
	if (sig == SIGKILL)
		return;
	if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0)
		fail(c, "blkbackd %s %d after SIGTERM (a clean stop exits 0)",
		     WIFEXITED(ws) ? "exited with status" : "was killed by signal",
		     WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws));
}

/* Entries of a /proc directory, or -1. */
static int
count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

struct res {
	int fds, threads;
	long rss_kib;
};

static int
daemon_res(const struct fz_daemon *dm, struct res *out)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)dm->pid);
	out->fds = count_dir(path);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)dm->pid);
	out->threads = count_dir(path);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)dm->pid);
	out->rss_kib = -1;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &out->rss_kib) == 1)
			break;
	fclose(f);
	return out->fds < 0 || out->threads < 0 || out->rss_kib < 0 ? -EIO : 0;
}

/* What blkbackd's fds are (on a failure). */
static void
print_fds(const struct fz_daemon *dm)
{
	char dir[64], path[320], target[256];
	struct dirent *e;
	DIR *d;
	ssize_t n;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)dm->pid);
	d = opendir(dir);
	if (!d)
		return;
	fprintf(stderr, "fuzz-control: blkbackd's fds:\n");
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		fprintf(stderr, "  %s -> %s\n", e->d_name, target);
	}
	closedir(d);
}

/* Invariant 1. */
static void
check_alive(struct fz_ctx *c)
{
	char why[96];

	if (daemon_exited(&c->dm, why, sizeof(why)))
		fail(c, "blkbackd %s", why);
}

/* ------------------------------------------------------------------ */
/* xensim's control socket (sim/ctl.h).                               */
/* ------------------------------------------------------------------ */

/* One request; the reply's first data line in out.  0 or -1 (why in out). */
static int
sim_ctl(struct fz_ctx *c, const char *req, char *out, size_t len)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char reply[512];
	size_t got = 0;
	ssize_t n;
	char *nl;
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/ctl.sock", c->sim_dir);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		snprintf(out, len, "%s: %s", sun.sun_path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (got < sizeof(reply) - 1 &&
	       (n = read(fd, reply + got, sizeof(reply) - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	reply[got] = '\0';
	nl = strchr(reply, '\n');
	if (!nl || strncmp(reply, "OK\n", 3)) {
		snprintf(out, len, "%.200s", got ? reply : "no answer");
		out[strcspn(out, "\n")] = '\0';
		return -1;
	}
	snprintf(out, len, "%.200s", nl + 1);
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

static uint32_t
sim_create_domain(struct fz_ctx *c, const char *name)
{
	char req[128], out[256];

	snprintf(req, sizeof(req), "create-domain %s\n", name);
	if (sim_ctl(c, req, out, sizeof(out)) < 0)
		fail(c, "xensim create-domain %s: %s", name, out);
	return (uint32_t)strtoul(out, NULL, 10);
}

static void
sim_destroy_domain(struct fz_ctx *c, uint32_t id)
{
	char req[64], out[256];

	snprintf(req, sizeof(req), "destroy-domain %u\n", id);
	if (sim_ctl(c, req, out, sizeof(out)) < 0)
		fail(c, "xensim destroy-domain %u: %s", id, out);
}

/* ------------------------------------------------------------------ */
/* Domains and what the frontend granted.                             */
/* ------------------------------------------------------------------ */

static int
dom_open(struct fz_ctx *c, struct fz_dom *d)
{
	const struct xenops_config xc = {
		.transport = XENOPS_SIM, .sim_dir = c->sim_dir, .domid = d->id,
	};

	d->x = xenops_open(&xc);
	if (!d->x)
		return -errno;
	d->xs = xbus_open(xenops_xenstore_path(d->x));
	if (!d->xs)
		return -errno;
	d->ev = xenops_evtchn_open(d->x);
	return d->ev ? 0 : -errno;
}

static struct fz_dom *
dom_create(struct fz_ctx *c)
{
	struct fz_seq *s = &c->seq;
	struct fz_dom *d = &s->doms[s->ndoms];
	char name[64];
	int r;

	memset(d, 0, sizeof(*d));
	snprintf(name, sizeof(name), "fz%d-%" PRIu64 "-%u", (int)getpid(), s->idx, s->names++);
	d->id = sim_create_domain(c, name);
	d->alive = true;
	s->ndoms++;
	r = dom_open(c, d);
	if (r < 0)
		fail(c, "domain %u: opening xenops/xenstore as it: %s", d->id, strerror(-r));
	return d;
}

/* Share count pages with dom0 (kept until the quiesce). */
static void *
dom_share(struct fz_ctx *c, struct fz_dom *d, unsigned int count, grant_ref_t *refs)
{
	void *p;

	if (d->nshares == MAX_SHARES)
		return NULL;
	p = xenops_share_pages(d->x, 0, count, true, refs);
	if (!p)
		fail(c, "domain %u: sharing %u pages: %s", d->id, count, strerror(errno));
	d->shares[d->nshares].addr = p;
	d->shares[d->nshares].count = count;
	d->nshares++;
	return p;
}

/* The domain's xenstore connection goes with it. */
static void
dom_destroy(struct fz_ctx *c, struct fz_dom *d)
{
	if (d->xs) {
		xs_close(d->xs);
		d->xs = NULL;
	}
	sim_destroy_domain(c, d->id);
	d->alive = false;
}

/*
 * Invariant 4, the pages: once blkbackd has let go of every vbd, each
 * page the frontend granted can be taken back -- also those a SIGKILLed
 * blkbackd had mapped (xensim's pin ledger).
 */
static void
dom_take_back_pages(struct fz_ctx *c, struct fz_dom *d)
{
	double end = now_s() + PATIENCE_S * c->o.slow;
	unsigned int i = 0;
	int r;

	/*
	 * A blkbackd SIGKILLed after this domain was destroyed: xensim
	 * releases a dead process's pins only into domains that still
	 * exist (on Xen the dying domain is freed once gntdev's exit has
	 * unmapped them); a destroyed guest gets nothing back and has
	 * nobody left to ask.  Not blkbackd's to answer for.
	 */
	if (d->pages_orphaned) {
		d->nshares = 0;
		return;
	}
	while (i < d->nshares) {
		struct fz_share *sh = &d->shares[i];

		r = xenops_unshare_pages(d->x, sh->addr, sh->count);
		if (r == 0) {
			*sh = d->shares[--d->nshares];
			continue;
		}
		if (r != -EBUSY)
			fail(c, "domain %u: ending access to %u pages: %s", d->id, sh->count,
			     strerror(-r));
		if (now_s() > end)
			fail(c, "domain %u: blkbackd still maps %u granted pages %.0f s after "
			     "every vbd was removed", d->id, sh->count, PATIENCE_S * c->o.slow);
		sleep_us(1000);
	}
}

static void
dom_close(struct fz_dom *d)
{
	if (d->ev)
		xenops_evtchn_close(d->ev);
	if (d->xs)
		xs_close(d->xs);
	if (d->x)
		xenops_close(d->x);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------------ */
/* Toolstack steps (dom0).                                            */
/* ------------------------------------------------------------------ */

struct add_arg {
	const char *fe, *be, *lx;
	uint32_t domid, devid;
	const char *params;	/* NULL: not written */
	const char *mode;	/* NULL: not written */
	bool online, hotplug;
	bool exists;		/* out */
};

static int
perms(struct xs_handle *xs, xs_transaction_t t, const char *path, unsigned int owner,
      unsigned int reader)
{
	struct xs_permissions p[2] = {
		{ .id = owner, .perms = XS_PERM_NONE },
		{ .id = reader, .perms = XS_PERM_READ },
	};

	if (!xs_mkdir(xs, t, path) || !xs_set_permissions(xs, t, path, p, 2))
		return -errno;
	return 0;
}

/* What xl-add writes (frontend-test/toolstack.c), in one transaction. */
static int
add_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	struct add_arg *a = arg;
	char *e1 = xbus_read(xs, t, a->fe, NULL), *e2 = xbus_read(xs, t, a->be, NULL);
	int r;

	a->exists = e1 || e2;
	free(e1);
	free(e2);
	if (a->exists)
		return -EEXIST;
#define W(dir, key, ...) do { if (!r) r = xbus_printf(xs, t, dir, key, __VA_ARGS__); } while (0)
	r = 0;
	W(a->lx, "frontend", "%s", a->fe);
	W(a->lx, "backend", "%s", a->be);
	if (!r)
		r = perms(xs, t, a->fe, a->domid, 0);
	W(a->fe, "backend", "%s", a->be);
	W(a->fe, "backend-id", "0");
	W(a->fe, "state", "%d", XenbusStateInitialising);
	W(a->fe, "virtual-device", "%u", a->devid);
	W(a->fe, "device-type", "disk");
	if (!r)
		r = perms(xs, t, a->be, 0, a->domid);
	W(a->be, "frontend", "%s", a->fe);
	if (a->params)
		W(a->be, "params", "%s", a->params);
	W(a->be, "frontend-id", "%u", a->domid);
	if (a->online)
		W(a->be, "online", "1");
	W(a->be, "removable", "0");
	W(a->be, "bootable", "1");
	W(a->be, "state", "%d", XenbusStateInitialising);
	W(a->be, "dev", "xvd%c", a->devid == devids[0] ? 'a' : 'b');
	W(a->be, "type", "phy");
	if (a->mode)
		W(a->be, "mode", "%s", a->mode);
	W(a->be, "device-type", "disk");
	W(a->be, "discard-enable", "1");
	if (a->hotplug)
		W(a->be, "hotplug-status", "connected");
#undef W
	return r;
}

static struct fz_vbd *
vbd_slot(struct fz_seq *s, unsigned int dom, uint32_t devid)
{
	unsigned int i;

	for (i = 0; i < s->nvbds; i++)
		if (s->vbds[i].dom == dom && s->vbds[i].devid == devid)
			return &s->vbds[i];
	if (s->nvbds == MAX_VBDS)
		return NULL;
	s->vbds[s->nvbds].dom = dom;
	s->vbds[s->nvbds].devid = devid;
	return &s->vbds[s->nvbds++];
}

/*
 * Add the vbd (dom, devid) with params/mode (NULL: not written).  The
 * caller marks cfg_ok.  Fails the run when the backend directory exists
 * though the toolstack removed it (invariant 2).
 */
static struct fz_vbd *
vbd_add(struct fz_ctx *c, unsigned int dom, uint32_t devid, const char *params,
	const char *mode, bool online, bool hotplug)
{
	struct fz_seq *s = &c->seq;
	struct fz_vbd *v = vbd_slot(s, dom, devid);
	char fe[128], be[128], lx[128];
	struct add_arg a = {
		.fe = fe, .be = be, .lx = lx, .domid = s->doms[dom].id, .devid = devid,
		.params = params, .mode = mode, .online = online, .hotplug = hotplug,
	};
	int r;

	if (!v)
		return NULL;
	be_dir(s, v, be, sizeof(be));
	fe_dir(s, v, fe, sizeof(fe));
	snprintf(lx, sizeof(lx), "/libxl/%u/device/vbd/%u", a.domid, devid);
	r = xbus_transact(c->xs, add_keys, &a);
	if (r == -EEXIST) {
		if (v->removed) {
			char *val = xbus_read(c->xs, XBT_NULL, be, NULL);
			bool be_back = val != NULL;

			free(val);
			if (be_back)
				fail(c, "%s is back after the toolstack removed it", be);
		}
		step_more(c, ": exists, not added (libxl's ERROR_DEVICE_EXISTS)");
		return NULL;
	}
	if (r < 0)
		fail(c, "adding %s: %s", be, strerror(-r));
	memset(v, 0, sizeof(*v));
	v->dom = dom;
	v->devid = devid;
	v->present = true;
	v->clean = true;	/* nothing a guest wrote yet */
	v->last = FE_INIT;
	return v;
}

/* rm -r the vbd's three directories (and the empty per-domain parent). */
static void
vbd_rm(struct fz_ctx *c, struct fz_vbd *v)
{
	struct fz_seq *s = &c->seq;
	char fe[128], be[128], lx[128];
	unsigned int n = 0;
	char **ents;

	be_dir(s, v, be, sizeof(be));
	fe_dir(s, v, fe, sizeof(fe));
	snprintf(lx, sizeof(lx), "/libxl/%u/device/vbd/%u", s->doms[v->dom].id, v->devid);
	if ((!xs_rm(c->xs, XBT_NULL, fe) && errno != ENOENT) ||
	    (!xs_rm(c->xs, XBT_NULL, be) && errno != ENOENT) ||
	    (!xs_rm(c->xs, XBT_NULL, lx) && errno != ENOENT))
		fail(c, "removing vbd %u/%u: %s", s->doms[v->dom].id, v->devid, strerror(errno));
	*strrchr(be, '/') = '\0';
	ents = xs_directory(c->xs, XBT_NULL, be, &n);
	if (ents && n == 0 && !xs_rm(c->xs, XBT_NULL, be) && errno != ENOENT)
		fail(c, "removing %s: %s", be, strerror(errno));
	free(ents);
	v->present = false;
	v->removed = true;
}

/* Wait until the backend state is want (or timeout); the last value. */
static int
wait_be_state(struct fz_ctx *c, const struct fz_vbd *v, unsigned int mask, double secs)
{
	double end = now_s() + secs;
	int st;

	for (;;) {
		st = be_state(c, v);
		if (st >= 0 && (mask & (1u << st)))
			return st;
		if (now_s() > end)
			return st;
		sleep_us(500);
	}
}

/* ------------------------------------------------------------------ */
/* Frontend steps (as the domain).                                    */
/* ------------------------------------------------------------------ */

static int
fe_write(struct fz_ctx *c, struct fz_vbd *v, const char *key, const char *val)
{
	struct fz_dom *d = &c->seq.doms[v->dom];
	char fe[128];

	fe_dir(&c->seq, v, fe, sizeof(fe));
	if (!val)
		return xbus_rm(d->xs, XBT_NULL, fe, key);
	return xbus_printf(d->xs, XBT_NULL, fe, key, "%s", val);
}

/* What a frontend state write means for the expectations. */
static void
note_state(struct fz_vbd *v, const char *val)
{
	if (!val) {
		v->last = FE_ABSENT;
	} else if (!strcmp(val, "0") || !strcmp(val, "6")) {
		v->last = FE_CLOSEDISH;
	} else if (!strcmp(val, "1")) {
		v->last = FE_1;
	} else if (!strcmp(val, "5")) {
		v->last = FE_CLOSING;
	} else if (!strcmp(val, "3") || !strcmp(val, "4")) {
		v->last = FE_CONN;
		v->conn_ok = v->clean && v->ring_ok;
		v->conn_written = true;
		/* without a valid ring the connect fails: fatal */
		v->clean = v->conn_ok;
		return;
	} else {
		v->last = FE_JUNK;
		v->clean = false;
	}
	v->conn_ok = false;
}

/* The ring layout a frontend publishes (or its junk/stale variant). */
struct ring_keys {
	unsigned int nq;	/* 1: in the frontend dir; 2: queue-N/ */
	int order;		/* -1: no ring-page-order (single ring-ref) */
	grant_ref_t refs[2][2];
	int ports[2];
	const char *protocol;	/* NULL: not written */
	int persistent;		/* -1: not written */
	/* junk: key = value written last (in the frontend dir) */
	const char *junk_key, *junk_val;
	const char *fe;
};

static const char *const ring_key_names[] = {
	"ring-ref", "ring-ref0", "ring-ref1", "event-channel", "ring-page-order",
	"multi-queue-num-queues", "queue-0", "queue-1", "protocol", "feature-persistent",
};

static int
ring_queue_keys(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		const struct ring_keys *k, unsigned int q)
{
	int r = 0;

	if (k->order < 0)
		r = xbus_printf(xs, t, dir, "ring-ref", "%u", k->refs[q][0]);
	else
		for (unsigned int i = 0; i < (1u << k->order) && !r; i++) {
			char key[24];

			snprintf(key, sizeof(key), "ring-ref%u", i);
			r = xbus_printf(xs, t, dir, key, "%u", k->refs[q][i]);
		}
	if (!r)
		r = xbus_printf(xs, t, dir, "event-channel", "%d", k->ports[q]);
	return r;
}

/* As blkfront's publish: the old layout removed, the new one written. */
static int
ring_publish_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const struct ring_keys *k = arg;
	unsigned int i;
	int r = 0;

	for (i = 0; i < ARRAY_SIZE(ring_key_names) && !r; i++)
		r = xbus_rm(xs, t, k->fe, ring_key_names[i]);
	if (!r && k->order >= 0)
		r = xbus_printf(xs, t, k->fe, "ring-page-order", "%d", k->order);
	if (!r && k->nq == 1)
		r = ring_queue_keys(xs, t, k->fe, k, 0);
	if (!r && k->nq > 1) {
		r = xbus_printf(xs, t, k->fe, "multi-queue-num-queues", "%u", k->nq);
		for (i = 0; i < k->nq && !r; i++) {
			char dir[160];

			snprintf(dir, sizeof(dir), "%s/queue-%u", k->fe, i);
			r = ring_queue_keys(xs, t, dir, k, i);
		}
	}
	if (!r && k->protocol)
		r = xbus_printf(xs, t, k->fe, "protocol", "%s", k->protocol);
	if (!r && k->persistent >= 0)
		r = xbus_printf(xs, t, k->fe, "feature-persistent", "%d", k->persistent);
	if (!r && k->junk_key)
		r = xbus_printf(xs, t, k->fe, k->junk_key, "%s", k->junk_val);
	return r;
}

enum ring_kind { RING_VALID, RING_STALE, RING_JUNK };

/* A granted, initialised ring of 1 << order pages and a bound port. */
static int
ring_make(struct fz_ctx *c, struct fz_dom *d, unsigned int order, enum blkring_abi abi,
	  grant_ref_t *refs, int *port)
{
	void *p = dom_share(c, d, 1u << order, refs);
	blkring_t *ring;

	if (!p)
		return -ENOSPC;
	ring = blkring_front_attach(p, 1u << order, abi);
	if (!ring)
		fail(c, "blkring_front_attach: %s", strerror(errno));
	blkring_free(ring);
	*port = xenops_evtchn_bind_unbound(d->ev, 0);
	if (*port < 0)
		fail(c, "domain %u: binding an unbound port: %s", d->id, strerror(-*port));
	return 0;
}

/* A ref whose access has been ended and a port that has been closed. */
static void
ring_make_stale(struct fz_ctx *c, struct fz_dom *d, grant_ref_t *refs, int *port)
{
	void *p = xenops_share_pages(d->x, 0, 1, true, refs);
	int r;

	if (!p)
		fail(c, "domain %u: sharing a page: %s", d->id, strerror(errno));
	r = xenops_unshare_pages(d->x, p, 1);
	if (r < 0)
		fail(c, "domain %u: ending access to a page nobody maps: %s", d->id, strerror(-r));
	*port = xenops_evtchn_bind_unbound(d->ev, 0);
	if (*port < 0)
		fail(c, "domain %u: binding an unbound port: %s", d->id, strerror(-*port));
	r = xenops_evtchn_unbind(d->ev, (uint32_t)*port);
	if (r < 0)
		fail(c, "domain %u: closing port %d: %s", d->id, *port, strerror(-r));
	if (d->nstale_ports < MAX_STALE)
		d->stale_ports[d->nstale_ports++] = *port;
	if (d->nstale_refs < MAX_STALE)
		d->stale_refs[d->nstale_refs++] = refs[0];
}

/*
 * Does a ring made now reuse a number published in some stale ring of
 * the domain?  Ports and refs are handed out lowest first, so the next
 * valid ring often does, and blkbackd, connecting the vbd that holds
 * the stale keys, may then bind or map that ring first: the valid
 * ring's own vbd fails (a port bound already is EINVAL, as in Xen),
 * through no fault of blkbackd's.  (A full list counts as a reuse.)
 */
static bool
ring_reuses_stale(const struct fz_dom *d, const struct ring_keys *k)
{
	unsigned int q, i, j, npages = k->order > 0 ? 1u << k->order : 1;

	if (d->nstale_ports == MAX_STALE || d->nstale_refs == MAX_STALE)
		return true;
	for (q = 0; q < k->nq; q++) {
		for (i = 0; i < d->nstale_ports; i++)
			if (d->stale_ports[i] == k->ports[q])
				return true;
		for (j = 0; j < npages; j++)
			for (i = 0; i < d->nstale_refs; i++)
				if (d->stale_refs[i] == k->refs[q][j])
					return true;
	}
	return false;
}

static const char *
pick(struct rng *r, const char *const *v, unsigned int n)
{
	return v[rng_below(r, n)];
}
#define PICK(r, ...) pick(r, (const char *const[]){ __VA_ARGS__ }, \
			  ARRAY_SIZE(((const char *const[]){ __VA_ARGS__ })))

static void
ring_junk(struct rng *r, struct ring_keys *k)
{
	switch (rng_below(r, 6)) {
	case 0:
		k->junk_key = "ring-ref";
		k->junk_val = PICK(r, "abc", "", "-1", "99999999999", "7");
		k->order = -1;
		k->nq = 1;
		break;
	case 1:
		k->junk_key = "event-channel";
		k->junk_val = PICK(r, "0", "x", "70000", "1023");
		break;
	case 2:
		k->junk_key = "ring-page-order";
		k->junk_val = PICK(r, "9", "x", "5", "");
		break;
	case 3:
		k->junk_key = "multi-queue-num-queues";
		k->junk_val = PICK(r, "0", "99", "x", "3");
		break;
	case 4:
		k->junk_key = "protocol";
		k->junk_val = PICK(r, "x86_16-abi", "", "junk", "x86_64-abi ");
		break;
	default:	/* a layout that says two queues and has one */
		k->junk_key = "multi-queue-num-queues";
		k->junk_val = "2";
		k->nq = 1;
		break;
	}
}

/*
 * Publish ring keys of the given kind for v: a valid ring (1 or 2 pages,
 * one queue or two), a stale one, or junk.
 */
static void
fe_ring(struct fz_ctx *c, struct fz_vbd *v, enum ring_kind kind)
{
	struct fz_seq *s = &c->seq;
	struct fz_dom *d = &s->doms[v->dom];
	struct rng *r = &s->rng;
	static const enum blkring_abi abis[] = { BLKRING_ABI_X86_64, BLKRING_ABI_X86_32 };
	enum blkring_abi abi = abis[rng_below(r, 2)];
	struct ring_keys k = {
		.nq = rng_below(r, 4) == 0 ? 2 : 1,
		.order = (int)rng_below(r, 3) - 1,
		.protocol = abi == BLKRING_ABI_X86_64 ? "x86_64-abi" : PICK(r, "x86_32-abi", NULL),
		.persistent = (int)rng_below(r, 3) - 1,
	};
	char fe[128];
	unsigned int q;
	int rc;

	fe_dir(s, v, fe, sizeof(fe));
	k.fe = fe;
	for (q = 0; q < k.nq; q++) {
		if (kind == RING_STALE)
			ring_make_stale(c, d, k.refs[q], &k.ports[q]);
		else if (ring_make(c, d, k.order > 0 ? (unsigned int)k.order : 0, abi,
				   k.refs[q], &k.ports[q]) < 0)
			return;
	}
	if (kind == RING_JUNK)
		ring_junk(r, &k);
	step_more(c, " nq=%u order=%d ref=%u port=%d proto=%s%s%s%s", k.nq, k.order,
		  k.refs[0][0], k.ports[0], k.protocol ? k.protocol : "-",
		  k.junk_key ? " junk " : "", k.junk_key ? k.junk_key : "",
		  k.junk_key ? "=" : "");
	if (k.junk_key)
		step_more(c, "\"%s\"", k.junk_val);
	rc = xbus_transact(d->xs, ring_publish_keys, &k);
	if (rc < 0)
		step_more(c, " (write: %s)", strerror(-rc));
	/* blkbackd reads the keys one by one, as Linux blkback does: keys
	 * changed while it may be connecting (after a 3/4 it may not have
	 * acted on yet) can be read half old, half new: a fatal error */
	if (kind == RING_VALID && rc == 0 && !v->conn_written && !ring_reuses_stale(d, &k)) {
		v->ring_ok = v->clean;
	} else {
		v->clean = false;
		v->ring_ok = false;
		v->conn_ok = false;
	}
}

/* Write the frontend's state (NULL: remove the node). */
static void
fe_state(struct fz_ctx *c, struct fz_vbd *v, const char *val)
{
	int r = fe_write(c, v, "state", val);

	if (r < 0)
		step_more(c, " (write: %s)", strerror(-r));
	note_state(v, val);
}

/*
 * A frontend restarting as Linux's xenbus_reset_frontend does it: Closed,
 * wait for the backend's Closed, then Initialising.  After junk (a
 * fatal error may be pending: the backend stays Closing at Initialising
 * until it has seen Closed), or after a 3/4 (a connect may be reading
 * the ring keys) the vbd's history is clean again only when the backend
 * showed Closed for a while after our Closed: a Closed read before
 * blkbackd took the junk in would not do.  Otherwise it stays clean
 * (nothing is pending that Initialising could not undo).
 */
static void
fe_reset(struct fz_ctx *c, struct fz_vbd *v)
{
	bool wait = !v->clean || v->conn_written;
	int st = -1;

	fe_state(c, v, "6");
	if (wait && c->dm.pid) {
		/* InitWait: a frontend it has not seen alive, nothing to learn */
		st = wait_be_state(c, v, ST(Closed) | ST(InitWait), 2.0 * c->o.slow);
		if (st == XenbusStateClosed) {
			sleep_us(20000 * c->o.slow);
			st = be_state(c, v);
		}
	}
	fe_state(c, v, "1");
	if (wait) {
		v->clean = st == XenbusStateClosed;
		v->conn_written = !v->clean;
	}
	step_more(c, " (%s)", !wait ? "clean" : v->clean ? "backend stayed Closed" :
		  "backend not seen Closed: not clean");
}

/* ------------------------------------------------------------------ */
/* The step generator.                                                */
/* ------------------------------------------------------------------ */


static const unsigned int step_weight[NSTEPS] = {
	[T_CREATE] = 3, [T_ADD] = 10, [T_REMOVE] = 3, [T_REMOVE_RM] = 3, [T_ONLINE0] = 2,
	[T_DESTROY] = 2, [F_STATE] = 16, [F_RESET] = 6, [F_RING] = 8, [F_STALE] = 2,
	[F_JUNK] = 3, [F_CONNECT] = 8, [D_HUP] = 1, [D_STOP] = 1, [D_START] = 12,
};

/* A present vbd of a live domain, or NULL. */
static struct fz_vbd *
pick_vbd(struct fz_seq *s, bool need_alive)
{
	struct fz_vbd *cand[MAX_VBDS];
	unsigned int n = 0, i;

	for (i = 0; i < s->nvbds; i++)
		if (s->vbds[i].present && (!need_alive || s->doms[s->vbds[i].dom].alive))
			cand[n++] = &s->vbds[i];
	return n ? cand[rng_below(&s->rng, n)] : NULL;
}

static int
pick_live_dom(struct fz_seq *s)
{
	unsigned int cand[MAX_DOMS], n = 0, i;

	for (i = 0; i < s->ndoms; i++)
		if (s->doms[i].alive)
			cand[n++] = i;
	return n ? (int)cand[rng_below(&s->rng, n)] : -1;
}

static bool
step_possible(const struct fz_ctx *c, enum step st)
{
	const struct fz_seq *s = &c->seq;

	switch (st) {
	case T_CREATE:
		return s->ndoms < MAX_DOMS;
	case D_STOP:
	case D_HUP:
		return c->dm.pid != 0;
	case D_START:
		return c->dm.pid == 0;
	default:
		return true;
	}
}

static enum step
choose_step(struct fz_ctx *c)
{
	unsigned int total = 0, x, i;

	for (i = 0; i < NSTEPS; i++)
		if (step_possible(c, i))
			total += step_weight[i];
	x = rng_below(&c->seq.rng, total);
	for (i = 0; i < NSTEPS; i++) {
		if (!step_possible(c, i))
			continue;
		if (x < step_weight[i])
			return i;
		x -= step_weight[i];
	}
	return F_STATE;
}

static void
do_add(struct fz_ctx *c)
{
	struct fz_seq *s = &c->seq;
	struct rng *r = &s->rng;
	int dom = pick_live_dom(s);
	uint32_t devid = devids[rng_below(r, DEVIDS)];
	/* half on null:, whose vbds a restarted daemon takes over as they
	 * were (a memory: one is served failed: daemon_start) */
	const char *params = rng_below(r, 2) ? "memory:1M" : "null:1M", *mode = "w";
	bool online = rng_below(r, 8) != 0, hotplug = rng_below(r, 8) != 0;
	bool cfg_ok = true;
	struct fz_vbd *v;

	if (dom < 0)
		return step_note(c, "toolstack add: no live domain");
	switch (rng_below(r, 10)) {
	case 0:
		params = PICK(r, NULL, "", "nosuch:1M", "/nonexistent/disk.img", "memory:",
			      "memory:1M,bogus");
		cfg_ok = false;
		break;
	case 1:
		mode = PICK(r, NULL, "r", "ro", "rw");
		break;
	case 2:
		mode = PICK(r, "x", "wr", "W");
		cfg_ok = false;
		break;
	case 3:
		params = PICK(r, "null:1M", "memory:2M");
		break;
	}
	step_note(c, "toolstack add vbd %u/%u params=%s mode=%s%s%s", s->doms[dom].id, devid,
		  params ? params : "(none)", mode ? mode : "(none)", online ? "" : " no-online",
		  hotplug ? "" : " no-hotplug-status");
	v = vbd_add(c, (unsigned int)dom, devid, params, mode, online, hotplug);
	if (v) {
		v->cfg_ok = cfg_ok;
		v->ram = params && !strncmp(params, "memory:", 7);
	}
}

/* libxl's removal: online=0 + Closing if Connected, wait, then rm. */
static int
close_keys(struct xs_handle *xs, xs_transaction_t t, void *arg)
{
	const char *be = arg;
	int r = xbus_printf(xs, t, be, "online", "0");

	return r ? r : xbus_printf(xs, t, be, "state", "%d", XenbusStateClosing);
}

static void
do_remove(struct fz_ctx *c, struct fz_vbd *v)
{
	struct fz_seq *s = &c->seq;
	bool coop = s->doms[v->dom].alive && rng_below(&s->rng, 2);
	char be[128];
	int st = be_state(c, v), r;

	step_note(c, "toolstack remove vbd %u/%u (backend %d%s)", s->doms[v->dom].id, v->devid,
		  st, coop ? ", the guest closes" : "");
	if (st != XenbusStateConnected)
		return vbd_rm(c, v);
	/* left alone: its other backend would close it, not this one */
	if (v->left_alone)
		coop = false;
	be_dir(s, v, be, sizeof(be));
	r = xbus_transact(c->xs, close_keys, be);
	if (r < 0)
		fail(c, "toolstack close of %s: %s", be, strerror(-r));
	v->offline = true;
	if (coop) {
		fe_state(c, v, "5");
		fe_state(c, v, "6");
	}
	if (!coop || !c->dm.pid) {
		sleep_us(rng_below(&s->rng, 20000));
		return vbd_rm(c, v);
	}
	/* the toolstack's close with a guest that closes always ends Closed */
	st = wait_be_state(c, v, 1u << XenbusStateClosed, PATIENCE_S * c->o.slow);
	if (st != XenbusStateClosed)
		fail(c, "vbd %u/%u: the toolstack closed it (online=0, state 5) and the "
		     "frontend went Closed, but the backend is still %d after %.0f s",
		     s->doms[v->dom].id, v->devid, st, PATIENCE_S * c->o.slow);
	vbd_rm(c, v);
}

/* online=0 alone: the toolstack's detach, without the removal. */
static void
vbd_offline(struct fz_ctx *c, struct fz_vbd *v)
{
	char be[128];
	int r;

	be_dir(&c->seq, v, be, sizeof(be));
	r = xbus_printf(c->xs, XBT_NULL, be, "online", "0");
	if (r < 0)
		fail(c, "writing %s/online: %s", be, strerror(-r));
	v->offline = true;
}

static void
do_frontend_state(struct fz_ctx *c, struct fz_vbd *v)
{
	struct rng *r = &c->seq.rng;
	const char *val;

	if (rng_below(r, 5) == 0)
		val = PICK(r, "9", "", "abc", NULL, "0", "2", "-1", "4 ");
	else
		val = PICK(r, "1", "3", "4", "5", "6");
	step_note(c, "frontend %u/%u state=%s%s%s", c->seq.doms[v->dom].id, v->devid,
		  val ? "\"" : "(removed)", val ? val : "", val ? "\"" : "");
	fe_state(c, v, val);
}

static void
do_frontend(struct fz_ctx *c, enum step st)
{
	struct fz_seq *s = &c->seq;
	struct fz_vbd *v = pick_vbd(s, true);
	uint32_t id;

	if (!v)
		return step_note(c, "frontend: no vbd of a live domain");
	id = s->doms[v->dom].id;
	switch (st) {
	case F_STATE:
		return do_frontend_state(c, v);
	case F_RESET:
		step_note(c, "frontend %u/%u reset (6, wait, 1)", id, v->devid);
		return fe_reset(c, v);
	case F_RING:
		step_note(c, "frontend %u/%u valid ring", id, v->devid);
		return fe_ring(c, v, RING_VALID);
	case F_STALE:
		step_note(c, "frontend %u/%u stale ring", id, v->devid);
		return fe_ring(c, v, RING_STALE);
	case F_JUNK:
		step_note(c, "frontend %u/%u junk ring", id, v->devid);
		return fe_ring(c, v, RING_JUNK);
	default:
		step_note(c, "frontend %u/%u connect (valid ring, then 4)", id, v->devid);
		fe_ring(c, v, RING_VALID);
		return fe_state(c, v, rng_below(&s->rng, 4) ? "4" : "3");
	}
}

static void
do_toolstack(struct fz_ctx *c, enum step st)
{
	struct fz_seq *s = &c->seq;
	struct fz_vbd *v;
	int dom;

	switch (st) {
	case T_CREATE:
		dom_create(c);
		return step_note(c, "toolstack create domain %u", s->doms[s->ndoms - 1].id);
	case T_ADD:
		return do_add(c);
	case T_REMOVE:
	case T_REMOVE_RM:
	case T_ONLINE0:
		v = pick_vbd(s, false);
		if (!v)
			return step_note(c, "toolstack: no vbd");
		if (st == T_REMOVE)
			return do_remove(c, v);
		step_note(c, "toolstack %s vbd %u/%u", st == T_ONLINE0 ? "online=0" : "rm -r",
			  s->doms[v->dom].id, v->devid);
		return st == T_REMOVE_RM ? vbd_rm(c, v) : vbd_offline(c, v);
	default:
		dom = pick_live_dom(s);
		if (dom < 0)
			return step_note(c, "toolstack destroy: no live domain");
		step_note(c, "toolstack destroy domain %u", s->doms[dom].id);
		return dom_destroy(c, &s->doms[dom]);
	}
}

static void
do_daemon(struct fz_ctx *c, enum step st)
{
	struct fz_seq *s = &c->seq;
	int sig;

	switch (st) {
	case D_HUP:
		step_note(c, "daemon SIGHUP");
		if (kill(c->dm.pid, SIGHUP) < 0)
			fail(c, "kill(blkbackd, SIGHUP): %s", strerror(errno));
		return;
	case D_STOP:
		sig = rng_below(&s->rng, 2) ? SIGTERM : SIGKILL;
		step_note(c, "daemon %s", sig == SIGTERM ? "SIGTERM" : "SIGKILL");
		if (sig == SIGKILL)
			for (unsigned int i = 0; i < s->ndoms; i++)
				if (!s->doms[i].alive)
					s->doms[i].pages_orphaned = true;
		return daemon_stop(c, sig);
	default:
		step_note(c, "daemon start (takes over the kept vbds)");
		c->restarts++;
		return daemon_start(c);
	}
}

static void
run_step(struct fz_ctx *c, enum step st)
{
	double t0 = now_s();

	if (st <= T_DESTROY)
		do_toolstack(c, st);
	else if (st <= F_CONNECT)
		do_frontend(c, st);
	else
		do_daemon(c, st);
	c->steps_done++;
	c->t_step_kind[st] += now_s() - t0;
	if (c->o.verbose)
		printf("     (%.1f ms)\n", (now_s() - t0) * 1e3);
}

/* ------------------------------------------------------------------ */
/* Invariants.                                                        */
/* ------------------------------------------------------------------ */

/* Invariant 2: no removed vbd directory is back. */
static void
check_removed(struct fz_ctx *c)
{
	struct fz_seq *s = &c->seq;
	unsigned int i;

	for (i = 0; i < s->nvbds; i++) {
		const struct fz_vbd *v = &s->vbds[i];
		char be[128], **ents;
		unsigned int n = 0;

		if (!v->removed)
			continue;
		be_dir(s, v, be, sizeof(be));
		ents = xs_directory(c->xs, XBT_NULL, be, &n);
		if (ents) {
			char list[256] = "";

			for (unsigned int j = 0; j < n; j++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), " %s",
					 ents[j]);
			free(ents);
			fail(c, "%s is back after the toolstack removed it (nodes:%s)", be, list);
		}
		if (errno != ENOENT)
			fail(c, "reading %s: %s", be, strerror(errno));
	}
}

/*
 * Invariant 3: the backend states a vbd must settle in, from the last
 * writes (DESIGN-NOTES, the vbd state machine table); 0 where they do
 * not determine it.
 *   domain dead: never Connected (its frontend is gone: Closed, or
 *     InitWait / Closing after an error for one probed after it died);
 *   the frontend's last state 5: Closing, from every row (or Closed
 *     after online=0: Closed stays Closed while online is 0);
 *   6 or 0 (taken as Closed): Closed, or InitWait for a frontend not
 *     seen alive since this blkbackd serves the vbd; the node removed:
 *     the same, or Closing after a configuration error when this
 *     blkbackd never saw the node;
 *   junk (2, InitWait, is a backend's state: junk too): fatal, Closing
 *     (or Closed after online=0, as for 5);
 *   1 with a clean history (valid configuration, online): InitWait;
 *   3/4 with a clean history and a valid ring published: Connected.
 */
static unsigned int
expect_states(const struct fz_seq *s, const struct fz_vbd *v)
{
	bool good = v->cfg_ok && !v->offline && v->clean;

	/* nothing written to it: what it was, whatever happens next */
	if (v->left_alone)
		return v->alone_state >= 0 ? 1u << v->alone_state : 0;
	if (!s->doms[v->dom].alive)
		return ST(InitWait) | ST(Closing) | ST(Closed);
	switch (v->last) {
	case FE_CLOSING:
	case FE_JUNK:
		/* "Closed stays Closed while online is 0" */
		return ST(Closing) | (v->offline ? ST(Closed) : 0);
	case FE_CLOSEDISH:
		return ST(InitWait) | ST(Closed);
	case FE_ABSENT:
		return ST(InitWait) | ST(Closed) | (v->cfg_ok ? 0 : ST(Closing));
	case FE_INIT:
	case FE_1:
		return good ? ST(InitWait) : 0;
	case FE_CONN:
		return good && v->conn_ok ? ST(Connected) : 0;
	}
	return 0;
}

static bool
all_settled(struct fz_ctx *c, int *got, unsigned int *bad)
{
	struct fz_seq *s = &c->seq;
	unsigned int i;

	for (i = 0; i < s->nvbds; i++) {
		const struct fz_vbd *v = &s->vbds[i];
		unsigned int want = v->present ? expect_states(s, v) : 0;

		if (!want)
			continue;
		got[i] = be_state(c, v);
		if (got[i] < 0 || !(want & (1u << got[i]))) {
			*bad = i;
			return false;
		}
	}
	return true;
}

static void
check_states(struct fz_ctx *c)
{
	struct fz_seq *s = &c->seq;
	double secs = PATIENCE_S * c->o.slow, end = now_s() + secs;
	int got[MAX_VBDS];
	unsigned int bad = 0;

	for (;;) {
		/* settled, and still so a little later */
		if (all_settled(c, got, &bad)) {
			sleep_us(20000);
			if (all_settled(c, got, &bad)) {
				for (unsigned int i = 0; i < s->nvbds; i++)
					if (s->vbds[i].present && expect_states(s, &s->vbds[i]))
						c->states_checked++;
				return;
			}
		}
		if (now_s() > end)
			break;
		sleep_us(1000);
	}
	fail(c, "vbd %u/%u: backend state %d, expected one of mask 0x%x (frontend's last "
	     "state write class %d, cfg_ok=%d offline=%d clean=%d ring_ok=%d conn_ok=%d) "
	     "after %.0f s", s->doms[s->vbds[bad].dom].id, s->vbds[bad].devid, got[bad],
	     expect_states(s, &s->vbds[bad]), s->vbds[bad].last, s->vbds[bad].cfg_ok,
	     s->vbds[bad].offline, s->vbds[bad].clean, s->vbds[bad].ring_ok,
	     s->vbds[bad].conn_ok, secs);
}

/*
 * Invariant 4: fds and threads back to the baseline.  A dead domain's
 * memory files are let go when blkbackd asks about the domain, which it
 * does on @releaseDomain after the domain's last vbd went: a vbd freed
 * after its domain's release keeps them until the next release (its
 * list of past domains is bounded).  So when the baseline is not back
 * quickly, a scratch domain is created and destroyed to fire one.
 */
static void
check_resources(struct fz_ctx *c)
{
	struct fz_daemon *dm = &c->dm;
	double end = now_s() + PATIENCE_S * c->o.slow, nudge = now_s() + 0.3;
	bool nudged = false;
	struct res r;
	char name[64];

	for (;;) {
		if (daemon_res(dm, &r) < 0)
			fail(c, "reading /proc/%d: %s", (int)dm->pid, strerror(errno));
		if (r.fds == (int)dm->fds0 && r.threads == (int)dm->thr0)
			break;
		if (now_s() > end) {
			print_fds(dm);
			fail(c, "blkbackd has %d fds and %d threads with no vbd left; it "
			     "started with %u and %u", r.fds, r.threads, dm->fds0, dm->thr0);
		}
		if (!nudged && now_s() > nudge) {
			snprintf(name, sizeof(name), "fz%d-nudge-%" PRIu64, (int)getpid(),
				 c->seq.idx);
			sim_destroy_domain(c, sim_create_domain(c, name));
			nudged = true;
			c->nudges++;
		}
		sleep_us(1000);
	}
	if (!c->o.rss_slack)
		return;
	if (dm->rss_ref < 0) {
		dm->rss_ref = r.rss_kib;
		return;
	}
	if (r.rss_kib > dm->rss_ref + c->o.rss_slack)
		fail(c, "blkbackd's RSS is %ld KiB with no vbd left, %ld KiB after its first "
		     "sequence (slack %ld KiB)", r.rss_kib, dm->rss_ref, c->o.rss_slack);
}

/* What blkbackd must never log (an internal failure, not a guest's). */
static const char *const bad_log_lines[] = {
	"AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer", "runtime error:",
	"store contract", "out of memory", "still mapped or shared", "reading watches",
	"reading reports", "epoll_wait", "cannot wake the control thread",
	"cannot signal stop", "lost the connection to xenstore",
	": write " BE_ROOT, "poll: ",
};

static void
check_log(struct fz_ctx *c)
{
	FILE *f = fopen(c->dm.log, "re");
	char line[1024];
	unsigned int i;

	if (!f)
		fail(c, "open %s: %s", c->dm.log, strerror(errno));
	if (fseeko(f, c->seq.log_start, SEEK_SET) < 0)
		fail(c, "seek %s: %s", c->dm.log, strerror(errno));
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < ARRAY_SIZE(bad_log_lines); i++)
			if (strstr(line, bad_log_lines[i])) {
				fclose(f);
				line[strcspn(line, "\n")] = '\0';
				fail(c, "blkbackd logged: %s", line);
			}
	fclose(f);
}

/* ------------------------------------------------------------------ */
/* Invariant 5: a clean handshake still connects and does I/O.        */
/* ------------------------------------------------------------------ */

static int
run_frontend(struct fz_ctx *c, uint32_t domid)
{
	char dom[16], log[PATH_MAX];
	char *argv[] = {
		(char *)c->o.frontend, "verify", "--domid", dom, "--size", "1M",
		"--count", "256", "--max-indirect", "16", "--timeout", "20000", NULL,
	};
	int ws;
	pid_t pid;

	snprintf(dom, sizeof(dom), "%u", domid);
	snprintf(log, sizeof(log), "%s.front", c->dm.log);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		fail(c, "fork: %s", strerror(errno));
	if (pid == 0)
		exec_logged(c->xs0_path, log, argv);
	while (waitpid(pid, &ws, 0) < 0)
		if (errno != EINTR)
			fail(c, "waitpid(blkfront-test): %s", strerror(errno));
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

static void
check_clean_handshake(struct fz_ctx *c)
{
	struct fz_seq *s = &c->seq;
	struct fz_vbd *v;
	int rc;

	step_note(c, "check: blkfront-test verify on a fresh domain's memory:1M vbd");
	dom_create(c);
	v = vbd_add(c, s->ndoms - 1, devids[0], "memory:1M", "w", true, true);
	if (!v)
		fail(c, "adding the check's vbd");
	rc = run_frontend(c, s->doms[s->ndoms - 1].id);
	if (rc != 0)
		fail(c, "blkfront-test verify on a fresh vbd exited %d (its output: %s.front)",
		     rc, c->dm.log);
	c->handshakes_checked++;
	vbd_rm(c, v);
}

/* ------------------------------------------------------------------ */
/* Sequences.                                                         */
/* ------------------------------------------------------------------ */

static void
print_sequence(const struct fz_ctx *c, FILE *f)
{
	unsigned int i;

	fprintf(f, "fuzz-control: seed %" PRIu64 " sequence %" PRIu64 ", %u steps:\n",
		c->o.seed, c->seq.idx, c->seq.nsteps);
	for (i = 0; i < c->seq.nsteps; i++)
		fprintf(f, "  %2u %s\n", i, c->seq.steps[i]);
}

/* blkbackd's log since the sequence started (at most 200 lines). */
static void
print_log_tail(const struct fz_ctx *c, FILE *out)
{
	FILE *f = fopen(c->dm.log, "re");
	char line[1024];
	unsigned int n = 0;

	if (!f)
		return;
	fprintf(out, "---- blkbackd log of the sequence ----\n");
	if (fseeko(f, c->seq.log_start, SEEK_SET) == 0)
		while (n++ < 200 && fgets(line, sizeof(line), f))
			fputs(line, out);
	fclose(f);
}

static void
fail(struct fz_ctx *c, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "fuzz-control: FAIL: seed %" PRIu64 " sequence %" PRIu64 ": ",
		c->o.seed, c->seq.idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	print_sequence(c, stderr);
	print_log_tail(c, stderr);
	fprintf(stderr, "replay: fuzz-control --seed %" PRIu64 " --replay %" PRIu64
		" ... (the same blkbackd command)\n", c->o.seed, c->seq.idx);
	if (c->dm.pid)
		kill(c->dm.pid, SIGKILL);
	exit(1);
}

static off_t
log_size(const struct fz_ctx *c)
{
	struct stat st;

	return stat(c->dm.log, &st) == 0 ? st.st_size : 0;
}

/* Everything of the sequence removed, destroyed, given back; checks. */
static void
quiesce(struct fz_ctx *c)
{
	struct fz_seq *s = &c->seq;
	struct res r;
	unsigned int i;

	for (i = 0; i < s->nvbds; i++)
		if (s->vbds[i].present)
			vbd_rm(c, &s->vbds[i]);
	/* the queue threads gone first: then every page must come back */
	for (double end = now_s() + PATIENCE_S * c->o.slow;;) {
		if (daemon_res(&c->dm, &r) < 0)
			fail(c, "reading /proc/%d: %s", (int)c->dm.pid, strerror(errno));
		if (r.threads == (int)c->dm.thr0)
			break;
		if (now_s() > end)
			fail(c, "blkbackd still has %d threads (%u serving nothing) %.0f s after "
			     "every vbd was removed", r.threads, c->dm.thr0, PATIENCE_S * c->o.slow);
		sleep_us(1000);
	}
	for (i = 0; i < s->ndoms; i++)
		dom_take_back_pages(c, &s->doms[i]);
	for (i = 0; i < s->ndoms; i++)
		if (s->doms[i].alive)
			dom_destroy(c, &s->doms[i]);
	/* and, as libxl does once a domain and its devices are gone, its
	 * /libxl/<domid> (left behind, thousands of empty directories
	 * made every xenstore transaction slower as the run went on) */
	for (i = 0; i < s->ndoms; i++) {
		char lx[64];

		snprintf(lx, sizeof(lx), "/libxl/%u", s->doms[i].id);
		if (!xs_rm(c->xs, XBT_NULL, lx) && errno != ENOENT)
			fail(c, "removing %s: %s", lx, strerror(errno));
	}
	for (i = 0; i < s->ndoms; i++)
		dom_close(&s->doms[i]);
	s->ndoms = 0;
	check_alive(c);
	check_resources(c);
	check_removed(c);
}

static void
sequence_begin(struct fz_ctx *c, uint64_t idx)
{
	struct fz_seq *s = &c->seq;

	memset(s, 0, sizeof(*s));
	s->idx = idx;
	rng_for_sequence(&s->rng, c->o.seed, idx);
	s->log_start = log_size(c);
	if (c->o.verbose)
		printf("sequence %" PRIu64 "\n", idx);
}

static void
run_sequence(struct fz_ctx *c, uint64_t idx)
{
	struct fz_seq *s = &c->seq;
	unsigned int n, i;
	double t0 = now_s(), t1, t2;

	sequence_begin(c, idx);
	n = 10 + rng_below(&s->rng, MAX_STEPS - 10 + 1);
	/* every sequence starts with a domain and a vbd */
	run_step(c, T_CREATE);
	run_step(c, T_ADD);
	for (i = 2; i < n; i++) {
		/* no pause, up to 1 ms, or up to 5 ms (blkbackd's reaction to
		 * a watch takes ~0.1-1 ms here: each lands before, during or
		 * after it) */
		unsigned int kind = rng_below(&s->rng, 3);
		unsigned int pause = kind ? rng_below(&s->rng, kind == 1 ? 1001 : 5001) : 0;

		run_step(c, choose_step(c));
		sleep_us(pause);
		check_removed(c);
		if (c->dm.pid)
			check_alive(c);
	}
	if (!c->dm.pid) {
		step_note(c, "daemon start (end of the sequence)");
		c->restarts++;
		daemon_start(c);
	}
	check_alive(c);
	t1 = now_s();
	check_states(c);
	t2 = now_s();
	quiesce(c);
	check_log(c);
	c->sequences++;
	c->t_steps += t1 - t0;
	c->t_states += t2 - t1;
	c->t_quiesce += now_s() - t2;
}

/* ------------------------------------------------------------------ */
/* Set-up and main.                                                   */
/* ------------------------------------------------------------------ */

static void
usage(FILE *f)
{
	fprintf(f,
"usage: fuzz-control --seed S --seconds T [--sequences N] [--replay SEQ]\n"
"         [--verbose] [--check-every N] [--rss-slack KIB] [--frontend PATH]\n"
"         [--slow N] [--min-sequences N]\n"
"         --pidfile FILE --log FILE -- BLKBACKD-COMMAND...\n"
"XENSIM_DIR names the running xensim.  See the comment in tests/fuzz-control.c.\n");
}

static int
parse_args(int argc, char **argv, struct fz_ctx *c)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "sequences", required_argument, NULL, 'n' },
		{ "replay", required_argument, NULL, 'r' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-every", required_argument, NULL, 'c' },
		{ "rss-slack", required_argument, NULL, 'R' },
		{ "frontend", required_argument, NULL, 'f' },
		{ "slow", required_argument, NULL, 'S' },
		{ "min-sequences", required_argument, NULL, 'm' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "log", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_seed = false;
	int o;

	while ((o = getopt_long(argc, argv, "+v", opts, NULL)) != -1) {
		switch (o) {
		case 's': c->o.seed = strtoull(optarg, NULL, 0); have_seed = true; break;
		case 't': c->o.seconds = strtod(optarg, NULL); break;
		case 'n': c->o.max_seq = strtoull(optarg, NULL, 0); break;
		case 'r': c->o.replay = strtoll(optarg, NULL, 0); break;
		case 'v': c->o.verbose = true; break;
		case 'c': c->o.check_every = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'R': c->o.rss_slack = strtol(optarg, NULL, 0); break;
		case 'f': c->o.frontend = optarg; break;
		case 'S': c->o.slow = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': c->o.min_seq = strtoull(optarg, NULL, 0); break;
		case 'p': c->dm.pidfile = optarg; break;
		case 'l': c->dm.log = optarg; break;
		case 'h': usage(stdout); exit(0);
		default: return -1;
		}
	}
	if (!have_seed || !c->dm.pidfile || !c->dm.log || optind >= argc || !c->o.slow) {
		usage(stderr);
		return -1;
	}
	c->dm.argv = argv + optind;
	c->sim_dir = getenv("XENSIM_DIR");
	if (!c->sim_dir) {
		fprintf(stderr, "fuzz-control: XENSIM_DIR is not set\n");
		return -1;
	}
	return 0;
}

/* The first blkbackd, serving nothing yet: the baseline. */
static void
setup(struct fz_ctx *c)
{
	struct res r;

	snprintf(c->xs0_path, sizeof(c->xs0_path), "%s/xenstore.sock", c->sim_dir);
	c->xs = xbus_open(c->xs0_path);
	if (!c->xs) {
		fprintf(stderr, "fuzz-control: xenstore at %s: %s\n", c->xs0_path, strerror(errno));
		exit(2);
	}
	daemon_start(c);
	/* in its loop (libxenstore makes its watch pipe there): the same
	 * counts for 0.3 s */
	for (unsigned int same = 0; same < 30 * c->o.slow;) {
		if (daemon_res(&c->dm, &r) < 0)
			fail(c, "reading /proc/%d: %s", (int)c->dm.pid, strerror(errno));
		same = r.fds == (int)c->dm.fds0 && r.threads == (int)c->dm.thr0 ? same + 1 : 0;
		c->dm.fds0 = (unsigned int)r.fds;
		c->dm.thr0 = (unsigned int)r.threads;
		sleep_us(10000);
	}
}

int
main(int argc, char **argv)
{
	struct fz_ctx c = {
		.o = { .replay = -1, .check_every = 50, .frontend = "blkfront-test", .slow = 1 },
	};
	double start;
	uint64_t idx;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	log_init("fuzz-control");
	if (parse_args(argc, argv, &c) < 0)
		return 2;
	printf("fuzz-control: seed %" PRIu64 "\n", c.o.seed);
	setup(&c);
	start = now_s();
	for (idx = c.o.replay >= 0 ? (uint64_t)c.o.replay : 0;; idx++) {
		if (c.o.replay >= 0 && idx != (uint64_t)c.o.replay)
			break;
		if (c.o.replay < 0 && (now_s() - start >= c.o.seconds ||
				       (c.o.max_seq && c.sequences >= c.o.max_seq)))
			break;
		run_sequence(&c, idx);
		if (c.o.check_every && c.sequences % c.o.check_every == 0) {
			sequence_begin(&c, idx);
			check_clean_handshake(&c);
			quiesce(&c);
			check_log(&c);
		}
	}
	sequence_begin(&c, idx);
	check_clean_handshake(&c);
	quiesce(&c);
	check_log(&c);
	printf("fuzz-control: seed %" PRIu64 ": %" PRIu64 " sequences, %" PRIu64 " steps in "
	       "%.1f s (%.1f sequences/s), every invariant held\n", c.o.seed, c.sequences,
	       c.steps_done, now_s() - start, (double)c.sequences / (now_s() - start));
	printf("fuzz-control: checked: %" PRIu64 " vbd states exact, %" PRIu64
	       " fresh handshakes with verified I/O\n", c.states_checked, c.handshakes_checked);
	printf("fuzz-control: time in steps %.1f s, settling %.1f s, quiesce %.1f s; "
	       "%" PRIu64 " blkbackd starts, %" PRIu64 " release nudges\n", c.t_steps,
	       c.t_states, c.t_quiesce, c.restarts, c.nudges);
	{
		double rest = c.t_steps;

		printf("fuzz-control: time in steps by kind (s):");
		for (unsigned int i = 0; i < NSTEPS; i++) {
			printf(" %s %.1f", step_name[i], c.t_step_kind[i]);
			rest -= c.t_step_kind[i];
		}
		printf("; between steps (pauses, checks) %.1f\n", rest);
	}
	daemon_stop(&c, SIGTERM);
	xs_close(c.xs);
	if (c.sequences < c.o.min_seq) {
		printf("fuzz-control: FAILED: %" PRIu64 " sequences, fewer than --min-sequences %"
		       PRIu64 ": too little was tried to mean anything\n", c.sequences, c.o.min_seq);
		return 1;
	}
	return 0;
}
