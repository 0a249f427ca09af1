/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * t-common.c: see t-common.h.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <time.h>

#include "t-common.h"

xenops_t *
t_open(uint32_t domid)
{
	struct xenops_config cfg = {
		.transport = XENOPS_SIM,
		.sim_dir = getenv("XENSIM_DIR"),
		.domid = domid,
	};
	xenops_t *x;

	if (!cfg.sim_dir) {
		fprintf(stderr, "XENSIM_DIR is not set\n");
		exit(T_EXIT_FAIL);
	}
	x = xenops_open(&cfg);
	if (!x) {
		fprintf(stderr, "xenops_open(dom%u): %s\n", domid, strerror(errno));
		exit(T_EXIT_FAIL);
	}
	return x;
}

static uint8_t
pattern_byte(size_t i, uint32_t seed)
{
	uint32_t v = (uint32_t)i * 2654435761u ^ seed * 40503u;

	return (uint8_t)(v >> 13 ^ v);
}

void
t_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		p[i] = pattern_byte(i, seed);
}

size_t
t_check(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *p = buf;

	for (size_t i = 0; i < len; i++)
		if (p[i] != pattern_byte(i, seed))
			return i + 1;
	return 0;
}

int
t_wait_readable(int fd, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n;

	do
		n = poll(&pfd, 1, ms);
	while (n < 0 && errno == EINTR);
	return n > 0;
}

uint64_t
t_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

int
t_run(const char *name, int (*fn)(void))
{
	int rc = fn();

	fprintf(rc ? stderr : stdout, "%s: %s\n", name, rc ? "FAIL" : "ok");
	return rc;
}
