/* Radix selection (select.h). */
#include "select.h"

#include <math.h>

#include "gw_cpu.h"
#include "gw_util.h"

/* The bucket of hist[0..nb) (counts, indexed by digit) holding the need-th
 * largest element, need >= 1 and at most the total; *above gets how many
 * elements lie in higher buckets. */
static unsigned pick_bucket(const uint64_t *hist, unsigned nb, uint64_t need,
			    uint64_t *above)
{
	uint64_t acc = 0;
	unsigned b = nb;
	while (b-- > 0) {
		if (acc + hist[b] >= need)
			break;
		acc += hist[b];
	}
	*above = acc;
	return b;
}

uint32_t gw_radix_select(const uint32_t *r, uint64_t n, uint64_t k,
			     const uint64_t *h1, uint64_t *above)
{
	uint64_t a1, a2, a3;
	unsigned b1 = pick_bucket(h1, 2048, k, &a1);
	uint64_t h[1024] = {0};
	for (uint64_t i = 0; i < n; i++)
		if (r[i] >> 20 == b1)
			h[(r[i] >> 10) & 0x3ffu]++;
	unsigned b2 = pick_bucket(h, 1024, k - a1, &a2);
	uint32_t hi = (uint32_t)b1 << 10 | b2;
	memset(h, 0, sizeof(h));
	for (uint64_t i = 0; i < n; i++)
		if (r[i] >> 10 == hi)
			h[r[i] & 0x3ffu]++;
	unsigned b3 = pick_bucket(h, 1024, k - a1 - a2, &a3);
	*above = a1 + a2 + a3;
	return hi << 10 | b3;
}


/* ---- sampled threshold, one filtering pass (select.h) ---------------- */

/* The sample: SAMPLE_BLOCKS runs of SAMPLE_RUN consecutive values spread
 * evenly over the tensor (runs, not single values, so the sample reads
 * whole cache lines; spread, so every layer of a flattened model is in
 * it). */
#define SAMPLE_BLOCKS 64u
#define SAMPLE_RUN 256u
#define SAMPLE_N (SAMPLE_BLOCKS * SAMPLE_RUN)

/* How many of the sample to keep above the threshold: the sample's share
 * of k, raised by a quarter and four standard deviations of a binomial
 * count, so the threshold falls below the k-th largest value unless the
 * sample is badly unrepresentative (then the caller's fallback runs). */
static uint64_t sample_want(uint64_t n, uint64_t k)
{
	double ks = (double)k * SAMPLE_N / (double)n;
	return (uint64_t)ceil(1.25 * ks + 4.0 * sqrt(ks) + 16.0);
}

uint64_t gw_filter_cap(uint64_t n, uint64_t k)
{
	if (n < 16 * SAMPLE_N || k > n / 8)
		return 0;
	uint64_t want = sample_want(n, k);
	if (want >= SAMPLE_N / 4)
		return 0;
	uint64_t cap = (uint64_t)(2.0 * (double)want * (double)n / SAMPLE_N) + 4096;
	return cap < n ? cap : n;
}

static inline uint32_t mag_bits(float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	return u & 0x7fffffffu;
}

/* Appends value v of index i if its magnitude bits reach t0; counts past
 * cap without storing (the caller sees the overflow in the count). */
static inline __attribute__((always_inline)) uint64_t keep(uint64_t i, float v, uint32_t t0,
							   uint64_t nc, uint64_t cap,
							   uint64_t *idx, float *val,
							   uint32_t *rank)
{
	uint32_t m = mag_bits(v);
	if (m < t0)
		return nc;
	if (nc < cap) {
		idx[nc] = i;
		val[nc] = v;
		rank[nc] = m > GW_RANK_INF ? GW_RANK_INF : m;
	}
	return nc + 1;
}

/* The pass over values i..n, baseline copy (and the vector copies'
 * tail): the fold and each value's test, in index order, after nc
 * candidates; returns the count. */
