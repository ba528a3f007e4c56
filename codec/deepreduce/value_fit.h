/* What the two curve-fit value codecs (value_poly.c, value_dexp.c) share:
 * the stable descending sort of the values, the reorder map that takes each
 * value back from its rank to its position, and the rounding of the stated
 * bound. Header-only, private to codec/deepreduce/.
 *
 * The map is the paper's (§5.1): for value i in position order its rank in
 * the sorted order, in w = ceil(log2 n) bits (dr_bits_for), packed LSB-first
 * as bits.h packs (bit k of the stream is bit k % 8 of byte k / 8), the last
 * byte's unused bits zero. The packers here are bits.h's format with a
 * 64-bit accumulator instead of a loop per bit: the map is the bulk of a
 * section (17 bits a value for 100k values) and the rest is cheap. */
#ifndef GW_DR_VALUE_FIT_H
#define GW_DR_VALUE_FIT_H

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../codec_internal.h"
#include "bits.h"
#include "dr.h"

/* GSL reports errors through a global handler that aborts by default; the
 * fits check every status instead. value_poly.c turns the handler off once
 * per process (pthread_once), for every GSL user in it. */
void dr_fit_gsl_quiet(void);

/* Sort key of v: larger values get smaller keys, -0 ties with +0. */
static inline uint32_t drfit_key(float v)
{
	uint32_t u = gw_f32_bits(v);
	if (u == 0x80000000u)
		u = 0;
	uint32_t asc = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
	return ~asc;
}

static inline int drfit_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v[0..n) descending, ties in position order: y[r] is the value of
 * rank r, order[r] its position. Items are key << 32 | position, so ties
 * are broken by position whatever the sort; an LSD radix sort (O(n), three
 * passes of 11 bits) above DRFIT_RADIX_MIN values, qsort below, where the
 * radix sort's 24 KiB of counters cost more than the sort. v must be free
 * of NaN. GW_ENOMEM. */
#define DRFIT_RADIX_MIN 1024u
static inline int drfit_sort(const float *v, uint32_t n, uint32_t *order,
			     float *y)
{
	if (n < DRFIT_RADIX_MIN) {
		uint64_t *a = malloc((size_t)n * sizeof(*a) + 1);
		if (!a)
			return GW_ERR(GW_ENOMEM);
		for (uint32_t i = 0; i < n; i++)
			a[i] = (uint64_t)drfit_key(v[i]) << 32 | i;
		qsort(a, n, sizeof(*a), drfit_cmp);
		for (uint32_t r = 0; r < n; r++) {
			order[r] = (uint32_t)a[r];
			y[r] = v[order[r]];
		}
		free(a);
		return GW_OK;
	}
	uint64_t *a = malloc((size_t)n * sizeof(*a) + 1);
	uint64_t *b = malloc((size_t)n * sizeof(*b) + 1);
	uint32_t (*cnt)[2048] = calloc(3, sizeof(*cnt));
	if (!a || !b || !cnt) {
		free(a);
		free(b);
		free(cnt);
		return GW_ERR(GW_ENOMEM);
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = drfit_key(v[i]);
		a[i] = (uint64_t)k << 32 | i;
		cnt[0][k & 2047]++;
		cnt[1][(k >> 11) & 2047]++;
		cnt[2][k >> 22]++;
	}
	for (unsigned p = 0; p < 3; p++) {
		uint32_t sum = 0;
		for (unsigned d = 0; d < 2048; d++) {
			uint32_t c = cnt[p][d];
			cnt[p][d] = sum;
			sum += c;
		}
		unsigned sh = 32 + 11 * p;
		for (uint32_t i = 0; i < n; i++)
			b[cnt[p][(a[i] >> sh) & 2047]++] = a[i];
		uint64_t *t = a;
		a = b;
		b = t;
	}
	for (uint32_t r = 0; r < n; r++) {
		order[r] = (uint32_t)a[r];
		y[r] = v[order[r]];
	}
	free(a);
	free(b);
	free(cnt);
	return GW_OK;
}

/* Bytes of the map of n values. */
static inline uint64_t drfit_map_bytes(uint32_t n)
{
	return ((uint64_t)n * dr_bits_for(n) + 7) / 8;
}

