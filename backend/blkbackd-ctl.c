/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * blkbackd-ctl.c: the client of blkbackd's control socket: list the
 * vbds, their statistics (a table, JSON or Prometheus's text format),
 * resize, shutdown, upgrade.  See blkbackd-ctl.8; the protocol is
 * ctl-proto.h's.
 */
#include <config.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "ctl.h"
#include "ctl-proto.h"
#include "dataplane.h"		/* BK_LAT_BUCKETS */

enum { OUT_TABLE, OUT_JSON, OUT_PROMETHEUS };
/* blkbackd-ctl.8 EXIT STATUS */
enum {
	EXIT_REFUSED = 1,	/* blkbackd answered an error (or: a shrink) */
	EXIT_USAGE = 2,		/* the command line */
	EXIT_UNREACHABLE = 3,	/* no blkbackd on the socket, or no answer from it */
	EXIT_TIMEOUT = 4,	/* no answer in time; shutdown/upgrade not done */
};

static const char *prog = "blkbackd-ctl";
static int out_mode = OUT_TABLE;

static json_object *json_ok(json_object *o);
static void json_set(json_object *obj, const char *key, json_object *val);
static bool json_emit(json_object *doc);
static json_object *json_string(const char *str);

/*
 * Say why we fail: "blkbackd-ctl: MESSAGE" on stderr and, with --json,
 * {"error": {"errno": ERRNAME, "message": MESSAGE, "exit": rc}} on
 * stdout, where a pipe into jq sees it.  Returns rc.
 */
static int
failure(int rc, const char *ename, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(3, 4);

/* With --json, the error object on stdout.  Returns rc.  Out of memory
 * for the object, stdout stays empty (stderr has said why already, or
 * getopt has). */
static int
json_error(int rc, const char *ename, const char *msg)
{
	if (out_mode == OUT_JSON) {
		json_object *doc = json_ok(json_object_new_object());
		json_object *err = json_ok(json_object_new_object());

		json_set(err, "errno", json_string(ename));
		json_set(err, "message", json_string(msg));
		json_set(err, "exit", json_ok(json_object_new_int(rc)));
		json_set(doc, "error", err);
		json_emit(doc);
		fflush(stdout);
	}
	return rc;
}

static int
failure(int rc, const char *ename, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s\n", prog, msg);
	return json_error(rc, ename, msg);
}

static const char *
errname(int e)
{
	const char *n = strerrorname_np(e);

	return n ? n : "EIO";
}

static void
usage(FILE *fp)
{
	fprintf(fp,
"Usage: blkbackd-ctl [OPTION]... COMMAND [ARG]...\n"
"Talk to a running blkbackd through its control socket (root; with\n"
"blkbackd --ctl-group, that group may list, stats and status).\n"
"\n"
"Commands:\n"
"  list                 every vbd: domid, devid, vdev, backing, state, features,\n"
"                       queues, ring pages, persistent grants mapped\n"
"  stats [DOMID/DEVID]  the counters and latency percentiles (p50/p90/p99)\n"
"  resize DOMID/DEVID   read the backing's size; tell the guest if it changed\n"
"  status               the daemon's pid, version, uptime, number of vbds\n"
"  shutdown [--close]   stop as for SIGTERM; --close: close every vbd first\n"
"  upgrade [PATH]       stop without closing and exec PATH (default: the same\n"
"                       binary, /proc/self/exe) with the same options\n"
"\n"
"Options:\n"
"  -s, --socket=PATH    the control socket (default " BLKBACKD_CTL_SOCKET ";\n"
"                       with --transport=sim: $XENSTORED_PATH" ".blkbackd-0.ctl,\n"
"                       XENSTORED_PATH defaulting to $XENSIM_DIR/xenstore.sock)\n"
"      --transport=xen|sim  which default socket (default: sim when\n"
"                       /dev/xen/evtchn is missing and XENSTORED_PATH or\n"
"                       XENSIM_DIR is set)\n"
"      --json           list, stats, status: JSON (errors too, on stdout)\n"
"      --prometheus     stats, status: Prometheus text exposition format\n"
"      --timeout=SECS   shutdown, upgrade: wait this long (default 120)\n"
"      --state-dir=DIR  status, blkbackd down: its recovery records (default\n"
"                       " BLKBACKD_STATE_DIR "; with --transport=sim beside the socket\n"
"                       as for --socket: $XENSTORED_PATH.blkbackd-0.state)\n"
"  -h, --help           this help\n"
"  -V, --version        print the version\n"
"Options may come before or after the command and its argument.\n"
"\n"
"Exit status: 0 done, 1 blkbackd refused (an error it answered), 2 usage,\n"
"3 blkbackd not running or not answering, 4 timed out.  status with blkbackd\n"
"not running also says which vbds it left attached, their guests' disks\n"
"stalled until it starts again (its records in the state directory).\n");
}

/* ---------------------------------------------------------------- */
/* Talking.                                                           */
/* ---------------------------------------------------------------- */

/* The fd, or -errno (after a failure() unless quiet). */
static int
ctl_connect(const char *path, bool quiet)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, e;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		if (!quiet)
			failure(EXIT_USAGE, "ENAMETOOLONG", "%s: path too long", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		if (!quiet)
			failure(EXIT_UNREACHABLE, errname(e), "socket: %s", strerror(e));
		return -e;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		e = errno;
		if (!quiet)
			failure(EXIT_UNREACHABLE, errname(e), "cannot connect to %s: %s%s", path,
				strerror(e), e == EACCES ?
				" (blkbackd's control socket is root's, or --ctl-group's)" :
				e == ENOENT || e == ECONNREFUSED ? " (is blkbackd running?)" : "");
		close(fd);
		return -e;
	}
	return fd;
}

/* Read everything until the result line ("ok" / "error ..."): the lines
 * into *out (malloc'd).  0, or an exit status after a failure(). */
static int
ctl_read_reply(int fd, char **out, int timeout_ms)
{
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf)
		return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char *last;
		ssize_t n;

		buf[len] = '\0';
		/* complete once the last full line is ok/error */
		if (len && buf[len - 1] == '\n') {
			buf[len - 1] = '\0';
			last = strrchr(buf, '\n');
			last = last ? last + 1 : buf;
			buf[len - 1] = '\n';
			if (!strncmp(last, "ok\n", 3) || !strncmp(last, "error ", 6)) {
				*out = buf;
				return 0;
			}
		}
		if (poll(&pfd, 1, timeout_ms) <= 0) {
			free(buf);
			return failure(EXIT_TIMEOUT, "ETIMEDOUT", "no answer from blkbackd within %d s",
				       timeout_ms / 1000);
		}
		if (cap - len < 2048) {
			char *p = realloc(buf, cap * 2);

			if (!p) {
				free(buf);
				return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
			}
			buf = p;
			cap *= 2;
		}
		n = recv(fd, buf + len, cap - len - 1, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : ECONNRESET;

			free(buf);
			return failure(EXIT_UNREACHABLE, errname(e),
				       "blkbackd closed the connection without an answer%s%s",
				       n < 0 ? ": " : "", n < 0 ? strerror(e) : "");
		}
		len += (size_t)n;
	}
}