static uint64_t filter_scalar(const float *g, float *e, uint64_t i, uint64_t n, uint32_t t0,
			      uint64_t *idx, float *val, uint32_t *rank, uint64_t cap,
			      uint64_t nc)
{
	for (; i < n; i++) {
		float c = g[i];
		if (e)
			e[i] = c = c + e[i];
		nc = keep(i, c, t0, nc, cap, idx, val, rank);
	}
	return nc;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* The vector copies: one add per lane (the same IEEE operation as the
 * baseline's), a compare of the magnitude bits giving a lane mask, and
 * the rare set lane appended in index order; the tail is the baseline's.
 * Magnitude bits and t0 are at most 0x7fffffff, so AVX2's signed compare
 * orders them as unsigned. */
__attribute__((target("avx2"))) static uint64_t
filter_avx2(const float *g, float *e, uint64_t n, uint32_t t0, uint64_t *idx, float *val,
	    uint32_t *rank, uint64_t cap)
{
	const __m256i abs = _mm256_set1_epi32(0x7fffffff);
	const __m256i lo = _mm256_set1_epi32((int32_t)t0 - 1);
	uint64_t nc = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 c = _mm256_loadu_ps(g + i);
		if (e) {
			c = _mm256_add_ps(c, _mm256_loadu_ps(e + i));
			_mm256_storeu_ps(e + i, c);
		}
		__m256i m = _mm256_and_si256(_mm256_castps_si256(c), abs);
		unsigned k = (unsigned)_mm256_movemask_ps(
			_mm256_castsi256_ps(_mm256_cmpgt_epi32(m, lo)));
		while (GW_UNLIKELY(k)) {
			unsigned l = (unsigned)__builtin_ctz(k);
			k &= k - 1;
			nc = keep(i + l, e ? e[i + l] : g[i + l], t0, nc, cap, idx, val, rank);
		}
	}
	return filter_scalar(g, e, i, n, t0, idx, val, rank, cap, nc);
}

__attribute__((target("avx2,avx512f"))) static uint64_t
filter_avx512(const float *g, float *e, uint64_t n, uint32_t t0, uint64_t *idx, float *val,
	      uint32_t *rank, uint64_t cap)
{
	const __m512i abs = _mm512_set1_epi32(0x7fffffff);
	const __m512i tv = _mm512_set1_epi32((int32_t)t0);
	uint64_t nc = 0, i = 0;
	for (; i + 16 <= n; i += 16) {
		__m512 c = _mm512_loadu_ps(g + i);
		if (e) {
			c = _mm512_add_ps(c, _mm512_loadu_ps(e + i));
			_mm512_storeu_ps(e + i, c);
		}
		__m512i m = _mm512_and_si512(_mm512_castps_si512(c), abs);
		unsigned k = _mm512_cmpge_epu32_mask(m, tv);
		while (GW_UNLIKELY(k)) {
			unsigned l = (unsigned)__builtin_ctz(k);
			k &= k - 1;
			nc = keep(i + l, e ? e[i + l] : g[i + l], t0, nc, cap, idx, val, rank);
		}
	}
	return filter_scalar(g, e, i, n, t0, idx, val, rank, cap, nc);
}
#endif

/* The copy gw_cpu_isa() picks; every copy keeps the same candidates. */
static uint64_t filter(const float *g, float *e, uint64_t n, uint32_t t0, uint64_t *idx,
		       float *val, uint32_t *rank, uint64_t cap)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	int isa = gw_cpu_isa();
	if (isa >= GW_ISA_AVX512)
		return filter_avx512(g, e, n, t0, idx, val, rank, cap);
	if (isa >= GW_ISA_AVX2)
		return filter_avx2(g, e, n, t0, idx, val, rank, cap);
#endif
	return filter_scalar(g, e, 0, n, t0, idx, val, rank, cap, 0);
}

/* The threshold rank: the want-th largest rank of the sample's corrected
 * values (computed as the pass will compute them, but not stored). */
static uint32_t sample_threshold(const float *g, const float *e, uint64_t n, uint64_t want)
{
	uint32_t r[SAMPLE_N];
	uint64_t h[2048] = {0};
	for (unsigned b = 0; b < SAMPLE_BLOCKS; b++) {
		uint64_t at = (n - SAMPLE_RUN) * b / (SAMPLE_BLOCKS - 1);
		for (unsigned l = 0; l < SAMPLE_RUN; l++) {
			float c = e ? g[at + l] + e[at + l] : g[at + l];
			uint32_t m = mag_bits(c);
			m = m > GW_RANK_INF ? GW_RANK_INF : m;
			r[b * SAMPLE_RUN + l] = m;
			h[m >> 20]++;
		}
	}
	uint64_t above;
	return gw_radix_select(r, SAMPLE_N, want, h, &above);
}

int64_t gw_filter_dense(const float *g, float *e, uint64_t n, uint64_t k,
			uint64_t *idx, float *val, uint32_t *rank, uint64_t cap)
{
	uint32_t t0 = sample_threshold(g, e, n, sample_want(n, k));
	uint64_t nc = filter(g, e, n, t0, idx, val, rank, cap);
	return nc < k || nc > cap ? -1 : (int64_t)nc;
}
