/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-replay.c: run fuzz-xs.c's LLVMFuzzerTestOneInput on every file of
 * the corpus (default $srcdir/fuzz-corpus) or on the files and
 * directories given as arguments.  Built with gcc for "make check", so
 * the corpus (seeds and any crash once fixed) stays a regression test.
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

int
main(int argc, char **argv)
{
	const char *srcdir = getenv("srcdir");
	unsigned int count = 0;
	char *def = NULL;
	int r = 0;

	if (argc < 2) {
		if (asprintf(&def, "%s/fuzz-corpus", srcdir ? srcdir : ".") < 0)
			return 1;
		r = run_path(def, &count);
		free(def);
	}
	for (int i = 1; i < argc; i++)
		if (run_path(argv[i], &count) < 0)
			r = -1;
	printf("%u inputs replayed\n", count);
	return r < 0 || count == 0;
}