/* 0, or an exit status after a failure(). */
static int
send_line(int fd, const char *line)
{
	size_t len = strlen(line);

	while (len) {
		ssize_t n = send(fd, line, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EPIPE;

			return failure(EXIT_UNREACHABLE, errname(e), "sending the request: %s",
				       strerror(e));
		}
		line += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---------------------------------------------------------------- */
/* Records.                                                           */
/* ---------------------------------------------------------------- */

struct recs {
	unsigned int n;
	struct bk_ctl_record *r;
};

/* Split the reply's lines (in place) into records; the result line is
 * left in *result.  0, or an exit status after a failure(). */
static int
parse_reply(char *buf, struct recs *rs, char **result)
{
	char *save = NULL, *line;

	memset(rs, 0, sizeof(*rs));
	*result = NULL;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct bk_ctl_record *r;

		if (!strcmp(line, "ok") || !strncmp(line, "error ", 6)) {
			*result = line;
			break;
		}
		r = realloc(rs->r, (rs->n + 1) * sizeof(*r));
		if (!r)
			return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
		rs->r = r;
		if (bk_ctl_parse_record(line, &rs->r[rs->n]) < 0)
			return failure(EXIT_UNREACHABLE, "EPROTO",
				       "cannot parse blkbackd's answer \"%.80s\"", line);
		rs->n++;
	}
	return *result ? 0 : failure(EXIT_UNREACHABLE, "EPROTO", "blkbackd's answer has no result line");
}

static uint64_t
get_u64(const struct bk_ctl_record *r, const char *key)
{
	const char *v = bk_ctl_get(r, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static const char *
get_s(const struct bk_ctl_record *r, const char *key, const char *dflt)
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

/* As json_emit(); out of memory, the failure.  0 or an exit status. */
static int
json_print(json_object *doc)
{
	if (!json_emit(doc))
		return failure(EXIT_REFUSED, "ENOMEM", "out of memory");
	return 0;
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
	{ "engine", J_STR }, { "pgrants", J_NUM }, { "failed", J_BOOL }, { "error", J_STR }, { NULL, 0 },
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

/* {"vbds": [...]} of list (latency false) or stats.  0 or an exit status. */
static int
print_json(const struct recs *rs, bool latency)
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

			if (!strcmp(get_s(r, "state_name", "none"), "none"))
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
	return json_print(doc);
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
	return get_s(r, "vdev", get_s(r, "devid", "?"));
}

/*
 * Whether vbd i's series need domid among their labels: its guest has no
 * name, or another vbd in rs has the same guest and device (two domains
 * of one name, as during a migration on one host).
 */
static bool
prom_needs_domid(const struct recs *rs, unsigned int i)
{
	const char *g = get_s(&rs->r[i], "guest", NULL), *dev = prom_device(&rs->r[i]);

	if (!g)
		return true;
	for (unsigned int j = 0; j < rs->n; j++)
		if (j != i && !strcmp(get_s(&rs->r[j], "guest", ""), g) &&
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

	prom_escape(get_s(r, "guest", ""), g, sizeof(g));
	prom_escape(prom_device(r), dev, sizeof(dev));
	n = (size_t)snprintf(buf, len, "guest=\"%s\",device=\"%s\"", g, dev);
	if (n < len && prom_needs_domid(rs, i))
		snprintf(buf + n, len - n, ",domid=\"%" PRIu64 "\"", get_u64(r, "domid"));
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
		       extra ? extra : "", get_u64(&rs->r[i], key));
	}
}

static void
print_prometheus(const struct recs *rs)
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
		prom_escape(get_s(&rs->r[i], "vbd", "?"), vbd, sizeof(vbd));
		printf("blkbackd_vbd_info{%s,vbd=\"%s\",devid=\"%" PRIu64 "\"", labels, vbd,
		       get_u64(&rs->r[i], "devid"));
		if (!prom_needs_domid(rs, i))
			printf(",domid=\"%" PRIu64 "\"", get_u64(&rs->r[i], "domid"));
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

/* status in Prometheus's format; r NULL: blkbackd did not answer,
 * stalled: the vbds it left attached (status_down()). */
static void
print_status_prometheus(const struct bk_ctl_record *r, unsigned int stalled)
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
	prom_escape(get_s(r, "version", ""), v, sizeof(v));
	prom_escape(get_s(r, "transport", ""), t, sizeof(t));
	prom_family("blkbackd_info", "gauge", "1, labelled with blkbackd's version and transport.");
	printf("blkbackd_info{version=\"%s\",transport=\"%s\"} 1\n", v, t);
	prom_family("blkbackd_uptime_seconds", "gauge", "Seconds since this blkbackd program started (an upgrade starts again).");
	printf("blkbackd_uptime_seconds %" PRIu64 "\n", get_u64(r, "uptime_s"));
	prom_family("blkbackd_vbds", "gauge", "vbds blkbackd knows.");
	printf("blkbackd_vbds %" PRIu64 "\n", get_u64(r, "vbds"));
	prom_family("blkbackd_vbds_connected", "gauge", "vbds connected to their guests.");
	printf("blkbackd_vbds_connected %" PRIu64 "\n", get_u64(r, "connected"));
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
	if (get_u64(r, key) && n < len) \
		n += snprintf(buf + n, len - n, "%s%s", n ? "," : "", word)
	F("flush_cache", "flush");
	F("barrier", "barrier");
	F("discard", "discard");
	F("persistent", "persistent");
	F("read_only", "ro");
#undef F
	if (bk_ctl_get(r, "fua") && n < len)
		n += snprintf(buf + n, len - n, "%sfua=%s", n ? "," : "", get_s(r, "fua", "?"));
	if (!n)
		snprintf(buf, len, "-");
}

static void
print_list(const struct recs *rs)
{
	unsigned int i;

	printf("%-12s %-6s %-11s %-5s %6s %4s %7s %-36s %s\n", "VBD", "VDEV", "STATE", "FE",
	       "QUEUES", "RING", "PGRANTS", "FEATURES", "PARAMS");
	for (i = 0; i < rs->n; i++) {
		const struct bk_ctl_record *r = &rs->r[i];
		char f[128];

		features(r, f, sizeof(f));
		printf("%-12s %-6s %-11s %-5s %6" PRIu64 " %4" PRIu64 " %7" PRIu64 " %-36s %s\n",
		       get_s(r, "vbd", "?"), get_s(r, "vdev", "-"), get_s(r, "state_name", "?"),
		       get_s(r, "frontend_state", "-"), get_u64(r, "queues"),
		       get_u64(r, "ring_pages"), get_u64(r, "pgrants"), f,
		       get_s(r, "params", "-"));
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

static void
print_stats(const struct recs *rs)
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
		       get_s(r, "vbd", "?"), get_u64(r, "rd_req"), get_u64(r, "wr_req"),
		       get_u64(r, "flush_req"), get_u64(r, "barrier_req"),
		       get_u64(r, "discard_req"), get_u64(r, "rd_sect"), get_u64(r, "wr_sect"),
		       get_u64(r, "discard_sect"), get_u64(r, "oo_req"), get_u64(r, "errors"),
		       get_u64(r, "eopnotsupp"), get_u64(r, "pgrants"), p50, p90, p99);
	}
}

