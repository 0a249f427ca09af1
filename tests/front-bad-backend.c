/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * front-bad-backend.c: a tiny blkif backend test double for blkfront-test
 * (tests/front.mk).  Runs as dom0 over xensim, serves one vbd from RAM
 * through libblkring + libxenops, and misbehaves on purpose after
 * --after good responses, so the test can check that libblkfront notices
 * (hardened Linux blkfront's response checks):
 *
 *   --fault none         a correct backend (used to test the frontend alone)
 *   --fault wrong-id     answers with an id that was never sent
 *   --fault duplicate    answers one request twice
 *   --fault overflow     moves rsp_prod far past the requests
 *   --fault wrong-op     answers with another operation
 *   --fault silent       never answers (a hung backend: timeout -> EIO)
 *   --fault still-mapped maps a request's data grants and answers it
 *                        without unmapping them (it offers no persistent
 *                        grants, so the frontend ends access at each
 *                        response: Linux blkfront, XSA-396)
 *   --fault closed-mapped answers correctly, then writes Closed while it
 *                        still maps the ring (unmapped 1 s later)
 *
 * --refuse flush|barrier|discard answers that operation EOPNOTSUPP
 * (while advertising it), to check Linux blkfront's withdrawal rules; the
 * number of such requests received is printed at exit.
 *
 * Usage: front-bad-backend --domid N [--devid D] [--fault F] [--after K]
 *        [--sectors S] [--features flush|barrier|both|none] [--pidfile F]
 * XENSTORED_PATH and XENSIM_DIR must point at xensim (dom0).
 * Exits 0 when the frontend closed the device, 1 on errors.
 */
#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xenstore.h>
#include <xen/io/xenbus.h>

#include "compiler.h"
#include "barrier.h"
#include "blkring.h"
#include "xenops.h"

static struct xs_handle *xs;
static char fe[128], be[128];

static int
rd_uint(const char *dir, const char *key, unsigned int *v)
{
	char path[256], *s;
	unsigned int len;

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	s = xs_read(xs, XBT_NULL, path, &len);
	if (!s)
		return -1;
	*v = (unsigned int)strtoul(s, NULL, 0);
	free(s);
	return 0;
}

static void
wr(const char *key, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(2, 3);
static void
wr(const char *key, const char *fmt, ...)
{
	char path[256], val[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(val, sizeof(val), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", be, key);
	if (!xs_write(xs, XBT_NULL, path, val, (unsigned int)strlen(val)))
		fprintf(stderr, "bad-backend: write %s: %s\n", path, strerror(errno));
}

static unsigned int
fe_state(void)
{
	unsigned int s = 0;

	rd_uint(fe, "state", &s);
	return s;
}

int
main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "domid", required_argument, NULL, 'd' },
		{ "devid", required_argument, NULL, 'D' },
		{ "fault", required_argument, NULL, 'f' },
		{ "after", required_argument, NULL, 'a' },
		{ "sectors", required_argument, NULL, 's' },
		{ "features", required_argument, NULL, 'F' },
		{ "pidfile", required_argument, NULL, 'P' },
		{ "refuse", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int domid = 0, devid = 51712, after = 0, sectors = 8192, st, ref, port;
	const char *fault = "none", *features = "flush", *pidfile = NULL, *refuse = NULL;
	unsigned int refused = 0;
	uint8_t refuse_op = 0xff;
	struct xenops_config xc = { .transport = XENOPS_SIM, .domid = 0 };
	struct blkreq *req = calloc(1, sizeof(*req));
	unsigned char *disk;
	xenops_t *x;
	xenops_evtchn_t *ev;
	blkring_t *ring;
	void *sring;
	unsigned int good = 0;
	uint64_t last_id = 0;
	bool faulted = false, wedged = false;
	void *kept = NULL;	/* still-mapped: the grants never unmapped */
	unsigned int nkept = 0;
	int c, lport, rc = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': domid = (unsigned int)atoi(optarg); break;
		case 'D': devid = (unsigned int)atoi(optarg); break;
		case 'f': fault = optarg; break;
		case 'a': after = (unsigned int)atoi(optarg); break;
		case 's': sectors = (unsigned int)atoi(optarg); break;
		case 'F': features = optarg; break;
		case 'P': pidfile = optarg; break;
		case 'R': refuse = optarg; break;
		default: return 2;
		}
	}
	if (refuse)
		refuse_op = !strcmp(refuse, "flush") ? BLKIF_OP_FLUSH_DISKCACHE :
			!strcmp(refuse, "barrier") ? BLKIF_OP_WRITE_BARRIER : BLKIF_OP_DISCARD;
	disk = calloc(sectors, 512);
	x = xenops_open(&xc);
	xs = xs_open(0);
	if (!disk || !req || !x || !xs) {
		perror("bad-backend: setup");
		return 1;
	}
	snprintf(fe, sizeof(fe), "/local/domain/%u/device/vbd/%u", domid, devid);
	snprintf(be, sizeof(be), "/local/domain/0/backend/vbd/%u/%u", domid, devid);
	{
		/* a previous double's features must not linger */
		static const char *const old[] = {
			"feature-flush-cache", "feature-barrier", "feature-discard",
		};
		char path[256];
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(old); k++) {
			snprintf(path, sizeof(path), "%s/%s", be, old[k]);
			xs_rm(xs, XBT_NULL, path);
		}
	}
	wr("sectors", "%u", sectors);
	wr("info", "0");
	wr("sector-size", "512");
	wr("physical-sector-size", "4096");
	if (!strcmp(features, "flush") || !strcmp(features, "both"))
		wr("feature-flush-cache", "1");
	if (!strcmp(features, "barrier") || !strcmp(features, "both"))
		wr("feature-barrier", "1");
	wr("feature-max-indirect-segments", "64");
	if (refuse && !strcmp(refuse, "discard"))
		wr("feature-discard", "1");
	wr("state", "%d", XenbusStateInitWait);
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");

		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
	/* a Closed left by an earlier session: wait for the frontend's
	 * Initialising (reconnect) before treating Closing as the end */
	while (fe_state() >= XenbusStateClosing)
		usleep(10000);
	while ((st = fe_state()) != XenbusStateInitialised) {
		if (st >= XenbusStateClosing)
			goto out;
		usleep(10000);
	}
	if (rd_uint(fe, "ring-ref", &ref) || rd_uint(fe, "event-channel", &port)) {
		fprintf(stderr, "bad-backend: no ring-ref/event-channel\n");
		goto out;
	}
	sring = xenops_map_grefs(x, domid, 1, &ref, true);
	ev = xenops_evtchn_open(x);
	if (!sring || !ev) {
		perror("bad-backend: map ring / evtchn");
		goto out;
	}
	lport = xenops_evtchn_bind_interdomain(ev, domid, port);
	ring = blkring_back_attach(sring, 1, BLKRING_ABI_NATIVE);
	if (lport < 0 || !ring) {
		fprintf(stderr, "bad-backend: bind/attach failed\n");
		goto out;
	}
	wr("state", "%d", XenbusStateConnected);

	for (;;) {
		struct pollfd pfd = { .fd = xenops_evtchn_fd(ev), .events = POLLIN };
		int n, p;

		if (fe_state() >= XenbusStateClosing)
			break;
		if (wedged) {
			usleep(10000);	/* events unconsumed on purpose */
			continue;
		}
		n = poll(&pfd, 1, 100);
		if (n <= 0)
			continue;
		p = xenops_evtchn_pending(ev);
		if (p >= 0)
			xenops_evtchn_unmask(ev, (uint32_t)p);
again:
		while (blkring_back_get_request(ring, req) == 1) {
			struct xenops_copy_seg seg[BLKRING_MAX_INDIRECT_SEGMENTS];
			bool needs_ind;
			const char *why;
			struct blkreq_limits lim = {
				.sectors = sectors, .sector_size = 512,
				.max_indirect_segments = 64,
			};
			int16_t status = BLKIF_RSP_OKAY;
			uint64_t id = req->id;
			uint8_t op = req->op;
			unsigned int i;

			if (blkreq_validate(req, &lim, &needs_ind, &why) != BLKIF_RSP_OKAY)
				status = BLKIF_RSP_ERROR;
			if (status == BLKIF_RSP_OKAY && needs_ind) {
				static unsigned char ipg[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST][4096];
				const void *pages[BLKIF_MAX_INDIRECT_PAGES_PER_REQUEST];

				for (i = 0; i < req->nr_indirect_pages; i++) {
					seg[i].gref = req->indirect_grefs[i];
					seg[i].offset = 0;
					seg[i].len = 4096;
					seg[i].local = ipg[i];
					pages[i] = ipg[i];
				}
				if (xenops_grant_copy(x, domid, false, req->nr_indirect_pages, seg) < 0 ||
				    blkreq_parse_indirect(req, &lim, pages, &why) != BLKIF_RSP_OKAY)
					status = BLKIF_RSP_ERROR;
			}
			if (status == BLKIF_RSP_OKAY &&
			    (req->op == BLKIF_OP_READ || req->op == BLKIF_OP_WRITE)) {
				uint64_t off = req->sector * 512;

				for (i = 0; i < req->nr_segments; i++) {
					unsigned int len = (req->seg[i].last_sect -
							    req->seg[i].first_sect + 1u) * 512u;

					seg[i].gref = req->seg[i].gref;
					seg[i].offset = (uint16_t)(req->seg[i].first_sect * 512u);
					seg[i].len = (uint16_t)len;
					seg[i].local = disk + off;
					off += len;
				}
				if (xenops_grant_copy(x, domid, req->op == BLKIF_OP_READ,
						      req->nr_segments, seg) < 0)
					status = BLKIF_RSP_ERROR;
			}
			if (req->op == refuse_op) {
				status = BLKIF_RSP_EOPNOTSUPP;
				refused++;
			}
			if (good >= after && strcmp(fault, "none") && !faulted) {
				faulted = true;
				if (!strcmp(fault, "wrong-id"))
					id ^= 0x5a5a0000ull;
				else if (!strcmp(fault, "wrong-op"))
					op = op == BLKIF_OP_READ ? BLKIF_OP_WRITE : BLKIF_OP_READ;
				else if (!strcmp(fault, "duplicate"))
					id = last_id;	/* answer an answered request again */
				else if (!strcmp(fault, "silent"))
					continue;
				else if (!strcmp(fault, "still-mapped") && req->nr_segments &&
					 req->nr_segments <= BLKIF_MAX_SEGMENTS_PER_REQUEST) {
					grant_ref_t g[BLKIF_MAX_SEGMENTS_PER_REQUEST];

					for (i = 0; i < req->nr_segments; i++)
						g[i] = req->seg[i].gref;
					kept = xenops_map_grefs(x, domid, req->nr_segments, g, false);
					nkept = req->nr_segments;
				} else if (!strcmp(fault, "still-mapped")) {
					faulted = false;	/* the next one with data */
				}
				else if (!strcmp(fault, "overflow"))
					continue;	/* after the push, below */
			}
			if (faulted && (!strcmp(fault, "silent") || !strcmp(fault, "overflow")))
				continue;
			blkring_back_put_response(ring, id, op, status);
			last_id = id;
			good++;
		}
		if (blkring_back_push_responses(ring))
			xenops_evtchn_notify(ev, (uint32_t)lport);
		if (faulted && !strcmp(fault, "overflow")) {
			blkif_sring_t *sr = sring;

			/* Pairs with the frontend's acquire of rsp_prod; never
			 * pushed again, so the bogus value stays. */
			if (!wedged)
				smp_store_release(&sr->rsp_prod, sr->rsp_prod + 1000);
			wedged = true;
			xenops_evtchn_notify(ev, (uint32_t)lport);
			continue;
		}
		if (blkring_back_final_check(ring))
			goto again;
	}
	rc = 0;
	if (refuse)
		printf("bad-backend: %u %s requests refused\n", refused, refuse);
	wr("state", "%d", XenbusStateClosing);
	xenops_evtchn_close(ev);
	blkring_free(ring);
	if (!strcmp(fault, "closed-mapped")) {
		wr("state", "%d", XenbusStateClosed);
		usleep(1000000);
	}
	xenops_unmap(x, sring, 1);
	if (kept)
		xenops_unmap(x, kept, nkept);
out:
	wr("state", "%d", XenbusStateClosed);
	xs_close(xs);
	xenops_close(x);
	free(disk);
	free(req);
	return rc;
}
