/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * toolstack.c: "blkfront-test xl-add / xl-remove", the part of xl/libxl
 * that creates and removes a vbd in xenstore, for machines (and the
 * simulator) without a toolstack.  Runs as dom0 (XENSTORED_PATH = dom0's
 * socket).
 *
 * Keys and permissions are those libxl writes (tools/libs/light:
 * libxl_disk.c device_disk_add, libxl_device.c libxl__device_generic_add):
 *
 *   frontend /local/domain/<N>/device/vbd/<D>   owner N, backend domain: read
 *     backend, backend-id, state=1, virtual-device=<D>, device-type
 *   backend  /local/domain/<B>/backend/vbd/<N>/<D>   owner B, N: read
 *     frontend, params, frontend-id, online=1, removable, bootable=1,
 *     state=1, dev, type, mode, device-type, discard-enable
 *   /libxl/<N>/device/vbd/<D>/{frontend,backend}
 *
 * plus what the hotplug script would add (hotplug-status=connected,
 * unless --no-hotplug) and any --be-key/--fe-key KEY=VALUE.
 *
 * Removal (libxl__initiate_device_generic_remove): if the backend is
 * Connected, online=0 and state=5 in one transaction and wait (10 s,
 * libxl's LIBXL_DESTROY_TIMEOUT) for its state 6; then remove the three
 * directories.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xen/io/xenbus.h>

#include "compiler.h"
#include "log.h"
#include "xbus.h"
#include "ft.h"

struct xl_args {
	unsigned int domid, devid, backend_domid;
	const char *vdev, *params, *mode, *type, *devtype;
	bool removable, no_hotplug, discard, force;
	bool have_backend_domid;
	const char *be_keys[32], *fe_keys[32];
	unsigned int nbe, nfe;
	unsigned int timeout_ms;
};

static void
xl_usage(FILE *f, const char *cmd)
{
	fprintf(f,
"usage: blkfront-test %s --domid N [--vdev xvda | --devid D] [options]\n"
"  xl-add:    --params PATH [--mode w|r] [--type phy] [--device-type disk|cdrom]\n"
"             [--removable] [--discard-enable 0|1] [--backend-domid B]\n"
"             [--be-key KEY=VALUE]... [--fe-key KEY=VALUE]... [--no-hotplug]\n"
"  xl-remove: [--force] [--timeout MS]\n"
"Run as dom0: XENSTORED_PATH is dom0's xenstore socket (xensim: DIR/xenstore.sock).\n",
		cmd);
}

/* A bad option value: say what was expected; -1 (exit 2). */
static int
xl_bad(const char *opt, const char *val, const char *what)
{
	log_error("%s %s: expected %s", opt, val, what);
	return -1;
}

static int
parse_xl_args(int argc, char **argv, struct xl_args *a)
{
	static const struct option opts[] = {
		{ "domid", required_argument, NULL, 'd' },
		{ "devid", required_argument, NULL, 'D' },
		{ "vdev", required_argument, NULL, 'v' },
		{ "params", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "type", required_argument, NULL, 't' },
		{ "device-type", required_argument, NULL, 'T' },
		{ "removable", no_argument, NULL, 'r' },
		{ "discard-enable", required_argument, NULL, 'E' },
		{ "backend-domid", required_argument, NULL, 'b' },
		{ "be-key", required_argument, NULL, 'k' },
		{ "fe-key", required_argument, NULL, 'K' },
		{ "no-hotplug", no_argument, NULL, 'H' },
		{ "force", no_argument, NULL, 'f' },
		{ "timeout", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool have_domid = false;
	int c;

	memset(a, 0, sizeof(*a));
	a->vdev = "xvda";
	a->mode = "w";
	a->type = "phy";
	a->devtype = "disk";
	a->discard = true;
	a->timeout_ms = 10000;
	a->devid = 51712;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (ft_parse_uint(optarg, &a->domid))
				return xl_bad("--domid", optarg, "a domain id (a whole number)");
			have_domid = true;
			break;
		case 'D':
			if (ft_parse_uint(optarg, &a->devid))
				return xl_bad("--devid", optarg, "a device id (a whole number, e.g. 51712)");
			a->vdev = NULL;
			break;
		case 'v':
			a->vdev = optarg;
			if (ft_vdev_to_devid(optarg, &a->devid)) {
				log_error("--vdev %s: not xvdX, xvdXY or a number", optarg);
				return -1;
			}
			break;
		case 'p': a->params = optarg; break;
		case 'm': a->mode = optarg; break;
		case 't': a->type = optarg; break;
		case 'T': a->devtype = optarg; break;
		case 'r': a->removable = true; break;
		case 'E': a->discard = strcmp(optarg, "0") != 0; break;
		case 'b':
			if (ft_parse_uint(optarg, &a->backend_domid))
				return xl_bad("--backend-domid", optarg, "a domain id (a whole number)");
			a->have_backend_domid = true;
			break;
		case 'k':
			if (a->nbe == ARRAY_SIZE(a->be_keys) || !strchr(optarg, '='))
				goto bad;
			a->be_keys[a->nbe++] = optarg;
			break;
		case 'K':
			if (a->nfe == ARRAY_SIZE(a->fe_keys) || !strchr(optarg, '='))
				goto bad;
			a->fe_keys[a->nfe++] = optarg;
			break;
		case 'H': a->no_hotplug = true; break;
		case 'f': a->force = true; break;
		case 'o':
			if (ft_parse_uint(optarg, &a->timeout_ms) || !a->timeout_ms)
				return xl_bad("--timeout", optarg, "milliseconds (a whole number, at least 1)");
			break;
		case 'h': xl_usage(stdout, argv[0]); exit(0);
		default: goto bad;
		}
	}
	if (!have_domid || optind != argc) {
bad:
		xl_usage(stderr, argv[0]);
		return -1;
	}
	if (strcmp(a->mode, "w") && strcmp(a->mode, "r")) {
		log_error("--mode %s: expected w or r", a->mode);
		return -1;
	}
	return 0;
}

static void
paths(const struct xl_args *a, char *fe, char *be, char *lx, size_t len)
{
	snprintf(fe, len, "/local/domain/%u/device/vbd/%u", a->domid, a->devid);
	snprintf(be, len, "/local/domain/%u/backend/vbd/%u/%u", a->backend_domid,
		 a->domid, a->devid);
	snprintf(lx, len, "/libxl/%u/device/vbd/%u", a->domid, a->devid);
}

/* Write "KEY=VALUE" under dir. */
static int
write_kv(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char key[128];

	if ((size_t)(eq - kv) >= sizeof(key))
		return -ENAMETOOLONG;
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	return xbus_printf(xs, t, dir, key, "%s", eq + 1);
}

int
ft_cmd_xl_add(int argc, char **argv)
{
	struct xl_args a;
	char fe[160], be[160], lx[160], vdevbuf[32];
	struct xs_permissions fe_perms[2], be_perms[2];
	struct xs_handle *xs;
	xs_transaction_t t;
	char *e1, *e2;
	bool exists;
	unsigned int i;
	int r;

	if (parse_xl_args(argc, argv, &a))
		return 2;
	if (!a.params) {
		log_error("xl-add: --params PATH is required");
		return 2;
	}
	if (!a.vdev) {
		snprintf(vdevbuf, sizeof(vdevbuf), "%u", a.devid);
		a.vdev = vdevbuf;
	}
	paths(&a, fe, be, lx, sizeof(fe));
	xs = xs_open(0);
	if (!xs) {
		log_error("xl-add: cannot connect to xenstore (XENSTORED_PATH=%s): %m",
			  getenv("XENSTORED_PATH") ? getenv("XENSTORED_PATH") : "unset");
		return 1;
	}
	fe_perms[0].id = a.domid;
	fe_perms[0].perms = XS_PERM_NONE;
	fe_perms[1].id = a.backend_domid;
	fe_perms[1].perms = XS_PERM_READ;
	be_perms[0].id = a.backend_domid;
	be_perms[0].perms = XS_PERM_NONE;
	be_perms[1].id = a.domid;
	be_perms[1].perms = XS_PERM_READ;

again:
	t = xs_transaction_start(xs);
	if (t == XBT_NULL) {
		log_error("xl-add: transaction start: %m");
		xs_close(xs);
		return 1;
	}
	r = 0;
	e1 = xs_read(xs, t, fe, NULL);
	e2 = xs_read(xs, t, be, NULL);
	exists = e1 || e2;
	free(e1);
	free(e2);
	if (exists) {
		/* libxl: ERROR_DEVICE_EXISTS */
		xs_transaction_end(xs, t, true);
		log_error("xl-add: device already exists in xenstore (%s or %s); xl-remove it first",
			  fe, be);
		xs_close(xs);
		return 1;
	}
#define W(dir, key, ...) do { if (!r) r = xbus_printf(xs, t, dir, key, __VA_ARGS__); } while (0)
	W(lx, "frontend", "%s", fe);
	W(lx, "backend", "%s", be);

	if (!r && (!xs_mkdir(xs, t, fe) || !xs_set_permissions(xs, t, fe, fe_perms, 2)))
		r = -errno;
	W(fe, "backend", "%s", be);
	W(fe, "backend-id", "%u", a.backend_domid);
	W(fe, "state", "%d", XenbusStateInitialising);
	W(fe, "virtual-device", "%u", a.devid);
	W(fe, "device-type", "%s", a.devtype);
	for (i = 0; i < a.nfe && !r; i++)
		r = write_kv(xs, t, fe, a.fe_keys[i]);

	if (!r && (!xs_mkdir(xs, t, be) || !xs_set_permissions(xs, t, be, be_perms, 2)))
		r = -errno;
	W(be, "frontend", "%s", fe);
	W(be, "params", "%s", a.params);
	W(be, "frontend-id", "%u", a.domid);
	W(be, "online", "1");
	W(be, "removable", "%d", a.removable ? 1 : 0);
	W(be, "bootable", "1");
	W(be, "state", "%d", XenbusStateInitialising);
	W(be, "dev", "%s", a.vdev);
	W(be, "type", "%s", a.type);
	W(be, "mode", "%s", a.mode);
	W(be, "device-type", "%s", a.devtype);
	W(be, "discard-enable", "%d", a.discard ? 1 : 0);
	if (!a.no_hotplug)
		W(be, "hotplug-status", "connected");
	for (i = 0; i < a.nbe && !r; i++)
		r = write_kv(xs, t, be, a.be_keys[i]);
#undef W
	if (r) {
		xs_transaction_end(xs, t, true);
		log_error("xl-add: writing %s / %s: %s", fe, be, strerror(-r));
		xs_close(xs);
		return 1;
	}
	if (!xs_transaction_end(xs, t, false)) {
		if (errno == EAGAIN)
			goto again;
		log_error("xl-add: transaction end: %m");
		xs_close(xs);
		return 1;
	}
	xs_close(xs);
	printf("%s %s\n", fe, be);
	return 0;
}

static bool
path_exists(struct xs_handle *xs, const char *path)
{
	unsigned int len;
	void *v = xs_read(xs, XBT_NULL, path, &len);

	free(v);
	return v != NULL;
}

static void
rm_if_empty(struct xs_handle *xs, const char *path)
{
	unsigned int n = 0;
	char **d = xs_directory(xs, XBT_NULL, path, &n);

	if (d && n == 0)
		xs_rm(xs, XBT_NULL, path);
	free(d);
}

/*
 * The backend directory named by the libxl record lx, if there is one,
 * into be; it must be a vbd backend directory of this device.  0, or 1
 * when it disagrees with an explicit --backend-domid (logged).
 */
static int
record_backend(struct xs_handle *xs, const struct xl_args *a, const char *lx,
	       char *be, size_t len)
{
	char *rec = xbus_read(xs, XBT_NULL, lx, "backend");
	unsigned int bdom;
	char want[64];
	int n = -1, rc = 0;

	if (!rec)
		return 0;
	snprintf(want, sizeof(want), "/backend/vbd/%u/%u", a->domid, a->devid);
	if (sscanf(rec, "/local/domain/%u%n", &bdom, &n) != 1 || n < 0 ||
	    strcmp(rec + n, want)) {
		log_info("xl-remove: %s/backend is \"%s\", not this vbd's backend: ignored",
			 lx, rec);
	} else if (a->have_backend_domid && bdom != a->backend_domid) {
		log_error("xl-remove: the vbd's backend is %s (%s), not in domain %u "
			  "(--backend-domid)", rec, lx, a->backend_domid);
		rc = 1;
	} else {
		snprintf(be, len, "%s", rec);
	}
	free(rec);
	return rc;
}

int
ft_cmd_xl_remove(int argc, char **argv)
{
	struct xl_args a;
	char fe[160], be[160], lx[160];
	struct xs_handle *xs;
	xs_transaction_t t;
	unsigned int st = 0;
	int r, rc = 0;

	if (parse_xl_args(argc, argv, &a))
		return 2;
	paths(&a, fe, be, lx, sizeof(fe));
	xs = xs_open(0);
	if (!xs) {
		log_error("xl-remove: cannot connect to xenstore: %m");
		return 1;
	}
	/* The backend is where the toolstack's own record says (libxl's
	 * block-detach reads it the same way), not where --backend-domid
	 * guesses; never the frontend's backend key, which the guest
	 * writes. */
	r = record_backend(xs, &a, lx, be, sizeof(be));
	if (r) {
		xs_close(xs);
		return 1;
	}
	/* xl block-detach of a device that is not there: an error, not a
	 * silent success (a typo in --domid or --vdev must not look like a
	 * removal).  Any of the three directories left is cleaned up. */
	if (!path_exists(xs, fe) && !path_exists(xs, be) && !path_exists(xs, lx)) {
		log_error("xl-remove: no vbd %u/%u: neither %s nor %s exists",
			  a.domid, a.devid, fe, be);
		xs_close(xs);
		return 1;
	}
	/* libxl__initiate_device_generic_remove: only a Connected backend
	 * is asked to close; anything else is removed directly.  The state
	 * is read in the transaction that writes, so that nothing is
	 * written over a backend that went Closed since (it would have to
	 * close again), nor into a directory removed since (online and
	 * state alone, which a backend would take for a new vbd). */
	while (!a.force) {
		t = xs_transaction_start(xs);
		if (xbus_read_uint(xs, t, be, "state", 0, &st) < 0 ||
		    st != XenbusStateConnected) {
			xs_transaction_end(xs, t, true);
			a.force = true;
			break;
		}
		r = xbus_printf(xs, t, be, "online", "0");
		if (!r)
			r = xbus_printf(xs, t, be, "state", "%d", XenbusStateClosing);
		if (r) {
			xs_transaction_end(xs, t, true);
			log_error("xl-remove: %s: %s", be, strerror(-r));
			xs_close(xs);
			return 1;
		}
		if (!xs_transaction_end(xs, t, false)) {
			if (errno == EAGAIN)
				continue;
			log_error("xl-remove: transaction end: %m");
		}
		r = xbus_wait(xs, be, "state", xbus_eq, XenbusStateClosed, a.timeout_ms, &st);
		if (r == -ENOENT) {
			/* someone else removed it meanwhile: left to clean
			 * are the frontend's and the toolstack's directories */
			log_info("xl-remove: backend %s was removed by another while closing", be);
		} else if (r) {
			/* libxl goes on with a forced removal, and says so */
			log_error("xl-remove: backend %s did not reach Closed within %u ms "
				  "(state %u); removing anyway", be, a.timeout_ms, st);
			rc = 1;
		}
		break;
	}
	if (!xs_rm(xs, XBT_NULL, fe) && errno != ENOENT)
		log_error("xl-remove: rm %s: %m", fe);
	if (!xs_rm(xs, XBT_NULL, be) && errno != ENOENT)
		log_error("xl-remove: rm %s: %m", be);
	if (!xs_rm(xs, XBT_NULL, lx) && errno != ENOENT)
		log_error("xl-remove: rm %s: %m", lx);
	/* libxl__xs_path_cleanup: drop the now empty per-domain parent */
	*strrchr(be, '/') = '\0';
	rm_if_empty(xs, be);
	xs_close(xs);
	return rc;
}