/* ---------------------------------------------------------------- */
/* blkbackd down: what it left behind.                                */
/* ---------------------------------------------------------------- */

struct stalled {
	unsigned int vbds, guests;
	char names[256];	/* "DOMID/DEVID ...", cut short with "..." */
};

/*
 * The vbds blkbackd left attached when it stopped without closing them:
 * each queue of a vbd it serves has a recovery record in its state
 * directory, "vbd-DOMID-DEVID-qQUEUE" (backend/qstate.h, vbd.c
 * record_path), removed when the vbd is closed and kept by a stop that
 * leaves it Connected for the next blkbackd -- so while no blkbackd
 * runs, a record names a vbd whose guest waits for a backend -- unless
 * the toolstack destroyed that guest meanwhile: we do not ask xenstore,
 * and such records stay until the vbd is made again or /run (tmpfs) is
 * emptied by a reboot (blkbackd-ctl.8 status).  Returns 0 with *st filled, or -errno when dir cannot be
 * read (-ENOENT: no directory, so no records).
 */
static int
find_stalled(const char *dir, struct stalled *st)
{
	struct { unsigned int dom, dev; } *seen = NULL, *grown;
	size_t nseen = 0, used = 0, i;
	struct dirent *de;
	DIR *dp = opendir(dir);

	memset(st, 0, sizeof(*st));
	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		unsigned int dom, dev, q;
		int end = 0;
		bool new_dom = true;

		if (sscanf(de->d_name, "vbd-%u-%u-q%u%n", &dom, &dev, &q, &end) != 3 ||
		    de->d_name[end])
			continue;
		for (i = 0; i < nseen; i++) {
			if (seen[i].dom == dom)
				new_dom = false;
			if (seen[i].dom == dom && seen[i].dev == dev)
				break;
		}
		if (i < nseen)		/* another queue of a vbd counted */
			continue;
		grown = realloc(seen, (nseen + 1) * sizeof(*seen));
		if (!grown)
			break;		/* counted so far: still "some" */
		seen = grown;
		seen[nseen].dom = dom;
		seen[nseen++].dev = dev;
		st->vbds++;
		st->guests += new_dom;
		if (used + 1 < sizeof(st->names)) {
			int n = snprintf(st->names + used, sizeof(st->names) - used, "%s%u/%u",
					 used ? " " : "", dom, dev);

			if (n >= 0 && (size_t)n < sizeof(st->names) - used) {
				used += (size_t)n;
			} else {
				strcpy(st->names + sizeof(st->names) - 4, "...");
				used = sizeof(st->names);
			}
		}
	}
	closedir(dp);
	free(seen);
	return 0;
}

