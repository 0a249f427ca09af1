/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-grant.c: grant tables over xensim (XENOPS_SIM): share, map, copy
 * and every failure class of include/xenops.h.
 *
 *   XENSIM_DIR=DIR test-grant DOMID
 *
 * DOMID is an existing domU.  "dom0" and "the guest" are two xenops
 * handles (the cross-process tests fork a real guest process).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler.h"
#include "t-common.h"

#define PG XEN_PAGE_SIZE

static uint32_t guest_id;
static xenops_t *dom0;
static xenops_t *guest;

/* A guest process shares pages, dom0 (this process) maps them. */
static int
test_map_cross_process(void)
{
	int sv[2];
	pid_t pid;
	grant_ref_t refs[4];
	uint8_t *p;
	char c;
	int st;

	T_CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0, "%m");
	pid = fork();
	T_CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		/* The guest: its own process, its own handle. */
		xenops_t *g;
		uint8_t *mem;
		int rc = 1;

		close(sv[0]);
		g = t_open(guest_id);
		mem = xenops_share_pages(g, 0, 4, true, refs);
		if (!mem)
			_exit(2);
		t_fill(mem, 4 * PG, 42);
		if (write(sv[1], refs, sizeof(refs)) != sizeof(refs))
			_exit(3);
		/* Wait for dom0 to write back and unmap. */
		if (read(sv[1], &c, 1) != 1)
			_exit(4);
		if (t_check(mem, 4 * PG, 43) == 0 &&
		    xenops_unshare_pages(g, mem, 4) == 0)
			rc = 0;
		xenops_close(g);
		_exit(rc);
	}
	close(sv[1]);
	T_CHECK(read(sv[0], refs, sizeof(refs)) == sizeof(refs), "read refs");
	p = xenops_map_grefs(dom0, guest_id, 4, refs, true);
	T_CHECK(p, "map: %m");
	T_CHECK(t_check(p, 4 * PG, 42) == 0, "guest pattern differs at %zu",
		t_check(p, 4 * PG, 42) - 1);
	t_fill(p, 4 * PG, 43);
	T_CHECK(xenops_unmap(dom0, p, 4) == 0, "unmap");
	c = 'x';
	T_CHECK(write(sv[0], &c, 1) == 1, "write");
	T_CHECK(waitpid(pid, &st, 0) == pid, "waitpid");
	close(sv[0]);
	T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
		"guest process failed (status 0x%x)", st);
	return 0;
}

/* A grant to another domain is not ours to map or copy: -EINVAL. */
static int
test_wrong_domid(void)
{
	grant_ref_t ref;
	uint8_t buf[16];
	struct xenops_copy_seg seg = { .len = 16, .local = buf };
	void *g, *p;

	g = xenops_share_pages(guest, 5, 1, true, &ref);
	T_CHECK(g, "share: %m");
	errno = 0;
	p = xenops_map_grefs(dom0, guest_id, 1, &ref, false);
	T_CHECK(!p && errno == EINVAL, "map of a grant to dom5: %p errno %d",
		p, errno);
	seg.gref = ref;
	T_CHECK(xenops_grant_copy(dom0, guest_id, false, 1, &seg) == -EINVAL &&
		seg.status == -EINVAL, "copy: status %d", seg.status);
	T_CHECK(xenops_unshare_pages(guest, g, 1) == 0, "unshare");
	return 0;
}

/* A read-only grant: readable, never writable (-EPERM). */
static int
test_readonly(void)
{
	grant_ref_t ref;
	uint8_t buf[PG];
	struct xenops_copy_seg seg = { .len = PG, .local = buf };
	uint8_t *g, *p;

	g = xenops_share_pages(guest, 0, 1, false, &ref);
	T_CHECK(g, "share: %m");
	t_fill(g, PG, 7);
	errno = 0;
	p = xenops_map_grefs(dom0, guest_id, 1, &ref, true);
	T_CHECK(!p && errno == EPERM, "writable map of r/o grant: %p errno %d",
		p, errno);
	p = xenops_map_grefs(dom0, guest_id, 1, &ref, false);
	T_CHECK(p, "read-only map: %m");
	T_CHECK(t_check(p, PG, 7) == 0, "content");
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap");

	seg.gref = ref;
	T_CHECK(xenops_grant_copy(dom0, guest_id, true, 1, &seg) == -EPERM &&
		seg.status == -EPERM, "copy to r/o grant: status %d", seg.status);
	memset(buf, 0, sizeof(buf));
	T_CHECK(xenops_grant_copy(dom0, guest_id, false, 1, &seg) == 0 &&
		seg.status == 0, "copy from r/o grant: status %d", seg.status);
	T_CHECK(t_check(buf, PG, 7) == 0, "copied content");
	T_CHECK(xenops_unshare_pages(guest, g, 1) == 0, "unshare");
	return 0;
}

