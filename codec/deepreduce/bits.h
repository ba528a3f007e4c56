/* Bit streams for the DeepReduce sections: LSB-first inside each byte,
 * bytes in order (bit i of the stream is bit i % 8 of byte i / 8). The
 * reader never reads past its end: a read beyond it fails and sets err. */
#ifndef GW_DR_BITS_H
#define GW_DR_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dr_bw {
	uint8_t *p;
	size_t cap;          /* bytes */
	uint64_t pos;        /* bits written */
	bool over;           /* a write went past cap (nothing was stored) */
};

static inline void dr_bw_init(struct dr_bw *w, uint8_t *p, size_t cap)
{
	w->p = p;
	w->cap = cap;
	w->pos = 0;
	w->over = false;
	memset(p, 0, cap);
}

/* Appends the low `bits` bits of v (bits <= 57). */
static inline void dr_bw_put(struct dr_bw *w, uint64_t v, unsigned bits)
{
	if (w->over || w->pos + bits > (uint64_t)w->cap * 8) {
		w->over = true;
		return;
	}
	for (unsigned i = 0; i < bits; i++, w->pos++)
		if ((v >> i) & 1)
			w->p[w->pos >> 3] |= (uint8_t)(1u << (w->pos & 7));
}

/* Bytes used so far (the last partial byte counted). */
static inline size_t dr_bw_bytes(const struct dr_bw *w)
{
	return (size_t)((w->pos + 7) / 8);
}

struct dr_br {
	const uint8_t *p;
	uint64_t nbits;
	uint64_t pos;
	bool err;
};

static inline void dr_br_init(struct dr_br *r, const uint8_t *p, size_t len)
{
	r->p = p;
	r->nbits = (uint64_t)len * 8;
	r->pos = 0;
	r->err = false;
}

/* Reads `bits` bits (<= 57); 0 and err set past the end. */
static inline uint64_t dr_br_get(struct dr_br *r, unsigned bits)
{
	if (r->err || r->pos + bits > r->nbits) {
		r->err = true;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < bits; i++, r->pos++)
		v |= (uint64_t)((r->p[r->pos >> 3] >> (r->pos & 7)) & 1) << i;
	return v;
}

/* Bits needed to store values 0..n-1 (0 for n <= 1): ceil(log2 n). */
static inline unsigned dr_bits_for(uint64_t n)
{
	unsigned b = 0;
	while (b < 64 && (n - 1) >> b)
		b++;
	return n <= 1 ? 0 : b;
}

#endif /* GW_DR_BITS_H */
