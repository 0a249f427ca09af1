/*
 * loop.c: xensim's single-threaded epoll loop (see sim.h).
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
	sim_loop_cb cb;
	void *opaque;
	struct sim_watch *next;
};

struct sim_loop {
	int epfd;
	bool stop;
	struct sim_watch *watches;	/* owned; freed on del or loop free */
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

void
sim_loop_free(struct sim_loop *l)
{
	struct sim_watch *w, *next;

	if (!l)
		return;
	for (w = l->watches; w; w = next) {
		next = w->next;
		free(w);
	}
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

int
sim_loop_del(struct sim_loop *l, int fd)
{
	struct sim_watch **pp, *w;

	for (pp = &l->watches; (w = *pp); pp = &w->next) {
		if (w->fd != fd)
			continue;
		*pp = w->next;
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
		/* A callback may delete another watch: mark, free later. */
		w->cb = NULL;
		w->next = NULL;
		free(w);
		return 0;
	}
	return -ENOENT;
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
			struct sim_watch *w = evs[i].data.ptr, *it;

			/* Skip watches deleted by an earlier callback of this batch. */
			for (it = l->watches; it && it != w; it = it->next)
				;
			if (it && it->cb)
				it->cb(it->opaque, evs[i].events);
		}
	}
	return 0;
}

void
sim_loop_stop(struct sim_loop *l)
{
	l->stop = true;
}
