/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * script-parse.c: reading the lines of "blkfront-test script FILE".
 *
 * Words, numbers (decimal or 0x hex), op names (libblkring's
 * blkreq_op_parse), statuses, page references, patterns, and the
 * arguments of send, wait and wait-all into the parsed-command structs
 * of script-parse.h.  No step runs here: script.c executes what this file
 * reads (the language: blkfront-test.1, SCRIPT FORMAT, and
 * frontend-test/README.script).
 */
#include <config.h>

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <xen/io/blkif.h>

#include "ft.h"
#include "script-parse.h"

void
sc_vreport(const struct sc_where *at, const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s:%u: %s", at->file, at->line, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int
sc_syntax(const struct sc_where *at, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sc_vreport(at, "syntax: ", fmt, ap);
	va_end(ap);
	return 2;
}

int
sc_num(const char *s, uint64_t *out)
{
	char *end;
	int neg = s[0] == '-';

	errno = 0;
	*out = neg ? (uint64_t)strtoll(s, &end, 0) : strtoull(s, &end, 0);
	return errno || end == s || *end ? -1 : 0;
}

/* An op by libblkring's name for it (blkreq_op_name), "reserved1" as
 * well (this tool's older spelling of op 4), or a number. */
int
sc_parse_op(const char *v, uint8_t *op)
{
	uint64_t n;

	if (strcmp(v, "reserved1") == 0) {
		*op = BLKIF_OP_RESERVED_1;
		return 0;
	}
	if (blkreq_op_parse(v, op) == 0)
		return 0;
	if (sc_num(v, &n) || n > 255)
		return -1;
	*op = (uint8_t)n;
	return 0;
}

int
sc_parse_status(const char *v, int *st)
{
	uint64_t n;

	if (strcasecmp(v, "OKAY") == 0 || strcasecmp(v, "OK") == 0)
		*st = BLKIF_RSP_OKAY;
	else if (strcasecmp(v, "ERROR") == 0)
		*st = BLKIF_RSP_ERROR;
	else if (strcasecmp(v, "EOPNOTSUPP") == 0)
		*st = BLKIF_RSP_EOPNOTSUPP;
	else if (sc_num(v, &n) == 0)
		*st = (int)(int64_t)n;
	else
		return -1;
	return 0;
}

const char *
sc_status_name(int st)
{
	static char buf[16];

	switch (st) {
	case BLKIF_RSP_OKAY: return "OKAY";
	case BLKIF_RSP_ERROR: return "ERROR";
	case BLKIF_RSP_EOPNOTSUPP: return "EOPNOTSUPP";
	}
	snprintf(buf, sizeof(buf), "%d", st);
	return buf;
}

/*
 * A page reference: "pN" (pool page N), a name from "grant", or
 * (for grefs only) a raw number.  Sets *page (NULL for raw numbers).
 */
int
sc_resolve(const struct sc_names *nm, const char *v, void **page, grant_ref_t *gref,
	   bool allow_raw)
{
	uint64_t n;
	unsigned int i;

	*page = NULL;
	if (v[0] == 'p' && isdigit((unsigned char)v[1]) && sc_num(v + 1, &n) == 0) {
		*page = blkfront_raw_page(nm->bf, (unsigned int)n, gref);
		if (!*page)
			return -1;
		return 0;
	}
	for (i = 0; i < nm->ngrants; i++)
		if (strcmp(nm->grants[i].name, v) == 0) {
			*page = nm->grants[i].page;
			*gref = nm->grants[i].gref;
			return 0;
		}
	if (allow_raw && sc_num(v, &n) == 0 && n <= 0xffffffffu) {
		*gref = (grant_ref_t)n;
		return 0;
	}
	return -1;
}

/* PATTERN: zero | byte:N | seed:N */
int
sc_pattern(const char *v, void *buf, size_t len)
{
	uint64_t n;

	if (strcmp(v, "zero") == 0) {
		memset(buf, 0, len);
		return 0;
	}
	if (strncmp(v, "byte:", 5) == 0 && sc_num(v + 5, &n) == 0 && n < 256) {
		memset(buf, (int)n, len);
		return 0;
	}
	if (strncmp(v, "seed:", 5) == 0 && sc_num(v + 5, &n) == 0) {
		ft_pattern_fill(buf, len, n);
		return 0;
	}
	return -1;
}


int
sc_split_words(const struct sc_where *at, char *line, char **argv, int *argc)
{
	char *save = NULL, *w;
	char *hash = strchr(line, '#');

	*argc = 0;
	if (hash)
		*hash = '\0';
	for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
		if (*argc == SC_MAX_WORDS)
			return sc_syntax(at, "more than %d words", SC_MAX_WORDS);
		argv[(*argc)++] = w;
	}
	return 0;
}