/* The state directory blkbackd uses by default, found as
 * default_socket() finds its socket: malloc'd, or NULL (unknown). */
static char *
default_state_dir(int transport_sim)
{
	const char *xsp = getenv("XENSTORED_PATH"), *simdir = getenv("XENSIM_DIR");
	char *fromdir = NULL, *real = NULL, *dir = NULL;

	if (!xsp && simdir && *simdir && asprintf(&fromdir, "%s/xenstore.sock", simdir) >= 0)
		xsp = fromdir;
	if (transport_sim < 0)
		transport_sim = access("/dev/xen/evtchn", F_OK) < 0 && xsp;
	if (!transport_sim) {
		dir = strdup(BLKBACKD_STATE_DIR);
	} else if (xsp) {
		real = realpath(xsp, NULL);
		if (asprintf(&dir, "%s" BK_STATE_SIM_SUFFIX, real ? real : xsp, 0u) < 0)
			dir = NULL;
	}
	free(real);
	free(fromdir);
	return dir;
}

/*
 * status, nothing on the socket (e: connect's errno): say so, and when
 * blkbackd is not running (ENOENT, ECONNREFUSED: no one listens) and
 * its state directory names vbds it left attached, that those guests'
 * disks are stalled.  *nstalled: how many vbds (0 when none or unknown).
 * Returns EXIT_UNREACHABLE.
 */
