/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-fuzz-corpus.c: replay every file of ring/fuzz-corpus/ through the
 * fuzz harness with the normal compiler, so a seed (or a committed
 * crash reproducer) that breaks an invariant fails "make check" without
 * clang.  The directory comes from $FUZZ_CORPUS (set by Makefile.am),
 * else $srcdir/fuzz-corpus.
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

int main(void)
{
	const char *dir = getenv("FUZZ_CORPUS");
	char defdir[PATH_MAX], path[PATH_MAX];
	struct dirent *de;
	unsigned int count = 0, failed = 0;
	DIR *d;

	if (dir == NULL || dir[0] == '\0') {
		const char *srcdir = getenv("srcdir");

		snprintf(defdir, sizeof(defdir), "%s/fuzz-corpus",
			 srcdir ? srcdir : ".");
		dir = defdir;
	}
	d = opendir(dir);
	if (d == NULL) {
		fprintf(stderr, "%s: %m\n", dir);
		return 1;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir,
				     de->d_name) >= sizeof(path))
			continue;
		if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		failed += replay_file(path);
		count++;
	}
	closedir(d);
	printf("%u corpus files replayed, %u unreadable\n", count, failed);
	if (count == 0) {
		fprintf(stderr, "%s: no corpus files\n", dir);
		return 1;
	}
	return failed ? 1 : 0;
}
