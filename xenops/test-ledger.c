/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ledger.c: the pin ledger (sim/hv-proto.h): the pins a dom0
 * process holds are released by xensim when the process dies, as the
 * kernel's gntdev unmaps a dead process's grants on real Xen, and only
 * those.
 *
 *   XENSIM_DIR=DIR test-ledger DOMID
 *
 * This process is the guest (it shares the pages) and watches the
 * grant entries and pin counts through a raw dom0 connection; the
 * mapping processes are forked children with their own dom0 handles.
 * Every check of an entry is of the whole flags+domid word.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler.h"
#include "hv-proto.h"
#include "t-common.h"

#define PG XEN_PAGE_SIZE

/* The guest's entry words: granted to dom0, and what a mapper adds. */
#define W_RW		((uint32_t)GTF_permit_access)
#define W_RO		((uint32_t)(GTF_permit_access | GTF_readonly))
#define W_R		((uint32_t)GTF_reading)
#define W_W		((uint32_t)(GTF_reading | GTF_writing))
/* Pin counts: n pins of which w writable. */
#define PINS(n, w)	((n) * HV_PIN_ONE + (w) * HV_PIN_W_ONE)

static uint32_t guest_id;
static const char *dir;
static xenops_t *guest;
static struct hv_gnt *gnt;	/* the guest's table */
static struct hv_active *act;	/* its pin counts */
static int watch_fd = -1;	/* the raw dom0 connection behind them */

static int
raw_connect(uint32_t domid)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (domid)
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/dom%u/hv.sock",
			 dir, domid);
	else
		snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/hv.sock", dir);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return -1;
	return fd;
}

static uint32_t last_arg;	/* the last answer's arg */

/* One request (with maybe one fd); the answer's ret and up to nfds fds
 * into fds, 1000 if the connection was dropped, -1000 on a local error. */
