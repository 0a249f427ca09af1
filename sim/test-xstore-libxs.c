/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-xstore-libxs.c: xensim's xenstore through the real libxenstore.
 *
 * Run by test-xensim.sh with a running xensim: XENSIM_DIR set, the
 * xensim-ctl of the build tree in PATH.  Exit 0 pass, 1 fail.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <xenstore.h>
#include <xen/io/xs_wire.h>

#include "compiler.h"

static const char *dir;

#define CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: %s: check failed: %s (errno %s)\n", \
			__FILE__, __LINE__, __func__, #cond,		\
			strerror(errno));				\
		return -1;						\
	}								\
} while (0)

static struct xs_handle *
open_as(unsigned int domid)
{
	char path[4096];

	if (domid == 0)
		snprintf(path, sizeof(path), "%s/xenstore.sock", dir);
	else
		snprintf(path, sizeof(path), "%s/dom%u/xenstore.sock", dir,
			 domid);
	setenv("XENSTORED_PATH", path, 1);
	return xs_open(0);
}

/* The value at path must be exactly want. */
static int
read_is(struct xs_handle *h, xs_transaction_t t, const char *path,
	const char *want)
{
	unsigned int len;
	char *v = xs_read(h, t, path, &len);
	int ok = v && len == strlen(want) && memcmp(v, want, len) == 0;

	if (!ok)
		fprintf(stderr, "read %s: got '%s' (%s), wanted '%s'\n", path,
			v ? v : "(null)", v ? "" : strerror(errno), want);
	free(v);
	return ok;
}

static int
read_fails(struct xs_handle *h, const char *path, int err)
{
	unsigned int len;
	char *v;

	errno = 0;
	v = xs_read(h, XBT_NULL, path, &len);
	if (v || errno != err) {
		fprintf(stderr, "read %s: wanted errno %d, got %s / %s\n", path,
			err, v ? v : "(null)", strerror(errno));
		free(v);
		return 0;
	}
	return 1;
}

/* Next watch event within 5 s must be (path, token). */
static int
event_is(struct xs_handle *h, const char *path, const char *token)
{
	struct pollfd p = { .fd = xs_fileno(h), .events = POLLIN };
	char **vec;
	int ok;

	if (poll(&p, 1, 5000) != 1) {
		fprintf(stderr, "no watch event for %s within 5 s\n", path);
		return 0;
	}
	vec = xs_check_watch(h);
	if (!vec) {
		fprintf(stderr, "xs_check_watch: %s\n", strerror(errno));
		return 0;
	}
	ok = !strcmp(vec[XS_WATCH_PATH], path) &&
	     !strcmp(vec[XS_WATCH_TOKEN], token);
	if (!ok)
		fprintf(stderr, "event %s %s, wanted %s %s\n",
			vec[XS_WATCH_PATH], vec[XS_WATCH_TOKEN], path, token);
	free(vec);
	return ok;
}

/* No watch event in the next 200 ms. */
static int
no_event(struct xs_handle *h)
{
	struct pollfd p = { .fd = xs_fileno(h), .events = POLLIN };
	char **vec;

	if (poll(&p, 1, 200) == 0)
		return 1;
	vec = xs_check_watch(h);
	fprintf(stderr, "unexpected event %s\n", vec ? vec[0] : "?");
	free(vec);
	return 0;
}

static int
ctl(const char *args, char *out, size_t size)
{
	char cmd[4096];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "xensim-ctl --dir '%s' %s", dir, args);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(out, 1, size - 1, f);
	out[n] = '\0';
	return pclose(f) == 0 ? 0 : -1;
}

