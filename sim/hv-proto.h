/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hv-proto.h: what xensim's hypervisor (sim/hv.c) and its client
 * (xenops/xenops-sim.c) share: the layout of the shared-memory tables and
 * the control protocol on DIR/hv.sock and DIR/dom<N>/hv.sock.
 *
 * Per domain, xensim creates four memfds:
 *
 *   ram  HV_RAM_SIZE bytes of sparse "RAM"; frame f is bytes
 *        f*4096 .. f*4096+4095.  Given to the domain itself (it shares
 *        pages out of it) and to dom0 (it maps and copies granted frames).
 *   gnt  struct hv_gnt: a header, the v1 grant table (grant_entry_v1_t,
 *        written by the domain, checked and flagged by the mapper exactly
 *        as Xen does) and two allocation bitmaps (grant refs, frames),
 *        shared by every process of the domain and allocated with atomic
 *        compare-exchange, so allocation never needs the daemon.
 *   act  struct hv_active[HV_NR_GRANTS]: Xen's "active grant table", the
 *        per-entry pin counts of the mapping side.  Only dom0 gets it, so
 *        the granting domain cannot forge pins.
 *   evt  struct hv_evtchn[HV_NR_PORTS]: event channel ports.  xensim alone
 *        writes the state word; senders set "pending", the owning handle
 *        sets/clears "masked" and clears "pending".  Given to the domain
 *        and to every handle that has a channel to one of its ports.
 *
 * Control protocol: SOCK_SEQPACKET, one struct hv_req per message, one
 * struct hv_rsp back (with 0..HV_MAX_FDS fds in SCM_RIGHTS).  The domain
 * of a connection is the socket it came in on; DIR/hv.sock is dom0's and
 * privileged (may fetch any domain's memory).  A malformed request drops
 * the connection.  Closing an event channel handle's connection unbinds
 * its ports.  Only the control path uses the socket: map, copy, share,
 * notify, pending and unmask work on shared memory and eventfds alone.
 *
 * Pin ledger: a dom0 client hands xensim (HV_OP_PIN_LEDGER) a memfd in
 * which it records every pin it holds (struct hv_ledger below).  When
 * that connection closes (the process exited or was killed, or closed
 * its handle), xensim releases the pins still recorded there, as the
 * kernel's gntdev unmaps a dead process's grants on real Xen.
 *
 * Memory ordering is spelled out at each access (barrier.h).  The
 * grant entry's flags and domid form one 32-bit word (little-endian:
 * flags in the low half) that both sides only ever access atomically as
 * a whole, like Xen's cmpxchg on the combined word in _set_status_v1().
 */
#ifndef SIM_HV_PROTO_H
#define SIM_HV_PROTO_H

#include <stdint.h>
#include <xen/xen.h>
#include <xen/grant_table.h>

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "hv-proto.h: the grant entry word layout assumes little-endian"
#endif

#define HV_PROTO_VERSION	2u
#define HV_PAGE_SIZE		4096u

#define HV_NR_FRAMES		65536u		/* 256 MiB of RAM per domain */
#define HV_RAM_SIZE		((uint64_t)HV_NR_FRAMES * HV_PAGE_SIZE)
#define HV_NR_GRANTS		8192u
#define HV_NR_PORTS		1024u		/* port 0 is never valid */
#define HV_MAX_DOMID		0x7FEFu		/* DOMID_FIRST_RESERVED - 1 */
#define HV_MAX_FDS		4

/* ---- gnt memfd ---- */
#define HV_GNT_MAGIC		0x78686e74u	/* "xhnt" */

struct hv_gnt_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t domid;
	uint32_t nr_frames;
	uint32_t nr_grants;
	/* Set to 1 by xensim when the domain is destroyed (store_release);
	 * mappers read it with READ_ONCE and then refuse new maps (-ESRCH). */
	uint32_t dying;
};

struct hv_gnt {
	union {
		struct hv_gnt_hdr hdr;
		uint8_t hdr_page[HV_PAGE_SIZE];
	};
	grant_entry_v1_t table[HV_NR_GRANTS];
	/* Bit r set: grant ref r belongs to a share.  Refs below
	 * GNTTAB_NR_RESERVED_ENTRIES are set at creation (reserved, as on Xen). */
	uint64_t gref_map[HV_NR_GRANTS / 64];
	/* Bit f set: frame f is in use by a share. */
	uint64_t frame_map[HV_NR_FRAMES / 64];
};

