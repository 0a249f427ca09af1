/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkbackd-ctl-output.c: blkbackd-ctl's output formats: the answer's
 * records as JSON (built and printed by json-c), in Prometheus's text
 * format, or as tables.  See blkbackd-ctl-output.h; blkbackd-ctl.c asks
 * the daemon and calls these.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "compiler.h"		/* ARRAY_SIZE */
#include "blkbackd-ctl-output.h"
#include "dataplane.h"		/* BK_LAT_BUCKETS, bk_lat_quantile() */

/* ---------------------------------------------------------------- */
/* Records.                                                           */
/* ---------------------------------------------------------------- */

uint64_t
ctlout_u64(const struct bk_ctl_record *r, const char *key)
{
	const char *v = bk_ctl_get(r, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

const char *
ctlout_str(const struct bk_ctl_record *r, const char *key, const char *dflt)
{
	const char *v = bk_ctl_get(r, key);

	return v && *v ? v : dflt;
}

/* The record's lat_us histogram into h; false when absent. */
static bool
get_hist(const struct bk_ctl_record *r, uint64_t *h)
{
	const char *v = bk_ctl_get(r, "lat_us");
	unsigned int i;
	char *end;

	memset(h, 0, sizeof(*h) * BK_LAT_BUCKETS);
	if (!v)
		return false;
	for (i = 0; i < BK_LAT_BUCKETS && *v; i++) {
		h[i] = strtoull(v, &end, 10);
		v = *end == ',' ? end + 1 : end;
	}
	return true;
}

/* ---------------------------------------------------------------- */
/* JSON.                                                              */
/* ---------------------------------------------------------------- */

/* Length of the well-formed UTF-8 sequence (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF) at s, or 0. */
static size_t
utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

/*
 * json-c builds and prints the documents (one per line); what is ours
 * is the schema below and what json-c leaves to its caller.  Any
 * json_object_new_*() or add may fail for memory: json_oom records it,
 * and json_emit() then prints nothing, so that a document is printed
 * whole or not at all.
 */
#define JSON_FLAGS (JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE)

static bool json_oom;

/* o, noting a failed allocation (NULL) */
static json_object *
json_ok(json_object *o)
{
	if (!o)
		json_oom = true;
	return o;
}

/* obj[key] = val, val NULL being JSON null; obj takes val. */
static void
json_set(json_object *obj, const char *key, json_object *val)
{
	if (!obj || json_object_object_add(obj, key, val)) {
		json_object_put(val);
		json_oom = true;
	}
}

/*
 * doc on one line on stdout, then freed (doc NULL: nothing to print).
 * false, with nothing printed, when json-c ran out of memory for it.
 */
static bool
json_emit(json_object *doc)
{
	const char *text = NULL;
	bool oom = json_oom;

	json_oom = false;
	if (doc && !oom)
		text = json_object_to_json_string_ext(doc, JSON_FLAGS);
	if (text)
		printf("%s\n", text);
	json_object_put(doc);
	return text != NULL;
}

/*
 * s as a JSON string.  json-c escapes ", \ and control characters but
 * copies other bytes as they are: a byte that is not part of well-formed
 * UTF-8 becomes U+FFFD here, so that the output is always UTF-8.
 */
static json_object *
json_string(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str), o = 0, n;
	char *buf = malloc(3 * len + 1);	/* each byte at most U+FFFD's 3 */
	json_object *j;

	if (!buf)
		return json_ok(NULL);
	while (*s) {
		if (*s < 0x80) {
			buf[o++] = (char)*s++;
		} else if ((n = utf8_len(s)) != 0) {
			memcpy(buf + o, s, n);
			o += n;
			s += n;
		} else {
			memcpy(buf + o, "\xef\xbf\xbd", 3);
			o += 3;
			s++;
		}
	}
	j = json_object_new_string_len(buf, (int)o);
	free(buf);
	return json_ok(j);
}

/*
 * The JSON of each command is a fixed schema (blkbackd-ctl.8 JSON): every
 * key is always there, with its type, or null when blkbackd did not say
 * (a key older daemons do not send, a feature of a disconnected vbd, a
 * node that holds no number).  Keys blkbackd sends and the schema does
 * not name are left out.
 */
enum jtype { J_STR, J_NUM, J_BOOL, J_HIST };

struct jfield {
	const char *key;
	enum jtype type;
};

static const struct jfield list_schema[] = {
	{ "vbd", J_STR }, { "domid", J_NUM }, { "devid", J_NUM }, { "guest", J_STR },
	{ "vdev", J_STR }, { "params", J_STR }, { "state", J_NUM }, { "state_name", J_STR },
	{ "frontend_state", J_NUM }, { "phase", J_STR }, { "queues", J_NUM },
	{ "ring_pages", J_NUM }, { "sectors", J_NUM }, { "flush_cache", J_BOOL },
	{ "barrier", J_BOOL }, { "discard", J_BOOL }, { "persistent", J_BOOL },
	{ "fua", J_STR }, { "writeback", J_BOOL }, { "read_only", J_BOOL },
	{ "engine", J_STR }, { "pgrants", J_NUM }, { "failed", J_BOOL }, { "removed", J_BOOL },
	{ "error", J_STR }, { NULL, 0 },
};

static const struct jfield stats_schema[] = {
	{ "vbd", J_STR }, { "domid", J_NUM }, { "devid", J_NUM }, { "guest", J_STR },
	{ "vdev", J_STR }, { "connected", J_BOOL }, { "rd_req", J_NUM }, { "wr_req", J_NUM },
	{ "flush_req", J_NUM }, { "barrier_req", J_NUM }, { "discard_req", J_NUM },
	{ "rd_sect", J_NUM }, { "wr_sect", J_NUM }, { "discard_sect", J_NUM },
	{ "oo_req", J_NUM }, { "errors", J_NUM }, { "eopnotsupp", J_NUM },
	{ "pgrants", J_NUM }, { "pgrant_maps", J_NUM }, { "lat_us", J_HIST },
	{ "lat_sum_ns", J_NUM }, { NULL, 0 },
};

static const struct jfield status_schema[] = {
	{ "pid", J_NUM }, { "version", J_STR }, { "uptime_s", J_NUM }, { "transport", J_STR },
	{ "domid", J_NUM }, { "vbds", J_NUM }, { "connected", J_NUM },
	{ "close_on_exit", J_BOOL }, { NULL, 0 },
};

/* A decimal number without sign or leading zero (what blkbackd sends). */
static bool
all_digits(const char *s)
{
	if (!*s || (s[0] == '0' && s[1]) || strlen(s) > 20)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* A list of decimal numbers separated by commas. */
static bool
digit_list(const char *s)
{
	bool digit = false;

	for (; *s; s++) {
		if (*s >= '0' && *s <= '9')
			digit = true;
		else if (*s == ',' && digit)
			digit = false;
		else
			return false;
	}
	return digit;
}

/* A decimal number without sign (leading zeros allowed) that fits in
 * 64 bits, at *s, up to the first character not a digit: into *u;
 * false if none. */
static bool
parse_u64(const char **s, uint64_t *u)
{
	const char *p = *s;
	char *end;

	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	*u = strtoull(p, &end, 10);
	if (errno)
		return false;
	*s = end;
	return true;
}

/* v (the number blkbackd sent) as a JSON number, or NULL (null) if it
 * is none or more than 64 bits */
static json_object *
json_u64(const char *v)
{
	uint64_t u;

	if (!v || !all_digits(v) || !parse_u64(&v, &u) || *v)
		return NULL;
	return json_ok(json_object_new_uint64(u));
}

/* a comma-separated list of numbers as a JSON array, or NULL (null) */
static json_object *
json_u64_list(const char *v)
{
	json_object *a, *n;
	uint64_t u;

	if (!v || !digit_list(v))
		return NULL;
	a = json_ok(json_object_new_array());
	while (a && *v) {
		if (!parse_u64(&v, &u)) {	/* more than 64 bits */
			json_object_put(a);
			return NULL;
		}
		n = json_ok(json_object_new_uint64(u));
		if (json_object_array_add(a, n)) {
			json_object_put(n);
			json_oom = true;
		}
		if (*v == ',')
			v++;
	}
	return a;
}

/* a quantile (bk_lat_quantile(), < 0 when none) in µs with one decimal,
 * as blkbackd-ctl has always printed it, or NULL (null) */
static json_object *
json_quantile(double v)
{
	char text[64];

	if (v < 0)
		return NULL;
	snprintf(text, sizeof(text), "%.1f", v);
	return json_ok(json_object_new_double_s(v, text));
}

/* A record as a JSON object per schema. */
static json_object *
json_record(const struct bk_ctl_record *r, const struct jfield *schema)
{
	json_object *o = json_ok(json_object_new_object());
	unsigned int k;

	for (k = 0; o && schema[k].key; k++) {
		const char *v = bk_ctl_get(r, schema[k].key);
		json_object *j = NULL;

		switch (schema[k].type) {
		case J_STR:
			if (v)
				j = json_string(v);
			break;
		case J_NUM:
			j = json_u64(v);
			break;
		case J_BOOL:
			if (v && all_digits(v))
				j = json_ok(json_object_new_boolean(strcmp(v, "0") != 0));
			break;
		case J_HIST:
			j = json_u64_list(v);
			break;
		}
		json_set(o, schema[k].key, j);
	}
	return o;
}

bool
ctlout_json_vbds(const struct recs *rs, bool latency)
{
	json_object *doc = json_ok(json_object_new_object());
	json_object *vbds = json_ok(json_object_new_array());
	unsigned int i;

	for (i = 0; vbds && i < rs->n; i++) {
		const struct bk_ctl_record *r = &rs->r[i];
		json_object *o;

		/* a list record may say state=0 state_name=none: no state */
		if (!latency) {
			struct bk_ctl_record c = *r;

			if (!strcmp(ctlout_str(r, "state_name", "none"), "none"))
				for (unsigned int k = 0; k < c.n; k++)
					if (!strcmp(c.key[k], "state") || !strcmp(c.key[k], "state_name"))
						c.key[k] = "";
			o = json_record(&c, list_schema);
		} else {
			uint64_t h[BK_LAT_BUCKETS];
			json_object *q = json_ok(json_object_new_object());

			o = json_record(r, stats_schema);
			get_hist(r, h);
			json_set(q, "p50", json_quantile(bk_lat_quantile(h, BK_LAT_BUCKETS, 0.50)));
			json_set(q, "p90", json_quantile(bk_lat_quantile(h, BK_LAT_BUCKETS, 0.90)));
			json_set(q, "p99", json_quantile(bk_lat_quantile(h, BK_LAT_BUCKETS, 0.99)));
			json_set(o, "latency_us", q);
		}
		if (o && json_object_array_add(vbds, o)) {
			json_object_put(o);
			json_oom = true;
		}
	}
	json_set(doc, "vbds", vbds);
	return json_emit(doc);
}

bool
ctlout_json_status(const struct bk_ctl_record *r)
{
	return json_emit(json_record(r, status_schema));
}

bool
ctlout_json_error(int rc, const char *ename, const char *msg)
{
	json_object *doc = json_ok(json_object_new_object());
	json_object *err = json_ok(json_object_new_object());
	bool ok;

	json_set(err, "errno", json_string(ename));
	json_set(err, "message", json_string(msg));
	json_set(err, "exit", json_ok(json_object_new_int(rc)));
	json_set(doc, "error", err);
	ok = json_emit(doc);
	fflush(stdout);
	return ok;
}

/* ---------------------------------------------------------------- */
/* Prometheus.                                                        */
/* ---------------------------------------------------------------- */

/* v as a label value: UTF-8 (a byte outside it as U+FFFD), with \\, "
 * and newline escaped. */
static void
prom_escape(const char *v, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)v;
	size_t n = 0, u;

	while (*s && n + 8 < len) {
		if (*s == '"' || *s == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)*s++;
		} else if (*s == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
			s++;
		} else if (*s < 0x80) {
			buf[n++] = (char)*s++;
		} else if ((u = utf8_len(s)) != 0) {
			memcpy(buf + n, s, u);
			n += u;
			s += u;
		} else {
			memcpy(buf + n, "\xef\xbf\xbd", 3);
			n += 3;
			s++;
		}
	}
	buf[n] = '\0';
}

