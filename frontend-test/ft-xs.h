/*
 * ft-xs.h: small libxenstore helpers shared by libblkfront, the script
 * engine and the toolstack emulation (frontend-test/).
 *
 * All take "dir" + "key" and build "dir/key".  0/-errno.  They do not log:
 * callers log with the full path they were reading.
 */
#ifndef FT_XS_H
#define FT_XS_H

#include <stdbool.h>
#include <stdint.h>
#include <xenstore.h>

#include "compiler.h"

/*
 * Open libxenstore.  When sock is non-NULL it is exported as
 * XENSTORED_PATH first (libxenstore reads it in xs_open), so call this
 * before other threads exist.  NULL with errno.
 */
struct xs_handle *ft_xs_open(const char *sock);

/* Read dir/key as a malloc'd NUL-terminated string.  NULL+errno (ENOENT). */
char *ft_xs_read(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		 const char *key);

/*
 * Read dir/key as an unsigned decimal (or 0x hex) number.
 * Missing: *out = def and -ENOENT.  Not a number / > max: -EPROTO.
 */
int ft_xs_read_u64(struct xs_handle *xs, const char *dir, const char *key,
		   uint64_t def, uint64_t *out);
int ft_xs_read_uint(struct xs_handle *xs, const char *dir, const char *key,
		    unsigned int def, unsigned int *out);

/* Write dir/key = printf(fmt, ...).  0 or -errno. */
int ft_xs_printf(struct xs_handle *xs, xs_transaction_t t, const char *dir,
		 const char *key, const char *fmt, ...) ATTRIBUTE_FORMAT_PRINTF(5, 6);

/*
 * Wait until dir/key (a XenbusState number) satisfies pred(value, arg),
 * or timeout_ms passes.  Uses a watch on its own token; xs must not be
 * read for watches by another thread meanwhile.  *state gets the last
 * value seen (0 when missing).  0, -ETIMEDOUT, or -errno.
 */
typedef bool (*ft_xs_pred)(unsigned int state, unsigned int arg);
int ft_xs_wait_state(struct xs_handle *xs, const char *dir, const char *key,
		     ft_xs_pred pred, unsigned int arg,
		     unsigned int timeout_ms, unsigned int *state);

/* Common predicates. */
bool ft_state_eq(unsigned int state, unsigned int want);
bool ft_state_ge(unsigned int state, unsigned int want);

/* CLOCK_MONOTONIC in ns / ms. */
uint64_t ft_now_ns(void);

#endif /* FT_XS_H */