static int
call(int fd, uint32_t op, uint32_t domid, uint32_t arg, int sfd, int *fds,
     unsigned int nfds)
{
	struct hv_req req = { .op = op, .domid = domid, .arg = arg };
	union {
		char b[CMSG_SPACE(sizeof(int) * HV_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct hv_rsp rsp;
	struct cmsghdr *cm;
	ssize_t n;

	memset(&u, 0, sizeof(u));
	if (sfd >= 0) {
		msg.msg_control = u.b;
		msg.msg_controllen = CMSG_SPACE(sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &sfd, sizeof(int));
	}
	if (sendmsg(fd, &msg, MSG_NOSIGNAL) < 0)
		return errno == EPIPE ? 1000 : -1000;
	if (poll(&pfd, 1, 5000) != 1)
		return -1000;
	iov.iov_base = &rsp;
	iov.iov_len = sizeof(rsp);
	msg.msg_control = u.b;
	msg.msg_controllen = sizeof(u.b);
	n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 1000;
	if (n != sizeof(rsp))
		return -1000;
	last_arg = rsp.arg;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && fds)
		memcpy(fds, CMSG_DATA(cm),
		       sizeof(int) * (rsp.nfds < nfds ? rsp.nfds : nfds));
	return rsp.ret;
}

static int
hello(int fd, uint32_t domid)
{
	return call(fd, HV_OP_HELLO, domid, HV_PROTO_VERSION, -1, NULL, 0);
}

/* The guest's grant table and pin counts, as dom0 sees them. */
static int
watch_open(void)
{
	int fds[4] = { -1, -1, -1, -1 };
	void *g, *a;

	watch_fd = raw_connect(0);
	if (watch_fd < 0 || hello(watch_fd, 0) != 0 ||
	    call(watch_fd, HV_OP_GET_DOMAIN, guest_id, 0, -1, fds, 4) != 0 ||
	    fds[3] < 0)
		return -1;
	g = mmap(NULL, sizeof(struct hv_gnt), PROT_READ, MAP_SHARED, fds[0], 0);
	a = mmap(NULL, sizeof(struct hv_active) * HV_NR_GRANTS, PROT_READ,
		 MAP_SHARED, fds[3], 0);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	if (g == MAP_FAILED || a == MAP_FAILED)
		return -1;
	gnt = g;
	act = a;
	return 0;
}

static uint32_t
word(grant_ref_t ref)
{
	return __atomic_load_n((uint32_t *)&gnt->table[ref], __ATOMIC_ACQUIRE);
}

/* The pin counts and BUSY (the owner half only while BUSY: see actw). */
static uint32_t
pin(grant_ref_t ref)
{
	uint64_t v = __atomic_load_n(&act[ref].pin, __ATOMIC_ACQUIRE);

	return HV_PIN(v) | (HV_PIN_OWNER(v) && !(HV_PIN(v) & HV_PIN_BUSY) ?
			    0x40000000u : 0);	/* an owner without BUSY: wrong */
}

/*
 * xensim has handled every connection that closed before this call:
 * each answer comes from a loop iteration whose epoll_wait returned
 * every fd ready by then (the closed ones were), and handled them all
 * before the next; two round trips cover a close that shared the first
 * iteration with our request.
 */
static int
sync_xensim(void)
{
	for (int i = 0; i < 2; i++)
		if (call(watch_fd, HV_OP_DOMAIN_ALIVE, guest_id, 0, -1, NULL, 0) != 1)
			return -1;
	return 0;
}

/* Wait up to 5 s for ref's pin count to become want. */
static bool
pin_becomes(grant_ref_t ref, uint32_t want)
{
	for (int i = 0; i < 5000; i++) {
		if (pin(ref) == want)
			return true;
		usleep(1000);
	}
	return pin(ref) == want;
}

static void
kill_wait(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Fork a mapper: child(arg) runs with its own dom0 handle, writes one
 * byte on *ready_fd when it holds what it should, then waits to be
 * killed (or exits if child returns nonzero: the byte is then 'F'). */
static pid_t
mapper(int (*child)(xenops_t *, void *), void *arg, int *ready_fd)
{
	int p[2];
	pid_t pid;

	if (pipe(p) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		xenops_t *d0;
		char c;

		close(p[0]);
		d0 = t_open(0);
		c = child(d0, arg) == 0 ? 'R' : 'F';
		if (write(p[1], &c, 1) != 1 || c == 'F')
			_exit(1);
		for (;;)
			pause();
	}
	close(p[1]);
	*ready_fd = p[0];
	return pid;
}

static char
ready(int fd)
{
	char c = 0;

	if (!t_wait_readable(fd, 20000) || read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c;
}

/* ---- a mapper killed holding maps ---- */

static grant_ref_t rw[4], ro[2];

static int
child_maps(xenops_t *d0, void *arg)
{
	(void)arg;
	/* rw[0] twice writable, rw[1] writable, rw[2] read-only, ro[] */
	if (!xenops_map_grefs(d0, guest_id, 2, rw, true) ||
	    !xenops_map_grefs(d0, guest_id, 1, rw, true) ||
	    !xenops_map_grefs(d0, guest_id, 1, &rw[2], false) ||
	    !xenops_map_grefs(d0, guest_id, 2, ro, false))
		return 1;
	return 0;
}

static int
test_killed_mapper(void)
{
	uint8_t *g, *gro;
	int fd;
	pid_t pid;

	g = xenops_share_pages(guest, 0, 4, true, rw);
	gro = xenops_share_pages(guest, 0, 2, false, ro);
	T_CHECK(g && gro, "share: %m");
	pid = mapper(child_maps, NULL, &fd);
	T_CHECK(pid > 0, "fork: %m");
	T_CHECK(ready(fd) == 'R', "the mapper could not map");

	T_CHECK(word(rw[0]) == (W_RW | W_W) && pin(rw[0]) == PINS(2, 2),
		"rw[0]: %#x pin %#x", word(rw[0]), pin(rw[0]));
	T_CHECK(word(rw[1]) == (W_RW | W_W) && pin(rw[1]) == PINS(1, 1),
		"rw[1]: %#x pin %#x", word(rw[1]), pin(rw[1]));
	T_CHECK(word(rw[2]) == (W_RW | W_R) && pin(rw[2]) == PINS(1, 0),
		"rw[2]: %#x pin %#x", word(rw[2]), pin(rw[2]));
	T_CHECK(word(rw[3]) == W_RW && pin(rw[3]) == 0,
		"rw[3]: %#x pin %#x", word(rw[3]), pin(rw[3]));
	for (int i = 0; i < 2; i++)
		T_CHECK(word(ro[i]) == (W_RO | W_R) && pin(ro[i]) == PINS(1, 0),
			"ro[%d]: %#x pin %#x", i, word(ro[i]), pin(ro[i]));
	T_CHECK(xenops_end_access(guest, g, 1) == -EBUSY, "end access while mapped");

	kill_wait(pid);
	for (int i = 0; i < 4; i++)
		T_CHECK(pin_becomes(rw[i], 0), "rw[%d] still pinned: %#x", i, pin(rw[i]));
	for (int i = 0; i < 2; i++)
		T_CHECK(pin_becomes(ro[i], 0), "ro[%d] still pinned: %#x", i, pin(ro[i]));
	/* The flags are the guest's grant again, nothing else. */
	for (int i = 0; i < 4; i++)
		T_CHECK(word(rw[i]) == W_RW, "rw[%d]: %#x", i, word(rw[i]));
	for (int i = 0; i < 2; i++)
		T_CHECK(word(ro[i]) == W_RO, "ro[%d]: %#x", i, word(ro[i]));
	/* gntalloc-style end access succeeds and leaves the entries empty */
	T_CHECK(xenops_end_access(guest, g, 4) == 0, "end access after the kill");
	T_CHECK(xenops_end_access(guest, gro, 2) == 0, "end access (ro)");
	for (int i = 0; i < 4; i++)
		T_CHECK(word(rw[i]) == 0, "rw[%d] after end access: %#x", i, word(rw[i]));
	T_CHECK(xenops_unshare_pages(guest, g, 4) == 0, "unshare");
	T_CHECK(xenops_unshare_pages(guest, gro, 2) == 0, "unshare ro");
	return 0;
}

/* ---- a mapper killed in the middle of a grant copy ---- */

struct copy_arg {
	grant_ref_t ref;
	bool to_guest;
	int ready_fd;		/* the child's end, written from its uffd thread */
};

static int uffd_ready_fd = -1;

/* Say "in the copy" once the copy faults on our never-filled page. */
static void *
uffd_thread(void *opaque)
{
	int uffd = (int)(intptr_t)opaque;
	struct uffd_msg m;
	char c = 'R';

	if (read(uffd, &m, sizeof(m)) == sizeof(m) &&
	    m.event == UFFD_EVENT_PAGEFAULT)
		(void)!write(uffd_ready_fd, &c, 1);
	for (;;)
		pause();	/* never resolve it */
	return NULL;
}

static int copy_skip;

/* A grant copy whose local buffer is a userfaultfd page nobody fills:
 * the copy blocks inside its memcpy, holding the segment's pin. */
static int
copy_child(struct copy_arg *a)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	xenops_t *d0;
	pthread_t t;
	void *buf;
	int uffd;
	struct xenops_copy_seg seg = { .gref = a->ref, .len = PG };

	d0 = t_open(0);
	uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0)
		_exit(77);
	buf = mmap(NULL, PG, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (uintptr_t)buf;
	reg.range.len = PG;
	if (buf == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg) < 0)
		_exit(77);
	uffd_ready_fd = a->ready_fd;
	if (pthread_create(&t, NULL, uffd_thread, (void *)(intptr_t)uffd))
		_exit(1);
	seg.local = buf;
	xenops_grant_copy(d0, guest_id, a->to_guest, 1, &seg);
	_exit(1);	/* the copy came back: the page was never touched? */
}

static int
copy_killed(bool to_guest)
{
	struct copy_arg a = { .to_guest = to_guest };
	uint8_t *g;
	int p[2], st;
	pid_t pid;
	char c = 0;

	g = xenops_share_pages(guest, 0, 1, true, &a.ref);
	T_CHECK(g && pipe(p) == 0, "share: %m");
	pid = fork();
	T_CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		close(p[0]);
		a.ready_fd = p[1];
		copy_child(&a);
	}
	close(p[1]);
	if (!t_wait_readable(p[0], 20000) || read(p[0], &c, 1) != 1) {
		close(p[0]);
		waitpid(pid, &st, 0);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
			copy_skip = 1;
			xenops_unshare_pages(guest, g, 1);
			return 0;
		}
		T_CHECK(0, "the copying child did not block (status %#x)", st);
	}
	close(p[0]);
	/* Mid-copy: the segment's pin is held and flagged. */
	T_CHECK(word(a.ref) == (W_RW | (to_guest ? W_W : W_R)) &&
		pin(a.ref) == PINS(1, to_guest ? 1 : 0),
		"mid-copy: %#x pin %#x", word(a.ref), pin(a.ref));
	kill_wait(pid);
	T_CHECK(pin_becomes(a.ref, 0), "still pinned after the kill: %#x", pin(a.ref));
	T_CHECK(word(a.ref) == W_RW, "after the kill: %#x", word(a.ref));
	T_CHECK(xenops_unshare_pages(guest, g, 1) == 0, "unshare");
	return 0;
}

