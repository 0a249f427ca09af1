/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * xbus.h: the xenbus conventions over libxenstore, shared by blkbackd
 * (the backend) and blkfront-test (the frontend and toolstack side):
 * reading and writing "dir/key" nodes, XenbusState names and writes,
 * transactions with their EAGAIN retry, and waiting for a state.
 *
 * Semantics follow Linux's xenbus driver core (drivers/xen/xenbus/):
 * xenbus_read/xenbus_scanf/xenbus_printf, xenbus_switch_state (write
 * the state node only while it exists, in a transaction) and
 * xenbus_strstate.
 *
 * Conventions for every function here:
 *   - paths are "dir/key" (key NULL: dir itself), at most 255 bytes;
 *     -ENAMETOOLONG beyond;
 *   - functions returning int return 0 (or a count) or -errno; the
 *     ones returning a pointer return NULL and set errno (ENOENT: the
 *     node is absent);
 *   - numbers are unsigned decimal, digits only ("12"; not "+12", " 12",
 *     "0x0c" or "-1"): anything else is -EINVAL, like a guest's
 *     garbage;
 *   - nothing logs: the caller knows which path matters and logs it.
 * Threads: as libxenstore's handle (one thread at a time per handle,
 * except that watches may be read by another).
 */
#ifndef BLK_XBUS_H
#define BLK_XBUS_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>
#include <xen/io/xenbus.h>	/* enum xenbus_state */

#include "compiler.h"

/*
 * Open libxenstore.  When sock is not NULL it is exported as
 * XENSTORED_PATH first (libxenstore reads that in xs_open: the
 * simulator's socket), so call it before other threads exist.  NULL
 * with errno.
 */
struct xs_handle *xbus_open(const char *sock);

/* Read dir/key: a malloc'd NUL-terminated string, or NULL with errno. */
char *xbus_read(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		const char *key);

/*
 * Read dir/key as a number up to max.  0; -ENOENT when absent, -EINVAL
 * when not a number or above max; on failure *out = def.
 */
int xbus_read_u64(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		  const char *key, uint64_t max, uint64_t def, uint64_t *out);
/* The same for an unsigned int (max UINT_MAX). */
int xbus_read_uint(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		   const char *key, unsigned int def, unsigned int *out);

/* Write dir/key = printf(fmt, ...) (at most 255 bytes: -EOVERFLOW). */
int xbus_printf(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		const char *key, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(5, 6);

/* Remove dir/key and everything below it; an absent node is fine. */
int xbus_rm(struct xs_handle *xs, xs_transaction_t t, const char *dir, const char *key);

/*
 * Run fn(xs, t, arg) in a transaction and commit; when the commit says
 * EAGAIN (somebody changed what fn read), run it again, up to 100
 * times.  fn returns 0 to commit, or -errno to abort with that error.
 * Returns 0, fn's error, or the transaction's -errno.
 */
int xbus_transact(struct xs_handle *xs,
		  int (*fn)(struct xs_handle *xs, xs_transaction_t t, void *arg),
		  void *arg);

/*
 * Write dir/state = state (Linux __xenbus_switch_state): in a
 * transaction, and only while the node exists, so that a late write
 * never brings back a directory the toolstack has removed.  0, -ENOENT
 * when dir/state is gone (nothing written), or -errno.
 */
int xbus_switch_state(struct xs_handle *xs, const char *dir, enum xenbus_state state);

/* "Unknown", "Initialising", ..., "Closed", "Reconfiguring",
 * "Reconfigured"; "?" for anything else (Linux xenbus_strstate). */
const char *xbus_state_name(unsigned int state);
/*
 * A guest-written value made fit for a log line or a table: at most
 * size - 1 bytes of s into buf, each byte outside printable ASCII
 * (0x20..0x7e) as '?'.  Returns buf.  size >= 1; buf may be s (made
 * printable in place).
 */
char *xbus_printable(char *buf, size_t size, const char *s);

/*
 * Wait until the number at dir/key satisfies pred(value, arg), or
 * timeout_ms passes.  Watches the node with a token of its own, so xs
 * must not be read for watches by another thread meanwhile.  *state
 * gets the last value seen (0 when absent or not a number).  0,
 * -ETIMEDOUT, -ENOENT as soon as dir itself is absent (removed: no one
 * will write the key again; a read that fails with EACCES because the
 * parent went counts as absent), or -errno.
 */
typedef bool (*xbus_pred)(unsigned int state, unsigned int arg);
int xbus_wait(struct xs_handle *xs, const char *dir, const char *key, xbus_pred pred,
	      unsigned int arg, unsigned int timeout_ms, unsigned int *state);
bool xbus_eq(unsigned int state, unsigned int want);
bool xbus_ge(unsigned int state, unsigned int want);

#endif /* BLK_XBUS_H */