/* Refs never granted, reserved, or beyond the table: -EINVAL. */
static int
test_bad_ref(void)
{
	static const grant_ref_t bad[] = {
		0, 1, GNTTAB_NR_RESERVED_ENTRIES, 8191, 8192, 100000, 0xffffffffu,
	};
	uint8_t buf[8];

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct xenops_copy_seg seg = {
			.gref = bad[i], .len = 8, .local = buf,
		};
		void *p;

		errno = 0;
		p = xenops_map_grefs(dom0, guest_id, 1, &bad[i], false);
		T_CHECK(!p && errno == EINVAL, "map ref %u: %p errno %d",
			bad[i], p, errno);
		T_CHECK(xenops_grant_copy(dom0, guest_id, false, 1, &seg) ==
			-EINVAL && seg.status == -EINVAL,
			"copy ref %u: status %d", bad[i], seg.status);
	}
	/* A domain that does not exist. */
	errno = 0;
	T_CHECK(!xenops_map_grefs(dom0, 4242, 1, &bad[2], false) &&
		errno == ESRCH, "map from dom4242: errno %d", errno);
	/* A count out of range, an unmap of something never mapped. */
	errno = 0;
	T_CHECK(!xenops_map_grefs(dom0, guest_id, 0, bad, false) &&
		errno == EINVAL, "count 0: errno %d", errno);
	T_CHECK(xenops_unmap(dom0, buf, 1) == -EINVAL, "unmap of junk");
	return 0;
}

/* End access is refused while mapped, and then changes nothing. */
static int
test_unshare_busy(void)
{
	grant_ref_t refs[3];
	uint8_t *g, *p, *p2;

	g = xenops_share_pages(guest, 0, 3, true, refs);
	T_CHECK(g, "share: %m");
	t_fill(g, 3 * PG, 9);
	/* Map only the middle page: unshare of all three must fail whole. */
	p = xenops_map_grefs(dom0, guest_id, 1, &refs[1], false);
	T_CHECK(p, "map: %m");
	T_CHECK(xenops_unshare_pages(guest, g, 3) == -EBUSY, "unshare mapped");
	/* Nothing changed: all three still granted and intact. */
	p2 = xenops_map_grefs(dom0, guest_id, 3, refs, true);
	T_CHECK(p2, "map after refused unshare: %m");
	T_CHECK(t_check(p2, 3 * PG, 9) == 0, "content");
	T_CHECK(xenops_unmap(dom0, p2, 2) == -EINVAL, "unmap with wrong count");
	T_CHECK(xenops_unmap(dom0, p2, 3) == 0, "unmap");
	T_CHECK(xenops_unshare_pages(guest, g, 3) == -EBUSY, "still mapped once");
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap");
	T_CHECK(xenops_unmap(dom0, p, 1) == -EINVAL, "double unmap");
	T_CHECK(xenops_unshare_pages(guest, g, 3) == 0, "unshare");
	T_CHECK(xenops_unshare_pages(guest, g, 3) == -EINVAL, "double unshare");
	return 0;
}

/*
 * End access per request (a frontend without persistent grants): refused
 * while the backend maps any page of the range, then changes nothing;
 * an ended page cannot be mapped until it is granted again.
 */
