/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-hv-hostile.c: xensim's hv.sock against malformed and forbidden
 * requests (the trust boundary of sim/hv.c).  Each bad request gets an
 * error answer or the connection dropped; xensim keeps serving.
 *
 *   XENSIM_DIR=DIR test-hv-hostile DOMID
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "compiler.h"
#include "hv-proto.h"
#include "t-common.h"

static uint32_t guest_id;
static const char *dir;

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

/* Send raw bytes (and maybe one fd); return the answer's ret, or
 * 1000 if the connection was dropped, -1000 on a local error. */
static int
exchange(int fd, const void *buf, size_t len, int sfd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct hv_rsp rsp;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	ssize_t n;

	if (sfd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.b;
		msg.msg_controllen = sizeof(u.b);
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
	n = recv(fd, &rsp, sizeof(rsp), 0);
	if (n == 0 || (n < 0 && errno == ECONNRESET))
		return 1000;
	if (n != sizeof(rsp))
		return -1000;
	return rsp.ret;
}

static int
hello(int fd, uint32_t domid)
{
	struct hv_req req = { .op = HV_OP_HELLO, .domid = domid,
			      .arg = HV_PROTO_VERSION };

	return exchange(fd, &req, sizeof(req), -1);
}

static int
test_malformed(void)
{
	static const uint8_t junk[64] = { 0xff, 0xfe };
	struct hv_req req = { .op = HV_OP_GET_DOMAIN };
	int fd, rc;

	/* Short, long, empty-ish messages: dropped. */
	for (size_t len = 1; len <= sizeof(junk); len *= 4) {
		fd = raw_connect(0);
		T_CHECK(fd >= 0, "connect: %m");
		rc = exchange(fd, junk, len, -1);
		T_CHECK(rc == 1000, "%zu junk bytes: %d", len, rc);
		close(fd);
	}
	/* A request before HELLO: dropped. */
	fd = raw_connect(0);
	rc = exchange(fd, &req, sizeof(req), -1);
	T_CHECK(rc == 1000, "request before hello: %d", rc);
	close(fd);
	/* Wrong version, or claiming another domain: refused. */
	fd = raw_connect(0);
	req = (struct hv_req){ .op = HV_OP_HELLO, .arg = 99 };
	rc = exchange(fd, &req, sizeof(req), -1);
	T_CHECK(rc == -EPROTO, "bad version: %d", rc);
	close(fd);
	fd = raw_connect(guest_id);
	T_CHECK(fd >= 0, "connect dom%u: %m", guest_id);
	rc = hello(fd, 0);
	T_CHECK(rc == -EACCES, "domU claiming dom0: %d", rc);
	close(fd);
	/* Unknown op; an fd with a request that takes none: dropped. */
	fd = raw_connect(0);
	T_CHECK(hello(fd, 0) == 0, "hello");
	req = (struct hv_req){ .op = 77 };
	T_CHECK(exchange(fd, &req, sizeof(req), -1) == 1000, "unknown op");
	close(fd);
	fd = raw_connect(0);
	T_CHECK(hello(fd, 0) == 0, "hello");
	req = (struct hv_req){ .op = HV_OP_DOMAIN_ALIVE };
	T_CHECK(exchange(fd, &req, sizeof(req), 0) == 1000, "stray fd");
	close(fd);
	return 0;
}

static int
test_forbidden(void)
{
	struct hv_req req;
	int fd, pfd[2], rc;

	/* A domU may not fetch another domain's memory. */
	fd = raw_connect(guest_id);
	T_CHECK(hello(fd, guest_id) == 0, "hello");
	req = (struct hv_req){ .op = HV_OP_GET_DOMAIN, .domid = 0 };
	rc = exchange(fd, &req, sizeof(req), -1);
	T_CHECK(rc == -EPERM, "domU fetching dom0: %d", rc);
	/* Event channel ops need a registered eventfd; a pipe is not one. */
	req = (struct hv_req){ .op = HV_OP_BIND_UNBOUND, .domid = 0 };
	T_CHECK(exchange(fd, &req, sizeof(req), -1) == 1000,
		"bind without an eventfd");
	close(fd);
	T_CHECK(pipe(pfd) == 0, "pipe");
	fd = raw_connect(guest_id);
	T_CHECK(hello(fd, guest_id) == 0, "hello");
	req = (struct hv_req){ .op = HV_OP_EVTCHN_REGISTER };
	T_CHECK(exchange(fd, &req, sizeof(req), pfd[1]) == 1000,
		"register a pipe as eventfd");
	close(fd);
	close(pfd[0]);
	close(pfd[1]);
	/* A domU xenops handle: no mapping or copying of others' grants. */
	{
		xenops_t *g = t_open(guest_id);
		grant_ref_t ref = 8;
		uint8_t b[8];
		struct xenops_copy_seg seg = { .gref = 8, .len = 8, .local = b };

		errno = 0;
		T_CHECK(!xenops_map_grefs(g, 0, 1, &ref, false) && errno == EPERM,
			"domU map: errno %d", errno);
		T_CHECK(xenops_grant_copy(g, 0, false, 1, &seg) == -EPERM,
			"domU copy: %d", seg.status);
		xenops_close(g);
	}
	return 0;
}

/* Fetch our own domain's gnt table the way xenops-sim does. */
static struct hv_gnt *
guest_table(int fd)
{
	struct hv_req req = { .op = HV_OP_GET_DOMAIN, .domid = guest_id };
	union {
		char b[CMSG_SPACE(sizeof(int) * HV_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct hv_rsp rsp;
	struct iovec iov = { .iov_base = &rsp, .iov_len = sizeof(rsp) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = u.b, .msg_controllen = sizeof(u.b) };
	struct cmsghdr *cm;
	int fds[HV_MAX_FDS];
	void *p;

	if (send(fd, &req, sizeof(req), MSG_NOSIGNAL) != sizeof(req) ||
	    recvmsg(fd, &msg, MSG_CMSG_CLOEXEC) != sizeof(rsp) || rsp.ret < 0)
		return NULL;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || rsp.nfds < 1 || rsp.nfds > HV_MAX_FDS)
		return NULL;
	memcpy(fds, CMSG_DATA(cm), sizeof(int) * rsp.nfds);
	p = mmap(NULL, sizeof(struct hv_gnt), PROT_READ | PROT_WRITE,
		 MAP_SHARED, fds[0], 0);
	for (unsigned int i = 0; i < rsp.nfds; i++)
		close(fds[i]);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * A guest that writes its grant table by hand: a grant of a frame
 * outside its RAM, or of another type, is refused (-EINVAL), and dom0
 * never touches memory beyond the domain's.
 */
static int
test_hostile_entries(void)
{
	xenops_t *d0 = t_open(0);
	int fd = raw_connect(guest_id);
	struct hv_gnt *g;
	static const struct {
		uint32_t frame;
		uint16_t flags;
	} bad[] = {
		{ HV_NR_FRAMES, GTF_permit_access },
		{ 0xffffffffu, GTF_permit_access },
		{ 1, GTF_accept_transfer },
		{ 1, GTF_transitive },
		{ 1, GTF_invalid | GTF_reading },
	};
	const grant_ref_t ref = HV_NR_GRANTS - 1;	/* never allocated here */

	T_CHECK(fd >= 0 && hello(fd, guest_id) == 0, "connect");
	g = guest_table(fd);
	T_CHECK(g, "guest table: %m");
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint8_t b[8];
		struct xenops_copy_seg seg = { .gref = ref, .len = 8, .local = b };
		void *p;

		g->table[ref].frame = bad[i].frame;
		__atomic_store_n((uint32_t *)&g->table[ref],
				 bad[i].flags, __ATOMIC_RELEASE);
		errno = 0;
		p = xenops_map_grefs(d0, guest_id, 1, &ref, false);
		T_CHECK(!p && errno == EINVAL, "entry %zu: map %p errno %d",
			i, p, errno);
		T_CHECK(xenops_grant_copy(d0, guest_id, false, 1, &seg) == -EINVAL,
			"entry %zu: copy status %d", i, seg.status);
		/* A refused map leaves no GTF_reading behind. */
		T_CHECK((__atomic_load_n((uint32_t *)&g->table[ref],
					 __ATOMIC_ACQUIRE) &
			 (GTF_reading | GTF_writing)) ==
			(bad[i].flags & (GTF_reading | GTF_writing)),
			"entry %zu: flags left in use", i);
	}
	__atomic_store_n((uint32_t *)&g->table[ref], 0, __ATOMIC_RELEASE);
	munmap(g, sizeof(*g));
	close(fd);
	xenops_close(d0);
	return 0;
}

/* After all that, xensim still serves everybody. */
static int
test_still_serving(void)
{
	xenops_t *d0 = t_open(0), *g = t_open(guest_id);
	grant_ref_t ref;
	uint8_t *pg, *p;

	pg = xenops_share_pages(g, 0, 1, false, &ref);
	T_CHECK(pg, "share: %m");
	t_fill(pg, XEN_PAGE_SIZE, 5);
	p = xenops_map_grefs(d0, guest_id, 1, &ref, false);
	T_CHECK(p && t_check(p, XEN_PAGE_SIZE, 5) == 0, "map: %m");
	T_CHECK(xenops_unmap(d0, p, 1) == 0, "unmap");
	T_CHECK(xenops_unshare_pages(g, pg, 1) == 0, "unshare");
	xenops_close(g);
	xenops_close(d0);
	return 0;
}

int
main(int argc, char **argv)
{
	int fails = 0;

	dir = getenv("XENSIM_DIR");
	if (argc != 2 || !dir) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR test-hv-hostile DOMID\n");
		return T_EXIT_FAIL;
	}
	guest_id = strtoul(argv[1], NULL, 10);
	fails += t_run("malformed", test_malformed);
	fails += t_run("forbidden", test_forbidden);
	fails += t_run("hostile_entries", test_hostile_entries);
	fails += t_run("still_serving", test_still_serving);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
