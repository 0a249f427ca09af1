/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * t-common.h: helpers for the xenops test and benchmark programs
 * (t_ prefix, liburing test/helpers.h style).  Tests exit 0 pass,
 * 1 fail, 77 skip.
 */
#ifndef XENOPS_T_COMMON_H
#define XENOPS_T_COMMON_H

#undef NDEBUG
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "xenops.h"

#define T_EXIT_PASS	0
#define T_EXIT_FAIL	1
#define T_EXIT_SKIP	77

/* Report and return 1 from the enclosing test_x() if cond is false. */
#define T_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s: check failed: %s: ",	\
				__FILE__, __LINE__, __func__, #cond);	\
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			return 1;					\
		}							\
	} while (0)

/* xenops_open() on the sim transport at $XENSIM_DIR as domid; exits 1. */
xenops_t *t_open(uint32_t domid);
/* Fill/check len bytes with a pattern derived from seed. */
void t_fill(void *buf, size_t len, uint32_t seed);
/* 0 if equal, else the first differing offset + 1. */
size_t t_check(const void *buf, size_t len, uint32_t seed);
/* Wait up to ms for fd to become readable: 1 readable, 0 timeout. */
int t_wait_readable(int fd, int ms);
/* Monotonic time in ns. */
uint64_t t_now_ns(void);
/* Run name() and print its outcome; returns its result. */
int t_run(const char *name, int (*fn)(void));

#endif
