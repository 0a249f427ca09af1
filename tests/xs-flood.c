/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xs-flood.c: write xenstore keys many times, as fast as one connection
 * can, to play a guest that floods its backend's watches (case C18) or
 * flips a key during a handshake (C24).
 *
 *   xs-flood [-i US] N PATH=VALUE...
 *
 * Round i (0 .. N-1) writes each PATH=VALUE in order, one write per
 * message, no transaction; in VALUE, "%u" becomes i and "%2" becomes
 * i % 2.  N = 0 runs until killed.  -i: sleep US microseconds after
 * each round.  The connection is libxenstore's
 * default, so XENSTORED_PATH picks the domain (tests/functions.sh
 * as_domain).  Prints the number of writes and seconds taken.  Exit 0,
 * or 1 when a write fails.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xenstore.h>

static void
expand(char *out, size_t len, const char *v, unsigned long i)
{
	size_t o = 0;

	for (; *v && o + 24 < len; v++) {
		if (v[0] == '%' && v[1] == 'u') {
			o += (size_t)snprintf(out + o, len - o, "%lu", i);
			v++;
		} else if (v[0] == '%' && v[1] == '2') {
			o += (size_t)snprintf(out + o, len - o, "%lu", i % 2);
			v++;
		} else {
			out[o++] = *v;
		}
	}
	out[o] = '\0';
}

int
main(int argc, char **argv)
{
	struct xs_handle *xs;
	struct timespec t0, t1;
	unsigned long n, i, writes = 0, us = 0;
	char val[256];
	int k, first = 2;

	if (argc > 2 && !strcmp(argv[1], "-i")) {
		us = strtoul(argv[2], NULL, 0);
		argv += 2;
		argc -= 2;
	}
	if (argc < 3) {
		fprintf(stderr, "usage: xs-flood [-i US] N PATH=VALUE...\n");
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	for (k = first; k < argc; k++)
		if (!strchr(argv[k], '=')) {
			fprintf(stderr, "xs-flood: %s: expected PATH=VALUE\n", argv[k]);
			return 2;
		}
	xs = xs_open(0);
	if (!xs) {
		perror("xs-flood: xs_open");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; n == 0 || i < n; i++) {
		for (k = 2; k < argc; k++) {
			char *eq = strchr(argv[k], '=');

			*eq = '\0';
			expand(val, sizeof(val), eq + 1, i);
			if (!xs_write(xs, XBT_NULL, argv[k], val, (unsigned int)strlen(val))) {
				fprintf(stderr, "xs-flood: write %s: %s\n", argv[k], strerror(errno));
				xs_close(xs);
				return 1;
			}
			*eq = '=';
			writes++;
		}
		if (us)
			usleep((useconds_t)us);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("xs-flood: %lu writes in %.2f s\n", writes,
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	xs_close(xs);
	return 0;
}
