/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mkcrashlog: write a crash log (include/crashlog.h) from a text script,
 * for hand-built test cases.  Usage: mkcrashlog OUT < SCRIPT
 *
 *   dev BYTES [writethrough]      the file header (first line)
 *   W OFFSET LEN BYTE [fua|durable] [failed]
 *                                 a write of LEN bytes, all equal to BYTE
 *                                 (0..255); fua marks it FUA and durable,
 *                                 durable only durable (as the recorder
 *                                 logs writes to a writethrough store)
 *   F [COVERS]                    a flush covering seq < COVERS (default:
 *                                 everything before it)
 *   FX                            a failed flush (-EIO)
 *   D OFFSET LEN                  a discard
 *   C                             a power-cut record
 *   tear BYTES                    drop the last BYTES bytes of the file
 *   garbage BYTES                 append BYTES bytes of 0xa5
 *   diff BASE FINAL SEED          a 4096-byte WRITE of FINAL's content for
 *                                 every block where the two files differ,
 *                                 in an order shuffled by SEED (0: in order)
 *   # ...                         a comment
 *
 * Exit 0, or 1 with a message naming the line.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crashlog.h"

static int
die(unsigned long line, const char *msg)
{
	fprintf(stderr, "mkcrashlog: line %lu: %s\n", line, msg);
	return 1;
}

static int
emit_diff(FILE *out, const char *base, const char *fin, unsigned long long seed,
	  uint64_t *seq)
{
	FILE *fb = fopen(base, "r"), *ff = fopen(fin, "r");
	unsigned char b1[4096], b2[4096];
	uint64_t *blocks = NULL, n = 0, cap = 0, i, blk = 0, st = seed;
	int r = -1;

	if (!fb || !ff)
		goto out;
	for (;; blk++) {
		size_t l1 = fread(b1, 1, sizeof(b1), fb);
		size_t l2 = fread(b2, 1, sizeof(b2), ff);

		if (l2 == 0)
			break;
		if (l1 < l2)
			memset(b1 + l1, 0, l2 - l1);
		if (l2 != sizeof(b2) || memcmp(b1, b2, l2) == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			blocks = realloc(blocks, cap * sizeof(*blocks));
			if (!blocks)
				goto out;
		}
		blocks[n++] = blk;
	}
	for (i = n; seed && i > 1; i--) {	/* Fisher-Yates */
		uint64_t j, t;

		st = st * 6364136223846793005ull + 1442695040888963407ull;
		j = (st >> 33) % i;
		t = blocks[i - 1];
		blocks[i - 1] = blocks[j];
		blocks[j] = t;
	}
	for (i = 0; i < n; i++) {
		struct crashlog_rec rec = { .type = CRASHLOG_WRITE, .seq = (*seq)++,
					    .offset = blocks[i] * 4096, .len = 4096 };
		unsigned char hdr[CRASHLOG_REC_SIZE];

		if (fseek(ff, (long)rec.offset, SEEK_SET) < 0 ||
		    fread(b2, 1, sizeof(b2), ff) != sizeof(b2))
			goto out;
		rec.hash = crashlog_hash(b2, sizeof(b2));
		crashlog_encode_rec(hdr, &rec);
		fwrite(hdr, 1, sizeof(hdr), out);
		fwrite(b2, 1, sizeof(b2), out);
	}
	r = 0;
out:
	free(blocks);
	if (fb)
		fclose(fb);
	if (ff)
		fclose(ff);
	return r;
}

