/* Selection of the k largest magnitudes in worst-case linear time, shared
 * by topk (its whole-tensor pass) and the count sketch (HEAVYMIX and the
 * second round's top-k): a radix select on the magnitudes' float bits —
 * for non-negative floats the bit patterns order like the values. */
#ifndef GW_SELECT_H
#define GW_SELECT_H

#include <stdint.h>
#include <string.h>

#define GW_RANK_INF 0x7f800000u   /* rank of +-Inf and NaN: above all finite */

/* Selection rank of c: the bits of |c|; NaN ranks as Inf. */
static inline uint32_t gw_mag_rank(float c)
{
	uint32_t u;
	memcpy(&u, &c, 4);
	u &= 0x7fffffffu;
	return u > GW_RANK_INF ? GW_RANK_INF : u;
}

/* The k-th largest rank of r[0..n) (1 <= k <= n), given the histogram h1
 * of their top 11 bits (r >> 20, 2048 counts); *above gets how many ranks
 * exceed it. Two more passes over the elements of the chosen buckets. */
uint32_t gw_radix_select(const uint32_t *r, uint64_t n, uint64_t k,
			 const uint64_t *h1, uint64_t *above);

#endif /* GW_SELECT_H */