/* ---- act memfd ---- */
/*
 * pin, low 32 bits (HV_PIN()): bits 0..14 all pins (maps and copies in
 * progress), bits 15..29 the writable ones, bit 31 HV_PIN_BUSY while one
 * mapper takes or releases a pin (clients change the counts only under
 * BUSY; xensim also without, for pins of a closed connection).  High 32
 * bits (HV_PIN_OWNER()): while BUSY, who holds it, else 0: HV_OWN(the
 * holder's ledger token, its ledger slot for this operation, whether the
 * count already includes the operation), or HV_OWNER_XENSIM.  One 64-bit
 * word, so that BUSY and its owner are taken and dropped by the same
 * atomic operation: xensim can tell, and finish or undo, an operation a
 * process died in from one a live mapper is doing.
 * frame and domid are snapshots taken at the first pin (as Xen's act->frame),
 * valid while the pin count != 0.
 */
#define HV_PIN_ONE		1u
#define HV_PIN_MASK		0x7fffu
#define HV_PIN_W_ONE		(1u << 15)
#define HV_PIN_W_MASK		(0x7fffu << 15)
#define HV_PIN_BUSY		(1u << 31)
#define HV_PIN(v)		((uint32_t)(v))
#define HV_PIN_OWNER(v)		((uint32_t)((v) >> 32))
#define HV_PIN_WORD(pin, owner)	((uint64_t)(owner) << 32 | (uint32_t)(pin))
#define HV_OWN_SLOT_MASK	0xfffffu	/* HV_LEDGER_SLOTS - 1 */
#define HV_OWN_DONE		(1u << 20)
#define HV_OWN_TOKEN_SHIFT	21
#define HV_OWN_TOKEN_MAX	2046u		/* tokens are 1..2046 */
#define HV_OWN(token, slot, done)					\
	((uint32_t)(token) << HV_OWN_TOKEN_SHIFT |			\
	 ((done) ? HV_OWN_DONE : 0) | ((slot) & HV_OWN_SLOT_MASK))
#define HV_OWN_TOKEN(o)		((o) >> HV_OWN_TOKEN_SHIFT)
#define HV_OWNER_XENSIM		0xffffffffu	/* token 2047: never a client's */

struct hv_active {
	uint64_t pin;
	uint32_t frame;
	uint32_t domid;
};

/* ---- pin ledger (one per dom0 client process, its own memfd) ---- */
/*
 * slot[i] is 0 (free) or one pin the client holds or is taking or
 * releasing, HV_LEDGER_ENTRY(): bit 31 valid, bit 30 HV_LEDGER_TRANS
 * (the pin is being taken, or with bit 29 HV_LEDGER_RELEASING being
 * released), bit 28 a writable pin (GTF_writing), bits 13..27 the
 * granting domain, bits 0..12 the grant ref.  A map of n refs holds n
 * slots; a grant copy holds one slot per segment in progress (reused by
 * the next).  HV_OP_PIN_LEDGER's answer gives the connection's token
 * (rsp.arg, 1..HV_OWN_TOKEN_MAX, unique among live connections).
 *
 * Ordering, so that a process killed at any instant leaks no pin, has
 * none released twice and leaves no BUSY bit set (each store a release;
 * "own" is HV_OWN(token, slot, done)):
 *   take:    slot = entry|TRANS; BUSY, own(0); [set the flags];
 *            count + 1, BUSY, own(1); slot = entry; count + 1.
 *   release: slot = entry|TRANS|RELEASING; BUSY, own(0); [clear the
 *            flags]; count - 1, BUSY, own(1); slot = 0; count - 1.
 * Slots at or above "used" are never written: the client raises "used"
 * before it stores an entry there, and xensim reads only
 * slot[0 .. min(used, HV_LEDGER_SLOTS)).
 *
 * When the connection closes xensim first looks for act words BUSY with
 * its token (every domain's table) and reads the slot the owner names:
 * not done: a take is undone, a release finished; done: a take whose
 * slot still says TRANS is released, one whose slot holds the entry is
 * left to the pass below, a release is over; either way BUSY goes.
 * Then it pread()s the ledger and releases each plain entry and each
 * entry|TRANS|RELEASING not handled above (killed before its BUSY: the
 * pin is still held); entry|TRANS alone holds no pin.  It trusts
 * nothing in the ledger: a malformed entry, an entry for a domain that
 * is gone, or one for which the active table holds no such pin (no
 * pin, no writable pin, no read-only pin) is skipped (logged); a pin
 * count never goes below zero.  Only dom0, which has the act tables
 * mapped writable anyway, can register a ledger.
 */
