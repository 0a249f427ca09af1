/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-pollwin.c: the adaptive polling window (include/pollwin.h) grows
 * from 4 us by doubling up to its cap while events come soon after the
 * sleep began, halves down to off while they come late, and never polls
 * with a cap of 0; pollwin_spin stops at the first "ready" or the
 * window's end; a busy thread looks at its fds once a millisecond.
 * Exit 0 or 1 (automake).
 */
#include <config.h>

#include <stdbool.h>
#include <stdio.h>

#include "compiler.h"
#include "pollwin.h"

static int failed;

#define CHECK(cond) do { \
	if (!(cond)) { \
		fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failed = 1; \
	} \
} while (0)

/* An event waited_us after a sleep began (the clock jitter of this call
 * is far below the 10 us / 1 ms used). */
static void
event_after(struct pollwin *w, uint64_t waited_us)
{
	pollwin_adapt(w, pollwin_now_ns() - waited_us * 1000u);
}

static bool
ready_on_third(void *opaque)
{
	unsigned int *calls = opaque;

	return ++*calls == 3;
}

static bool
never(void *opaque)
{
	unsigned int *calls = opaque;

	++*calls;
	return false;
}

/* pollwin_spin stops at the first "ready", and at the window's end. */
static void
test_spin(void)
{
	struct pollwin w;
	unsigned int calls = 0;
	uint64_t t;

	pollwin_init(&w, 50);
	CHECK(!pollwin_spin(&w, pollwin_now_ns(), never, &calls));
	CHECK(calls == 0);			/* window 0: not even one look */
	w.ns = 20000;
	CHECK(pollwin_spin(&w, pollwin_now_ns(), ready_on_third, &calls));
	CHECK(calls == 3);
	calls = 0;
	t = pollwin_now_ns();
	CHECK(!pollwin_spin(&w, t, never, &calls));
	CHECK(calls >= 1 && pollwin_now_ns() - t >= 20000);
}

/* A busy thread looks at its fds once a millisecond; a sleep adapts the
 * window, a zero-timeout look does not. */
static void
test_fd_look(void)
{
	struct pollwin w;
	uint64_t t;

	pollwin_init(&w, 50);
	t = pollwin_now_ns();
	CHECK(!pollwin_may_skip_wait(&w, t));	/* never looked yet */
	pollwin_waited(&w, t, false);
	CHECK(w.ns == 0);			/* not a sleep: no adapting */
	CHECK(pollwin_may_skip_wait(&w, w.last_wait + 999999));
	CHECK(!pollwin_may_skip_wait(&w, w.last_wait + 1000000));
	pollwin_waited(&w, pollwin_now_ns() - 10000, true);
	CHECK(w.ns == 4000);			/* a quick event after a sleep */
}

int
main(void)
{
	static const uint64_t grow[] = { 4000, 8000, 16000, 32000, 50000, 50000 };
	static const uint64_t shrink[] = { 25000, 12500, 6250, 3125, 1562, 0, 0 };
	struct pollwin w;
	unsigned int i;
	uint64_t t = pollwin_now_ns();

	pollwin_init(&w, 50);
	CHECK(w.max_ns == 50000 && w.ns == 0);
	CHECK(pollwin_deadline(&w, t) == 0);	/* not polling yet */
	for (i = 0; i < ARRAY_SIZE(grow); i++) {
		event_after(&w, 10);
		CHECK(w.ns == grow[i]);
	}
	CHECK(pollwin_deadline(&w, t) == t + 50000);
	for (i = 0; i < ARRAY_SIZE(shrink); i++) {
		event_after(&w, 1000);
		CHECK(w.ns == shrink[i]);
	}
	/* grows again from the start value */
	event_after(&w, 10);
	CHECK(w.ns == 4000);

	pollwin_init(&w, 0);	/* off: never polls, whatever happens */
	for (i = 0; i < 4; i++) {
		event_after(&w, 1);
		CHECK(w.ns == 0 && pollwin_deadline(&w, t) == 0);
	}
	pollwin_init(&w, 3);	/* a cap below the start value */
	event_after(&w, 1);
	CHECK(w.ns == 3000);
	test_spin();
	test_fd_look();
	if (!failed)
		printf("pollwin: grow, cap, shrink, off, spin, fd look: ok\n");
	return failed;
}