static int
test_round_trips(struct xs_handle *h)
{
	unsigned int n;
	char **dirents;

	CHECK(xs_write(h, XBT_NULL, "/t/a", "hello", 5));
	CHECK(read_is(h, XBT_NULL, "/t/a", "hello"));
	CHECK(xs_mkdir(h, XBT_NULL, "/t/d"));
	CHECK(read_is(h, XBT_NULL, "/t/d", ""));
	dirents = xs_directory(h, XBT_NULL, "/t", &n);
	CHECK(dirents && n == 2 && !strcmp(dirents[0], "a") &&
	      !strcmp(dirents[1], "d"));
	free(dirents);
	CHECK(xs_rm(h, XBT_NULL, "/t"));
	CHECK(read_fails(h, "/t/a", ENOENT));
	/* a directory too big for one XS_DIRECTORY: libxenstore falls back
	 * to XS_DIRECTORY_PART and must get every name, in order */
	for (unsigned int i = 0; i < 300; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/big/entry-with-a-long-name-%03u", i);
		CHECK(xs_write(h, XBT_NULL, p, "", 0));
	}
	dirents = xs_directory(h, XBT_NULL, "/big", &n);
	CHECK(dirents && n == 300);
	for (unsigned int i = 0; i < 300; i++) {
		char want[64];

		snprintf(want, sizeof(want), "entry-with-a-long-name-%03u", i);
		CHECK(!strcmp(dirents[i], want));
	}
	free(dirents);
	CHECK(xs_rm(h, XBT_NULL, "/big"));
	CHECK(read_is(h, XBT_NULL, "/local/domain/0/name", "Domain-0"));
	CHECK(xs_is_domain_introduced(h, 0));
	CHECK(!xs_is_domain_introduced(h, 4242));
	return 0;
}

static int
test_domu(struct xs_handle *h0, unsigned int domid)
{
	struct xs_handle *u = open_as(domid);
	struct xs_permissions *perms;
	char path[64], *s;
	unsigned int n;

	CHECK(u);
	CHECK(read_fails(u, "/local/domain/0/name", EACCES));
	CHECK(!xs_write(u, XBT_NULL, "/local/domain/0/x", "1", 1) &&
	      errno == EACCES);
	CHECK(!xs_write(u, XBT_NULL, "/top", "1", 1) && errno == EACCES);
	snprintf(path, sizeof(path), "/local/domain/%u/name", domid);
	CHECK(read_is(u, XBT_NULL, path, "libxs-guest"));
	CHECK(!xs_write(u, XBT_NULL, path, "evil", 4) && errno == EACCES);
	CHECK(xs_write(u, XBT_NULL, "data/x", "42", 2));
	snprintf(path, sizeof(path), "/local/domain/%u/data/x", domid);
	CHECK(read_is(h0, XBT_NULL, path, "42"));
	perms = xs_get_permissions(h0, XBT_NULL, path, &n);
	CHECK(perms && n == 1 && perms[0].id == domid &&
	      perms[0].perms == XS_PERM_NONE);
	free(perms);
	s = xs_get_domain_path(u, domid);
	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	CHECK(s && !strcmp(s, path));
	free(s);
	xs_close(u);
	return 0;
}

static int
test_watch(struct xs_handle *h0, struct xs_handle *other)
{
	CHECK(xs_watch(h0, "/w", "tok"));
	CHECK(event_is(h0, "/w", "tok"));
	CHECK(no_event(h0));
	CHECK(xs_write(other, XBT_NULL, "/w/a", "1", 1));
	CHECK(event_is(h0, "/w/a", "tok"));
	CHECK(no_event(h0));
	CHECK(xs_write(other, XBT_NULL, "/elsewhere", "1", 1));
	CHECK(no_event(h0));
	CHECK(xs_rm(other, XBT_NULL, "/w"));
	CHECK(event_is(h0, "/w", "tok"));
	CHECK(no_event(h0));
	CHECK(xs_unwatch(h0, "/w", "tok"));
	CHECK(xs_write(other, XBT_NULL, "/w/b", "1", 1));
	CHECK(no_event(h0));
	return 0;
}

