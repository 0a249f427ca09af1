/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * script-parse.h: the script parser (script-parse.c), private to
 * blkfront-test's script mode (frontend-test/).
 *
 * script-parse.c reads a script's words: numbers, op and status names,
 * page references, patterns, and the arguments of "send", "wait" and
 * "wait-all" into the parsed-command structs below.  script.c runs the
 * steps (sends raw requests, checks responses) and calls the parser;
 * the parser never calls script.c.
 *
 * Every sc_parse_* / sc_split_words returns 0, or 2 after printing
 * "FILE:LINE: syntax: message" (the script's "malformed line" exit
 * status).  The other helpers return 0 or -1 and print nothing.
 */
#ifndef FT_SCRIPT_PARSE_H
#define FT_SCRIPT_PARSE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "compiler.h"
#include "blkfront.h"

#define SC_MAX_WORDS	300	/* send: 256 seg= and the rest */
#define SC_DEFAULT_WAIT	5000u	/* ms */

/* Where a step is: the script's name and its 1-based line number. */
struct sc_where {
	const char *file;
	unsigned int line;
};

/* "FILE:LINE: [prefix]message" on stderr. */
void sc_vreport(const struct sc_where *at, const char *prefix, const char *fmt, va_list ap);
/* A line the script parser cannot read: prints "syntax: ..." and returns 2. */
int sc_syntax(const struct sc_where *at, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(2, 3);

/* A page named by "grant NAME": the page we share and its gref. */
struct sc_grant {
	char name[32];
	void *page;
	grant_ref_t gref;
};

/* What a page reference may name: bf's pool pages (pN) and the grants. */
struct sc_names {
	blkfront_t *bf;
	const struct sc_grant *grants;
	unsigned int ngrants;
};

/* A whole number, decimal or 0x hex; a leading '-' wraps (strtoll). */
int sc_num(const char *s, uint64_t *out);
/* An op by libblkring's name (blkreq_op_parse), "reserved1", or 0..255. */
int sc_parse_op(const char *v, uint8_t *op);
/* OKAY|OK|ERROR|EOPNOTSUPP (any case) or a number. */
int sc_parse_status(const char *v, int *st);
/* A status's name, or its number (a static buffer: one thread). */
const char *sc_status_name(int st);
/*
 * A page reference: "pN" (pool page N), a name from "grant", or (only
 * with allow_raw) a raw gref number.  Sets *page (NULL for raw numbers)
 * and *gref.
 */
int sc_resolve(const struct sc_names *nm, const char *v, void **page, grant_ref_t *gref,
	       bool allow_raw);
/* PATTERN: zero | byte:N | seed:N, written into buf[0..len). */
int sc_pattern(const char *v, void *buf, size_t len);

/*
 * Split line (modified: '#' ends it, words NUL-terminated) into at most
 * SC_MAX_WORDS words; *argc 0 for an empty line.
 */
int sc_split_words(const struct sc_where *at, char *line, char **argv, int *argc);

/* timeout=MS among argv[first..argc) (the last one wins); *t unchanged
 * without one. */
int sc_get_timeout(const struct sc_where *at, int argc, char **argv, int first,
		   unsigned int *t);

/*
 * "send KEY=VALUE... [nopush]".  req comes in with its defaults (id,
 * handle) and leaves with every field the line sets, nr_segments
 * defaulting to the number of seg=, and req->op the operation (an
 * INDIRECT's is set by the executor from indirect_op).  argv's words
 * are modified.
 */
struct sc_send_cmd {
	uint8_t ind_op;			/* indirect_op=, default WRITE */
	grant_ref_t igrefs[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];
	unsigned int nigref;
	struct blkreq_seg segs[BLKRING_MAX_INDIRECT_SEGMENTS];
	unsigned int nseg;
	bool push;			/* false with nopush */
	bool have_expect, expect_none;
	int want_st;			/* expect=STATUS */
	unsigned int timeout;		/* ms */
};
int sc_parse_send(const struct sc_where *at, const struct sc_names *nm, int argc,
		  char **argv, struct blkreq *req, struct sc_send_cmd *cmd);

/* "wait id=N [status=S] [op=OP] [timeout=MS] [ring=K]"; K <= ring_gen. */
struct sc_wait_cmd {
	uint64_t id;
	bool have_st, have_op;
	int st;
	uint8_t op;
	unsigned int timeout;		/* ms */
	int ring;			/* -1: any */
};
int sc_parse_wait(const struct sc_where *at, int argc, char **argv, unsigned int ring_gen,
		  struct sc_wait_cmd *cmd);

/* "wait-all [status=S] [timeout=MS]". */
struct sc_wait_all_cmd {
	bool have_st;
	int st;
	unsigned int timeout;		/* ms */
};
int sc_parse_wait_all(const struct sc_where *at, int argc, char **argv,
		      struct sc_wait_all_cmd *cmd);

#endif /* FT_SCRIPT_PARSE_H */
