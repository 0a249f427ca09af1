/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-request.c: libFuzzer entry point for the request path of a back
 * ring (get, validate, parse_indirect, respond).  Built only by
 * "make fuzz" with clang; the work is in fuzz-harness.c, which the
 * corpus replay test also runs under make check.
 */
#include <config.h>

#include <stddef.h>
#include <stdint.h>

#include "private.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return blkring_fuzz_one(data, size);
}
