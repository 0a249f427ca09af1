/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkbackd-ctl-output.h: blkbackd-ctl's output formats, private to that
 * program (backend/Makefile.am: blkbackd_ctl_SOURCES only, as json-c is
 * its alone).  blkbackd-ctl.c parses the daemon's answer into records
 * (ctl-proto.h) and hands them here to print on stdout as a table, as
 * JSON (json-c, one document per line, the schema of blkbackd-ctl.8
 * JSON) or in Prometheus's text format.  Nothing here calls back into
 * blkbackd-ctl.c: a failure is returned, and the caller says it.
 * Single-threaded, as the program is.
 */
#ifndef BLKBACKD_CTL_OUTPUT_H
#define BLKBACKD_CTL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl-proto.h"

/* The records of one answer, in the order blkbackd sent them; r is the
 * caller's (malloc'd), the strings point into the answer's buffer. */
struct recs {
	unsigned int n;
	struct bk_ctl_record *r;
};

/* Field key of r as a decimal number; 0 when absent. */
uint64_t ctlout_u64(const struct bk_ctl_record *r, const char *key);
/* Field key of r; dflt when absent or empty. */
const char *ctlout_str(const struct bk_ctl_record *r, const char *key, const char *dflt);

/*
 * JSON, each one document on one line of stdout.  false, with nothing
 * printed, when json-c ran out of memory for it (the caller says so).
 */
/* {"error": {"errno": ENAME, "message": MSG, "exit": RC}}, then stdout flushed */
bool ctlout_json_error(int rc, const char *ename, const char *msg);
/* {"vbds": [...]} of the list (latency false) or stats (true) answer */
bool ctlout_json_vbds(const struct recs *rs, bool latency);
/* the status answer's one record */
bool ctlout_json_status(const struct bk_ctl_record *r);

/* Prometheus's text format: the stats answer's series */
void ctlout_prom_stats(const struct recs *rs);
/* status; r NULL: blkbackd did not answer, stalled: the vbds it left
 * attached without a backend (0 when none or unknown) */
void ctlout_prom_status(const struct bk_ctl_record *r, unsigned int stalled);

/* Tables for a reader: list, stats, and status as "key: value" lines */
void ctlout_table_list(const struct recs *rs);
void ctlout_table_stats(const struct recs *rs);
void ctlout_table_status(const struct bk_ctl_record *r);

#endif
