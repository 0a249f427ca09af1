/*
 * store-record.c: STUB of the blkcrash "record" store wrapper (see store.h).
 * Replaced by the real implementation.
 */
#include <config.h>

#include <errno.h>

#include "log.h"
#include "store.h"

static int
record_open(const struct bk_store_config *cfg, struct bk_store **out,
	  struct bk_store_features *features)
{
	log_error("store \"record\" is not implemented yet");
	return -ENOSYS;
}

const struct bk_store_ops bk_store_record_ops = {
	.name = "record",
	.open = record_open,
};
