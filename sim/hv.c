/*
 * hv.c: STUB of xensim's hypervisor module (grant tables, event channels,
 * domain memory).  Replaced by the real implementation; see sim.h.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "sim.h"

struct hv {
	int unused;
};

struct hv *
hv_new(struct sim_loop *l, const char *dir)
{
	return calloc(1, sizeof(struct hv));
}

void
hv_free(struct hv *hv)
{
	free(hv);
}

int
hv_domain_create(struct hv *hv, uint32_t domid)
{
	return 0;
}

int
hv_domain_destroy(struct hv *hv, uint32_t domid)
{
	return 0;
}
