/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: blkfront-test, a userspace Xen blkfront for tests and
 * benchmarks.  Subcommand dispatch, the shared device options, attach.
 * See blkfront-test.1.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compiler.h"
#include "log.h"
#include "ft.h"

volatile sig_atomic_t ft_stop;
volatile sig_atomic_t ft_stops;

static void
on_stop(int sig)
{
	ft_stop = sig;
	/* only this handler writes it, and SIGINT/SIGTERM block each other
	 * while it runs: the increment cannot be torn */
	ft_stops++;
}

void
ft_install_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

enum {
	O_TRANSPORT = 0x1000, O_SIMDIR, O_DOMID, O_DEVID, O_VDEV, O_RINGORDER,
	O_QUEUES, O_INDIRECT, O_NOPERSIST, O_PROTOCOL, O_FEKEY, O_TIMEOUT, O_POLL,
};

const struct option ft_common_options[] = {
	{ "transport", required_argument, NULL, O_TRANSPORT },
	{ "sim-dir", required_argument, NULL, O_SIMDIR },
	{ "domid", required_argument, NULL, O_DOMID },
	{ "devid", required_argument, NULL, O_DEVID },
	{ "vdev", required_argument, NULL, O_VDEV },
	{ "ring-order", required_argument, NULL, O_RINGORDER },
	{ "queues", required_argument, NULL, O_QUEUES },
	{ "max-indirect", required_argument, NULL, O_INDIRECT },
	{ "no-persistent", no_argument, NULL, O_NOPERSIST },
	{ "protocol", required_argument, NULL, O_PROTOCOL },
	{ "fe-key", required_argument, NULL, O_FEKEY },
	{ "timeout", required_argument, NULL, O_TIMEOUT },
	{ "poll-max-us", required_argument, NULL, O_POLL },
	{ "verbose", no_argument, NULL, 'v' },
	{ "debug", required_argument, NULL, 'D' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/*
 * Linux/libxl disk naming for the common case: xvd[a-z] and
 * xvd[a-z][a-z] -> (202 << 8) | (disk << 4) for disks 0..15, and the
 * extended form (1 << 28) | (disk << 8) above (libxl_utils.c).
 */
int
ft_vdev_to_devid(const char *vdev, unsigned int *devid)
{
	unsigned int disk;

	if (vdev[0] >= '0' && vdev[0] <= '9')
		return ft_parse_uint(vdev, devid) ? -EINVAL : 0;
	if (strncmp(vdev, "xvd", 3) || !vdev[3])
		return -EINVAL;
	if (vdev[3] < 'a' || vdev[3] > 'z')
		return -EINVAL;
	disk = (unsigned int)(vdev[3] - 'a');
	if (vdev[4]) {
		if (vdev[4] < 'a' || vdev[4] > 'z' || vdev[5])
			return -EINVAL;
		disk = (disk + 1) * 26 + (unsigned int)(vdev[4] - 'a');
	}
	*devid = disk < 16 ? (202u << 8) | (disk << 4) : (1u << 28) | (disk << 8);
	return 0;
}

int
ft_parse_uint(const char *s, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > 0xffffffffu || s[0] == '-')
		return -1;
	*out = (unsigned int)v;
	return 0;
}

int
ft_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || s[0] == '-')
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 's': case 'S': shift = 9; end++; break;	/* sectors */
	default: break;
	}
	if (*end == 'i' || *end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (~0ull >> shift)))
		return -EINVAL;
	*out = v << shift;
	return 0;
}

void
ft_pattern_fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i += 8) {
		size_t n = len - i < 8 ? len - i : 8;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, n);
	}
}

