/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xt-holes: report how much of a byte range of a file holds data, using
 * lseek(SEEK_DATA/SEEK_HOLE) (the filesystem's own extent map, not the
 * contents).  Used in dom0 by check-xen to prove that a guest's discard
 * reached the backing file as punched holes.
 *
 *   xt-holes FILE OFFSET LENGTH
 *
 * Prints "data=<bytes> hole=<bytes>" for [OFFSET, OFFSET+LENGTH) and exits
 * 0 when the whole range is a hole, 1 when some of it is data, 2 on error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 0);
	return (errno || end == s || *end) ? -EINVAL : 0;
}

int main(int argc, char **argv)
{
	uint64_t off, len, end, data = 0;
	off_t pos, d, h;
	int fd;

	if (argc != 4 || parse_u64(argv[2], &off) || parse_u64(argv[3], &len) ||
	    off + len < off) {
		fprintf(stderr, "usage: xt-holes FILE OFFSET LENGTH\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "xt-holes: open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	end = off + len;
	pos = (off_t)off;
	while ((uint64_t)pos < end) {
		d = lseek(fd, pos, SEEK_DATA);
		if (d < 0 && errno == ENXIO)
			break;		/* no data after pos */
		if (d < 0) {
			fprintf(stderr, "xt-holes: SEEK_DATA %s: %s\n", argv[1], strerror(errno));
			return 2;
		}
		if ((uint64_t)d >= end)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h < 0) {
			fprintf(stderr, "xt-holes: SEEK_HOLE %s: %s\n", argv[1], strerror(errno));
			return 2;
		}
		if ((uint64_t)h > end)
			h = (off_t)end;
		data += (uint64_t)(h - d);
		pos = h;
	}
	close(fd);
	printf("data=%" PRIu64 " hole=%" PRIu64 "\n", data, len - data);
	return data ? 1 : 0;
}