static int
test_killed_mid_copy(void)
{
	const char *vg = getenv("BLK_VALGRIND");

	/* valgrind runs one thread at a time, and the copy blocked on the
	 * page fault would keep the uffd thread from ever saying so. */
	if (vg && strcmp(vg, "1") == 0) {
		printf("killed_mid_copy: not tested under valgrind\n");
		return 0;
	}
	if (copy_killed(false) || copy_killed(true))
		return 1;
	if (copy_skip)
		printf("killed_mid_copy: no userfaultfd here, not tested\n");
	return 0;
}

/* ---- several threads mapping at once, then killed ---- */

#define THREADS		4
#define PER_THREAD	64
static grant_ref_t many[THREADS * PER_THREAD];

static void *
thread_maps(void *opaque)
{
	xenops_t *d0 = ((void **)opaque)[0];
	const grant_ref_t *refs = ((void **)opaque)[1];
	bool w = ((void **)opaque)[2] != NULL;

	/* churn (slots freed and taken again by the others), then hold
	 * every ref once, one page per map */
	for (int round = 0; round < 20; round++) {
		void *p = xenops_map_grefs(d0, guest_id, PER_THREAD, refs, w);

		if (!p || xenops_unmap(d0, p, PER_THREAD) < 0)
			return (void *)1;
	}
	for (int i = 0; i < PER_THREAD; i++)
		if (!xenops_map_grefs(d0, guest_id, 1, &refs[i], w))
			return (void *)1;
	return NULL;
}