int
sc_get_timeout(const struct sc_where *at, int argc, char **argv, int first, unsigned int *t)
{
	int i;
	uint64_t n;

	for (i = first; i < argc; i++) {
		if (strncmp(argv[i], "timeout=", 8) == 0) {
			if (sc_num(argv[i] + 8, &n))
				return sc_syntax(at, "bad timeout=%s", argv[i] + 8);
			*t = (unsigned int)n;
		}
	}
	return 0;
}

int
sc_parse_send(const struct sc_where *at, const struct sc_names *nm, int argc, char **argv,
	      struct blkreq *req, struct sc_send_cmd *cmd)
{
	bool have_nseg = false, have_op = false;
	unsigned int i;
	uint64_t n;

	memset(cmd, 0, sizeof(*cmd));
	cmd->ind_op = BLKIF_OP_WRITE;
	cmd->push = true;
	cmd->timeout = SC_DEFAULT_WAIT;
	for (i = 1; i < (unsigned int)argc; i++) {
		char *k = argv[i], *v = strchr(k, '=');

		if (strcmp(k, "nopush") == 0) {
			cmd->push = false;
			continue;
		}
		if (!v)
			return sc_syntax(at, "send: expected KEY=VALUE, got %s", k);
		*v++ = '\0';
		if (strcmp(k, "op") == 0) {
			if (sc_parse_op(v, &req->operation))
				goto badval;
			have_op = true;
		} else if (strcmp(k, "indirect_op") == 0) {
			if (sc_parse_op(v, &cmd->ind_op))
				goto badval;
		} else if (strcmp(k, "id") == 0) {
			if (sc_num(v, &req->id))
				goto badval;
		} else if (strcmp(k, "sector") == 0) {
			if (sc_num(v, &req->sector))
				goto badval;
		} else if (strcmp(k, "handle") == 0) {
			if (sc_num(v, &n))
				goto badval;
			req->handle = (blkif_vdev_t)n;
		} else if (strcmp(k, "nr_segments") == 0) {
			if (sc_num(v, &n) || n > 0xffff)
				goto badval;
			req->nr_segments = (unsigned int)n;
			have_nseg = true;
		} else if (strcmp(k, "nr_sectors") == 0) {
			if (sc_num(v, &req->nr_sectors))
				goto badval;
		} else if (strcmp(k, "secure") == 0) {
			req->discard_secure = strcmp(v, "0") != 0;
		} else if (strcmp(k, "seg") == 0) {
			char *f = strchr(v, ':'), *l = NULL;
			void *page;
			uint64_t fs = 0, ls = 7;

			if (f) {
				*f++ = '\0';
				l = strchr(f, ':');
				if (!l)
					goto badval;
				*l++ = '\0';
				if (sc_num(f, &fs) || sc_num(l, &ls) || fs > 255 || ls > 255)
					goto badval;
			}
			if (cmd->nseg == ARRAY_SIZE(cmd->segs))
				return sc_syntax(at, "send: more than %zu seg=",
						 ARRAY_SIZE(cmd->segs));
			if (sc_resolve(nm, v, &page, &cmd->segs[cmd->nseg].gref, true))
				goto badval;
			cmd->segs[cmd->nseg].first_sect = (uint8_t)fs;
			cmd->segs[cmd->nseg].last_sect = (uint8_t)ls;
			cmd->nseg++;
		} else if (strcmp(k, "igref") == 0) {
			void *page;

			if (cmd->nigref == ARRAY_SIZE(cmd->igrefs) ||
			    sc_resolve(nm, v, &page, &cmd->igrefs[cmd->nigref], true))
				goto badval;
			cmd->nigref++;
		} else if (strcmp(k, "expect") == 0) {
			cmd->have_expect = true;
			if (strcmp(v, "none") == 0)
				cmd->expect_none = true;
			else if (sc_parse_status(v, &cmd->want_st))
				goto badval;
		} else if (strcmp(k, "timeout") == 0) {
			if (sc_num(v, &n))
				goto badval;
			cmd->timeout = (unsigned int)n;
		} else {
			return sc_syntax(at, "send: unknown key %s", k);
		}
		continue;
badval:
		return sc_syntax(at, "send: bad value for %s: %s", k, v ? v : "");
	}
	if (!have_op)
		return sc_syntax(at, "send: op= is required");
	if (!have_nseg)
		req->nr_segments = cmd->nseg;
	req->op = req->operation;
	return 0;
}

