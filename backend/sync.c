/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sync.c: barrier, flush and FUA policy: the implementation of the table
 * in include/blkif_ops.h, as a pure planner.  A plan is decided here from
 * the operation and the features negotiated at connect; each dataplane
 * queue turns the table into data once (and again after a withdrawal)
 * and only runs the steps in order.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "blkif_ops.h"
#include "blkring.h"
#include "compiler.h"

static const char *const step_names[] = {
	[BK_STEP_END] = "end",
	[BK_STEP_DRAIN] = "drain",
	[BK_STEP_FLUSH] = "flush",
	[BK_STEP_READ] = "read",
	[BK_STEP_WRITE] = "write",
	[BK_STEP_WRITE_FUA] = "write-fua",
	[BK_STEP_DISCARD] = "discard",
};

const char *
bk_step_name(enum bk_step s)
{
	return (unsigned int)s < ARRAY_SIZE(step_names) ? step_names[s] : "?";
}

static const char *const flush_mode_names[] = {
	[BK_FLUSH_MODE_FLUSH] = "flush",
	[BK_FLUSH_MODE_BARRIER] = "barrier",
	[BK_FLUSH_MODE_BOTH] = "both",
	[BK_FLUSH_MODE_NONE] = "none",
	[BK_FLUSH_MODE_AUTO] = "auto",
};

int
bk_flush_mode_parse(const char *s, enum bk_flush_mode *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(flush_mode_names); i++)
		if (strcmp(s, flush_mode_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

const char *
bk_flush_mode_name(enum bk_flush_mode m)
{
	return (unsigned int)m < ARRAY_SIZE(flush_mode_names) ? flush_mode_names[m] : "?";
}

static int
plan(enum bk_step *steps, const enum bk_step *src, unsigned int n)
{
	memcpy(steps, src, n * sizeof(*src));
	steps[n] = BK_STEP_END;
	return BLKIF_RSP_OKAY;
}

int
bk_plan_request(const struct bk_features *f, const struct blkreq *req,
		enum bk_step steps[BK_MAX_STEPS])
{
	static const enum bk_step rd[] = { BK_STEP_READ };
	static const enum bk_step wr[] = { BK_STEP_WRITE };
	static const enum bk_step fl[] = { BK_STEP_FLUSH };
	static const enum bk_step fl_data[] = { BK_STEP_FLUSH, BK_STEP_WRITE };
	static const enum bk_step bar[] = { BK_STEP_DRAIN, BK_STEP_FLUSH };
	static const enum bk_step bar_native[] = {
		BK_STEP_DRAIN, BK_STEP_FLUSH, BK_STEP_WRITE_FUA };
	static const enum bk_step bar_emul[] = {
		BK_STEP_DRAIN, BK_STEP_FLUSH, BK_STEP_WRITE, BK_STEP_FLUSH };
	static const enum bk_step disc[] = { BK_STEP_DISCARD };
	/*
	 * No volatile cache below (cache=writethrough opens the backing
	 * O_DSYNC; the null store): every completed write is durable
	 * already, so there is nothing to commit.  A flush is no host
	 * action at all, FUA adds nothing to a write, and a barrier keeps
	 * only its ordering: drain (and hold the ring), then the plain
	 * write.  Decided here, once, from the store's features -- the
	 * stores themselves never skip a FLUSH they are given.
	 */
	static const enum bk_step wt_fl_data[] = { BK_STEP_WRITE };
	static const enum bk_step wt_bar[] = { BK_STEP_DRAIN };
	static const enum bk_step wt_bar_data[] = { BK_STEP_DRAIN, BK_STEP_WRITE };

	steps[0] = BK_STEP_END;
	switch (req->op) {
	case BLKIF_OP_READ:
		return plan(steps, rd, ARRAY_SIZE(rd));
	case BLKIF_OP_WRITE:
		return plan(steps, wr, ARRAY_SIZE(wr));
	case BLKIF_OP_FLUSH_DISKCACHE:
		if (!f->flush_cache)
			return BLKIF_RSP_EOPNOTSUPP;
		if (!f->writeback)	/* nothing volatile: "host=none" */
			return req->nr_segments == 0 ? BLKIF_RSP_OKAY :
			       plan(steps, wt_fl_data, ARRAY_SIZE(wt_fl_data));
		if (req->nr_segments == 0)
			return plan(steps, fl, ARRAY_SIZE(fl));
		return plan(steps, fl_data, ARRAY_SIZE(fl_data));
	case BLKIF_OP_WRITE_BARRIER:
		if (!f->barrier)
			return BLKIF_RSP_EOPNOTSUPP;
		if (!f->writeback)
			return req->nr_segments == 0 ?
			       plan(steps, wt_bar, ARRAY_SIZE(wt_bar)) :
			       plan(steps, wt_bar_data, ARRAY_SIZE(wt_bar_data));
		if (req->nr_segments == 0)
			return plan(steps, bar, ARRAY_SIZE(bar));
		if (f->fua == BK_FUA_NATIVE)
			return plan(steps, bar_native, ARRAY_SIZE(bar_native));
		return plan(steps, bar_emul, ARRAY_SIZE(bar_emul));
	case BLKIF_OP_DISCARD:
		if (!f->discard)
			return BLKIF_RSP_EOPNOTSUPP;
		return plan(steps, disc, ARRAY_SIZE(disc));
	default:
		return BLKIF_RSP_EOPNOTSUPP;
	}
}

int16_t
bk_step_status(enum bk_step step, int64_t err)
{
	if (err == -EOPNOTSUPP && (step == BK_STEP_FLUSH || step == BK_STEP_DISCARD))
		return BLKIF_RSP_EOPNOTSUPP;
	return BLKIF_RSP_ERROR;
}