static int
child_threads(xenops_t *d0, void *arg)
{
	pthread_t t[THREADS];
	void *args[THREADS][3], *ret;
	int bad = 0;

	(void)arg;
	for (int i = 0; i < THREADS; i++) {
		args[i][0] = d0;
		args[i][1] = &many[i * PER_THREAD];
		args[i][2] = (i & 1) ? d0 : NULL;	/* odd threads writable */
		if (pthread_create(&t[i], NULL, thread_maps, args[i]))
			return 1;
	}
	for (int i = 0; i < THREADS; i++)
		if (pthread_join(t[i], &ret) || ret)
			bad = 1;
	return bad;
}

static int
test_killed_threads(void)
{
	uint8_t *g[THREADS];
	int fd;
	pid_t pid;

	for (int i = 0; i < THREADS; i++) {
		g[i] = xenops_share_pages(guest, 0, PER_THREAD, true,
					  &many[i * PER_THREAD]);
		T_CHECK(g[i], "share: %m");
	}
	pid = mapper(child_threads, NULL, &fd);
	T_CHECK(pid > 0, "fork: %m");
	T_CHECK(ready(fd) == 'R', "the mapping threads failed");
	for (int i = 0; i < THREADS * PER_THREAD; i++) {
		bool w = (i / PER_THREAD) & 1;

		T_CHECK(word(many[i]) == (W_RW | (w ? W_W : W_R)) &&
			pin(many[i]) == PINS(1, w ? 1 : 0),
			"ref %u: %#x pin %#x", many[i], word(many[i]), pin(many[i]));
	}
	kill_wait(pid);
	for (int i = 0; i < THREADS * PER_THREAD; i++) {
		T_CHECK(pin_becomes(many[i], 0), "ref %u still pinned", many[i]);
		T_CHECK(word(many[i]) == W_RW, "ref %u: %#x", many[i], word(many[i]));
	}
	for (int i = 0; i < THREADS; i++)
		T_CHECK(xenops_unshare_pages(guest, g[i], PER_THREAD) == 0, "unshare");
	return 0;
}

/* ---- what was unmapped is not released again ---- */

static grant_ref_t shared_ref;

static int
child_map_unmap(xenops_t *d0, void *arg)
{
	uint8_t buf[16];
	struct xenops_copy_seg seg = { .gref = shared_ref, .len = 16, .local = buf };
	void *p = xenops_map_grefs(d0, guest_id, 1, &shared_ref, true);

	if (!p || xenops_unmap(d0, p, 1) < 0 ||
	    xenops_grant_copy(d0, guest_id, true, 1, &seg) < 0)
		return 1;
	if (arg) {		/* a normal close, then exit */
		xenops_close(d0);
		_exit(0);
	}
	return 0;
}

static int
test_unmapped_not_released(void)
{
	xenops_t *d0 = t_open(0);
	uint8_t *g, *p;
	int fd, st;
	pid_t pid;

	g = xenops_share_pages(guest, 0, 1, true, &shared_ref);
	T_CHECK(g, "share: %m");
	/* We hold a map of the same kind all along: an entry the mappers
	 * failed to clear would find our pin to release. */
	p = xenops_map_grefs(d0, guest_id, 1, &shared_ref, true);
	T_CHECK(p, "map: %m");
	/* killed after unmapping */
	pid = mapper(child_map_unmap, NULL, &fd);
	T_CHECK(pid > 0 && ready(fd) == 'R', "the mapper failed");
	kill_wait(pid);
	T_CHECK(sync_xensim() == 0, "xensim");
	T_CHECK(word(shared_ref) == (W_RW | W_W) && pin(shared_ref) == PINS(1, 1),
		"after a killed mapper that had unmapped: %#x pin %#x",
		word(shared_ref), pin(shared_ref));
	/* closed its handle, then exited */
	pid = fork();
	T_CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		xenops_t *c = t_open(0);

		child_map_unmap(c, c);
		_exit(1);
	}
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		WEXITSTATUS(st) == 0, "the closing mapper failed: %#x", st);
	T_CHECK(sync_xensim() == 0, "xensim");
	T_CHECK(word(shared_ref) == (W_RW | W_W) && pin(shared_ref) == PINS(1, 1),
		"after a mapper that closed: %#x pin %#x",
		word(shared_ref), pin(shared_ref));
	T_CHECK(xenops_unmap(d0, p, 1) == 0, "unmap");
	T_CHECK(word(shared_ref) == W_RW && pin(shared_ref) == 0,
		"after our unmap: %#x pin %#x", word(shared_ref), pin(shared_ref));
	T_CHECK(xenops_unshare_pages(guest, g, 1) == 0, "unshare");
	xenops_close(d0);
	return 0;
}

