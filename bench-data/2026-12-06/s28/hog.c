/*
 * hog.c: a stand-in for the ring's third process, for the control in
 * hog-nbd.sh.  hog SLEEP_US SPIN_US: forever, sleep SLEEP_US (a timer
 * wake-up), then keep the CPU for SPIN_US.  With 185 and 31 it wakes
 * ~4 600 times a second and takes ~0.15 CPU, as blkfront-test io did
 * on nbd's 4 KiB write (perfstat-procs-ring-frontend.txt).
 */
#include <stdlib.h>
#include <time.h>

static unsigned long long
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	long sleep_us = argc > 1 ? atol(argv[1]) : 185;
	long spin_us = argc > 2 ? atol(argv[2]) : 31;
	struct timespec d = { 0, sleep_us * 1000 };

	for (;;) {
		unsigned long long end;

		nanosleep(&d, NULL);
		end = now_ns() + spin_us * 1000ull;
		while (now_ns() < end)
			;
	}
}