int
ft_common_opt(struct ft_common *c, int opt, const char *arg)
{
	unsigned int v;

	switch (opt) {
	case O_TRANSPORT:
		if (xenops_transport_parse(arg, &c->transport) < 0) {
			log_error("--transport %s: expected sim or xen", arg);
			return -1;
		}
		c->transport_set = true;
		return 1;
	case O_SIMDIR:
		c->sim_dir = arg;
		return 1;
	case O_DOMID:
		if (ft_parse_uint(arg, &c->domid))
			return ft_bad("a domain id (a whole number)");
		return 1;
	case O_DEVID:
		if (ft_parse_uint(arg, &c->bcfg.devid))
			return ft_bad("a device id (a whole number, e.g. 51712)");
		return 1;
	case O_VDEV:
		/* the same names as xl-add's --vdev (libxl's) */
		if (ft_vdev_to_devid(arg, &c->bcfg.devid))
			return ft_bad("xvdX, xvdXY or a number");
		return 1;
	case O_RINGORDER:
		if (ft_parse_uint(arg, &v) || v > BLKRING_MAX_PAGE_ORDER)
			return ft_bad("a whole number in 0..%d", BLKRING_MAX_PAGE_ORDER);
		c->bcfg.max_ring_page_order = v;
		return 1;
	case O_QUEUES:
		if (ft_parse_uint(arg, &v) || v == 0 || v > 16)
			return ft_bad("a whole number in 1..16");
		c->bcfg.max_queues = v;
		return 1;
	case O_INDIRECT:
		if (ft_parse_uint(arg, &v) || v > BLKRING_MAX_INDIRECT_SEGMENTS)
			return ft_bad("a whole number in 0..%d", BLKRING_MAX_INDIRECT_SEGMENTS);
		c->bcfg.max_indirect_segments = v;
		return 1;
	case O_NOPERSIST:
		c->bcfg.flags |= BLKFRONT_NO_PERSISTENT;
		return 1;
	case O_PROTOCOL:
		if (strcmp(arg, "native") == 0) {
			c->bcfg.abi = BLKRING_ABI_NATIVE;
			return 1;
		}
		if (blkring_abi_from_protocol(arg, &c->bcfg.abi) < 0 || !arg[0])
			return ft_bad("native, x86_32-abi or x86_64-abi");
		return 1;
	case O_FEKEY:
		if (!strchr(arg, '='))
			return ft_bad("KEY=VALUE");
		if (c->nr_fe_keys == ARRAY_SIZE(c->fe_keys))
			return ft_bad("at most %zu of them", ARRAY_SIZE(c->fe_keys));
		c->fe_keys[c->nr_fe_keys++] = arg;
		return 1;
	case O_TIMEOUT:
		if (ft_parse_uint(arg, &c->bcfg.timeout_ms) || c->bcfg.timeout_ms == 0)
			return ft_bad("milliseconds, at least 1");
		return 1;
	case O_POLL:
		if (ft_parse_uint(arg, &c->bcfg.poll_max_us) || c->bcfg.poll_max_us > 1000000)
			return ft_bad("microseconds in 0..1000000");
		return 1;
	case 'v':
		log_verbose = true;
		return 1;
	case 'D':
		if (log_parse_debug_mask(arg, &log_debug_mask) < 0)
			return ft_bad("debug categories (see blkfront-test(1)) or a number");
		return 1;
	default:
		return 0;
	}
}

struct option *
ft_merge_options(const struct option *cmd_opts)
{
	size_t n1 = ARRAY_SIZE(ft_common_options) - 1, n2 = 0;
	struct option *o;

	while (cmd_opts && cmd_opts[n2].name)
		n2++;
	o = calloc(n1 + n2 + 1, sizeof(*o));
	if (!o) {
		log_error("out of memory");
		exit(1);
	}
	memcpy(o, ft_common_options, n1 * sizeof(*o));
	if (n2)
		memcpy(o + n1, cmd_opts, n2 * sizeof(*o));
	return o;
}

static void
common_defaults(struct ft_common *c)
{
	memset(c, 0, sizeof(*c));
	c->bcfg.devid = 51712;
	c->bcfg.max_queues = 1;
	c->bcfg.max_indirect_segments = 32;
	c->bcfg.abi = BLKRING_ABI_NATIVE;
	c->bcfg.poll_max_us = 50;
}

int
ft_common_open_xenops(struct ft_common *c)
{
	struct xenops_config xc;

	if (!c->transport_set) {
		if (getenv("XENSIM_DIR") || c->sim_dir)
			c->transport = XENOPS_SIM;
		else if (xenops_transport_default(&c->transport) < 0) {
			log_error("no /dev/xen/evtchn: use --transport=sim with a running xensim "
				  "(--sim-dir DIR or XENSIM_DIR)");
			return 1;
		}
	}
	memset(&xc, 0, sizeof(xc));
	xc.transport = c->transport;
	xc.sim_dir = c->sim_dir;
	xc.domid = c->domid;
	if (c->transport == XENOPS_SIM && c->domid == 0)
		log_info("acting as dom0's frontend (no --domid given)");
	c->x = xenops_open(&xc);
	if (!c->x) {
		log_error("cannot open the %s transport as dom%u: %m",
			  c->transport == XENOPS_SIM ? "sim" : "xen", c->domid);
		return 1;
	}
	return 0;
}

