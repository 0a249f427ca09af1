/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * loop.c: xensim's single-threaded epoll loop (see sim.h).
 *
 * A callback may delete any watch, its own included, while other events
 * of the same epoll_wait batch are still to be dispatched: deleted watches
 * are only unlinked and marked (cb = NULL) and freed once the batch is
 * done, so a stale event never reaches a freed or reused watch.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "compiler.h"
#include "sim.h"

struct sim_watch {
	int fd;
	sim_loop_cb cb;			/* NULL once deleted */
	void *opaque;
	struct sim_watch *next;
};

struct sim_loop {
	int epfd;
	bool stop;
	struct sim_watch *watches;	/* owned, live */
	struct sim_watch *dead;		/* owned, deleted during a batch */
};

struct sim_loop *
sim_loop_new(void)
{
	struct sim_loop *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int e = errno;

		free(l);
		errno = e;
		return NULL;
	}
	return l;
}

static void
free_list(struct sim_watch *w)
{
	while (w) {
		struct sim_watch *next = w->next;

		free(w);
		w = next;
	}
}

void
sim_loop_free(struct sim_loop *l)
{
	if (!l)
		return;
	free_list(l->watches);
	free_list(l->dead);
	close(l->epfd);
	free(l);
}

int
sim_loop_add(struct sim_loop *l, int fd, uint32_t epoll_events,
	     sim_loop_cb cb, void *opaque)
{
	struct epoll_event ev = { .events = epoll_events };
	struct sim_watch *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->cb = cb;
	w->opaque = opaque;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		int e = errno;

		free(w);
		return -e;
	}
	w->next = l->watches;
	l->watches = w;
	return 0;
}

static struct sim_watch *
find(struct sim_loop *l, int fd, struct sim_watch ***prev)
{
	struct sim_watch **pp, *w;

	for (pp = &l->watches; (w = *pp); pp = &w->next) {
		if (w->fd == fd) {
			if (prev)
				*prev = pp;
			return w;
		}
	}
	return NULL;
}

int
sim_loop_mod(struct sim_loop *l, int fd, uint32_t epoll_events)
{
	struct sim_watch *w = find(l, fd, NULL);
	struct epoll_event ev = { .events = epoll_events };

	if (!w)
		return -ENOENT;
	ev.data.ptr = w;
	if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0)
		return -errno;
	return 0;
}

int
sim_loop_del(struct sim_loop *l, int fd)
{
	struct sim_watch **pp, *w = find(l, fd, &pp);

	if (!w)
		return -ENOENT;
	*pp = w->next;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	w->cb = NULL;
	w->next = l->dead;
	l->dead = w;
	return 0;
}

int
sim_loop_run(struct sim_loop *l)
{
	struct epoll_event evs[64];

	l->stop = false;
	while (!l->stop) {
		int n = epoll_wait(l->epfd, evs, ARRAY_SIZE(evs), -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n && !l->stop; i++) {
			struct sim_watch *w = evs[i].data.ptr;

			if (w->cb)
				w->cb(w->opaque, evs[i].events);
		}
		free_list(l->dead);
		l->dead = NULL;
	}
	return 0;
}

void
sim_loop_stop(struct sim_loop *l)
{
	l->stop = true;
}