static int
test_end_access(void)
{
	grant_ref_t refs[4], ro;
	uint8_t *g, *gro, *p;

	g = xenops_share_pages(guest, 0, 4, true, refs);
	T_CHECK(g, "share: %m");
	t_fill(g, 4 * PG, 5);
	p = xenops_map_grefs(dom0, guest_id, 1, &refs[2], false);
	T_CHECK(p, "map: %m");
	T_CHECK(xenops_end_access(guest, g + PG, 3) == -EBUSY, "end access while mapped");
	T_CHECK(xenops_end_access(guest, g + PG, 4) == -EINVAL, "range past the set");
	T_CHECK(xenops_end_access(guest, g + 1, 1) == -EINVAL, "not a page address");
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap");
	/* refused, so page 1 is still granted */
	p = xenops_map_grefs(dom0, guest_id, 1, &refs[1], true);
	T_CHECK(p, "page 1 still granted: %m");
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap");
	T_CHECK(xenops_end_access(guest, g + PG, 3) == 0, "end access");
	T_CHECK(xenops_end_access(guest, g + PG, 3) == 0, "end access twice");
	T_CHECK(!xenops_map_grefs(dom0, guest_id, 1, &refs[1], false) && errno == EINVAL,
		"map of an ended grant");
	p = xenops_map_grefs(dom0, guest_id, 1, &refs[0], true);
	T_CHECK(p, "page 0 untouched: %m");
	T_CHECK(xenops_end_access(guest, g, 1) == -EBUSY, "page 0 mapped");
	/* granting a page that is still granted (and mapped) changes nothing */
	T_CHECK(xenops_grant_again(guest, g, 4) == 0, "grant again");
	T_CHECK(xenops_end_access(guest, g, 1) == -EBUSY, "page 0 still mapped");
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap");
	p = xenops_map_grefs(dom0, guest_id, 4, refs, true);
	T_CHECK(p, "all granted again: %m");
	T_CHECK(t_check(p, 4 * PG, 5) == 0, "content");
	T_CHECK(xenops_unmap(dom0, p, 4) == 0, "unmap");
	T_CHECK(xenops_end_access(guest, g, 4) == 0, "end access");
	T_CHECK(xenops_unshare_pages(guest, g, 4) == 0, "unshare ended pages");
	/* a read-only grant comes back read-only */
	gro = xenops_share_pages(guest, 0, 1, false, &ro);
	T_CHECK(gro, "share ro: %m");
	T_CHECK(xenops_end_access(guest, gro, 1) == 0, "end access ro");
	T_CHECK(xenops_grant_again(guest, gro, 1) == 0, "grant again ro");
	T_CHECK(!xenops_map_grefs(dom0, guest_id, 1, &ro, true) && errno == EPERM,
		"ro grant mapped writable");
	p = xenops_map_grefs(dom0, guest_id, 1, &ro, false);
	T_CHECK(p, "ro map: %m");
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap");
	T_CHECK(xenops_unshare_pages(guest, gro, 1) == 0, "unshare");
	return 0;
}

/* One bad ref in a batch of 8: nothing stays mapped or flagged in use. */
static int
test_batch_all_or_nothing(void)
{
	grant_ref_t refs[8], other;
	void *g, *g5, *p;

	g = xenops_share_pages(guest, 0, 8, false, refs);
	g5 = xenops_share_pages(guest, 5, 1, false, &other);
	T_CHECK(g && g5, "share: %m");
	for (int bad = 0; bad < 8; bad += 3) {
		grant_ref_t batch[8];

		memcpy(batch, refs, sizeof(batch));
		batch[bad] = other;
		errno = 0;
		p = xenops_map_grefs(dom0, guest_id, 8, batch, false);
		T_CHECK(!p && errno == EINVAL, "bad at %d: %p errno %d",
			bad, p, errno);
		/* The writable case fails on the r/o grants: the first one. */
		errno = 0;
		p = xenops_map_grefs(dom0, guest_id, 8, batch, true);
		T_CHECK(!p && errno == (bad == 0 ? EINVAL : EPERM),
			"writable, bad at %d: errno %d", bad, errno);
	}
	/* No GTF_reading left behind: end access succeeds on all. */
	T_CHECK(xenops_unshare_pages(guest, g, 8) == 0, "unshare after failed batches");
	T_CHECK(xenops_unshare_pages(guest, g5, 1) == 0, "unshare");
	return 0;
}

