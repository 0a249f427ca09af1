/*
 * blkring-stub.c: STUB so everything links before libblkring lands.
 */
#include <config.h>

#include <errno.h>

#include "barrier.h"
#include "blkring.h"

int blkring_abi_from_protocol(const char *protocol, enum blkring_abi *abi) { return -ENOSYS; }
const char *blkring_abi_name(enum blkring_abi abi) { return "?"; }
unsigned int blkring_size_for(enum blkring_abi abi, unsigned int nr_pages) { return 0; }
int blkreq_validate(struct blkreq *req, const struct blkreq_limits *lim,
		    bool *needs_indirect, const char **reason) { *reason = "stub"; return BLKIF_RSP_ERROR; }
int blkreq_parse_indirect(struct blkreq *req, const struct blkreq_limits *lim,
			  const void *const *pages, const char **reason) { *reason = "stub"; return BLKIF_RSP_ERROR; }
const char *blkreq_op_name(uint8_t op) { return "?"; }
blkring_t *blkring_back_attach(void *sring, unsigned int nr_pages, enum blkring_abi abi) { errno = ENOSYS; return NULL; }
blkring_t *blkring_front_attach(void *sring, unsigned int nr_pages, enum blkring_abi abi) { errno = ENOSYS; return NULL; }
void blkring_free(blkring_t *r) { }
unsigned int blkring_size(const blkring_t *r) { return 0; }
enum blkring_abi blkring_abi(const blkring_t *r) { return BLKRING_ABI_NATIVE; }
int blkring_back_get_request(blkring_t *r, struct blkreq *req) { return -ENOSYS; }
int blkring_back_put_response(blkring_t *r, uint64_t id, uint8_t operation, int16_t status) { return -ENOSYS; }
bool blkring_back_push_responses(blkring_t *r) { return false; }
bool blkring_back_final_check(blkring_t *r) { return false; }
bool blkring_broken(const blkring_t *r) { return true; }
unsigned int blkring_front_free_slots(const blkring_t *r) { return 0; }
int blkring_front_put_request(blkring_t *r, const struct blkreq *req) { return -ENOSYS; }
bool blkring_front_push_requests(blkring_t *r) { return false; }
void blkring_front_set_shared_req_prod(blkring_t *r, uint32_t value) { }
int blkring_front_get_response(blkring_t *r, struct blkrsp *rsp) { return -ENOSYS; }
bool blkring_front_final_check(blkring_t *r) { return false; }
