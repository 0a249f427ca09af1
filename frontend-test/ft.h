/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ft.h: the blkfront-test program's commands (frontend-test/).
 *
 * main.c parses the options every device command shares (struct
 * ft_common) and dispatches to one ft_cmd_* per subcommand.  Each command
 * returns the process exit status: 0 success, 1 failure (a check did not
 * hold, or the device failed), 2 usage error.
 */
#ifndef FT_H
#define FT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <getopt.h>
#include <signal.h>

#include "compiler.h"
#include "xenops.h"
#include "blkfront.h"

/* Options shared by attach, io, verify, script, export. */
struct ft_common {
	enum xenops_transport transport;
	bool transport_set;
	const char *sim_dir;
	unsigned int domid;
	struct blkfront_config bcfg;
	const char *fe_keys[16];
	unsigned int nr_fe_keys;
	xenops_t *x;
};

/* Common long options; handled by ft_common_opt() (values >= 0x1000). */
extern const struct option ft_common_options[];
#define FT_COMMON_HELP \
"device options (attach, io, verify, script, export):\n" \
"  --transport sim|xen   hypervisor (default: sim when XENSIM_DIR is set)\n" \
"  --sim-dir DIR         xensim's directory (default $XENSIM_DIR)\n" \
"  --domid N             our domain (sim; from xensim-ctl create-domain)\n" \
"  --devid D | --vdev xvdX  the vbd (default 51712 = xvda)\n" \
"  --ring-order N        max ring-page-order we accept (default 0)\n" \
"  --queues N            max queues we use (default 1)\n" \
"  --max-indirect N      max indirect segments we use (default 32; 0 = off)\n" \
"  --no-persistent       write feature-persistent=0\n" \
"  --protocol ABI        x86_32-abi | x86_64-abi (default: native)\n" \
"  --fe-key KEY=VALUE    extra frontend key in the handshake (tests)\n" \
"  --timeout MS          handshake step / request timeout (default 30000)\n" \
"  --poll-max-us N       poll for responses up to N us before sleeping,\n" \
"                        adaptively (default 50; 0 = never)\n" \
"  -v, --verbose         more messages;  -D, --debug MASK  debug categories\n"

/*
 * Parse argv: the common options, -h/--help (usage(stdout), exit 0) and
 * the command's own (cmd_opts, shortopts, handled by cmd_cb returning
 * 1 handled / 0 unknown / -1 bad).  Errors exit(2).  Returns optind.
 */
int ft_parse(int argc, char **argv, struct ft_common *c, const char *shortopts,
	     const struct option *cmd_opts,
	     int (*cmd_cb)(void *ctx, int opt, const char *arg), void *ctx,
	     void (*usage)(FILE *f));

/*
 * For an option callback refusing a value: remember what the option
 * allows (printf-style: "a whole number in 1..%u") and return -1.
 * ft_parse() then prints "--OPTION VALUE: expected WHAT" and exits 2.
 */
int ft_bad(const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(1, 2);

/* Handle one common option; 1 handled, 0 not ours, -1 bad value (ft_bad). */
int ft_common_opt(struct ft_common *c, int opt, const char *arg);
/* Build an option table: common options + cmd_opts (NULL-terminated). */
struct option *ft_merge_options(const struct option *cmd_opts);
/* Open xenops (and nothing else).  0 or 1 (logged). */
int ft_common_open_xenops(struct ft_common *c);
/* Open xenops and the device.  NULL on failure (logged). */
blkfront_t *ft_common_open(struct ft_common *c);
/* Close the device and xenops. */
void ft_common_close(struct ft_common *c, blkfront_t *bf);

/* Print the negotiated info as "key: value" lines or one JSON object. */
void ft_print_info(FILE *f, const blkfront_t *bf, bool json);

/* A whole number in 0..UINT32_MAX (decimal, or 0x hex): no sign, no
 * trailing characters.  0 or -1. */
int ft_parse_uint(const char *s, unsigned int *out);

/* A vdev name as libxl reads it, to its xenstore device id: xvda..xvdp
 * -> 51712 + 16 * n, xvdq..xvdzz -> (1 << 28) | (n << 8), or a number.
 * 0 or -EINVAL. */
int ft_vdev_to_devid(const char *vdev, unsigned int *devid);

/* Size parsing: "4k", "1M", "64m", "2G", plain bytes.  0 or -EINVAL. */
#define SIZE_ALLOWED "a size (bytes, or with k, M, G or s for sectors)"
int ft_parse_size(const char *s, uint64_t *out);

/*
 * direct.c: the disk without a ring (export --direct): blkbackd's store
 * on PATH driven as a blkbackd queue thread drives it, requests shaped
 * as libblkfront shapes them for a ring of FT_DIRECT_DEPTH slots with
 * FT_DIRECT_MAX_REQ-byte requests (32 indirect segments of 4 KiB,
 * blkfront-test's default).  Offsets and lengths are multiples of 512.
 * Any thread.  0 or -errno.
 */
#define FT_DIRECT_DEPTH		32
#define FT_DIRECT_MAX_REQ	(32 * 4096)
struct ft_direct;
int ft_direct_open(const char *path, bool writethrough, struct ft_direct **out);
void ft_direct_close(struct ft_direct *d);
uint64_t ft_direct_size(const struct ft_direct *d);
bool ft_direct_can_discard(const struct ft_direct *d);
int ft_direct_pread(struct ft_direct *d, void *buf, size_t len, uint64_t off);
int ft_direct_pwrite(struct ft_direct *d, const void *buf, size_t len, uint64_t off);
int ft_direct_flush(struct ft_direct *d);
int ft_direct_discard(struct ft_direct *d, uint64_t off, uint64_t len);

/* Deterministic test data: fill / check len bytes from (seed). */
void ft_pattern_fill(void *buf, size_t len, uint64_t seed);

/* SIGINT/SIGTERM set ft_stop (to the signal) and count themselves in
 * ft_stops, so that a command can tell a later signal from the first
 * (installed by ft_install_stop_signals). */
extern volatile sig_atomic_t ft_stop;
extern volatile sig_atomic_t ft_stops;
void ft_install_stop_signals(void);

int ft_cmd_attach(int argc, char **argv);
int ft_cmd_io(int argc, char **argv);
int ft_cmd_verify(int argc, char **argv);
int ft_cmd_script(int argc, char **argv);
int ft_cmd_export(int argc, char **argv);
int ft_cmd_xl_add(int argc, char **argv);
int ft_cmd_xl_remove(int argc, char **argv);

#endif /* FT_H */
