/*
 * store-volatile.c: STUB of the blkcrash "volatile" store wrapper (see store.h).
 * Replaced by the real implementation.
 */
#include <config.h>

#include <errno.h>

#include "log.h"
#include "store.h"

static int
volatile_open(const struct bk_store_config *cfg, struct bk_store **out,
	  struct bk_store_features *features)
{
	log_error("store \"volatile\" is not implemented yet");
	return -ENOSYS;
}

const struct bk_store_ops bk_store_volatile_ops = {
	.name = "volatile",
	.open = volatile_open,
};
