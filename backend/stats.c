/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stats.c: per-vbd counters (Linux blkback's st_rd_req, st_oo_req ...),
 * printed on SIGUSR1 and every --stats seconds.
 */
#include <config.h>

#include <inttypes.h>

#include "log.h"
#include "dataplane.h"

#define LOAD(f) __atomic_load_n(&one->f, __ATOMIC_RELAXED)

void
bk_stats_sum(struct bk_stats *acc, const struct bk_stats *one)
{
	unsigned int i;

	acc->rd_req += LOAD(rd_req);
	acc->wr_req += LOAD(wr_req);
	acc->flush_req += LOAD(flush_req);
	acc->barrier_req += LOAD(barrier_req);
	acc->discard_req += LOAD(discard_req);
	acc->rd_sect += LOAD(rd_sect);
	acc->wr_sect += LOAD(wr_sect);
	acc->discard_sect += LOAD(discard_sect);
	acc->oo_req += LOAD(oo_req);
	acc->err_rsp += LOAD(err_rsp);
	acc->eopnotsupp_rsp += LOAD(eopnotsupp_rsp);
	acc->pgrant_mapped += LOAD(pgrant_mapped);
	acc->pgrant_maps += LOAD(pgrant_maps);
	for (i = 0; i < BK_LAT_BUCKETS; i++)
		acc->lat_us[i] += LOAD(lat_us[i]);
	acc->lat_sum_ns += LOAD(lat_sum_ns);
}

void
bk_stats_log(const char *vbd, const struct bk_stats *s)
{
	log_info("stats vbd=%s rd_req=%" PRIu64 " wr_req=%" PRIu64 " flush_req=%" PRIu64
		 " barrier_req=%" PRIu64 " discard_req=%" PRIu64 " rd_sect=%" PRIu64
		 " wr_sect=%" PRIu64 " discard_sect=%" PRIu64 " oo_req=%" PRIu64
		 " errors=%" PRIu64 " eopnotsupp=%" PRIu64 " pgrants=%" PRIu64
		 " pgrant_maps=%" PRIu64,
		 vbd, s->rd_req, s->wr_req, s->flush_req, s->barrier_req, s->discard_req,
		 s->rd_sect, s->wr_sect, s->discard_sect, s->oo_req, s->err_rsp,
		 s->eopnotsupp_rsp, s->pgrant_mapped, s->pgrant_maps);
}
