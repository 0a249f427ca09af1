/* What ring-exit-eintr-6.18.txt ran: make (mode 1: and use) an io_uring on
 * this thread, close it, then sleep 300 ms in epoll_wait on an empty
 * epoll.  gcc -O2 ring-exit-eintr.c -o t3 -luring; ./t3 0; ./t3 1 */
#include <liburing.h>
#include <sys/eventfd.h>
#include <sys/epoll.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int ep = epoll_create1(0), mode = argc > 1 ? atoi(argv[1]) : 0;

	for (int k = 0; k < 5; k++) {
		struct io_uring ring;
		struct io_uring_cqe *cqe;
		struct epoll_event ev;
		uint64_t one = 1;
		int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), r;
		double t0;

		io_uring_queue_init(2, &ring, 0);
		if (mode >= 1) {
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			io_uring_prep_poll_multishot(sqe, efd, POLLIN);
			io_uring_submit(&ring);
			if (write(efd, &one, 8) != 8)
				return 1;
			io_uring_wait_cqe(&ring, &cqe);
			io_uring_cqe_seen(&ring, cqe);
		}
		io_uring_queue_exit(&ring);
		close(efd);
		t0 = now();
		r = epoll_wait(ep, &ev, 1, 300);
		printf("mode %d: epoll_wait %d errno %d after %.1f ms\n", mode, r,
		       r < 0 ? errno : 0, (now() - t0) * 1e3);
	}
	return 0;
}