blkfront_t *
ft_common_open(struct ft_common *c)
{
	blkfront_t *bf;

	if (ft_common_open_xenops(c))
		return NULL;
	c->bcfg.x = c->x;
	c->bcfg.fe_keys = c->fe_keys;
	c->bcfg.nr_fe_keys = c->nr_fe_keys;
	bf = blkfront_open(&c->bcfg);
	if (!bf) {
		if (errno == ECONNREFUSED)	/* libblkfront quoted its error node */
			log_error("vbd %u: cannot connect: the backend refused the device "
				  "(its error node is quoted above)", c->bcfg.devid);
		else
			log_error("vbd %u: cannot connect: %m", c->bcfg.devid);
		xenops_close(c->x);
		c->x = NULL;
	}
	return bf;
}

void
ft_common_close(struct ft_common *c, blkfront_t *bf)
{
	blkfront_close(bf);
	if (c->x)
		xenops_close(c->x);
	c->x = NULL;
}

void
ft_print_info(FILE *f, const blkfront_t *bf, bool json)
{
	const struct blkfront_info *in = blkfront_info(bf);

	if (json) {
		fprintf(f, "{\"frontend\":\"%s\",\"backend\":\"%s\",\"backend_id\":%u,"
			"\"sectors\":%" PRIu64 ",\"sector_size\":%u,\"physical_sector_size\":%u,"
			"\"info\":%u,\"read_only\":%s,\"ring_page_order\":%u,\"queues\":%u,"
			"\"ring_size\":%u,\"flush\":%s,\"fua\":%s,\"barrier\":%s,\"discard\":%s,"
			"\"discard_secure\":%s,\"discard_granularity\":%u,\"discard_alignment\":%u,"
			"\"persistent\":%s,\"max_indirect_segments\":%u,\"segs_per_request\":%u}\n",
			in->frontend_path, in->backend_path, in->backend_domid, in->sectors,
			in->sector_size, in->physical_sector_size, in->vdisk_info,
			in->read_only ? "true" : "false", in->ring_page_order, in->nr_queues,
			in->ring_size, in->feature_flush ? "true" : "false",
			in->feature_fua ? "true" : "false", in->feature_barrier ? "true" : "false",
			in->feature_discard ? "true" : "false",
			in->feature_secdiscard ? "true" : "false", in->discard_granularity,
			in->discard_alignment, in->feature_persistent ? "true" : "false",
			in->max_indirect_segments, in->segs_per_req);
		return;
	}
	fprintf(f, "frontend: %s\nbackend: %s\nbackend-id: %u\nsectors: %" PRIu64 "\n"
		"sector-size: %u\nphysical-sector-size: %u\ninfo: %u\nread-only: %d\n"
		"ring-page-order: %u\nqueues: %u\nring-size: %u\nflush: %d\nfua: %d\n"
		"barrier: %d\ndiscard: %d\ndiscard-secure: %d\ndiscard-granularity: %u\n"
		"discard-alignment: %u\npersistent: %d\nmax-indirect-segments: %u\n"
		"segments-per-request: %u\n",
		in->frontend_path, in->backend_path, in->backend_domid, in->sectors,
		in->sector_size, in->physical_sector_size, in->vdisk_info, in->read_only,
		in->ring_page_order, in->nr_queues, in->ring_size, in->feature_flush,
		in->feature_fua, in->feature_barrier, in->feature_discard,
		in->feature_secdiscard, in->discard_granularity, in->discard_alignment,
		in->feature_persistent, in->max_indirect_segments, in->segs_per_req);
}

/* What the option being parsed allows, set by ft_bad() (one thread). */
static char ft_allowed[160];

int
ft_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ft_allowed, sizeof(ft_allowed), fmt, ap);
	va_end(ap);
	return -1;
}

/* "--iodepth" or "-D" for the option ft_parse() got as opt. */
static void
opt_name(const struct option *o, int opt, char *buf, size_t len)
{
	for (; o->name; o++)
		if (o->val == opt && !o->flag) {
			snprintf(buf, len, "--%s", o->name);
			return;
		}
	snprintf(buf, len, "-%c", opt);
}

