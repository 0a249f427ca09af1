/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * compiler.h: small compiler helpers shared by every module.
 *
 * Nothing here has state.  Include it first in every .c file after config.h.
 */
#ifndef BLK_COMPILER_H
#define BLK_COMPILER_H

#include <stddef.h>
#include <stdlib.h>
#include <assert.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#endif

#define ATTRIBUTE_FORMAT_PRINTF(fmtpos, argpos) \
	__attribute__((__format__(__printf__, fmtpos, argpos)))
#define ATTRIBUTE_UNUSED	__attribute__((__unused__))
#define ATTRIBUTE_NORETURN	__attribute__((__noreturn__))

/* Inside a bounded spin: tell the CPU (x86 PAUSE; elsewhere nothing). */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax()	__builtin_ia32_pause()
#else
#define cpu_relax()	do { } while (0)
#endif

static inline void free_ptr_(void *p) { free(*(void **)p); }
/* A pointer freed with free() when it goes out of scope. */
#define CLEANUP_FREE __attribute__((__cleanup__(free_ptr_)))

/* Page size of the blkif protocol: grants are always 4 KiB frames. */
#define XEN_PAGE_SHIFT	12
#define XEN_PAGE_SIZE	4096u
/* blkif sectors are 512 bytes whatever the device's sector-size is. */
#define SECTOR_SHIFT	9
#define SECTOR_SIZE	512u
#define SECTORS_PER_PAGE (XEN_PAGE_SIZE / SECTOR_SIZE)

#endif /* BLK_COMPILER_H */