/* ---- a ledger that lies ---- */

static int
test_bad_ledger(void)
{
	xenops_t *d0 = t_open(0);
	grant_ref_t r[4];
	uint8_t *g, *p0, *p1, *p3;
	struct hv_ledger_hdr hdr = { .magic = HV_LEDGER_MAGIC,
				     .version = HV_PROTO_VERSION,
				     .used = 0xffffffffu };
	uint32_t e[16];
	unsigned int n = 0;
	int fd, lfd, lfd2, pfd[2];

	g = xenops_share_pages(guest, 0, 4, true, r);
	T_CHECK(g, "share: %m");
	p0 = xenops_map_grefs(d0, guest_id, 1, &r[0], false);	/* read pin */
	p1 = xenops_map_grefs(d0, guest_id, 1, &r[1], true);	/* writable */
	p3 = xenops_map_grefs(d0, guest_id, 1, &r[3], true);	/* the witness */
	T_CHECK(p0 && p1 && p3, "map: %m");

	e[n++] = HV_LEDGER_ENTRY(guest_id, r[0], true);	/* no writable pin */
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[1], false);	/* no read-only pin */
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[2], false);	/* no pin at all */
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[2], true);
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[2], true);
	e[n++] = HV_LEDGER_ENTRY(guest_id, HV_NR_GRANTS - 1, false);
	e[n++] = HV_LEDGER_ENTRY(HV_MAX_DOMID, r[0], false);	/* no such domain */
	e[n++] = r[0];						/* not valid */
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[0], false) | (1u << 29);
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[0], false) | (1u << 30);
	e[n++] = 0xffffffffu;
	/* Last, a pin this ledger does not own but that exists: a dom0
	 * ledger is checked against the counts, not against its owner.
	 * Once it is released, every entry has been looked at. */
	e[n++] = HV_LEDGER_ENTRY(guest_id, r[3], true);

	lfd = memfd_create("bad-ledger", MFD_CLOEXEC);
	T_CHECK(lfd >= 0 && ftruncate(lfd, sizeof(struct hv_ledger)) == 0 &&
		pwrite(lfd, &hdr, sizeof(hdr), 0) == sizeof(hdr) &&
		pwrite(lfd, e, sizeof(e[0]) * n, offsetof(struct hv_ledger, slot)) ==
		(ssize_t)(sizeof(e[0]) * n), "ledger: %m");

	/* Refusals first: a domU may not, a pipe is not a ledger. */
	fd = raw_connect(guest_id);
	T_CHECK(fd >= 0 && hello(fd, guest_id) == 0, "hello dom%u", guest_id);
	T_CHECK(call(fd, HV_OP_PIN_LEDGER, 0, 0, lfd, NULL, 0) == -EPERM,
		"a domU ledger");
	close(fd);
	T_CHECK(pipe(pfd) == 0, "pipe");
	fd = raw_connect(0);
	T_CHECK(fd >= 0 && hello(fd, 0) == 0, "hello");
	T_CHECK(call(fd, HV_OP_PIN_LEDGER, 0, 0, pfd[0], NULL, 0) == 1000,
		"a pipe as ledger");
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	/* A ledger that is cut short after it was handed over. */
	lfd2 = memfd_create("short-ledger", MFD_CLOEXEC);
	T_CHECK(lfd2 >= 0 && ftruncate(lfd2, sizeof(struct hv_ledger)) == 0 &&
		pwrite(lfd2, &hdr, sizeof(hdr), 0) == sizeof(hdr), "ledger: %m");
	fd = raw_connect(0);
	T_CHECK(fd >= 0 && hello(fd, 0) == 0, "hello");
	T_CHECK(call(fd, HV_OP_PIN_LEDGER, 0, 0, lfd2, NULL, 0) == 0, "short ledger");
	T_CHECK(ftruncate(lfd2, 10) == 0, "truncate");
	close(fd);
	close(lfd2);

	/* The lying one, and a second one on the same connection. */
	fd = raw_connect(0);
	T_CHECK(fd >= 0 && hello(fd, 0) == 0, "hello");
	T_CHECK(call(fd, HV_OP_PIN_LEDGER, 0, 0, lfd, NULL, 0) == 0, "ledger");
	T_CHECK(call(fd, HV_OP_PIN_LEDGER, 0, 0, lfd, NULL, 0) == -EEXIST,
		"a second ledger");
	close(fd);
	close(lfd);
	T_CHECK(pin_becomes(r[3], 0), "the witness was not released: %#x", pin(r[3]));
	T_CHECK(word(r[3]) == W_RW, "the witness: %#x", word(r[3]));
	/* Everything else as it was: nothing below zero, no flag lost. */
	T_CHECK(word(r[0]) == (W_RW | W_R) && pin(r[0]) == PINS(1, 0),
		"r[0]: %#x pin %#x", word(r[0]), pin(r[0]));
	T_CHECK(word(r[1]) == (W_RW | W_W) && pin(r[1]) == PINS(1, 1),
		"r[1]: %#x pin %#x", word(r[1]), pin(r[1]));
	T_CHECK(word(r[2]) == W_RW && pin(r[2]) == 0,
		"r[2]: %#x pin %#x", word(r[2]), pin(r[2]));
	T_CHECK(pin(HV_NR_GRANTS - 1) == 0, "ref %u: pin %#x", HV_NR_GRANTS - 1,
		pin(HV_NR_GRANTS - 1));
	T_CHECK(sync_xensim() == 0, "xensim stopped serving");
	T_CHECK(xenops_unmap(d0, p0, 1) == 0 && xenops_unmap(d0, p1, 1) == 0,
		"unmap");
	/* r[3]'s pin is gone already: the unmap says so, changes nothing */
	T_CHECK(xenops_unmap(d0, p3, 1) == 0, "unmap of the witness");
	for (int i = 0; i < 4; i++)
		T_CHECK(word(r[i]) == W_RW && pin(r[i]) == 0, "r[%d]: %#x pin %#x",
			i, word(r[i]), pin(r[i]));
	T_CHECK(xenops_unshare_pages(guest, g, 4) == 0, "unshare");
	xenops_close(d0);
	return 0;
}

