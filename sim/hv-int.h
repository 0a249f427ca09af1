/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hv-int.h: what the two files of xensim's hypervisor share (private to
 * sim/hv*.c; the rest of sim/ sees sim.h).
 *
 *   hv.c       the daemon's side: listeners, client connections and their
 *              requests, event channel ports, domains' memfds, the module
 *   hv-pins.c  grant pins on shared memory: the reports of who holds
 *              which (xensim-ctl), and the release of a dom0 process's
 *              pins, from its pin ledger, when its connection closes
 *
 * hv.c owns every struct here (makes, links, frees them); hv-pins.c reads
 * the lists and each domain's act and gnt mappings, and changes only the
 * pin words and grant flags in shared memory, under the protocol of
 * hv-proto.h ("pin ledger").  hv.c calls hv-pins.c, never the other way.
 * Loop thread only.
 */
#ifndef SIM_HV_INT_H
#define SIM_HV_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hv-proto.h"
#include "sim.h"

struct hv_conn;
struct hv;

/* A listening socket: DIR/hv.sock (dom0) or DIR/dom<N>/hv.sock. */
struct hv_listener {
	struct hv *hv;
	uint32_t domid;
	int fd;				/* -1 when not listening */
};

struct hv_port {
	enum hv_evtchn_state state;
	uint32_t gen;			/* bumped on every state change */
	uint32_t remote_dom;
	uint32_t remote_port;
	struct hv_conn *owner;		/* the handle it is bound through */
	uint64_t since;			/* hv->seq when it entered this state */
};

struct hv_dom {
	struct hv *hv;
	uint32_t domid;
	int ram_fd, gnt_fd, act_fd, evt_fd;
	struct hv_gnt *gnt;		/* our mapping, to publish "dying" */
	struct hv_active *act;		/* our mapping, to release ledger pins */
	struct hv_evtchn *evt;		/* our mapping, to publish port state */
	struct hv_port ports[HV_NR_PORTS];
	struct hv_listener li;		/* unused (fd -1) for dom0 */
	char *sock_path;		/* NULL for dom0 */
	struct hv_dom *next;
};

struct hv_conn {
	struct hv *hv;
	int fd;
	uint32_t domid;
	bool hello;
	int eventfd;			/* >= 0 once an evtchn handle */
	int ledger_fd;			/* >= 0 once it gave a pin ledger */
	uint32_t token;			/* its ledger's, in the act owner half */
	uint64_t serial;		/* hv->conns_made at its accept: never reused */
	pid_t pid;			/* its peer's (SO_PEERCRED at accept), or 0 */
	struct hv_conn *next;
};

struct hv {
	struct sim_loop *loop;
	char *dir;
	struct hv_listener li0;		/* dir/hv.sock: dom0 */
	char *sock_path;
	struct hv_dom *doms;
	struct hv_conn *conns;
	uint64_t conns_made;		/* connections accepted so far */
	uint64_t seq;			/* port state changes so far */
};

/* Domain domid of hv, or NULL. */
static inline struct hv_dom *
hv_dom_find(struct hv *hv, uint32_t domid)
{
	struct hv_dom *d;

	for (d = hv->doms; d; d = d->next)
		if (d->domid == domid)
			return d;
	return NULL;
}

/*
 * The connection of a dom0 process closed (after its socket: nothing
 * more comes from it): finish or undo the pin operations it died in, then
 * release every pin its ledger fd (token: its ledger's) still records.
 * Logs what it had to skip.
 */
void hv_ledger_release(struct hv *hv, int fd, uint32_t token);

#endif /* SIM_HV_INT_H */