static int
status_down(const char *sock, int e, const char *state_dir, unsigned int *nstalled)
{
	char *msg = NULL, *more = NULL, *both = NULL;
	struct stalled st;
	int r, rc;

	*nstalled = 0;
	if (asprintf(&msg, "cannot connect to %s: %s%s", sock, strerror(e),
		     e == EACCES ? " (blkbackd's control socket is root's, or --ctl-group's)" :
		     e == ENOENT || e == ECONNREFUSED ? " (is blkbackd running?)" : "") < 0)
		return failure(EXIT_UNREACHABLE, "ENOMEM", "out of memory");
	if ((e == ENOENT || e == ECONNREFUSED) && state_dir) {
		r = find_stalled(state_dir, &st);
		if (r == 0 && st.vbds) {
			*nstalled = st.vbds;
			if (asprintf(&more, "GUESTS' DISKS STALLED: blkbackd is not running and "
				     "left %u vbd%s of %u guest%s attached without a backend "
				     "(%s; records in %s): %s I/O waits until blkbackd starts "
				     "again", st.vbds, st.vbds == 1 ? "" : "s", st.guests,
				     st.guests == 1 ? "" : "s", st.names, state_dir,
				     st.guests == 1 ? "the guest's" : "those guests'") < 0)
				more = NULL;
		} else if (r < 0 && r != -ENOENT) {
			if (asprintf(&more, "cannot read blkbackd's state directory %s (%s): "
				     "whether guests' disks are stalled is unknown", state_dir,
				     strerror(-r)) < 0)
				more = NULL;
		}
	}
	fprintf(stderr, "%s: %s\n", prog, msg);
	if (more)
		fprintf(stderr, "%s: %s\n", prog, more);
	/* one message for --json: both */
	if (more && asprintf(&both, "%s; %s", msg, more) < 0)
		both = NULL;
	rc = json_error(EXIT_UNREACHABLE, errname(e), both ? both : msg);
	free(both);
	free(more);
	free(msg);
	return rc;
}