/* Grant copy in both directions, with per-segment status. */
static int
test_copy(void)
{
	grant_ref_t refs[11], ro;
	uint8_t *g, *gro;
	static uint8_t local[11][PG], back[11][PG];
	struct xenops_copy_seg segs[11];

	g = xenops_share_pages(guest, 0, 11, true, refs);
	gro = xenops_share_pages(guest, 0, 1, false, &ro);
	T_CHECK(g && gro, "share: %m");
	for (int i = 0; i < 11; i++) {
		t_fill(local[i], PG, 100 + i);
		segs[i] = (struct xenops_copy_seg){
			.gref = refs[i], .offset = 0, .len = PG, .local = local[i],
		};
	}
	/* Sub-page segments too: offset 512, 1024 bytes into page 3. */
	segs[3].offset = 512;
	segs[3].len = 1024;
	T_CHECK(xenops_grant_copy(dom0, guest_id, true, 11, segs) == 0,
		"copy to guest");
	for (int i = 0; i < 11; i++) {
		T_CHECK(segs[i].status == 0, "seg %d status %d", i, segs[i].status);
		if (i == 3)
			continue;
		T_CHECK(t_check(g + i * PG, PG, 100 + i) == 0, "guest page %d", i);
	}
	T_CHECK(memcmp(g + 3 * PG + 512, local[3], 1024) == 0, "guest page 3");
	T_CHECK(g[3 * PG + 511] == 0 && g[3 * PG + 1536] == 0,
		"copy wrote outside its segment");

	/* Back out, into fresh buffers. */
	for (int i = 0; i < 11; i++) {
		t_fill(g + i * PG, PG, 200 + i);
		segs[i].local = back[i];
		segs[i].offset = 0;
		segs[i].len = PG;
	}
	T_CHECK(xenops_grant_copy(dom0, guest_id, false, 11, segs) == 0,
		"copy from guest");
	for (int i = 0; i < 11; i++)
		T_CHECK(t_check(back[i], PG, 200 + i) == 0, "local page %d", i);

	/* Mixed batch: each segment done or failed on its own. */
	segs[2].gref = 9999;			/* bad ref */
	segs[5].gref = ro;			/* read-only, to guest */
	segs[7].offset = 4000;			/* crosses the page end */
	segs[7].len = 200;
	for (int i = 0; i < 11; i++)
		t_fill(local[i], PG, 300 + i), segs[i].local = local[i];
	T_CHECK(xenops_grant_copy(dom0, guest_id, true, 11, segs) == -EINVAL,
		"mixed batch returns the first failure");
	for (int i = 0; i < 11; i++) {
		int want = i == 2 || i == 7 ? -EINVAL : i == 5 ? -EPERM : 0;

		T_CHECK(segs[i].status == want, "seg %d status %d want %d", i,
			segs[i].status, want);
		if (want == 0)
			T_CHECK(t_check(g + i * PG, PG, 300 + i) == 0,
				"guest page %d", i);
	}
	T_CHECK(t_check(g + 7 * PG, PG, 207) == 0, "failed seg touched page 7");
	T_CHECK(xenops_unshare_pages(guest, g, 11) == 0, "unshare");
	T_CHECK(xenops_unshare_pages(guest, gro, 1) == 0, "unshare");
	return 0;
}

/* Several dom0 threads (and a second dom0 process) map and copy the
 * same grants at once: the pins live in shared memory. */
struct stress_arg {
	xenops_t *x;			/* a dom0 handle */
	grant_ref_t *refs;
	int iters;
	bool copy;
	int failed;
};

static void *
stress_thread(void *opaque)
{
	struct stress_arg *a = opaque;
	uint8_t buf[PG];

	for (int i = 0; i < a->iters && !a->failed; i++) {
		unsigned int k = i % 8;

		if (a->copy) {
			struct xenops_copy_seg seg = {
				.gref = a->refs[k], .len = PG, .local = buf,
			};

			if (xenops_grant_copy(a->x, guest_id, false, 1, &seg) ||
			    t_check(buf, PG, 500 + k))
				a->failed = 1;
		} else {
			uint8_t *p = xenops_map_grefs(a->x, guest_id, 8 - k,
						      a->refs + k, false);

			if (!p || t_check(p, PG, 500 + k) ||
			    xenops_unmap(a->x, p, 8 - k))
				a->failed = 1;
		}
	}
	return NULL;
}

