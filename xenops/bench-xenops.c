/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-xenops.c: the cost of the xenops data path on the simulator,
 * each beside its physical bound measured in the same run.
 *
 *   XENSIM_DIR=DIR bench-xenops DOMID [--rounds N] [--seconds S]
 *
 * DOMID is an existing domU.  Output: one line of key=value per
 * measurement (data for scripts, not prose):
 *
 *   evtchn RTT:  dom0 process <-> guest process, notify -> poll ->
 *                pending -> unmask -> notify back; median and p99 of
 *                the round trip, beside raw eventfd ping-pong between
 *                two processes (blocking read, and poll + read).
 *   grant copy:  44 KiB requests (11 x 4 KiB segments) from/to guest
 *                pages, beside memcpy of the same bytes between the same
 *                buffers; MB/s (1e6 bytes/s).
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler.h"
#include "t-common.h"

#define PG	XEN_PAGE_SIZE
#define SEGS	11			/* BLKIF_MAX_SEGMENTS_PER_REQUEST */
#define NREQ	64			/* requests in the working set */

static uint32_t guest_id;
static int rounds = 20000;
static double seconds = 1.0;

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void
report_rtt(const char *impl, uint64_t *ns, int n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf("bench=evtchn_rtt impl=%s rounds=%d median_ns=%llu p99_ns=%llu min_ns=%llu\n",
	       impl, n, (unsigned long long)ns[n / 2],
	       (unsigned long long)ns[(size_t)n * 99 / 100],
	       (unsigned long long)ns[0]);
	fflush(stdout);
}

static void
efd_wait(int fd, bool use_poll)
{
	uint64_t v;

	if (use_poll)
		t_wait_readable(fd, -1);
	while (read(fd, &v, sizeof(v)) < 0 && errno == EAGAIN)
		t_wait_readable(fd, -1);
}

static void
efd_kick(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one))
		abort();
}

