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

/* Top-k of a large dense tensor without ranking every value: a sample
 * of the corrected values sets a threshold rank a little below the k-th
 * largest, and one pass folds the feedback (e <- g + e; e may be NULL)
 * and keeps, in index order, the values ranking at or above it; the
 * exact selection then runs over those candidates only. That one pass
 * reads g and e and writes e, as any fused-feedback encoder must, where
 * ranking every value also writes and re-reads a rank array three times.
 *
 * gw_filter_cap: the candidate capacity to allocate for selecting k of n,
 * or 0 where filtering does not pay (small tensors, large fractions).
 * gw_filter_dense: the number of candidates written to idx, val (the
 * corrected value) and rank, or -1 when the estimate missed (fewer than
 * k ranked at or above it, or more than cap): e is folded all the same,
 * and the caller ranks the whole tensor. Either way the selection is the
 * exact top k: the threshold only decides how much work it takes. */
uint64_t gw_filter_cap(uint64_t n, uint64_t k);
int64_t gw_filter_dense(const float *g, float *e, uint64_t n, uint64_t k,
			uint64_t *idx, float *val, uint32_t *rank, uint64_t cap);

#endif /* GW_SELECT_H */