/* ---- a process that died holding a BUSY bit ---- */

/*
 * What a mapper leaves when it dies inside a take or a release, written
 * by hand on a raw connection with a ledger (closing it is the death),
 * one ref per instant of hv-proto.h's sequences: xensim finishes or
 * undoes each so that the counts are exact and the flags match them,
 * and leaves alone a BUSY that is not the dead one's.
 */
#define NR_DIE 9
static int
test_died_mid_transition(void)
{
	xenops_t *d0 = t_open(0);
	grant_ref_t r[NR_DIE];
	uint8_t *g, *p1, *pw;
	struct hv_ledger_hdr hdr = { .magic = HV_LEDGER_MAGIC,
				     .version = HV_PROTO_VERSION, .used = NR_DIE };
	int fds[4] = { -1, -1, -1, -1 };
	struct hv_active *wact;
	struct hv_gnt *wgnt;
	uint32_t *w[NR_DIE], e[NR_DIE] = { 0 }, tok, other;
	int fd, lfd;

	g = xenops_share_pages(guest, 0, NR_DIE, true, r);
	T_CHECK(g, "share: %m");
	p1 = xenops_map_grefs(d0, guest_id, 1, &r[1], false);	/* a read pin */
	pw = xenops_map_grefs(d0, guest_id, 1, &r[8], true);	/* the witness */
	T_CHECK(p1 && pw, "map: %m");

	fd = raw_connect(0);
	T_CHECK(fd >= 0 && hello(fd, 0) == 0, "hello");
	T_CHECK(call(fd, HV_OP_GET_DOMAIN, guest_id, 0, -1, fds, 4) == 0 &&
		fds[3] >= 0, "tables");
	wact = mmap(NULL, sizeof(struct hv_active) * HV_NR_GRANTS,
		    PROT_READ | PROT_WRITE, MAP_SHARED, fds[3], 0);
	wgnt = mmap(NULL, sizeof(struct hv_gnt), PROT_READ | PROT_WRITE,
		    MAP_SHARED, fds[0], 0);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
	T_CHECK(wact != MAP_FAILED && wgnt != MAP_FAILED, "map act/gnt: %m");
	for (int i = 0; i < NR_DIE; i++)
		w[i] = (uint32_t *)&wgnt->table[r[i]];
	lfd = memfd_create("dying-ledger", MFD_CLOEXEC);
	T_CHECK(lfd >= 0 && ftruncate(lfd, sizeof(struct hv_ledger)) == 0 &&
		pwrite(lfd, &hdr, sizeof(hdr), 0) == sizeof(hdr), "ledger: %m");
	T_CHECK(call(fd, HV_OP_PIN_LEDGER, 0, 0, lfd, NULL, 0) == 0, "ledger");
	tok = last_arg;
	T_CHECK(tok >= 1 && tok <= HV_OWN_TOKEN_MAX, "token %u", tok);
	other = tok == 1 ? 2 : 1;	/* some live mapper's */

#define ENT(i)		HV_LEDGER_ENTRY(guest_id, r[i], true)
#define TAKE		HV_LEDGER_TRANS
#define REL		(HV_LEDGER_TRANS | HV_LEDGER_RELEASING)
#define SET(i, count, owner)						\
	__atomic_store_n(&wact[r[i]].pin,				\
			 HV_PIN_WORD((count) | HV_PIN_BUSY, owner),	\
			 __ATOMIC_RELEASE)
#define FLAGS(i, f)	__atomic_fetch_or(w[i], (f), __ATOMIC_ACQ_REL)
	/* r[0]: a writable take, flags set, not counted yet */
	e[0] = ENT(0) | TAKE;
	SET(0, 0, HV_OWN(tok, 0, 0));
	FLAGS(0, GTF_reading | GTF_writing);
	/* r[1]: a writable take over our read pin, not counted yet */
	e[1] = ENT(1) | TAKE;
	SET(1, PINS(1, 0), HV_OWN(tok, 1, 0));
	FLAGS(1, GTF_writing);
	/* r[2]: the release of its writable pin, begun */
	e[2] = ENT(2) | REL;
	SET(2, PINS(1, 1), HV_OWN(tok, 2, 0));
	FLAGS(2, GTF_reading | GTF_writing);
	/* r[3]: its take waits for a live mapper's BUSY */
	e[3] = ENT(3) | TAKE;
	SET(3, PINS(1, 1), HV_OWN(other, 5, 0));
	FLAGS(3, GTF_reading | GTF_writing);
	/* r[4]: the release of its writable pin, killed before its BUSY */
	e[4] = ENT(4) | REL;
	__atomic_store_n(&wact[r[4]].pin, (uint64_t)PINS(1, 1), __ATOMIC_RELEASE);
	FLAGS(4, GTF_reading | GTF_writing);
	/* r[5]: a take counted, not yet recorded */
	e[5] = ENT(5) | TAKE;
	SET(5, PINS(1, 1), HV_OWN(tok, 5, 1));
	FLAGS(5, GTF_reading | GTF_writing);
	/* r[6]: a take counted and recorded, BUSY not yet dropped */
	e[6] = ENT(6);
	SET(6, PINS(1, 1), HV_OWN(tok, 6, 1));
	FLAGS(6, GTF_reading | GTF_writing);
	/* r[7]: a release counted and its slot cleared, BUSY not dropped */
	e[7] = 0;
	SET(7, 0, HV_OWN(tok, 7, 1));
	/* last: the witness, a plain entry for our writable pin: released
	 * after everything above */
	e[8] = ENT(8);
#undef ENT
#undef TAKE
#undef REL
#undef SET
#undef FLAGS
	T_CHECK(pwrite(lfd, e, sizeof(e), offsetof(struct hv_ledger, slot)) ==
		sizeof(e), "ledger entries: %m");
	close(lfd);
	close(fd);	/* it dies */

	T_CHECK(pin_becomes(r[8], 0), "the witness was not released: %#x", pin(r[8]));
	T_CHECK(word(r[0]) == W_RW && pin(r[0]) == 0,
		"take undone: %#x pin %#x", word(r[0]), pin(r[0]));
	T_CHECK(word(r[1]) == (W_RW | W_R) && pin(r[1]) == PINS(1, 0),
		"take over a read pin undone: %#x pin %#x", word(r[1]), pin(r[1]));
	T_CHECK(word(r[2]) == W_RW && pin(r[2]) == 0,
		"release finished: %#x pin %#x", word(r[2]), pin(r[2]));
	T_CHECK(word(r[3]) == (W_RW | W_W) &&
		__atomic_load_n(&wact[r[3]].pin, __ATOMIC_ACQUIRE) ==
		HV_PIN_WORD(PINS(1, 1) | HV_PIN_BUSY, HV_OWN(other, 5, 0)),
		"another's BUSY: %#x pin %#x", word(r[3]), pin(r[3]));
	T_CHECK(word(r[4]) == W_RW && pin(r[4]) == 0,
		"release before its BUSY: %#x pin %#x", word(r[4]), pin(r[4]));
	T_CHECK(word(r[5]) == W_RW && pin(r[5]) == 0,
		"take counted, not recorded: %#x pin %#x", word(r[5]), pin(r[5]));
	T_CHECK(word(r[6]) == W_RW && pin(r[6]) == 0,
		"take recorded: %#x pin %#x", word(r[6]), pin(r[6]));
	T_CHECK(word(r[7]) == W_RW && pin(r[7]) == 0,
		"release counted: %#x pin %#x", word(r[7]), pin(r[7]));
	/* the live mapper of r[3] ends its operation: gone again */
	__atomic_fetch_and(w[3], ~(uint32_t)(GTF_reading | GTF_writing),
			   __ATOMIC_RELEASE);
	__atomic_store_n(&wact[r[3]].pin, 0, __ATOMIC_RELEASE);
	munmap(wact, sizeof(struct hv_active) * HV_NR_GRANTS);
	munmap(wgnt, sizeof(struct hv_gnt));
	T_CHECK(xenops_unmap(d0, p1, 1) == 0, "unmap");
	/* the witness's pin is gone already: the unmap says so */
	T_CHECK(xenops_unmap(d0, pw, 1) == 0, "unmap of the witness");
	for (int i = 0; i < NR_DIE; i++)
		T_CHECK(word(r[i]) == W_RW && pin(r[i]) == 0, "r[%d]: %#x pin %#x",
			i, word(r[i]), pin(r[i]));
	T_CHECK(xenops_unshare_pages(guest, g, NR_DIE) == 0, "unshare");
	xenops_close(d0);
	return 0;
}

