/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pollwin.h: an adaptive polling window for a thread that would
 * otherwise sleep on an event channel or eventfd.
 *
 * Why: on these machines waking a sleeping thread on another CPU through
 * an eventfd costs ~58 us (idle vCPU), a look at shared memory ~0.34 us.
 * A thread that expects an event soon spins for a short window first.
 * The window adapts as QEMU's AioContext polling does (poll-max-ns,
 * poll-grow, poll-shrink): after a sleep that began (polling included)
 * at some moment, an event that came within max_ns of it means a longer
 * poll would have caught it: double the window (from 4 us); a later
 * event means polling only burnt CPU: halve it (under 1 us: off).  An
 * idle device therefore costs no CPU.
 *
 * State: one struct per polling thread, owned by it; no locking.
 * Units: nanoseconds, CLOCK_MONOTONIC.
 */
#ifndef BLK_POLLWIN_H
#define BLK_POLLWIN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "compiler.h"

struct pollwin {
	uint64_t max_ns;	/* cap; 0: never poll */
	uint64_t ns;		/* current window, 0..max_ns */
	uint64_t last_wait;	/* when the thread last looked at its fds */
};

#define POLLWIN_GROW_START_NS	4000u
#define POLLWIN_MIN_NS		1000u
/* A thread kept busy by polling still looks at its fds this often (stop
 * requests, events only an fd carries). */
#define POLLWIN_FD_LOOK_NS	1000000u

static inline uint64_t
pollwin_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* max_us: the cap in microseconds (0 disables polling). */
static inline void
pollwin_init(struct pollwin *w, unsigned int max_us)
{
	w->max_ns = (uint64_t)max_us * 1000u;
	w->ns = 0;
	w->last_wait = 0;
}

/* The deadline of a poll starting at start, or 0 when not polling now. */
static inline uint64_t
pollwin_deadline(const struct pollwin *w, uint64_t start)
{
	return w->ns ? start + w->ns : 0;
}

/* After a sleep (its poll included) that began at start ended now. */
static inline void
pollwin_adapt(struct pollwin *w, uint64_t start)
{
	uint64_t waited = pollwin_now_ns() - start;

	if (!w->max_ns)
		return;
	if (waited > w->max_ns) {
		w->ns /= 2;
		if (w->ns < POLLWIN_MIN_NS)
			w->ns = 0;
	} else if (w->ns < w->max_ns) {
		w->ns = w->ns ? w->ns * 2 : POLLWIN_GROW_START_NS;
		if (w->ns > w->max_ns)
			w->ns = w->max_ns;
	}
}

/*
 * Spin until ready(arg) says there is work, for at most the current
 * window from start.  True when it did.  ready() runs many times: keep
 * it free of system calls.
 */
static inline bool
pollwin_spin(const struct pollwin *w, uint64_t start, bool (*ready)(void *), void *arg)
{
	uint64_t end = pollwin_deadline(w, start);

	if (!end)
		return false;
	do {
		if (ready(arg))
			return true;
		cpu_relax();
	} while (pollwin_now_ns() < end);
	return false;
}

/*
 * A thread that found work by polling (or by its final check) may go
 * round again without looking at its fds, unless it last looked at them
 * POLLWIN_FD_LOOK_NS ago or more (then it looks with a zero timeout).
 */
static inline bool
pollwin_may_skip_wait(const struct pollwin *w, uint64_t now)
{
	return now - w->last_wait < POLLWIN_FD_LOOK_NS;
}

/* After a look at the fds that began (polling included) at start;
 * slept: it blocked, so the window adapts to how long the event took. */
static inline void
pollwin_waited(struct pollwin *w, uint64_t start, bool slept)
{
	w->last_wait = pollwin_now_ns();
	if (slept)
		pollwin_adapt(w, start);
}

#endif /* BLK_POLLWIN_H */