int
ft_parse(int argc, char **argv, struct ft_common *c, const char *shortopts,
	 const struct option *cmd_opts, int (*cmd_cb)(void *ctx, int opt, const char *arg),
	 void *ctx, void (*usage)(FILE *f))
{
	struct option *o = ft_merge_options(cmd_opts);
	char so[64];
	int opt, r;

	common_defaults(c);
	snprintf(so, sizeof(so), "+hvD:%s", shortopts ? shortopts : "");
	optind = 1;
	while ((opt = getopt_long(argc, argv, so, o, NULL)) != -1) {
		if (opt == 'h') {
			usage(stdout);
			free(o);
			exit(0);
		}
		r = ft_common_opt(c, opt, optarg);
		if (r == 0 && cmd_cb)
			r = cmd_cb(ctx, opt, optarg);
		if (r <= 0) {
			if (r == 0) {
				usage(stderr);
			} else {
				char name[64];

				opt_name(o, opt, name, sizeof(name));
				log_error("%s %s: expected %s", name, optarg ? optarg : "",
					  ft_allowed[0] ? ft_allowed : "another value (see --help)");
			}
			free(o);
			exit(2);
		}
	}
	free(o);
	return optind;
}

/* ---- attach ---- */

static bool attach_hold, attach_json, attach_reconnect;

static void
attach_usage(FILE *f)
{
	fprintf(f, "usage: blkfront-test attach [device options] [--hold] [--json] [--reconnect]\n"
		"  Connect, print what was negotiated, close cleanly (--hold: stay\n"
		"  connected until SIGINT/SIGTERM; --reconnect: close and connect\n"
		"  again in the same process, print again, then close).\n%s", FT_COMMON_HELP);
}

static int
attach_opt(void *ctx, int opt, const char *arg)
{
	switch (opt) {
	case 'H': attach_hold = true; return 1;
	case 'j': attach_json = true; return 1;
	case 'R': attach_reconnect = true; return 1;
	}
	return 0;
}

int
ft_cmd_attach(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hold", no_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "reconnect", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	struct ft_common c;
	blkfront_t *bf;
	int i, r;

	i = ft_parse(argc, argv, &c, NULL, opts, attach_opt, NULL, attach_usage);
	if (i != argc) {
		attach_usage(stderr);
		return 2;
	}
	ft_install_stop_signals();
	bf = ft_common_open(&c);
	if (!bf)
		return 1;
	ft_print_info(stdout, bf, attach_json);
	fflush(stdout);
	if (attach_reconnect) {
		r = blkfront_reconnect(bf);
		if (r) {
			log_error("vbd %u: reconnect: %s", c.bcfg.devid, strerror(-r));
			ft_common_close(&c, bf);
			return 1;
		}
		ft_print_info(stdout, bf, attach_json);
		fflush(stdout);
	}
	/* until a signal, or the backend closes (the completion thread
	 * breaks the device): then close our side too, as Linux blkfront
	 * does when its backend goes Closing */
	while (attach_hold && !ft_stop && !blkfront_broken(bf))
		usleep(100000);
	i = blkfront_broken(bf) ? 1 : 0;
	ft_common_close(&c, bf);
	return i;
}

/* ---- dispatch ---- */

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{ "attach", ft_cmd_attach, "connect, print the negotiated features" },
	{ "io", ft_cmd_io, "fio-like workload: IOPS, MB/s, latency percentiles" },
	{ "verify", ft_cmd_verify, "write/read with per-block headers; detect bad data" },
	{ "script", ft_cmd_script, "send an exact request sequence from a file" },
	{ "export", ft_cmd_export, "FUSE: expose the disk as MOUNTPOINT/disk" },
	{ "xl-add", ft_cmd_xl_add, "toolstack: create a vbd in xenstore (as dom0)" },
	{ "xl-remove", ft_cmd_xl_remove, "toolstack: remove a vbd (as dom0)" },
};

static void
usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: blkfront-test COMMAND [options]   (COMMAND --help for more)\n");
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "  --version  print the version\n");
}

int
main(int argc, char **argv)
{
	size_t i;

	log_init("blkfront-test");
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("blkfront-test %s\n", PACKAGE_VERSION);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	log_error("unknown command %s", argv[1]);
	usage(stderr);
	return 2;
}
