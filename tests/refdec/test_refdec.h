/* What test_refdec.c shares with its hq part (test_refdec_hq.c): the
 * output buffers both decoders write, the frame builder and the verdict
 * check of the hand-built frames. */
#ifndef GW_TEST_REFDEC_H
#define GW_TEST_REFDEC_H

#include <stddef.h>
#include <stdint.h>

/* Output buffers: the library's and the reference's, equal between
 * decodes; what both start from (not zero: decode adds, and -0/+0 must
 * survive untouched); and a copy of the part a decode may change. A
 * frame set's decodes accumulate, each compared on its header's range,
 * and settle() compares the whole outputs (a write anywhere else shows
 * there) and starts them over. */
struct bufs {
	float *lib, *ref, *init, *save;
	uint64_t cap, used;
};

void td_st32(uint8_t *p, uint32_t v);
/* A frame of codec id: header fields, params, payload; sealed. */
size_t td_build(uint8_t *f, int id, uint16_t flags, uint32_t count, uint64_t start,
		uint32_t span, const void *params, uint32_t plen, const void *payload,
		uint32_t paylen);
/* Both decoders give want (a count or a code) for the frame. */
void td_expect(struct bufs *b, const uint8_t *f, size_t len, uint64_t out_len, int want,
	       const char *what);
/* test_refdec_hq.c: §4.11.2's rules by hand-built frames. */
void hand_built_hq(struct bufs *b, uint8_t *f, uint8_t *pay);

#endif
