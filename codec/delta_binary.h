/* Delta-binary keys (SketchML §3.4): ascending keys stored as increments,
 * each with a 2-bit byte-count flag and the fewest bytes that hold it —
 * lossless. Shared by every codec that sends key lists (sketchml, and the
 * DeepReduce index codecs).
 *
 * A block of n keys after a base: the first increment is k[0] - base, each
 * later one k[i] - k[i-1] - 1 (keys are distinct, so a run of consecutive
 * keys costs one byte each). Layout: ceil(n / 4) flag bytes (key i's flag
 * in bits 2(i % 4) .. 2(i % 4) + 1 of byte i / 4, unused high bits 0),
 * then the increments, little-endian, in key order. Flags 0..3 mean 1, 2,
 * 3, 4 bytes (narrow blocks, increments below 2^32) or 1, 2, 4, 8 bytes
 * (wide blocks, any 64-bit increment). */
#ifndef GW_DELTA_BINARY_H
#define GW_DELTA_BINARY_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of the block of keys[0..n) after base (flags included). The keys
 * must be ascending and >= base; narrow blocks need every increment below
 * 2^32. */
size_t gw_db_size(const uint64_t *keys, uint32_t n, uint64_t base, int wide);

/* Writes the block to out (gw_db_size() bytes); returns its length. */
size_t gw_db_encode(const uint64_t *keys, uint32_t n, uint64_t base, int wide,
		    uint8_t *out);

/* Reads a block of n keys after base from in[0..len): every key must be
 * below limit (and the arithmetic must not wrap); flag bits past the last
 * key must be 0. Fills keys[0..n) (may be NULL to only validate) and
 * *used with the block's length. Returns 0 or GW_ECORRUPT / GW_ELENGTH,
 * having read nothing outside in[0..len). */
int gw_db_decode(const uint8_t *in, size_t len, uint32_t n, uint64_t base,
		 int wide, uint64_t limit, uint64_t *keys, size_t *used);

/* Walks a block gw_db_decode() accepted, key by key, without checks. */
struct gw_db_iter {
	const uint8_t *flags, *p;
	uint32_t i;
	uint64_t next;   /* smallest value the next key may take */
	int wide;
};

static inline void gw_db_iter_init(struct gw_db_iter *it, const uint8_t *in,
				   uint32_t n, uint64_t base, int wide)
{
	it->flags = in;
	it->p = in + ((size_t)n + 3) / 4;
	it->i = 0;
	it->next = base;
	it->wide = wide;
}

static inline uint64_t gw_db_iter_next(struct gw_db_iter *it)
{
	static const uint8_t len[2][4] = {{1, 2, 3, 4}, {1, 2, 4, 8}};
	unsigned f = (it->flags[it->i / 4] >> (2 * (it->i % 4))) & 3u;
	uint64_t d = 0;
	for (unsigned b = 0; b < len[it->wide != 0][f]; b++)
		d |= (uint64_t)it->p[b] << (8 * b);
	it->p += len[it->wide != 0][f];
	it->i++;
	uint64_t k = it->next + d;
	it->next = k + 1;
	return k;
}

#endif /* GW_DELTA_BINARY_H */
