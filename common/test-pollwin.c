/*
 * test-pollwin.c: the adaptive polling window (include/pollwin.h) grows
 * from 4 us by doubling up to its cap while events come soon after the
 * sleep began, halves down to off while they come late, and never polls
 * with a cap of 0.  Exit 0 or 1 (automake).
 */
#include <config.h>

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
	if (!failed)
		printf("pollwin: grow, cap, shrink, off: ok\n");
	return failed;
}
