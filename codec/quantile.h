/* A KLL quantile sketch (Karnin, Lang, Liberty, FOCS 2016) of float
 * values: one pass, mergeable, O(k log(n/k)) memory.
 *
 * Levels h = 0, 1, ... hold items of weight 2^h. With H levels, level h
 * holds at most max(2, floor(k (2/3)^(H-1-h))) items; when the sketch is
 * full, the lowest level over its capacity is sorted and compacted: every
 * other item (from a seeded random offset, 0 or 1) moves up one level,
 * doubling its weight, the rest are dropped. Level 0 holds at least
 * GW_KLL_BATCH items (a lazy, larger bottom buffer: fewer compactions, each
 * radix-sorting a batch; it only lowers the error, at 8 KB), and the
 * levels above are kept sorted by merging arriving runs, so compacting
 * them needs no sort. Rank error: a quantile
 * query's normalized rank error stays below about 2.3 / k^0.97 with 99%
 * confidence for one query and 2.45 / k^0.94 for all queries at once
 * (Apache DataSketches' measured bounds for this compactor schedule; with
 * k = 256, 1.05% and 1.31%). The seed makes a sketch reproducible. */
#ifndef GW_QUANTILE_H
#define GW_QUANTILE_H

#include <stdint.h>

#define GW_KLL_LEVELS_MAX 48
#define GW_KLL_BATCH 2048

typedef struct gw_kll {
	uint32_t k;
	uint32_t levels;                      /* levels in use, >= 1 */
	uint64_t n;                           /* values added (weight) */
	uint64_t rng;
	float *item[GW_KLL_LEVELS_MAX];
	uint32_t size[GW_KLL_LEVELS_MAX], cap[GW_KLL_LEVELS_MAX];
	uint32_t alloc[GW_KLL_LEVELS_MAX];    /* allocated items per level */
	uint64_t held, room;                  /* items retained, capacity */
	float *tmp;                           /* sort scratch */
	uint32_t tmp_cap;
} gw_kll;

/* 0 or GW_ENOMEM / GW_EINVAL (k < 8). */
int gw_kll_init(gw_kll *s, uint32_t k, uint64_t seed);
void gw_kll_free(gw_kll *s);
/* Empties the sketch, keeping its memory. */
void gw_kll_reset(gw_kll *s, uint64_t seed);
/* Adds one value; 0 or GW_ENOMEM. NaN must not be added. */
int gw_kll_add(gw_kll *s, float v);
/* gw_kll_add() of v[0], ..., v[n - 1], in that order, with the same
 * result, copying runs of them at once; 0 or GW_ENOMEM. */
int gw_kll_add_n(gw_kll *s, const float *v, uint64_t n);
/* Adds every value of b into a (b unchanged); 0 or GW_ENOMEM / GW_EINVAL
 * (different k). */
int gw_kll_merge(gw_kll *a, const gw_kll *b);
/* Estimated number of added values < v. */
uint64_t gw_kll_rank(const gw_kll *s, float v);
/* The q - 1 split values at ranks i n / q (i = 1 .. q - 1): for each, the
 * smallest retained value whose cumulative weight reaches i n / q.
 * splits[] gets q - 1 ascending values. 0, GW_EINVAL (empty, q < 2) or
 * GW_ENOMEM. */
int gw_kll_splits(const gw_kll *s, uint32_t q, float *splits);

#endif /* GW_QUANTILE_H */