int
sc_parse_wait(const struct sc_where *at, int argc, char **argv, unsigned int ring_gen,
	      struct sc_wait_cmd *cmd)
{
	bool have_id = false;
	uint64_t n;
	int i;

	memset(cmd, 0, sizeof(*cmd));
	cmd->timeout = SC_DEFAULT_WAIT;
	cmd->ring = -1;
	for (i = 1; i < argc; i++) {
		char *v = strchr(argv[i], '=');

		if (!v)
			return sc_syntax(at, "wait: expected KEY=VALUE, got %s", argv[i]);
		v++;
		if (strncmp(argv[i], "id=", 3) == 0) {
			if (sc_num(v, &cmd->id))
				return sc_syntax(at, "wait: bad id %s", v);
			have_id = true;
		} else if (strncmp(argv[i], "status=", 7) == 0) {
			if (sc_parse_status(v, &cmd->st))
				return sc_syntax(at, "wait: bad status %s", v);
			cmd->have_st = true;
		} else if (strncmp(argv[i], "op=", 3) == 0) {
			if (sc_parse_op(v, &cmd->op))
				return sc_syntax(at, "wait: bad op %s", v);
			cmd->have_op = true;
		} else if (strncmp(argv[i], "timeout=", 8) == 0) {
			if (sc_num(v, &n))
				return sc_syntax(at, "wait: bad timeout %s", v);
			cmd->timeout = (unsigned int)n;
		} else if (strncmp(argv[i], "ring=", 5) == 0) {
			if (sc_num(v, &n) || n > ring_gen)
				return sc_syntax(at, "wait: bad ring %s", v);
			cmd->ring = (int)n;
		} else {
			return sc_syntax(at, "wait: unknown key %s", argv[i]);
		}
	}
	if (!have_id)
		return sc_syntax(at, "wait: id= is required");
	return 0;
}

int
sc_parse_wait_all(const struct sc_where *at, int argc, char **argv,
		  struct sc_wait_all_cmd *cmd)
{
	int i;

	memset(cmd, 0, sizeof(*cmd));
	cmd->timeout = SC_DEFAULT_WAIT;
	for (i = 1; i < argc; i++) {
		if (strncmp(argv[i], "status=", 7) == 0) {
			if (sc_parse_status(argv[i] + 7, &cmd->st))
				return sc_syntax(at, "wait-all: bad status %s", argv[i] + 7);
			cmd->have_st = true;
		} else if (strncmp(argv[i], "timeout=", 8) != 0) {
			return sc_syntax(at, "wait-all: unknown argument %s", argv[i]);
		}
	}
	return sc_get_timeout(at, argc, argv, 1, &cmd->timeout);
}
