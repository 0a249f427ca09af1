/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test-ctl-proto.c: the control socket's protocol helpers
 * (backend/ctl-proto.c): escaping round trips, record parsing and its
 * refusals, and latency quantiles from known histograms.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctl-proto.h"

#define CHECK(c) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, __func__, #c); \
	return 1; } } while (0)
#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static int
test_records(void)
{
	struct bk_ctl_buf b = { 0 };
	struct bk_ctl_record r;
	const char *odd = "/path with spaces/a=b%c\t\xc3\xa9\x01";
	char bad1[] = "vbd novalue", bad2[] = "vbd k=%4", bad3[] = "vbd k=%00", bad4[] = "vbd =v";

	bk_ctl_buf_printf(&b, "vbd");
	bk_ctl_buf_kv(&b, "params", odd);
	bk_ctl_buf_kvu(&b, "devid", 51712);
	bk_ctl_buf_kv(&b, "empty", "");
	bk_ctl_buf_kv(&b, "absent", NULL);
	CHECK(!b.oom && b.p);
	/* one line of words: nothing below '!' but the separators */
	CHECK(strchr(b.p, '\n') == NULL && strchr(b.p, '\t') == NULL);
	CHECK(strstr(b.p, "params=/path%20with%20spaces/a%3Db%25c%09%C3%A9%01 ") != NULL);
	CHECK(bk_ctl_parse_record(b.p, &r) == 0);
	CHECK(!strcmp(r.kind, "vbd") && r.n == 3);
	CHECK(!strcmp(bk_ctl_get(&r, "params"), odd));
	CHECK(!strcmp(bk_ctl_get(&r, "devid"), "51712"));
	CHECK(!strcmp(bk_ctl_get(&r, "empty"), ""));
	CHECK(bk_ctl_get(&r, "absent") == NULL);
	bk_ctl_buf_free(&b);
	CHECK(bk_ctl_parse_record(bad1, &r) == -EINVAL);
	CHECK(bk_ctl_parse_record(bad2, &r) == -EINVAL);
	CHECK(bk_ctl_parse_record(bad3, &r) == -EINVAL);
	CHECK(bk_ctl_parse_record(bad4, &r) == -EINVAL);
	return 0;
}

static int
test_split(void)
{
	char line[] = "  stats \t 1/51712  ", many[] = "a b c d";
	char *w[4];

	CHECK(bk_ctl_split(line, w, 4) == 2);
	CHECK(!strcmp(w[0], "stats") && !strcmp(w[1], "1/51712"));
	CHECK(bk_ctl_split(many, w, 3) == -E2BIG);
	return 0;
}

static int
test_quantiles(void)
{
	uint64_t h[32] = { 0 };

	CHECK(bk_lat_quantile(h, 32, 0.5) == -1);	/* empty */
	/* 100 samples all in [64, 128): interpolated inside the bucket */
	h[6] = 100;
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.50), 64 + 64 * 0.50));
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.99), 64 + 64 * 0.99));
	CHECK(NEAR(bk_lat_quantile(h, 32, 1.0), 128));
	/* one sample: what histogram_quantile says of the same buckets */
	memset(h, 0, sizeof(h));
	h[6] = 1;
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.50), 96));
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.90), 121.6));
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.99), 127.36));
	/* bucket 0 is [0, 2) */
	memset(h, 0, sizeof(h));
	h[0] = 4;
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.5), 1.0));
	/* 90 fast (bucket 3: [8, 16)), 9 at [1024, 2048), 1 at [2^20, 2^21) */
	memset(h, 0, sizeof(h));
	h[3] = 90;
	h[10] = 9;
	h[20] = 1;
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.50), 8 + 8 * 50 / 90.0));
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.90), 16));
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.99), 1024 + 1024 * 9 / 9.0));
	/* (99.9 is not exact in binary: a looser bound) */
	CHECK(fabs(bk_lat_quantile(h, 32, 0.999) - (1048576 + 1048576 * 0.9)) < 1e-6);
	/* the last bucket */
	memset(h, 0, sizeof(h));
	h[31] = 2;
	CHECK(NEAR(bk_lat_quantile(h, 32, 0.5), ldexp(1, 31) + ldexp(1, 31) / 2));
	return 0;
}

int
main(void)
{
	int failed = 0;

	failed |= test_records();
	printf("records: %s\n", failed ? "FAIL" : "ok");
	failed |= test_split();
	printf("split: %s\n", failed ? "FAIL" : "ok");
	failed |= test_quantiles();
	printf("quantiles: %s\n", failed ? "FAIL" : "ok");
	return failed;
}
