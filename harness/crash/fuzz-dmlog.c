/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-dmlog.c: the dm-log-writes parser (dmlog.c) under libFuzzer
 * ("make fuzz" here, clang with ASan+UBSan), and, built with
 * -DDML_REPLAY_MAIN by the normal compiler, a program that feeds it the
 * files named on its command line (the committed corpus, in make check).
 *
 * Each input is a whole log file.  After a successful parse every record
 * is walked the way dump/replay/check use it (data pointers and lengths,
 * durable_at, mark text), so a record pointing outside the input is an
 * ASan report, not a silent pass.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blkcrash.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static volatile uint64_t sink;

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	static int quiet;
	struct cl_log log;
	unsigned char *buf;
	size_t i;
	int r;

	if (!quiet) {
		log_init("fuzz-dmlog");
		if (!getenv("FUZZ_DMLOG_VERBOSE"))
			log_open_file("/dev/null");
		quiet = 1;
	}
	/* an exact-size copy, so a read one past the end is caught */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	memset(&log, 0, sizeof(log));
	r = dml_parse(&log, buf, size, "fuzz");
	if (r == 0) {
		cl_finish(&log);
		if (log.n > 2 * (size / 512 + 1))
			abort();	/* more records than the input can hold */
		for (i = 0; i < log.n; i++) {
			const struct cl_entry *e = &log.e[i];

			if (e->rec.seq != i + 1)
				abort();
			if (e->rec.type == CRASHLOG_WRITE && e->data)
				sink += crashlog_hash(e->data, (size_t)e->rec.len);
			if (e->rec.type == CL_MARK && e->mark_len)
				sink += e->data[e->mark_len - 1];
			if ((e->rec.type == CRASHLOG_WRITE ||
			     e->rec.type == CRASHLOG_DISCARD) &&
			    e->rec.offset + e->rec.len > log.hdr.dev_size)
				abort();
			if (e->durable_at != CL_NEVER && e->durable_at < e->rec.seq)
				abort();
		}
	}
	free(log.e);
	free(buf);
	return 0;
}

#ifdef DML_REPLAY_MAIN
int
main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		unsigned char *buf = NULL;
		size_t len = 0, cap = 0, n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		for (;;) {
			if (len == cap) {
				void *p = realloc(buf, cap ? 2 * cap : 65536);

				if (!p) {
					fclose(f);
					free(buf);
					return 1;
				}
				buf = p;
				cap = cap ? 2 * cap : 65536;
			}
			n = fread(buf + len, 1, cap - len, f);
			if (n == 0)
				break;
			len += n;
		}
		fclose(f);
		LLVMFuzzerTestOneInput(buf, len);
		free(buf);
	}
	printf("fuzz-dmlog: %d inputs replayed\n", argc - 1);
	return 0;
}
#endif