static int
test_transaction(struct xs_handle *h0, struct xs_handle *other)
{
	xs_transaction_t t;
	unsigned int len, tries = 0;
	char *v;

	CHECK(xs_write(h0, XBT_NULL, "/tx/x", "0", 1));
	t = xs_transaction_start(h0);
	CHECK(t != XBT_NULL);
	v = xs_read(h0, t, "/tx/x", &len);
	CHECK(v);
	free(v);
	CHECK(xs_write(h0, t, "/tx/x", "mine", 4));
	CHECK(xs_write(other, XBT_NULL, "/tx/x", "theirs", 6));
	CHECK(!xs_transaction_end(h0, t, false) && errno == EAGAIN);
	CHECK(read_is(h0, XBT_NULL, "/tx/x", "theirs"));
	/* the usual retry loop */
	for (;;) {
		CHECK(++tries <= 2);
		t = xs_transaction_start(h0);
		CHECK(t != XBT_NULL);
		CHECK(read_is(h0, t, "/tx/x", "theirs"));
		CHECK(xs_write(h0, t, "/tx/x", "mine", 4));
		if (xs_transaction_end(h0, t, false))
			break;
		CHECK(errno == EAGAIN);
	}
	CHECK(tries == 1);
	CHECK(read_is(other, XBT_NULL, "/tx/x", "mine"));
	/* abort */
	t = xs_transaction_start(h0);
	CHECK(xs_rm(h0, t, "/tx"));
	CHECK(xs_transaction_end(h0, t, true));
	CHECK(read_is(other, XBT_NULL, "/tx/x", "mine"));
	return 0;
}

static int
test_release(struct xs_handle *h0, unsigned int domid)
{
	struct xs_handle *u = open_as(domid);
	char args[64], out[256], path[64];
	unsigned int len;
	char *v;

	CHECK(u);
	snprintf(args, sizeof(args), "%u", domid);
	CHECK(read_is(u, XBT_NULL, "domid", args));
	CHECK(xs_watch(h0, "@releaseDomain", "rel"));
	CHECK(event_is(h0, "@releaseDomain", "rel"));
	snprintf(args, sizeof(args), "destroy-domain %u", domid);
	CHECK(ctl(args, out, sizeof(out)) == 0);
	CHECK(event_is(h0, "@releaseDomain", "rel"));
	CHECK(no_event(h0));
	snprintf(path, sizeof(path), "/local/domain/%u", domid);
	CHECK(read_fails(h0, path, ENOENT));
	CHECK(!xs_is_domain_introduced(h0, domid));
	/* the domain's connection is gone */
	v = xs_read(u, XBT_NULL, "name", &len);
	CHECK(v == NULL);
	xs_close(u);
	CHECK(xs_unwatch(h0, "@releaseDomain", "rel"));
	return 0;
}

static int
raw_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A domain gets 128 connections at most; dom0 is not limited. */
static int
test_conn_limit(void)
{
	int fds[129], extra;
	char out[64], path[4096], c;
	unsigned int domid;
	struct xs_handle *u;

	CHECK(ctl("create-domain many-conns", out, sizeof(out)) == 0 &&
	      sscanf(out, "%u", &domid) == 1);
	snprintf(path, sizeof(path), "%s/dom%u/xenstore.sock", dir, domid);
	for (int i = 0; i < 128; i++)
		CHECK((fds[i] = raw_connect(path)) >= 0);
	u = open_as(domid);	/* number 129: accepted, then closed */
	CHECK(u == NULL || !read_is(u, XBT_NULL, "domid", out));
	if (u)
		xs_close(u);
	close(fds[0]);
	extra = -1;
	/* the daemon notices the close asynchronously: retry a little */
	for (int i = 0; i < 50 && extra < 0; i++) {
		fds[128] = raw_connect(path);
		CHECK(fds[128] >= 0);
		struct pollfd p = { .fd = fds[128], .events = POLLIN };
		if (poll(&p, 1, 100) == 1 && read(fds[128], &c, 1) == 0) {
			close(fds[128]);	/* refused: try again */
			usleep(50000);
			continue;
		}
		extra = fds[128];
	}
	CHECK(extra >= 0);
	close(extra);
	for (int i = 1; i < 128; i++)
		close(fds[i]);
	snprintf(path, sizeof(path), "destroy-domain %u", domid);
	CHECK(ctl(path, out, sizeof(out)) == 0);
	return 0;
}

