/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuzz-corpus.c: replay every file of ring/fuzz-seeds/ and
 * ring/fuzz-corpus/ through the fuzz harness with the normal compiler, so
 * a seed, a fixed crash's reproducer or an input of the merged corpus
 * that breaks an invariant fails "make check" without clang.  The
 * directories come from $FUZZ_REPLAY_DIRS (space-separated; set by
 * fuzz.mk), else $srcdir/fuzz-seeds and $srcdir/fuzz-corpus.  Each must
 * hold at least one input: a missing or empty one fails the test.
 */
#include <config.h>

#undef NDEBUG
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "private.h"

#define FUZZ_MAX_INPUT	(1u << 20)

static int replay_file(const char *path)
{
	static uint8_t buf[FUZZ_MAX_INPUT];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (f == NULL) {
		fprintf(stderr, "%s: %m\n", path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	if (ferror(f)) {
		fprintf(stderr, "%s: read error\n", path);
		fclose(f);
		return 1;
	}
	fclose(f);
	printf("replay %s (%zu bytes)\n", path, n);
	fflush(stdout);
	blkring_fuzz_one(buf, n);	/* asserts on any broken invariant */
	return 0;
}

/* Replays the regular files of dir; returns how many, or -1 if the
 * directory cannot be read. */
static int replay_dir(const char *dir, unsigned int *failed)
{
	char path[PATH_MAX];
	struct dirent *de;
	int count = 0;
	DIR *d = opendir(dir);

	if (d == NULL) {
		fprintf(stderr, "%s: %m\n", dir);
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) >= sizeof(path)) {
			fprintf(stderr, "%s/%s: path too long\n", dir,
				de->d_name);
			(*failed)++;
			continue;
		}
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		*failed += replay_file(path);
		count++;
	}
	closedir(d);
	return count;
}

int main(void)
{
	const char *env = getenv("FUZZ_REPLAY_DIRS");
	char *dirs = NULL, *dir, *save = NULL;
	unsigned int ndirs = 0, bad = 0, failed = 0, total = 0;

	if (env != NULL && env[0] != '\0') {
		dirs = strdup(env);
	} else {
		const char *srcdir = getenv("srcdir");

		if (srcdir == NULL)
			srcdir = ".";
		if (asprintf(&dirs, "%s/fuzz-seeds %s/fuzz-corpus", srcdir,
			     srcdir) < 0)
			dirs = NULL;
	}
	if (dirs == NULL) {
		fprintf(stderr, "FUZZ_REPLAY_DIRS: %m\n");
		return 1;
	}
	for (dir = strtok_r(dirs, " ", &save); dir != NULL;
	     dir = strtok_r(NULL, " ", &save)) {
		int n = replay_dir(dir, &failed);

		ndirs++;
		if (n <= 0) {
			if (n == 0)
				fprintf(stderr, "%s: no inputs\n", dir);
			bad++;
			continue;
		}
		printf("%s: %d inputs replayed\n", dir, n);
		total += (unsigned int)n;
	}
	free(dirs);
	printf("%u inputs replayed from %u directories, %u unreadable, "
	       "%u directories missing or empty\n", total, ndirs, failed, bad);
	if (ndirs == 0) {
		fprintf(stderr, "no directory to replay\n");
		return 1;
	}
	return failed || bad ? 1 : 0;
}
