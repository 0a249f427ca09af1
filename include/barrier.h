/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * barrier.h: the only place where memory ordering for shared memory is
 * spelled out.  Shared rings (blkif rings, the simulated grant table and
 * event channel pages) are written by one side and read by another
 * process; every access that publishes or consumes data goes through one
 * of these named primitives, and every call site carries a one-line
 * comment naming the store or load it pairs with.
 *
 * Built on C11 atomics (GCC __atomic builtins, which also work on plain
 * integer lvalues inside Xen's ring structures).  No bare volatile and no
 * __sync_* elsewhere in the tree.
 *
 * Mapping to Xen's <xen/io/ring.h>: xen_wmb() -> smp_wmb(),
 * xen_rmb() -> smp_rmb(), xen_mb() -> smp_mb().  Include this header
 * before <xen/io/ring.h> so the ring macros use these definitions
 * (include/blkring.h does it for its users).
 */
#ifndef BLK_BARRIER_H
#define BLK_BARRIER_H

/* Full barrier: orders earlier loads/stores before later loads/stores. */
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
/* Orders earlier loads before later loads (and stores). */
#define smp_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
/* Orders earlier stores (and loads) before later stores. */
#define smp_wmb()	__atomic_thread_fence(__ATOMIC_RELEASE)

/* Load that later accesses cannot be reordered before. */
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
/* Store that earlier accesses cannot be reordered after. */
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* Single-copy-atomic access with no ordering (READ_ONCE/WRITE_ONCE). */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

/*
 * Xen's <xen/io/ring.h> uses xen_mb()/xen_rmb()/xen_wmb().  For the
 * interface version a non-Xen program gets by default (0, see
 * <xen/xen-compat.h>) ring.h itself defines them as mb()/rmb()/wmb(), so
 * we provide those; for newer interface versions (e.g. __XEN_TOOLS__) it
 * expects the caller to define xen_*() directly.  Defining both would be a
 * macro redefinition, hence the version test.
 */
#include <xen/xen-compat.h>
#ifndef mb
#define mb()	smp_mb()
#define rmb()	smp_rmb()
#define wmb()	smp_wmb()
#endif
#if __XEN_INTERFACE_VERSION__ >= 0x00030208 && !defined(xen_mb)
#define xen_mb()	smp_mb()
#define xen_rmb()	smp_rmb()
#define xen_wmb()	smp_wmb()
#endif

#endif /* BLK_BARRIER_H */