/* ---------------------------------------------------------------- */
/* Main.                                                              */
/* ---------------------------------------------------------------- */

static int
default_socket(int transport_sim, char *buf, size_t len)
{
	const char *xsp = getenv("XENSTORED_PATH"), *simdir = getenv("XENSIM_DIR");
	char *fromdir = NULL, *real = NULL;
	int rc = 0;

	/* as blkbackd finds xensim's xenstore: XENSTORED_PATH, else the
	 * dom0 socket in XENSIM_DIR */
	if (!xsp && simdir && *simdir && asprintf(&fromdir, "%s/xenstore.sock", simdir) >= 0)
		xsp = fromdir;
	if (transport_sim < 0)	/* not given: as blkbackd decides */
		transport_sim = access("/dev/xen/evtchn", F_OK) < 0 && xsp;
	if (!transport_sim) {
		snprintf(buf, len, "%s", BLKBACKD_CTL_SOCKET);
	} else if (!xsp) {
		failure(EXIT_USAGE, "EINVAL", "--transport=sim: neither XENSTORED_PATH (xensim's "
			"dom0 socket) nor XENSIM_DIR is set; give --socket");
		rc = -1;
	} else {
		/* beside the socket itself, as blkbackd names it */
		real = realpath(xsp, NULL);
		if ((size_t)snprintf(buf, len, "%s" BK_CTL_SIM_SUFFIX, real ? real : xsp, 0u) >= len) {
			failure(EXIT_USAGE, "ENAMETOOLONG", "XENSTORED_PATH is too long for a socket "
				"path; give --socket");
			rc = -1;
		}
	}
	free(real);
	free(fromdir);
	return rc;
}

/* Wait until fd sees EOF (the daemon exited or exec'ed). */
static bool
wait_eof(int fd, int timeout_s)
{
	time_t end = time(NULL) + timeout_s;
	char c;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)(end - time(NULL));

		if (left <= 0 || poll(&pfd, 1, left * 1000) <= 0)
			return false;
		if (recv(fd, &c, 1, 0) <= 0)
			return true;
	}
}