/* ---- a full ledger ---- */

static int
test_full_ledger(void)
{
	xenops_t *d0;
	grant_ref_t r[4];
	uint8_t *g, *p, *q, buf[16];
	struct xenops_copy_seg seg = { .len = 16, .local = buf };

	setenv("XENOPS_SIM_LEDGER_SLOTS", "3", 1);
	d0 = t_open(0);
	unsetenv("XENOPS_SIM_LEDGER_SLOTS");
	g = xenops_share_pages(guest, 0, 4, true, r);
	T_CHECK(g, "share: %m");
	seg.gref = r[3];
	p = xenops_map_grefs(d0, guest_id, 2, r, true);
	T_CHECK(p, "map 2 of 3: %m");
	errno = 0;
	q = xenops_map_grefs(d0, guest_id, 2, &r[2], true);
	T_CHECK(!q && errno == ENOSPC, "map beyond the ledger: %p errno %d", q, errno);
	T_CHECK(word(r[2]) == W_RW && pin(r[2]) == 0, "r[2] after ENOSPC: %#x pin %#x",
		word(r[2]), pin(r[2]));
	T_CHECK(xenops_grant_copy(d0, guest_id, true, 1, &seg) == 0, "copy: %d",
		seg.status);
	q = xenops_map_grefs(d0, guest_id, 1, &r[2], true);
	T_CHECK(q, "map the third: %m");
	T_CHECK(xenops_grant_copy(d0, guest_id, true, 1, &seg) == -ENOSPC &&
		seg.status == -ENOSPC, "copy with a full ledger: %d", seg.status);
	T_CHECK(word(r[3]) == W_RW && pin(r[3]) == 0, "r[3]: %#x pin %#x",
		word(r[3]), pin(r[3]));
	T_CHECK(xenops_unmap(d0, p, 2) == 0, "unmap");
	T_CHECK(xenops_grant_copy(d0, guest_id, true, 1, &seg) == 0, "copy again");
	T_CHECK(xenops_unmap(d0, q, 1) == 0, "unmap");
	T_CHECK(xenops_unshare_pages(guest, g, 4) == 0, "unshare");
	xenops_close(d0);
	return 0;
}

int
main(int argc, char **argv)
{
	int fails = 0;

	dir = getenv("XENSIM_DIR");
	if (argc != 2 || !dir) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR test-ledger DOMID\n");
		return T_EXIT_FAIL;
	}
	guest_id = strtoul(argv[1], NULL, 10);
	guest = t_open(guest_id);
	if (watch_open() < 0) {
		fprintf(stderr, "cannot watch dom%u's tables: %s\n", guest_id,
			strerror(errno));
		return T_EXIT_FAIL;
	}
	fails += t_run("killed_mapper", test_killed_mapper);
	fails += t_run("killed_mid_copy", test_killed_mid_copy);
	fails += t_run("killed_threads", test_killed_threads);
	fails += t_run("unmapped_not_released", test_unmapped_not_released);
	fails += t_run("bad_ledger", test_bad_ledger);
	fails += t_run("died_mid_transition", test_died_mid_transition);
	fails += t_run("full_ledger", test_full_ledger);
	xenops_close(guest);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