static int
test_concurrent_pins(void)
{
	grant_ref_t refs[8];
	struct stress_arg args[4];
	pthread_t th[4];
	uint8_t *g;

	pid_t pid;
	int st;

	g = xenops_share_pages(guest, 0, 8, false, refs);
	T_CHECK(g, "share: %m");
	for (int i = 0; i < 8; i++)
		t_fill(g + i * PG, PG, 500 + i);
	pid = fork();
	T_CHECK(pid >= 0, "fork: %m");
	if (pid == 0) {
		/* The parent's handle is not ours to use: open our own. */
		struct stress_arg a = { .x = t_open(0), .refs = refs,
					.iters = 2000 };

		stress_thread(&a);
		a.copy = true;
		stress_thread(&a);
		xenops_close(a.x);
		_exit(a.failed ? 1 : 0);
	}
	for (int i = 0; i < 4; i++) {
		args[i] = (struct stress_arg){ .x = dom0, .refs = refs, .iters = 2000,
					       .copy = i & 1 };
		T_CHECK(pthread_create(&th[i], NULL, stress_thread, &args[i]) == 0,
			"pthread_create");
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		T_CHECK(!args[i].failed, "thread %d failed", i);
	}
	T_CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		WEXITSTATUS(st) == 0, "second dom0 process: status 0x%x", st);
	/* Pins balanced: the flags are clear again. */
	T_CHECK(xenops_unshare_pages(guest, g, 8) == 0, "unshare");
	return 0;
}

/* Guest processes allocate refs and frames at once: never the same. */
static int
test_concurrent_share(void)
{
	enum { NPROC = 3, NPAGES = 16, ROUNDS = 30 };
	pid_t pids[NPROC];

	for (int k = 0; k < NPROC; k++) {
		pids[k] = fork();
		T_CHECK(pids[k] >= 0, "fork: %m");
		if (pids[k] == 0) {
			xenops_t *g = t_open(guest_id);

			for (int r = 0; r < ROUNDS; r++) {
				grant_ref_t refs[NPAGES];
				uint32_t seed = getpid() * 1000 + r;
				uint8_t *mem = xenops_share_pages(g, 0, NPAGES,
								  true, refs);

				if (!mem)
					_exit(2);
				t_fill(mem, NPAGES * PG, seed);
				usleep(100);
				/* Another process sharing our frame would
				 * have overwritten the pattern. */
				if (t_check(mem, NPAGES * PG, seed))
					_exit(3);
				if (xenops_unshare_pages(g, mem, NPAGES))
					_exit(4);
			}
			xenops_close(g);
			_exit(0);
		}
	}
	for (int k = 0; k < NPROC; k++) {
		int st;

		T_CHECK(waitpid(pids[k], &st, 0) == pids[k], "waitpid");
		T_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
			"guest process %d: status 0x%x", k, st);
	}
	return 0;
}

int
main(int argc, char **argv)
{
	int fails = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR test-grant DOMID\n");
		return T_EXIT_FAIL;
	}
	guest_id = strtoul(argv[1], NULL, 10);
	dom0 = t_open(0);
	guest = t_open(guest_id);

	fails += t_run("map_cross_process", test_map_cross_process);
	fails += t_run("wrong_domid", test_wrong_domid);
	fails += t_run("readonly", test_readonly);
	fails += t_run("bad_ref", test_bad_ref);
	fails += t_run("unshare_busy", test_unshare_busy);
	fails += t_run("end_access", test_end_access);
	fails += t_run("batch_all_or_nothing", test_batch_all_or_nothing);
	fails += t_run("copy", test_copy);
	fails += t_run("concurrent_pins", test_concurrent_pins);
	fails += t_run("concurrent_share", test_concurrent_share);

	xenops_close(guest);
	xenops_close(dom0);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