/* The device label: the toolstack's vdev (xvda), else the device id. */
static const char *
prom_device(const struct bk_ctl_record *r)
{
	return ctlout_str(r, "vdev", ctlout_str(r, "devid", "?"));
}

/*
 * Whether vbd i's series need domid among their labels: its guest has no
 * name, or another vbd in rs has the same guest and device (two domains
 * of one name, as during a migration on one host).
 */
static bool
prom_needs_domid(const struct recs *rs, unsigned int i)
{
	const char *g = ctlout_str(&rs->r[i], "guest", NULL), *dev = prom_device(&rs->r[i]);

	if (!g)
		return true;
	for (unsigned int j = 0; j < rs->n; j++)
		if (j != i && !strcmp(ctlout_str(&rs->r[j], "guest", ""), g) &&
		    !strcmp(prom_device(&rs->r[j]), dev))
			return true;
	return false;
}

/*
 * The labels that name vbd i's series: guest="NAME",device="xvda", which
 * stay the same over the guest's reboots (its domid does not), and
 * domid="N" only where prom_needs_domid() says so.
 */
static void
prom_labels(const struct recs *rs, unsigned int i, char *buf, size_t len)
{
	const struct bk_ctl_record *r = &rs->r[i];
	char g[256], dev[128];
	size_t n;

	prom_escape(ctlout_str(r, "guest", ""), g, sizeof(g));
	prom_escape(prom_device(r), dev, sizeof(dev));
	n = (size_t)snprintf(buf, len, "guest=\"%s\",device=\"%s\"", g, dev);
	if (n < len && prom_needs_domid(rs, i))
		snprintf(buf + n, len - n, ",domid=\"%" PRIu64 "\"", ctlout_u64(r, "domid"));
}