#define HV_LEDGER_MAGIC		0x78686c67u	/* "xhlg" */
#define HV_LEDGER_SLOTS		(1u << 20)	/* pins one process can hold */
#define HV_LEDGER_VALID		(1u << 31)
#define HV_LEDGER_TRANS		(1u << 30)
#define HV_LEDGER_RELEASING	(1u << 29)
#define HV_LEDGER_WRITABLE	(1u << 28)
#define HV_LEDGER_DOMID_SHIFT	13
#define HV_LEDGER_DOMID_MASK	0x7fffu
#define HV_LEDGER_REF_MASK	0x1fffu
#define HV_LEDGER_ENTRY(domid, ref, w)					\
	(HV_LEDGER_VALID | ((w) ? HV_LEDGER_WRITABLE : 0) |		\
	 ((uint32_t)(domid) << HV_LEDGER_DOMID_SHIFT) | (uint32_t)(ref))

struct hv_ledger_hdr {
	uint32_t magic;
	uint32_t version;	/* HV_PROTO_VERSION */
	uint32_t used;		/* slots ever handed out: [0, used) */
	uint32_t pad[13];
};

struct hv_ledger {
	struct hv_ledger_hdr hdr;
	uint32_t slot[HV_LEDGER_SLOTS];
};

_Static_assert(HV_LEDGER_SLOTS - 1 == HV_OWN_SLOT_MASK,
	       "an owner names any ledger slot");
_Static_assert(sizeof(struct hv_active) == 16,
	       "act entries stay 8-byte aligned for the 64-bit pin word");
_Static_assert(HV_NR_GRANTS - 1 <= HV_LEDGER_REF_MASK &&
	       HV_MAX_DOMID <= HV_LEDGER_DOMID_MASK,
	       "a ledger entry holds any grant ref and domid");

/* ---- evt memfd ---- */
enum hv_evtchn_state {
	HV_ECS_FREE = 0,
	/* allocated for remote_dom to bind; also what an interdomain port
	 * becomes when its peer closes (Xen's evtchn_close), offered to the
	 * closer's domain: notify there is -ENOTCONN */
	HV_ECS_UNBOUND = 1,
	HV_ECS_INTERDOMAIN = 2,		/* connected to remote_dom:remote_port */
};
#define HV_SG(gen, state)	(((gen) << 2) | (state))
#define HV_SG_STATE(sg)		((sg) & 3u)
#define HV_SG_GEN(sg)		((sg) >> 2)

struct hv_evtchn {
	/* State and generation (HV_SG); written only by xensim,
	 * store_release after the other fields of the entry. */
	uint32_t sg;
	uint32_t remote_dom;		/* informational; written by xensim */
	uint32_t remote_port;		/* informational; written by xensim */
	uint32_t pending;		/* set by senders, cleared by the owner */
	uint32_t masked;		/* owner only */
	uint32_t pad[3];
};

/* ---- control protocol ---- */
enum hv_op {
	/* First message on every connection: version, and the domid the
	 * client believes it is (must match the socket's). */
	HV_OP_HELLO = 1,
	/* domid -> fds [gnt, ram, evt] (+ act for dom0), rsp.arg = nr_frames */
	HV_OP_GET_DOMAIN = 2,
	/* domid -> rsp.ret 1 alive, 0 dying or gone */
	HV_OP_DOMAIN_ALIVE = 3,
	/* fd [eventfd]: this connection becomes an event channel handle */
	HV_OP_EVTCHN_REGISTER = 4,
	/* domid = remote domain -> rsp.port */
	HV_OP_BIND_UNBOUND = 5,
	/* domid, port = remote -> rsp.port (local) */
	HV_OP_BIND_INTERDOMAIN = 6,
	/* port (local, interdomain) -> fds [peer evt, peer eventfd],
	 * rsp.domid/port = remote end, rsp.arg = generation of the binding */
	HV_OP_PEER = 7,
	/* port (local) */
	HV_OP_UNBIND = 8,
	/* fd [memfd, struct hv_ledger], dom0 only (-EPERM), once per
	 * connection (-EEXIST) -> rsp.arg = the connection's token: the
	 * pins it records are released by xensim when this connection
	 * closes.  Not a shmem fd: dropped. */
	HV_OP_PIN_LEDGER = 9,
};

struct hv_req {
	uint32_t op;
	uint32_t domid;
	uint32_t port;
	uint32_t arg;
};

struct hv_rsp {
	int32_t ret;		/* >= 0 or -errno */
	uint32_t domid;
	uint32_t port;
	uint32_t arg;
	uint32_t nfds;
};

#endif /* SIM_HV_PROTO_H */