int
main(int argc, char **argv)
{
	char buf[512];
	unsigned long line = 0;
	uint64_t seq = 1;
	FILE *out;

	if (argc != 2) {
		fprintf(stderr, "usage: mkcrashlog OUT < SCRIPT\n");
		return 1;
	}
	out = fopen(argv[1], "w+");
	if (!out) {
		perror(argv[1]);
		return 1;
	}
	while (fgets(buf, sizeof(buf), stdin)) {
		struct crashlog_rec r = { .seq = seq };
		unsigned char hdr[CRASHLOG_REC_SIZE];
		unsigned long long a = 0, b = 0, c = 0;
		char w1[32] = "", w2[32] = "";
		unsigned char *data = NULL;
		int n;

		line++;
		if (buf[0] == '#' || buf[0] == '\n')
			continue;
		if (!strncmp(buf, "dev ", 4)) {
			struct crashlog_hdr h = { .version = CRASHLOG_VERSION,
						  .sector = 512,
						  .flags = CRASHLOG_F_WRITEBACK };
			unsigned char hb[CRASHLOG_HDR_SIZE];

			n = sscanf(buf, "dev %llu %31s", &a, w1);
			if (n < 1)
				return die(line, "dev BYTES [writethrough]");
			h.dev_size = a;
			if (n == 2 && !strcmp(w1, "writethrough"))
				h.flags = 0;
			crashlog_encode_hdr(hb, &h);
			fwrite(hb, 1, sizeof(hb), out);
			continue;
		}
		if (!strncmp(buf, "tear ", 5) || !strncmp(buf, "garbage ", 8)) {
			long end;

			if (sscanf(strchr(buf, ' '), "%llu", &a) != 1)
				return die(line, "tear|garbage BYTES");
			fflush(out);
			fseek(out, 0, SEEK_END);
			end = ftell(out);
			if (buf[0] == 't') {
				if ((unsigned long long)end < a ||
				    ftruncate(fileno(out), end - (long)a) < 0)
					return die(line, "cannot tear that much");
			} else {
				while (a--)
					fputc(0xa5, out);
			}
			fseek(out, 0, SEEK_END);
			continue;
		}
		if (!strncmp(buf, "diff ", 5)) {
			char base[256], fin[256];

			if (sscanf(buf, "diff %255s %255s %llu", base, fin, &a) != 3)
				return die(line, "diff BASE FINAL SEED");
			if (emit_diff(out, base, fin, a, &seq) < 0)
				return die(line, "diff: cannot read the files");
			continue;
		}
		if (buf[0] == 'W') {
			n = sscanf(buf, "W %llu %llu %llu %31s %31s", &a, &b, &c, w1, w2);
			if (n < 3)
				return die(line, "W OFFSET LEN BYTE [fua|durable] [failed]");
			r.type = CRASHLOG_WRITE;
			r.offset = a;
			r.len = b;
			if (!strcmp(w1, "fua") || !strcmp(w2, "fua"))
				r.flags |= CRASHLOG_R_FUA | CRASHLOG_R_DURABLE;
			if (!strcmp(w1, "durable") || !strcmp(w2, "durable"))
				r.flags |= CRASHLOG_R_DURABLE;
			if (!strcmp(w1, "failed") || !strcmp(w2, "failed")) {
				r.flags |= CRASHLOG_R_FAILED;
				r.result = -EIO;
			} else {
				data = malloc(b ? b : 1);
				if (!data)
					return die(line, "out of memory");
				memset(data, (int)c, b);
				r.hash = crashlog_hash(data, b);
			}
		} else if (buf[0] == 'F' && buf[1] == 'X') {
			r.type = CRASHLOG_FLUSH;
			r.flags = CRASHLOG_R_FAILED;
			r.result = -EIO;
			r.covers = seq;
		} else if (buf[0] == 'F') {
			r.type = CRASHLOG_FLUSH;
			r.covers = seq;
			if (sscanf(buf, "F %llu", &a) == 1)
				r.covers = a;
		} else if (buf[0] == 'D') {
			if (sscanf(buf, "D %llu %llu", &a, &b) != 2)
				return die(line, "D OFFSET LEN");
			r.type = CRASHLOG_DISCARD;
			r.offset = a;
			r.len = b;
		} else if (buf[0] == 'C') {
			r.type = CRASHLOG_CUT;
		} else {
			return die(line, "unknown record");
		}
		crashlog_encode_rec(hdr, &r);
		fwrite(hdr, 1, sizeof(hdr), out);
		if (data)
			fwrite(data, 1, r.len, out);
		free(data);
		seq++;
	}
	if (fclose(out) != 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