static void
prom_family(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample per vbd of key, with an extra label (or NULL). */
static void
prom_each(const struct recs *rs, const char *name, const char *extra, const char *key)
{
	char labels[512];
	unsigned int i;

	for (i = 0; i < rs->n; i++) {
		prom_labels(rs, i, labels, sizeof(labels));
		printf("%s{%s%s%s} %" PRIu64 "\n", name, labels, extra ? "," : "",
		       extra ? extra : "", ctlout_u64(&rs->r[i], key));
	}
}

void
ctlout_prom_stats(const struct recs *rs)
{
	static const struct { const char *op, *key; } reqs[] = {
		{ "read", "rd_req" }, { "write", "wr_req" }, { "flush", "flush_req" },
		{ "barrier", "barrier_req" }, { "discard", "discard_req" },
	}, sects[] = {
		{ "read", "rd_sect" }, { "write", "wr_sect" }, { "discard", "discard_sect" },
	};
	char labels[512], extra[64], vbd[128];
	unsigned int i, k, b;

	prom_family("blkbackd_vbd_info", "gauge",
		    "1 per vbd: its guest and device with the domain and device ids now.");
	for (i = 0; i < rs->n; i++) {
		prom_labels(rs, i, labels, sizeof(labels));
		prom_escape(ctlout_str(&rs->r[i], "vbd", "?"), vbd, sizeof(vbd));
		printf("blkbackd_vbd_info{%s,vbd=\"%s\",devid=\"%" PRIu64 "\"", labels, vbd,
		       ctlout_u64(&rs->r[i], "devid"));
		if (!prom_needs_domid(rs, i))
			printf(",domid=\"%" PRIu64 "\"", ctlout_u64(&rs->r[i], "domid"));
		printf("} 1\n");
	}
	prom_family("blkbackd_requests_total", "counter",
		    "Requests taken off the ring, by operation (Linux blkback's st_*_req).");
	for (k = 0; k < ARRAY_SIZE(reqs); k++) {
		snprintf(extra, sizeof(extra), "op=\"%s\"", reqs[k].op);
		prom_each(rs, "blkbackd_requests_total", extra, reqs[k].key);
	}
	prom_family("blkbackd_sectors_total", "counter",
		    "512-byte sectors read, written and discarded.");
	for (k = 0; k < ARRAY_SIZE(sects); k++) {
		snprintf(extra, sizeof(extra), "op=\"%s\"", sects[k].op);
		prom_each(rs, "blkbackd_sectors_total", extra, sects[k].key);
	}
	prom_family("blkbackd_out_of_requests_total", "counter",
		    "Times the ring had work and no free request (st_oo_req).");
	prom_each(rs, "blkbackd_out_of_requests_total", NULL, "oo_req");
	prom_family("blkbackd_error_responses_total", "counter",
		    "BLKIF_RSP_ERROR responses sent.");
	prom_each(rs, "blkbackd_error_responses_total", NULL, "errors");
	prom_family("blkbackd_eopnotsupp_responses_total", "counter",
		    "BLKIF_RSP_EOPNOTSUPP responses sent.");
	prom_each(rs, "blkbackd_eopnotsupp_responses_total", NULL, "eopnotsupp");
	prom_family("blkbackd_persistent_grants", "gauge", "Persistent grants mapped now.");
	prom_each(rs, "blkbackd_persistent_grants", NULL, "pgrants");
	prom_family("blkbackd_persistent_grant_maps_total", "counter",
		    "Grants ever mapped persistently.");
	prom_each(rs, "blkbackd_persistent_grant_maps_total", NULL, "pgrant_maps");
	prom_family("blkbackd_connected", "gauge", "1 while the vbd is connected to its guest.");
	prom_each(rs, "blkbackd_connected", NULL, "connected");

	prom_family("blkbackd_response_latency_seconds", "histogram",
		    "From a request taken off the ring to its response pushed.");
	for (i = 0; i < rs->n; i++) {
		uint64_t h[BK_LAT_BUCKETS], cum = 0;
		const char *sum = bk_ctl_get(&rs->r[i], "lat_sum_ns");

		get_hist(&rs->r[i], h);
		prom_labels(rs, i, labels, sizeof(labels));
		/* bucket b: [2^b, 2^(b+1)) us; the last one also holds
		 * everything longer, so it is +Inf's alone */
		for (b = 0; b < BK_LAT_BUCKETS - 1; b++) {
			cum += h[b];
			printf("blkbackd_response_latency_seconds_bucket{%s,le=\"%.9g\"} %" PRIu64
			       "\n", labels, ldexp(1.0, (int)b + 1) * 1e-6, cum);
		}
		cum += h[BK_LAT_BUCKETS - 1];
		printf("blkbackd_response_latency_seconds_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n",
		       labels, cum);
		/* an older blkbackd keeps no sum: no _sum rather than a wrong one */
		if (sum)
			printf("blkbackd_response_latency_seconds_sum{%s} %.9f\n", labels,
			       (double)strtoull(sum, NULL, 10) * 1e-9);
		printf("blkbackd_response_latency_seconds_count{%s} %" PRIu64 "\n", labels, cum);
	}
}

void
ctlout_prom_status(const struct bk_ctl_record *r, unsigned int stalled)
{
	char v[128], t[32];

	prom_family("blkbackd_up", "gauge", "1 when blkbackd answered on its control socket.");
	printf("blkbackd_up %d\n", r != NULL);
	if (!r) {
		prom_family("blkbackd_vbds_stalled", "gauge", "vbds blkbackd left attached "
			    "without a backend while it is down (its recovery records).");
		printf("blkbackd_vbds_stalled %u\n", stalled);
		return;
	}
	prom_escape(ctlout_str(r, "version", ""), v, sizeof(v));
	prom_escape(ctlout_str(r, "transport", ""), t, sizeof(t));
	prom_family("blkbackd_info", "gauge", "1, labelled with blkbackd's version and transport.");
	printf("blkbackd_info{version=\"%s\",transport=\"%s\"} 1\n", v, t);
	prom_family("blkbackd_uptime_seconds", "gauge", "Seconds since this blkbackd program started (an upgrade starts again).");
	printf("blkbackd_uptime_seconds %" PRIu64 "\n", ctlout_u64(r, "uptime_s"));
	prom_family("blkbackd_vbds", "gauge", "vbds blkbackd knows.");
	printf("blkbackd_vbds %" PRIu64 "\n", ctlout_u64(r, "vbds"));
	prom_family("blkbackd_vbds_connected", "gauge", "vbds connected to their guests.");
	printf("blkbackd_vbds_connected %" PRIu64 "\n", ctlout_u64(r, "connected"));
}

/* ---------------------------------------------------------------- */
/* Tables.                                                            */
/* ---------------------------------------------------------------- */

static void
features(const struct bk_ctl_record *r, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
#define F(key, word) \
	if (ctlout_u64(r, key) && n < len) \
		n += snprintf(buf + n, len - n, "%s%s", n ? "," : "", word)
	F("flush_cache", "flush");
	F("barrier", "barrier");
	F("discard", "discard");
	F("persistent", "persistent");
	F("read_only", "ro");
#undef F
	if (bk_ctl_get(r, "fua") && n < len)
		n += snprintf(buf + n, len - n, "%sfua=%s", n ? "," : "", ctlout_str(r, "fua", "?"));
	if (!n)
		snprintf(buf, len, "-");
}

/*
 * A node's value as one table cell (buf, len >= 1): well-formed UTF-8
 * as it is, a control byte, DEL, a byte that is not well-formed UTF-8
 * and the backslash itself as \xNN, so that a newline in a params node
 * cannot split a row and the table stays text.  Cut to fit.
 */
static const char *
text_cell(const char *str, char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0, n;

	while (*s) {
		if (*s >= 0x20 && *s < 0x7f && *s != '\\')
			n = 1;
		else if (*s >= 0x80 && (n = utf8_len(s)) != 0)
			;
		else
			n = 0;
		if (n) {
			if (o + n >= len)
				break;
			memcpy(buf + o, s, n);
			s += n;
		} else {
			if (o + 4 >= len)
				break;
			snprintf(buf + o, len - o, "\\x%02x", *s++);
			n = 4;
		}
		o += n;
	}
	buf[o] = '\0';
	return buf;
}

void
ctlout_table_list(const struct recs *rs)
{
	unsigned int i;

	printf("%-12s %-6s %-11s %-5s %6s %4s %7s %-36s %s\n", "VBD", "VDEV", "STATE", "FE",
	       "QUEUES", "RING", "PGRANTS", "FEATURES", "PARAMS");
	for (i = 0; i < rs->n; i++) {
		const struct bk_ctl_record *r = &rs->r[i];
		char f[128], st[48], vdev[64], params[1024];

		features(r, f, sizeof(f));
		/* a failed vbd (blkbackd(8) "A failed vbd") says so beside
		 * its xenbus state, which may still be Connected */
		snprintf(st, sizeof(st), "%s%s%s%s%s", ctlout_str(r, "state_name", "?"),
			 ctlout_u64(r, "failed") ? ",FAILED" : "",
			 !strcmp(ctlout_str(r, "phase", ""), "opening") ? ",OPENING" : "",
			 !strcmp(ctlout_str(r, "phase", ""), "waiting") ? ",WAITING" : "",
			 ctlout_u64(r, "removed") ? ",REMOVED" : "");
		printf("%-12s %-6s %-11s %-5s %6" PRIu64 " %4" PRIu64 " %7" PRIu64 " %-36s %s\n",
		       ctlout_str(r, "vbd", "?"),
		       text_cell(ctlout_str(r, "vdev", "-"), vdev, sizeof(vdev)), st,
		       ctlout_str(r, "frontend_state", "-"), ctlout_u64(r, "queues"),
		       ctlout_u64(r, "ring_pages"), ctlout_u64(r, "pgrants"), f,
		       text_cell(ctlout_str(r, "params", "-"), params, sizeof(params)));
	}
}

static void
quantile_cell(char *buf, size_t len, const uint64_t *h, double q)
{
	double v = bk_lat_quantile(h, BK_LAT_BUCKETS, q);

	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.0f", v);
}

void
ctlout_table_stats(const struct recs *rs)
{
	unsigned int i;

	printf("%-12s %9s %9s %7s %7s %7s %11s %11s %11s %6s %6s %6s %7s %8s %8s %8s\n",
	       "VBD", "RD_REQ", "WR_REQ", "FLUSH", "BARRIER", "DISCARD", "RD_SECT", "WR_SECT",
	       "DISC_SECT", "OO_REQ", "ERRORS", "EOPNS", "PGRANTS", "P50_US", "P90_US", "P99_US");
	for (i = 0; i < rs->n; i++) {
		const struct bk_ctl_record *r = &rs->r[i];
		uint64_t h[BK_LAT_BUCKETS];
		char p50[24], p90[24], p99[24];

		get_hist(r, h);
		quantile_cell(p50, sizeof(p50), h, 0.50);
		quantile_cell(p90, sizeof(p90), h, 0.90);
		quantile_cell(p99, sizeof(p99), h, 0.99);
		printf("%-12s %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %7" PRIu64 " %7" PRIu64
		       " %11" PRIu64 " %11" PRIu64 " %11" PRIu64 " %6" PRIu64 " %6" PRIu64
		       " %6" PRIu64 " %7" PRIu64 " %8s %8s %8s\n",
		       ctlout_str(r, "vbd", "?"), ctlout_u64(r, "rd_req"), ctlout_u64(r, "wr_req"),
		       ctlout_u64(r, "flush_req"), ctlout_u64(r, "barrier_req"),
		       ctlout_u64(r, "discard_req"), ctlout_u64(r, "rd_sect"), ctlout_u64(r, "wr_sect"),
		       ctlout_u64(r, "discard_sect"), ctlout_u64(r, "oo_req"), ctlout_u64(r, "errors"),
		       ctlout_u64(r, "eopnotsupp"), ctlout_u64(r, "pgrants"), p50, p90, p99);
	}
}

void
ctlout_table_status(const struct bk_ctl_record *r)
{
	unsigned int k;

	for (k = 0; k < r->n; k++)
		printf("%s: %s\n", r->key[k], r->val[k]);
}
