/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sim.h: the seams inside xensim, the simulated hypervisor (sim/).
 *
 * xensim is one single-threaded process with one epoll loop (loop.c).
 * Two modules hang off it:
 *   - the xenstore server (xenstore*.c): the real wire protocol of
 *     <xen/io/xs_wire.h> on DIR/xenstore.sock (dom0, privileged) and
 *     DIR/dom<N>/xenstore.sock (domain N, unprivileged);
 *   - the hypervisor (hv*.c): domain memory (memfd), v1 grant tables in
 *     shared memory, event channels on eventfds, brokered over
 *     DIR/hv.sock (dom0) and DIR/dom<N>/hv.sock (domain N).  The client
 *     side is xenops/xenops-sim.c.
 * Domain life cycle (ctl.c, driven by xensim-ctl over DIR/ctl.sock)
 * calls both: hv_domain_create + xenstore introduce, and on destroy
 * hv_domain_destroy + xenstore release (@releaseDomain).
 *
 * Everything here runs on the loop's thread.  0/-errno; pointers NULL+errno.
 */
#ifndef SIM_SIM_H
#define SIM_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- the event loop (loop.c) ---- */
struct sim_loop;
typedef void (*sim_loop_cb)(void *opaque, uint32_t epoll_events);

struct sim_loop *sim_loop_new(void);
void sim_loop_free(struct sim_loop *l);
/* Watch fd for epoll_events (EPOLLIN...); cb runs on the loop thread. */
int sim_loop_add(struct sim_loop *l, int fd, uint32_t epoll_events,
		 sim_loop_cb cb, void *opaque);
int sim_loop_del(struct sim_loop *l, int fd);
/* Change the epoll_events of a watched fd (e.g. add EPOLLOUT). */
int sim_loop_mod(struct sim_loop *l, int fd, uint32_t epoll_events);
/* Run until sim_loop_stop() (e.g. from a signalfd callback). */
int sim_loop_run(struct sim_loop *l);
void sim_loop_stop(struct sim_loop *l);

/* ---- the hypervisor (hv.c) ---- */
struct hv;

/* Listen on dir/hv.sock; domain 0 is created by the caller with hv_domain_create. */
struct hv *hv_new(struct sim_loop *l, const char *dir);
void hv_free(struct hv *hv);
/* Create memory, grant table, event channel table and dir/dom<N>/hv.sock (N > 0). */
int hv_domain_create(struct hv *hv, uint32_t domid);
/* Close the domain's event channels (peers see -ENOTCONN), stop serving
 * its hv socket; mappings other domains hold stay valid until unmapped. */
int hv_domain_destroy(struct hv *hv, uint32_t domid);
/*
 * The grant ledger as the hypervisor keeps it (the active grant table):
 * for each grant of domid that another domain holds pinned now (mapped,
 * or a copy in progress), fn(opaque, ref, pins, writable pins, the
 * pinning domain), in ref order.  What the granting guest can only see
 * as GTF_reading/GTF_writing, counted.  0, or -ENOENT (no such domain).
 * Loop thread only.
 */
int hv_domain_grants_in_use(struct hv *hv, uint32_t domid,
			    void (*fn)(void *opaque, uint32_t ref, unsigned int pins,
				       unsigned int wpins, uint32_t by),
			    void *opaque);

/*
 * The event channel table as the hypervisor keeps it: for each port of
 * domid not free, fn(opaque, its state) in port order.  pid and conn
 * name the process the port is bound through (its hv.sock connection:
 * SO_PEERCRED's pid at accept, 0 if unknown, and the connection's
 * serial, never reused, so an exec'd successor with the same pid shows
 * a new conn); since is xensim's count of port state changes when the
 * port entered its state (a bind, or its peer's close).  0, or -ENOENT.
 * Loop thread only.
 */
struct hv_port_info {
	uint32_t port;
	bool interdomain;		/* else unbound, offered to remote_dom */
	uint32_t remote_dom, remote_port;
	pid_t pid;
	uint64_t conn;
	uint64_t since;
};
int hv_domain_ports(struct hv *hv, uint32_t domid,
		    void (*fn)(void *opaque, const struct hv_port_info *pi),
		    void *opaque);
/*
 * Who holds domid's grants mapped, from the live dom0 processes' pin
 * ledgers (the pins xensim would release when each dies): fn(opaque,
 * ref, writable, pid, conn) per settled ledger entry (a pin being taken
 * or released is left out), connections newest first.  What gntdev's
 * per-process maps show on Xen.  0, or -ENOENT.  Loop thread only.
 */
int hv_domain_maps(struct hv *hv, uint32_t domid,
		   void (*fn)(void *opaque, uint32_t ref, bool writable, pid_t pid,
			      uint64_t conn),
		   void *opaque);

#endif /* SIM_SIM_H */
