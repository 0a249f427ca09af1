/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-replay.c: run fuzz-xs.c's LLVMFuzzerTestOneInput on every file of
 * the directories in $FUZZ_REPLAY_DIRS (space-separated; set by fuzz.mk),
 * else of $srcdir/fuzz-seeds and $srcdir/fuzz-corpus, or on the files
 * and directories given as arguments.  Built with gcc for "make check",
 * so the seeds (and any crash once fixed) and the merged corpus stay a
 * regression test.  Each directory must hold at least one input: a
 * missing or empty one fails.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long len;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fseek(f, 0, SEEK_END) < 0 || (len = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return -1;
	}
	buf = malloc((size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "%s: read failed\n", path);
		free(buf);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

static int
run_path(const char *path, unsigned int *count)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (stat(path, &st) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(path);
	}
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char *p;

		if (de->d_name[0] == '.')
			continue;
		if (asprintf(&p, "%s/%s", path, de->d_name) < 0) {
			r = -1;
			break;
		}
		if (run_path(p, count) < 0)
			r = -1;
		free(p);
	}
	closedir(d);
	return r;
}

/* Replays path; a directory that gives no input fails. */
static int
run_top(const char *path, unsigned int *count)
{
	unsigned int before = *count;
	int r = run_path(path, count);

	if (r == 0 && *count == before) {
		fprintf(stderr, "%s: no inputs\n", path);
		return -1;
	}
	printf("%s: %u inputs replayed\n", path, *count - before);
	return r;
}

int
main(int argc, char **argv)
{
	const char *env = getenv("FUZZ_REPLAY_DIRS");
	const char *srcdir = getenv("srcdir");
	unsigned int count = 0;
	char *dirs = NULL, *dir, *save = NULL;
	int r = 0;

	if (argc < 2) {
		if (env && env[0])
			dirs = strdup(env);
		else if (asprintf(&dirs, "%s/fuzz-seeds %s/fuzz-corpus",
				  srcdir ? srcdir : ".",
				  srcdir ? srcdir : ".") < 0)
			dirs = NULL;
		if (!dirs)
			return 1;
		for (dir = strtok_r(dirs, " ", &save); dir;
		     dir = strtok_r(NULL, " ", &save))
			if (run_top(dir, &count) < 0)
				r = -1;
		free(dirs);
	}
	for (int i = 1; i < argc; i++)
		if (run_top(argv[i], &count) < 0)
			r = -1;
	printf("%u inputs replayed\n", count);
	return r < 0 || count == 0;
}
