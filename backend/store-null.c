/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * store-null.c: the "null" storage driver (ring benchmarks, tests).
 *
 * Its arg is "SIZE" (bytes or with K/M/G/T; no options).  Writes are
 * dropped, reads return zeroes, FLUSH and DISCARD succeed at once: what
 * is left is the cost of the ring, the grant copies and the daemon
 * (nbdkit null, ublk null).  A synchronous driver: io() runs inside
 * bk_store_submit() and store.c's default queue hands the completions
 * back.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "compiler.h"
#include "log.h"
#include "store.h"

struct null_store {
	uint64_t size;
};

static int
null_open(const struct bk_store_config *cfg, void **priv, struct bk_store_features *f)
{
	static const char *const no_options[] = { NULL };
	struct null_store *s;
	const char *opts;
	uint64_t size;
	int rc;

	rc = bk_store_parse_sized(cfg, "null", no_options, &size, &opts);
	if (rc < 0)
		return rc;
	if (size == 0 || size % 512) {
		return bk_store_fail(cfg, -EINVAL, "null store",
				     "size %llu is not a positive multiple of 512",
				     (unsigned long long)size);
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->size = size;
	memset(f, 0, sizeof(*f));
	f->size = s->size;
	f->sector_size = 512;
	f->physical_sector_size = 512;
	f->read_only = cfg->read_only;
	f->can_flush = true;
	f->writeback = false;
	f->fua = BK_FUA_NATIVE;
	f->can_discard = !cfg->read_only;
	*priv = s;
	return 0;
}

static void
null_close(void *priv)
{
	free(priv);
}

static void
null_io(void *priv, struct bk_io *io)
{
	int j;

	(void)priv;
	io->host_action = "null";
	io->result = 0;
	if (io->op == BK_IO_READ) {
		for (j = 0; j < io->iovcnt; j++)
			memset(io->iov[j].iov_base, 0, io->iov[j].iov_len);
	}
	if (io->op == BK_IO_READ || io->op == BK_IO_WRITE)
		io->result = io->len;
}

const struct bk_store_driver bk_store_null_driver = {
	.name = "null",
	.open = null_open,
	.close = null_close,
	.io = null_io,
};
