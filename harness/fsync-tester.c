/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fsync-tester: fsync latency of a small file, once a second.
 *
 * The classic ext3/ext4 latency test from the 2009 "fsync is slow while a
 * big file is being written" threads: rewrite a small file in place, fsync
 * it, print how long the fsync took, sleep, repeat.  Run it beside a
 * background writer (blkbench's "bigfile torture": dd + sync + rm in a
 * loop) to see how long an fsync waits behind someone else's data.
 *
 * Output, one line per fsync, flushed at once:
 *   fsync time: 0.2457
 * (seconds, 4 decimals; nothing else on stdout.)
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The only long option: --help, as every other command of the project. */
static const struct option long_opts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: fsync-tester [-f FILE] [-s BYTES] [-n COUNT] [-i SECONDS] [-k] [-h|--help]\n"
		"Rewrite FILE, fsync it and print \"fsync time: X.XXXX\", once per interval.\n"
		"  -f FILE     file to write (default ./fsync-tester.tmp)\n"
		"  -s BYTES    bytes written before each fsync (default 1048576)\n"
		"  -n COUNT    stop after COUNT fsyncs (default 0: until SIGINT/SIGTERM)\n"
		"  -i SECONDS  pause between fsyncs, may be fractional (default 1)\n"
		"  -k          keep FILE at exit (default: remove it)\n"
		"  -h, --help  this help\n");
}

static int parse_ulong(char opt, const char *s, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v < lo || v > hi) {
		fprintf(stderr, "fsync-tester: -%c %s: expected a number in %lu..%lu\n",
			opt, s, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Sleep for secs unless a signal asks us to stop. */
static void pause_for(double secs)
{
	struct timespec ts = {
		.tv_sec = (time_t)secs,
		.tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9),
	};

	while (!stop_requested && nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	const char *path = "fsync-tester.tmp";
	unsigned long size = 1024 * 1024, count = 0, done;
	double interval = 1.0;
	bool keep = false;
	struct sigaction sa = { .sa_handler = on_signal };
	char *buf, *end;
	int c, fd, ret = 0;

	while ((c = getopt_long(argc, argv, "hkf:s:n:i:", long_opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'k':
			keep = true;
			break;
		case 'f':
			path = optarg;
			break;
		case 's':
			if (parse_ulong('s', optarg, 1, 1ul << 30, &size))
				return 1;
			break;
		case 'n':
			if (parse_ulong('n', optarg, 0, ULONG_MAX, &count))
				return 1;
			break;
		case 'i':
			errno = 0;
			interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || interval < 0 || interval > 3600) {
				fprintf(stderr, "fsync-tester: -i %s: expected seconds in 0..3600\n",
					optarg);
				return 1;
			}
			break;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "fsync-tester: unexpected argument '%s'\n", argv[optind]);
		return 1;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	buf = malloc(size);
	if (!buf) {
		perror("fsync-tester: malloc");
		return 1;
	}
	memset(buf, 'a', size);
	fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "fsync-tester: open %s: %s\n", path, strerror(errno));
		free(buf);
		return 1;
	}

	for (done = 0; !stop_requested && (!count || done < count); done++) {
		double t0;
		ssize_t n;

		if (done)
			pause_for(interval);
		if (stop_requested)
			break;
		n = pwrite(fd, buf, size, 0);
		if (n < 0 || (unsigned long)n != size) {
			fprintf(stderr, "fsync-tester: write %s: %s\n", path,
				n < 0 ? strerror(errno) : "short write");
			ret = 1;
			break;
		}
		t0 = now_s();
		if (fsync(fd) < 0) {
			if (errno == EINTR && stop_requested)
				break;
			fprintf(stderr, "fsync-tester: fsync %s: %s\n", path, strerror(errno));
			ret = 1;
			break;
		}
		printf("fsync time: %.4f\n", now_s() - t0);
		fflush(stdout);
	}

	close(fd);
	if (!keep && unlink(path) < 0) {
		fprintf(stderr, "fsync-tester: unlink %s: %s\n", path, strerror(errno));
		ret = 1;
	}
	free(buf);
	return ret;
}
