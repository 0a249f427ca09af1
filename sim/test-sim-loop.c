/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-sim-loop.c: xensim's epoll loop (loop.c): dispatch, modify, and
 * deleting watches from inside callbacks while their events are still in
 * the same epoll_wait batch (the loop must neither call a deleted watch
 * nor touch freed memory: run under ASan/valgrind).
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "compiler.h"
#include "sim.h"

struct ctx {
	struct sim_loop *l;
	int fd[2][2];			/* two pipes */
	int tfd;			/* timerfd: stops the loop */
	int calls[2];
	bool del_other;			/* callback 0 deletes watch 1 */
	bool del_self;
};

static void
cb(struct ctx *c, int i)
{
	c->calls[i]++;
	if (i == 0 && c->del_other) {
		assert(sim_loop_del(c->l, c->fd[1][0]) == 0);
		c->del_other = false;
	}
	if (c->del_self)
		assert(sim_loop_del(c->l, c->fd[i][0]) == 0);
}

static void cb0(void *o, uint32_t ev) { cb(o, 0); }
static void cb1(void *o, uint32_t ev) { cb(o, 1); }

static void
stop(void *o, uint32_t ev)
{
	struct ctx *c = o;
	uint64_t n;

	assert(read(c->tfd, &n, sizeof(n)) == sizeof(n));
	sim_loop_stop(c->l);
}

/* Run the loop for 200 ms. */
static void
run(struct ctx *c)
{
	struct itimerspec its = { .it_value.tv_nsec = 200 * 1000 * 1000 };

	assert(timerfd_settime(c->tfd, 0, &its, NULL) == 0);
	assert(sim_loop_run(c->l) == 0);
}

static void
setup(struct ctx *c)
{
	*c = (struct ctx){ .l = sim_loop_new() };
	assert(c->l);
	for (int i = 0; i < 2; i++)
		assert(pipe(c->fd[i]) == 0);
	c->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	assert(c->tfd >= 0);
	assert(sim_loop_add(c->l, c->tfd, EPOLLIN, stop, c) == 0);
	assert(sim_loop_add(c->l, c->fd[0][0], EPOLLIN, cb0, c) == 0);
	assert(sim_loop_add(c->l, c->fd[1][0], EPOLLIN, cb1, c) == 0);
}

static void
teardown(struct ctx *c)
{
	sim_loop_free(c->l);
	close(c->tfd);
	for (int i = 0; i < 2; i++) {
		close(c->fd[i][0]);
		close(c->fd[i][1]);
	}
}

static int
test_dispatch(void)
{
	struct ctx c;

	setup(&c);
	assert(write(c.fd[1][1], "x", 1) == 1);
	run(&c);
	/* level-triggered: called again and again while unread */
	if (c.calls[0] != 0 || c.calls[1] < 2)
		return -1;
	/* mod to no events: silence */
	assert(sim_loop_mod(c.l, c.fd[1][0], 0) == 0);
	c.calls[1] = 0;
	run(&c);
	if (c.calls[1] != 0)
		return -1;
	assert(sim_loop_mod(c.l, c.fd[0][1], EPOLLOUT) == -ENOENT);
	assert(sim_loop_del(c.l, c.fd[0][1]) == -ENOENT);
	assert(sim_loop_add(c.l, c.fd[0][0], EPOLLIN, cb0, &c) == -EEXIST);
	teardown(&c);
	return 0;
}

static int
test_delete_other_in_batch(void)
{
	struct ctx c;

	setup(&c);
	c.del_other = true;
	/* both ready before epoll_wait, fd 0 first: one batch, 0 first */
	assert(write(c.fd[0][1], "x", 1) == 1);
	assert(write(c.fd[1][1], "x", 1) == 1);
	run(&c);
	if (c.calls[0] < 1 || c.calls[1] != 0)
		return -1;
	teardown(&c);
	return 0;
}

static int
test_delete_self(void)
{
	struct ctx c;

	setup(&c);
	c.del_self = true;
	assert(write(c.fd[0][1], "x", 1) == 1);
	run(&c);
	if (c.calls[0] != 1)
		return -1;
	/* and it can be added again */
	assert(sim_loop_add(c.l, c.fd[0][0], EPOLLIN, cb0, &c) == 0);
	run(&c);
	if (c.calls[0] != 2)
		return -1;
	teardown(&c);
	return 0;
}

int
main(void)
{
	static const struct {
		const char *name;
		int (*fn)(void);
	} tests[] = {
		{ "dispatch", test_dispatch },
		{ "delete_other_in_batch", test_delete_other_in_batch },
		{ "delete_self", test_delete_self },
	};
	int failed = 0;

	for (size_t i = 0; i < ARRAY_SIZE(tests); i++) {
		int r = tests[i].fn();

		printf("%s: %s\n", r ? "FAIL" : "PASS", tests[i].name);
		failed |= r != 0;
	}
	return failed;
}