/* Raw eventfd ping-pong between two processes: the bound. */
static int
bench_eventfd(bool use_poll, uint64_t *ns)
{
	int ping = eventfd(0, EFD_CLOEXEC | (use_poll ? EFD_NONBLOCK : 0));
	int pong = eventfd(0, EFD_CLOEXEC | (use_poll ? EFD_NONBLOCK : 0));
	pid_t pid;
	int st;

	if (ping < 0 || pong < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		for (int i = 0; i < rounds + 100; i++) {
			efd_wait(ping, use_poll);
			efd_kick(pong);
		}
		_exit(0);
	}
	for (int i = 0; i < rounds + 100; i++) {
		uint64_t t0 = t_now_ns();

		efd_kick(ping);
		efd_wait(pong, use_poll);
		if (i >= 100)		/* warm-up */
			ns[i - 100] = t_now_ns() - t0;
	}
	waitpid(pid, &st, 0);
	close(ping);
	close(pong);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Wait for the port's event the way a dataplane does. */
static int
evtchn_wait(xenops_evtchn_t *e, int port)
{
	int p;

	do {
		t_wait_readable(xenops_evtchn_fd(e), -1);
		p = xenops_evtchn_pending(e);
	} while (p == -EAGAIN);
	if (p != port)
		return -1;
	return xenops_evtchn_unmask(e, port);
}

static int
bench_evtchn(uint64_t *ns)
{
	xenops_t *dom0 = t_open(0);
	xenops_evtchn_t *e0 = xenops_evtchn_open(dom0);
	int p0, sv[2], st, rc = 0;
	pid_t pid;

	if (!e0 || socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
		return -1;
	p0 = xenops_evtchn_bind_unbound(e0, guest_id);
	if (p0 <= 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		xenops_t *g = t_open(guest_id);
		xenops_evtchn_t *eg = xenops_evtchn_open(g);
		int pg = eg ? xenops_evtchn_bind_interdomain(eg, 0, p0) : -1;
		char c = 'r';

		if (pg <= 0 || write(sv[1], &c, 1) != 1)
			_exit(2);
		for (int i = 0; i < rounds + 100; i++)
			if (evtchn_wait(eg, pg) < 0 ||
			    xenops_evtchn_notify(eg, pg) < 0)
				_exit(3);
		xenops_evtchn_close(eg);
		xenops_close(g);
		_exit(0);
	}
	{
		char c;

		if (read(sv[0], &c, 1) != 1)
			return -1;
	}
	for (int i = 0; i < rounds + 100 && rc == 0; i++) {
		uint64_t t0 = t_now_ns();

		rc = xenops_evtchn_notify(e0, p0);
		if (rc == 0)
			rc = evtchn_wait(e0, p0);
		if (i >= 100)
			ns[i - 100] = t_now_ns() - t0;
	}
	waitpid(pid, &st, 0);
	close(sv[0]);
	close(sv[1]);
	xenops_evtchn_close(e0);
	xenops_close(dom0);
	return rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Bytes per second of fn over about `secs`. */
static double
rate(void (*fn)(void *), void *arg, size_t bytes_per_call, double secs)
{
	uint64_t t0 = t_now_ns(), t;
	uint64_t calls = 0;

	do {
		for (int k = 0; k < 64; k++)
			fn(arg);
		calls += 64;
		t = t_now_ns();
	} while (t - t0 < secs * 1e9);
	return (double)calls * bytes_per_call / ((t - t0) / 1e9);
}

struct copy_ctx {
	xenops_t *dom0;
	uint8_t *guest_mem;		/* NREQ * SEGS pages, as the guest sees them */
	uint8_t *local;			/* NREQ * SEGS pages in dom0 */
	grant_ref_t refs[NREQ * SEGS];
	bool to_guest;
	unsigned int next;
	int failed;
};

static void
one_copy(void *opaque)
{
	struct copy_ctx *c = opaque;
	struct xenops_copy_seg segs[SEGS];
	unsigned int r = c->next++ % NREQ;

	for (int i = 0; i < SEGS; i++)
		segs[i] = (struct xenops_copy_seg){
			.gref = c->refs[r * SEGS + i], .len = PG,
			.local = c->local + (size_t)(r * SEGS + i) * PG,
		};
	if (xenops_grant_copy(c->dom0, guest_id, c->to_guest, SEGS, segs))
		c->failed = 1;
}

static void
one_memcpy(void *opaque)
{
	struct copy_ctx *c = opaque;
	unsigned int r = c->next++ % NREQ;

	/* Page by page, as the segments would be; the length is not a
	 * compile-time constant, so this is libc's memcpy, as in xenops. */
	size_t len = PG;

	__asm__("" : "+r"(len));	/* hide the constant from the compiler */

	for (int i = 0; i < SEGS; i++) {
		uint8_t *g = c->guest_mem + (size_t)(r * SEGS + i) * PG;
		uint8_t *l = c->local + (size_t)(r * SEGS + i) * PG;

		if (c->to_guest)
			memcpy(g, l, len);
		else
			memcpy(l, g, len);
	}
	/* Keep the compiler from dropping the copies. */
	__asm__ __volatile__("" : : "r"(c->local), "r"(c->guest_mem) : "memory");
}

static int
bench_copy(void)
{
	static struct copy_ctx c;
	xenops_t *guest;

	c.dom0 = t_open(0);
	guest = t_open(guest_id);
	c.guest_mem = xenops_share_pages(guest, 0, NREQ * SEGS, true, c.refs);
	c.local = aligned_alloc(PG, (size_t)NREQ * SEGS * PG);
	if (!c.guest_mem || !c.local)
		return -1;
	t_fill(c.guest_mem, (size_t)NREQ * SEGS * PG, 1);
	t_fill(c.local, (size_t)NREQ * SEGS * PG, 2);

	for (int dir = 0; dir < 2; dir++) {
		double gc, mc;

		c.to_guest = dir;
		/* Alternate bound and subject; keep the best of each. */
		mc = gc = 0;
		for (int run = 0; run < 5; run++) {
			double m = rate(one_memcpy, &c, SEGS * PG, seconds / 5);
			double g = rate(one_copy, &c, SEGS * PG, seconds / 5);

			mc = m > mc ? m : mc;
			gc = g > gc ? g : gc;
		}
		if (c.failed)
			return -1;
		printf("bench=grant_copy dir=%s req_bytes=%u segs=%d working_set_kib=%u "
		       "grant_copy_MBps=%.0f memcpy_MBps=%.0f ratio=%.2f\n",
		       dir ? "to_guest" : "from_guest", SEGS * PG, SEGS,
		       NREQ * SEGS * PG / 1024, gc / 1e6, mc / 1e6, gc / mc);
		fflush(stdout);
	}
	xenops_unshare_pages(guest, c.guest_mem, NREQ * SEGS);
	free(c.local);
	xenops_close(guest);
	xenops_close(c.dom0);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rounds", required_argument, NULL, 'r' },
		{ "seconds", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t *a, *b;
	int c;

	while ((c = getopt_long(argc, argv, "r:s:", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rounds = atoi(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		default:
			return T_EXIT_FAIL;
		}
	}
	if (optind + 1 != argc || rounds < 100 || seconds <= 0) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR bench-xenops DOMID "
			"[--rounds N>=100] [--seconds S]\n");
		return T_EXIT_FAIL;
	}
	guest_id = strtoul(argv[optind], NULL, 10);
	a = calloc(rounds, sizeof(*a));
	b = calloc(rounds, sizeof(*b));
	if (!a || !b)
		return T_EXIT_FAIL;

	/* Interleave bound and subject so both see the same machine. */
	if (bench_eventfd(false, a) < 0)
		return T_EXIT_FAIL;
	report_rtt("eventfd_read", a, rounds);
	if (bench_eventfd(true, a) < 0)
		return T_EXIT_FAIL;
	report_rtt("eventfd_poll_read", a, rounds);
	if (bench_evtchn(b) < 0)
		return T_EXIT_FAIL;
	report_rtt("xenops_sim", b, rounds);

	if (bench_copy() < 0)
		return T_EXIT_FAIL;
	free(a);
	free(b);
	return T_EXIT_PASS;
}
