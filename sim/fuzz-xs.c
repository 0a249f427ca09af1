/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz-xs.c: libFuzzer target for xensim's xenstore engine (xstore*.c):
 * arbitrary byte streams from several connections of different domains
 * into the message parser and request dispatcher of an in-memory store.
 *
 * Input: a sequence of records
 *   u8 selector, u16 length (little endian), length bytes
 * selector % 8: 0..4 feed the bytes to connection 0..4 (domains 0, 0, 1,
 * 2, 3); 5 releases, 6 introduces domain 1 + byte[0] % 3; 7 closes and
 * reopens connection byte[0] % 5.  A broken connection is freed and
 * reopened.  After every record the output is checked: whole messages,
 * payloads within XENSTORE_PAYLOAD_MAX, only reply/event/error types.
 *
 * Built by "make fuzz" with clang -fsanitize=fuzzer,address,undefined;
 * fuzz-replay.c replays fuzz-seeds/ and fuzz-corpus/ under gcc in "make
 * check" (fuzz.mk).
 */
#include <config.h>

#undef NDEBUG
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <xen/io/xs_wire.h>

#include "compiler.h"
#include "xstore.h"

#define NCONN 5

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint32_t conn_domid[NCONN] = { 0, 0, 1, 2, 3 };

/* Consume and check everything the store sent to c. */
static void
check_output(struct xstore_conn *c)
{
	size_t len;
	const char *p = xstore_conn_output(c, &len);

	while (len) {
		struct xsd_sockmsg h;

		assert(len >= sizeof(h));
		memcpy(&h, p, sizeof(h));
		assert(h.len <= XENSTORE_PAYLOAD_MAX);
		assert(len >= sizeof(h) + h.len);
		assert(h.type < XS_TYPE_COUNT);
		if (h.type == XS_WATCH_EVENT || h.type == XS_ERROR) {
			/* NUL-terminated strings */
			assert(h.len > 0 && p[sizeof(h) + h.len - 1] == '\0');
		}
		xstore_conn_consume(c, sizeof(h) + h.len);
		p = xstore_conn_output(c, &len);
	}
}

/* Every input starts from a copy of this store (domains 0-3 introduced):
 * building it took two thirds of each input's time. */
static struct xstore *
start_store(void)
{
	static struct xstore *base;

	if (!base) {
		base = xstore_new();
		assert(base);
		assert(xstore_domain_introduce(base, 0, "Domain-0") == 0);
		for (uint32_t d = 1; d <= 3; d++)
			assert(xstore_domain_introduce(base, d, "guest") == 0);
	}
	return xstore_clone(base);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xstore *s = start_store();
	struct xstore_conn *conn[NCONN];

	assert(s);
	for (int i = 0; i < NCONN; i++) {
		conn[i] = xstore_conn_new(s, conn_domid[i], NULL, NULL);
		assert(conn[i]);
	}
	while (size >= 3) {
		uint8_t sel = data[0] % 8;
		size_t len = (size_t)data[1] | (size_t)data[2] << 8;
		const uint8_t *chunk = data + 3;
		uint32_t domid;
		int i;

		size -= 3;
		if (len > size)
			len = size;
		data = chunk + len;
		size -= len;
		switch (sel) {
		case 5:
			domid = 1 + (len ? chunk[0] % 3 : 0);
			xstore_domain_release(s, domid);
			break;
		case 6:
			domid = 1 + (len ? chunk[0] % 3 : 0);
			xstore_domain_introduce(s, domid, "again");
			break;
		case 7:
			i = len ? chunk[0] % NCONN : 0;
			xstore_conn_free(conn[i]);
			conn[i] = xstore_conn_new(s, conn_domid[i], NULL, NULL);
			assert(conn[i]);
			break;
		default:
			xstore_conn_input(conn[sel], chunk, len);
			break;
		}
		for (i = 0; i < NCONN; i++) {
			check_output(conn[i]);
			if (xstore_conn_broken(conn[i])) {
				xstore_conn_free(conn[i]);
				conn[i] = xstore_conn_new(s, conn_domid[i],
							  NULL, NULL);
				assert(conn[i]);
			}
		}
	}
	for (int i = 0; i < NCONN; i++)
		xstore_conn_free(conn[i]);
	xstore_free(s);
	return 0;
}
