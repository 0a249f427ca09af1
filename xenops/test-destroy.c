/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-destroy.c: what destroying a domain does to the other side
 * (include/xenops.h "Lifetimes", sim.h hv_domain_destroy).
 *
 *   XENSIM_DIR=DIR test-destroy DOMID DESTROY-COMMAND...
 *
 * Sets up grants and an event channel between dom0 and DOMID, runs
 * DESTROY-COMMAND (which must destroy DOMID), then checks: dom0's
 * mappings stay valid, new maps and copies fail with -ESRCH, the
 * channel's dom0 end gets -ENOTCONN, the domain is reported dead.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compiler.h"
#include "t-common.h"

#define PG XEN_PAGE_SIZE

static int
run(char **argv)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static uint32_t guest_id;
static char **destroy_cmd;

/* Does /proc/self/maps mention name? */
static bool
maps_contain(const char *name)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, name))
			found = true;
	fclose(f);
	return found;
}

static int
test_destroy(void)
{
	xenops_t *dom0 = t_open(0), *guest = t_open(guest_id);
	xenops_evtchn_t *e0, *eg;
	grant_ref_t refs[2];
	uint8_t buf[64];
	struct xenops_copy_seg seg = { .len = sizeof(buf), .local = buf };
	uint8_t *g, *p, *p2;
	int p0, pg;
	char ram_name[64];

	/* sim/hv.c names the memfd; its mappings show in /proc/self/maps. */
	snprintf(ram_name, sizeof(ram_name), "xensim-dom%u-ram ", guest_id);
	g = xenops_share_pages(guest, 0, 2, true, refs);
	T_CHECK(g, "share: %m");
	t_fill(g, 2 * PG, 77);
	p = xenops_map_grefs(dom0, guest_id, 1, refs, true);
	T_CHECK(p, "map: %m");
	e0 = xenops_evtchn_open(dom0);
	eg = xenops_evtchn_open(guest);
	T_CHECK(e0 && eg, "evtchn open: %m");
	p0 = xenops_evtchn_bind_unbound(e0, guest_id);
	pg = xenops_evtchn_bind_interdomain(eg, 0, p0);
	T_CHECK(p0 > 0 && pg > 0, "bind: %d %d", p0, pg);
	T_CHECK(xenops_evtchn_notify(e0, p0) == 0, "notify before");
	T_CHECK(xenops_domain_alive(dom0, guest_id) == 1, "alive before");

	T_CHECK(run(destroy_cmd) == 0, "%s failed", destroy_cmd[0]);

	T_CHECK(xenops_domain_alive(dom0, guest_id) == 0, "alive after");
	/* Our mapping outlives the domain, as on Xen. */
	T_CHECK(t_check(p, PG, 77) == 0, "mapped content after destroy");
	memset(p, 0xa5, PG);
	T_CHECK(xenops_evtchn_notify(e0, p0) == -ENOTCONN, "notify after");
	errno = 0;
	p2 = xenops_map_grefs(dom0, guest_id, 1, &refs[1], false);
	T_CHECK(!p2 && errno == ESRCH, "map after destroy: %p errno %d", p2, errno);
	seg.gref = refs[1];
	T_CHECK(xenops_grant_copy(dom0, guest_id, false, 1, &seg) == -ESRCH &&
		seg.status == -ESRCH, "copy after destroy: %d", seg.status);
	T_CHECK(xenops_unmap(dom0, p, 1) == 0, "unmap after destroy");
	/* The guest's control path is gone; its handles still close cleanly. */
	T_CHECK(xenops_evtchn_open(guest) == NULL && errno == ESRCH,
		"evtchn_open in a dead domain: errno %d", errno);
	T_CHECK(xenops_evtchn_unbind(e0, p0) == 0, "unbind");
	xenops_evtchn_close(eg);
	xenops_evtchn_close(e0);
	T_CHECK(xenops_unshare_pages(guest, g, 2) == 0, "unshare in dead domain");
	xenops_close(guest);
	/* The last mapping is gone: nothing of its RAM stays mapped here
	 * (dom0's handle is still open). */
	T_CHECK(!maps_contain(ram_name), "%s still mapped", ram_name);
	xenops_close(dom0);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: XENSIM_DIR=DIR test-destroy DOMID CMD...\n");
		return T_EXIT_FAIL;
	}
	guest_id = strtoul(argv[1], NULL, 10);
	destroy_cmd = argv + 2;
	return t_run("destroy", test_destroy) ? T_EXIT_FAIL : T_EXIT_PASS;
}