/*
 * Two processes each add 1 to a counter N times, each increment a
 * read-modify-write transaction retried on EAGAIN: no update may be lost.
 */
static int
increment(unsigned int n, unsigned int *retries)
{
	struct xs_handle *h = open_as(0);

	if (!h)
		return -1;
	for (unsigned int i = 0; i < n; i++) {
		for (;;) {
			xs_transaction_t t = xs_transaction_start(h);
			unsigned int len;
			char *v, buf[16];

			if (t == XBT_NULL)
				return -1;
			v = xs_read(h, t, "/counter", &len);
			if (!v)
				return -1;
			snprintf(buf, sizeof(buf), "%lu", strtoul(v, NULL, 10) + 1);
			free(v);
			if (!xs_write(h, t, "/counter", buf, strlen(buf)))
				return -1;
			if (xs_transaction_end(h, t, false))
				break;
			if (errno != EAGAIN)
				return -1;
			(*retries)++;
		}
	}
	xs_close(h);
	return 0;
}

static int
test_concurrent_increments(struct xs_handle *h0)
{
	const unsigned int n = 200;
	unsigned int retries = 0;
	int status;
	pid_t pid;

	CHECK(xs_write(h0, XBT_NULL, "/counter", "0", 1));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0)
		_exit(increment(n, &retries) == 0 ? 0 : 1);
	CHECK(increment(n, &retries) == 0);
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(read_is(h0, XBT_NULL, "/counter", "400"));
	printf("concurrent increments: %u EAGAIN retries in this process\n",
	       retries);
	return 0;
}

/* Raw socket: an oversized message gets XS_ERROR EINVAL, then EOF. */
static int
test_malformed(struct xs_handle *h0)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct xsd_sockmsg m = { .type = XS_READ, .req_id = 77,
				 .len = XENSTORE_PAYLOAD_MAX + 1 };
	char buf[256];
	size_t got = 0;
	ssize_t n;
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/xenstore.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sun,
				 sizeof(sun)) == 0);
	CHECK(write(fd, &m, sizeof(m)) == sizeof(m));
	while ((n = read(fd, buf + got, sizeof(buf) - got)) > 0)
		got += (size_t)n;
	close(fd);
	CHECK(got == sizeof(m) + 7);
	memcpy(&m, buf, sizeof(m));
	CHECK(m.type == XS_ERROR && m.req_id == 77 && m.len == 7 &&
	      !memcmp(buf + sizeof(m), "EINVAL", 7));
	CHECK(read_is(h0, XBT_NULL, "/local/domain/0/domid", "0"));
	return 0;
}

int
main(void)
{
	struct xs_handle *h0, *other;
	char out[256];
	unsigned int domid;
	int failed = 0;

	dir = getenv("XENSIM_DIR");
	if (!dir) {
		fprintf(stderr, "XENSIM_DIR not set\n");
		return 1;
	}
	h0 = open_as(0);
	other = open_as(0);
	if (!h0 || !other) {
		fprintf(stderr, "xs_open: %s\n", strerror(errno));
		return 1;
	}
	if (ctl("create-domain libxs-guest", out, sizeof(out)) < 0 ||
	    sscanf(out, "%u", &domid) != 1) {
		fprintf(stderr, "create-domain failed: %s\n", out);
		return 1;
	}
#define RUN(t) do {							\
	if ((t) < 0) { fprintf(stderr, "FAIL: %s\n", #t); failed = 1; }	\
	else printf("PASS: %s\n", #t);					\
} while (0)
	RUN(test_round_trips(h0));
	RUN(test_domu(h0, domid));
	RUN(test_watch(h0, other));
	RUN(test_transaction(h0, other));
	RUN(test_release(h0, domid));
	RUN(test_malformed(h0));
	RUN(test_concurrent_increments(h0));
	RUN(test_conn_limit());
	xs_close(h0);
	xs_close(other);
	return failed;
}