int
main(int argc, char **argv)
{
	enum { O_TRANSPORT = 256, O_JSON, O_PROM, O_CLOSE, O_TIMEOUT, O_STATE_DIR };
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "transport", required_argument, NULL, O_TRANSPORT },
		{ "json", no_argument, NULL, O_JSON },
		{ "prometheus", no_argument, NULL, O_PROM },
		{ "close", no_argument, NULL, O_CLOSE },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "state-dir", required_argument, NULL, O_STATE_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char sock[PATH_MAX], req[BK_CTL_MAX_LINE], *reply = NULL, *result;
	const char *socket_path = NULL, *state_dir = NULL, *cmd;
	char *sdir = NULL;
	unsigned int stalled = 0;
	int out = OUT_TABLE, transport_sim = -1, timeout_s = 120, c, fd, rc = EXIT_REFUSED;
	char *tend;
	long lt;
	bool close_all = false;
	struct recs rs = { 0 };

	/* --json anywhere makes every failure JSON, a bad option before it too */
	for (c = 1; c < argc && strcmp(argv[c], "--"); c++)
		if (!strcmp(argv[c], "--json"))
			out_mode = OUT_JSON;
	/* options anywhere (GNU getopt permutes): "stats 1/51712 --json";
	 * an argument that starts with '-' goes after "--" */
	while ((c = getopt_long(argc, argv, "s:hV", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			socket_path = optarg;
			break;
		case O_TRANSPORT:
			if (strcmp(optarg, "xen") && strcmp(optarg, "sim"))
				return failure(EXIT_USAGE, "EINVAL",
					       "--transport: \"%s\" is neither xen nor sim", optarg);
			transport_sim = !strcmp(optarg, "sim");
			break;
		case O_JSON:
			out = OUT_JSON;
			break;
		case O_PROM:
			out = OUT_PROMETHEUS;
			break;
		case O_CLOSE:
			close_all = true;
			break;
		case O_STATE_DIR:
			state_dir = optarg;
			break;
		case O_TIMEOUT:
			errno = 0;
			lt = strtol(optarg, &tend, 10);
			timeout_s = errno || tend == optarg || *tend || lt < 1 || lt > 86400 ? 0 : (int)lt;
			if (timeout_s < 1 || timeout_s > 86400)
				return failure(EXIT_USAGE, "EINVAL", "--timeout: \"%s\" is not 1..86400",
					       optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("blkbackd-ctl %s\n", PACKAGE_VERSION);
			return 0;
		default:	/* getopt said what on stderr */
			if (out_mode != OUT_JSON)
				usage(stderr);
			return json_error(EXIT_USAGE, "EINVAL", "bad option (see --help)");
		}
	}
	if (optind >= argc) {
		if (out_mode != OUT_JSON)
			usage(stderr);
		return failure(EXIT_USAGE, "EINVAL", "no command (see --help)");
	}
	cmd = argv[optind++];
#define ARGS(min, max) (argc - optind >= (min) && argc - optind <= (max))
	if (!strcmp(cmd, "list") && ARGS(0, 0) && out != OUT_PROMETHEUS && !close_all) {
		snprintf(req, sizeof(req), "list\n");
	} else if (!strcmp(cmd, "stats") && ARGS(0, 1) && !close_all) {
		snprintf(req, sizeof(req), "stats%s%s\n", optind < argc ? " " : "",
			 optind < argc ? argv[optind] : "");
	} else if (!strcmp(cmd, "resize") && ARGS(1, 1) && out == OUT_TABLE && !close_all) {
		snprintf(req, sizeof(req), "resize %s\n", argv[optind]);
	} else if (!strcmp(cmd, "status") && ARGS(0, 0) && !close_all) {
		snprintf(req, sizeof(req), "status\n");
	} else if (!strcmp(cmd, "shutdown") && ARGS(0, 0) && out == OUT_TABLE) {
		snprintf(req, sizeof(req), "shutdown%s\n", close_all ? " --close" : "");
	} else if (!strcmp(cmd, "upgrade") && ARGS(0, 1) && out == OUT_TABLE && !close_all) {
		char path[PATH_MAX] = "";

		if (optind < argc && !realpath(argv[optind], path))
			return failure(EXIT_USAGE, errname(errno), "upgrade %s: %s", argv[optind],
				       strerror(errno));
		snprintf(req, sizeof(req), "upgrade%s%s\n", *path ? " " : "", path);
	} else {
		return failure(EXIT_USAGE, "EINVAL", "bad command line for \"%s\" (see --help)", cmd);
	}
#undef ARGS
	for (c = optind; c < argc; c++)
		if (strpbrk(argv[c], " \t\n"))
			return failure(EXIT_USAGE, "EINVAL", "\"%s\": arguments may not contain blanks",
				       argv[c]);
	if (!socket_path) {
		if (default_socket(transport_sim, sock, sizeof(sock)) < 0)
			return EXIT_USAGE;
		socket_path = sock;
	}
	fd = ctl_connect(socket_path, !strcmp(cmd, "status"));
	if (fd < 0) {
		rc = fd == -ENAMETOOLONG ? EXIT_USAGE : EXIT_UNREACHABLE;
		if (!strcmp(cmd, "status") && fd == -ENAMETOOLONG) {
			failure(EXIT_USAGE, "ENAMETOOLONG", "%s: path too long", socket_path);
		} else if (!strcmp(cmd, "status")) {
			if (!state_dir)
				state_dir = sdir = default_state_dir(transport_sim);
			rc = status_down(socket_path, -fd, state_dir, &stalled);
			free(sdir);
		}
		goto out_down;
	}
	rc = send_line(fd, req);
	if (!rc)
		rc = ctl_read_reply(fd, &reply, 10000);
	if (!rc)
		rc = parse_reply(reply, &rs, &result);
	if (rc)
		goto out;
	if (strcmp(result, "ok")) {
		/* "error ENAME MESSAGE" */
		char *en = result + 6, *msg = strchr(en, ' ');

		/* stderr as blkbackd said it; the JSON with the name apart */
		fprintf(stderr, "%s: %s\n", prog, en);
		if (msg)
			*msg++ = '\0';
		rc = json_error(EXIT_REFUSED, en, msg ? msg : "");
		goto out;
	}
	rc = 0;
	if (!strcmp(cmd, "list")) {
		if (out == OUT_JSON)
			rc = print_json(&rs, false);
		else
			print_list(&rs);
	} else if (!strcmp(cmd, "stats")) {
		if (out == OUT_JSON)
			rc = print_json(&rs, true);
		else if (out == OUT_PROMETHEUS)
			print_prometheus(&rs);
		else
			print_stats(&rs);
	} else if (!strcmp(cmd, "resize") && rs.n) {
		uint64_t o = get_u64(&rs.r[0], "old_sectors"), n = get_u64(&rs.r[0], "sectors");

		if (o == n) {
			printf("vbd %s: %" PRIu64 " sectors (unchanged)\n",
			       get_s(&rs.r[0], "vbd", "?"), n);
		} else if (n < o) {
			/* announced, but an admin's mistake: say it as one */
			rc = failure(EXIT_REFUSED, "ENOSPC", "vbd %s: BACKING SHRANK: %" PRIu64
				     " -> %" PRIu64 " sectors under a connected guest; its I/O "
				     "past the new end fails (see its error node)",
				     get_s(&rs.r[0], "vbd", "?"), o, n);
		} else
			printf("vbd %s: %" PRIu64 " -> %" PRIu64 " sectors\n",
			       get_s(&rs.r[0], "vbd", "?"), o, n);
	} else if (!strcmp(cmd, "status") && rs.n) {
		unsigned int k;

		if (out == OUT_JSON) {
			rc = json_print(json_record(&rs.r[0], status_schema));
		} else if (out == OUT_PROMETHEUS) {
			print_status_prometheus(&rs.r[0], 0);
		} else {
			for (k = 0; k < rs.r[0].n; k++)
				printf("%s: %s\n", rs.r[0].key[k], rs.r[0].val[k]);
		}
	} else if (!strcmp(cmd, "shutdown") || !strcmp(cmd, "upgrade")) {
		/* the daemon keeps the connection until it exits or execs */
		if (!wait_eof(fd, timeout_s)) {
			rc = failure(EXIT_TIMEOUT, "ETIMEDOUT", "blkbackd is still draining after %d s",
				     timeout_s);
		} else if (!strcmp(cmd, "upgrade")) {
			time_t end = time(NULL) + timeout_s;
			int nfd = -1;

			/* the new program listens once its setup is done */
			while (time(NULL) < end && (nfd = ctl_connect(socket_path, true)) < 0)
				usleep(50000);
			if (nfd < 0) {
				rc = failure(EXIT_TIMEOUT, "ETIMEDOUT", "the upgraded blkbackd does not "
					     "answer on %s within %d s", socket_path, timeout_s);
			} else {
				printf("blkbackd upgraded\n");
				close(nfd);
			}
		} else {
			printf("blkbackd stopped\n");
		}
	}
out:
	free(rs.r);
	free(reply);
	close(fd);
out_down:
	/* a scrape of status says "down" in its own format, with the status */
	if ((rc == EXIT_UNREACHABLE || rc == EXIT_TIMEOUT) && out == OUT_PROMETHEUS &&
	    !strcmp(cmd, "status"))
		print_status_prometheus(NULL, stalled);
	return rc;
}
