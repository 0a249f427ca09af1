/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-transport.c: choosing and opening a transport, and the clean
 * failures when the platform is missing (no xensim needed).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t-common.h"

static int
test_parse(void)
{
	enum xenops_transport t = 99;

	T_CHECK(xenops_transport_parse("xen", &t) == 0 && t == XENOPS_XEN, "xen");
	T_CHECK(xenops_transport_parse("sim", &t) == 0 && t == XENOPS_SIM, "sim");
	T_CHECK(xenops_transport_parse("Xen", &t) == -EINVAL, "Xen");
	T_CHECK(xenops_transport_parse("", &t) == -EINVAL, "empty");
	T_CHECK(xenops_transport_parse(NULL, &t) == -EINVAL, "NULL");
	return 0;
}

static int
test_default(void)
{
	enum xenops_transport t = 99;
	int rc = xenops_transport_default(&t);

	if (access("/dev/xen/evtchn", F_OK) == 0)
		T_CHECK(rc == 0 && t == XENOPS_XEN, "on Xen: %d", rc);
	else
		T_CHECK(rc == -ENODEV && t == 99, "without Xen: %d", rc);
	return 0;
}

static int
test_open_failures(void)
{
	char dir[] = "/tmp/xenops-transport.XXXXXX";
	struct xenops_config cfg = { .transport = XENOPS_SIM };
	xenops_t *x;

	T_CHECK(mkdtemp(dir), "mkdtemp: %m");
	/* No directory at all. */
	unsetenv("XENSIM_DIR");
	errno = 0;
	T_CHECK(!xenops_open(&cfg) && errno == EINVAL, "no dir: errno %d", errno);
	/* A directory where no xensim runs. */
	cfg.sim_dir = dir;
	errno = 0;
	x = xenops_open(&cfg);
	T_CHECK(!x && errno == ENOENT, "no xensim: errno %d", errno);
	/* $XENSIM_DIR is the fallback. */
	setenv("XENSIM_DIR", dir, 1);
	cfg.sim_dir = NULL;
	errno = 0;
	T_CHECK(!xenops_open(&cfg) && errno == ENOENT, "env: errno %d", errno);
	/* Out-of-range domid, unknown transport. */
	cfg.domid = 0x8000;
	errno = 0;
	T_CHECK(!xenops_open(&cfg) && errno == EINVAL, "domid: errno %d", errno);
	cfg.transport = 7;
	errno = 0;
	T_CHECK(!xenops_open(&cfg) && errno == EINVAL, "transport 7: errno %d", errno);
	T_CHECK(!xenops_open(NULL) && errno == EINVAL, "NULL config");
	/* Real Xen where there is none. */
	if (access("/dev/xen/evtchn", F_OK) < 0) {
		cfg.transport = XENOPS_XEN;
		cfg.domid = 0;
		errno = 0;
		T_CHECK(!xenops_open(&cfg) && errno == ENOENT,
			"xen without /dev/xen: errno %d", errno);
	}
	rmdir(dir);
	xenops_close(NULL);
	return 0;
}

int
main(void)
{
	int fails = 0;

	fails += t_run("parse", test_parse);
	fails += t_run("default", test_default);
	fails += t_run("open_failures", test_open_failures);
	return fails ? T_EXIT_FAIL : T_EXIT_PASS;
}