/* Writes the map of the sort (order, n) into out[0..drfit_map_bytes(n)),
 * using rank[0..n) as scratch. */
static inline void drfit_put_map(uint8_t *out, const uint32_t *order,
				 uint32_t n, uint32_t *rank)
{
	unsigned w = dr_bits_for(n);
	for (uint32_t r = 0; r < n; r++)
		rank[order[r]] = r;
	uint64_t acc = 0;
	unsigned have = 0;
	size_t o = 0;
	for (uint32_t i = 0; i < n; i++) {
		acc |= (uint64_t)rank[i] << have;
		have += w;
		while (have >= 8) {
			out[o++] = (uint8_t)acc;
			acc >>= 8;
			have -= 8;
		}
	}
	if (have)
		out[o] = (uint8_t)acc;
}

/* Reads the map of n values from in[0..drfit_map_bytes(n)) into map[0..n).
 * Every entry must be below n and appear once (a bitmap of n bits checks
 * it in O(n)), the pad bits zero. Returns 0, GW_ECORRUPT or GW_ENOMEM. */
static inline int drfit_get_map(const uint8_t *in, uint32_t n, uint32_t *map)
{
	unsigned w = dr_bits_for(n);
	uint64_t bytes = drfit_map_bytes(n);
	uint64_t *seen = calloc(((size_t)n + 63) / 64 + 1, sizeof(*seen));
	if (!seen)
		return GW_ERR(GW_ENOMEM);
	uint64_t acc = 0, mask = w ? (1ull << w) - 1 : 0;
	unsigned have = 0;
	size_t o = 0;
	int bad = 0;
	for (uint32_t i = 0; i < n; i++) {
		while (have < w) {
			acc |= (uint64_t)in[o++] << have;
			have += 8;
		}
		uint32_t r = (uint32_t)(acc & mask);
		acc >>= w;
		have -= w;
		if (r >= n) {
			bad = 1;
			break;
		}
		uint64_t bit = 1ull << (r & 63);
		bad |= (seen[r >> 6] & bit) != 0;
		seen[r >> 6] |= bit;
		map[i] = r;
	}
	free(seen);
	/* Pad bits: those left in the accumulator of the last byte read. */
	if (bad || acc || o != bytes)
		return GW_ERR(GW_ECORRUPT);
	return GW_OK;
}

/* The stated bound: the float32 nearest maxerr rounded up, so that it is
 * never below the measured error; +Inf if that is above FLT_MAX. */
static inline float drfit_bound_up(double maxerr)
{
	float b = (float)maxerr;
	if ((double)b < maxerr)
		b = nextafterf(b, INFINITY);
	return b;
}

/* Whether every value is finite. */
static inline int drfit_all_finite(const float *v, uint32_t n)
{
	uint32_t bad = 0;
	for (uint32_t i = 0; i < n; i++)
		bad |= (gw_f32_bits(v[i]) & 0x7fffffffu) >= 0x7f800000u;
	return !bad;
}

/* The decode of a parsed section: curve(sec, n, yhat) writes the fitted
 * curve at ranks 0..n-1; each must be finite (finite parameters can still
 * overflow, or give Inf - Inf: GW_ECORRUPT), and value i is the curve at
 * its rank in the map at map_in. Returns GW_OK or GW_E*. */
static inline int drfit_decode(const uint8_t *map_in, uint32_t n, float *v,
			       void (*curve)(const void *sec, uint32_t n, float *yhat),
			       const void *sec)
{
	float *yhat = malloc((size_t)n * sizeof(*yhat));
	uint32_t *map = malloc((size_t)n * sizeof(*map));
	int rc = GW_ERR(GW_ENOMEM);
	if (!yhat || !map)
		goto out;
	curve(sec, n, yhat);
	rc = GW_ERR(GW_ECORRUPT);
	if (!drfit_all_finite(yhat, n))
		goto out;
	rc = drfit_get_map(map_in, n, map);
	if (rc < 0)
		goto out;
	for (uint32_t i = 0; i < n; i++)
		v[i] = yhat[map[i]];
	rc = GW_OK;
out:
	free(map);
	free(yhat);
	return rc;
}

#endif /* GW_DR_VALUE_FIT_H */
