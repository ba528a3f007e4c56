/* terngrad's clipping statistics, per ISA (terngrad_moments.h). The
 * compiler does not vectorize the masked maximum and count of the
 * baseline loop, and one scalar chain there held the whole pass to a
 * fifth of memory speed; the copies below keep the eight lanes in one
 * register per sum. */
#include "terngrad_moments.h"

#include <string.h>

#include "gw_cpu.h"

struct lanes {
	double a[8], b[8];
	uint64_t k;
	uint32_t mb;
};

/* Values i..n in lane order i mod 8: the baseline, and every copy's tail. */
static void lanes_tail(const float *g, float *e, uint64_t i, uint64_t n, struct lanes *L)
{
	for (; i < n; i++) {
		float c = g[i];
		if (e)
			e[i] = c = e[i] + g[i];
		uint32_t u;
		memcpy(&u, &c, 4);
		u &= 0x7fffffffu;
		uint32_t fin = u < 0x7f800000u;
		L->mb = (fin && u > L->mb) ? u : L->mb;
		double x = fin ? (double)c : 0.0;
		L->a[i & 7] += x;
		L->b[i & 7] += x * x;
		L->k += fin;
	}
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

__attribute__((target("avx2"))) static uint64_t
lanes_avx2(const float *g, float *e, uint64_t n, struct lanes *L)
{
	const __m256i abs = _mm256_set1_epi32(0x7fffffff);
	const __m256i inf = _mm256_set1_epi32(0x7f800000);
	__m256d a0 = _mm256_setzero_pd(), a1 = a0, b0 = a0, b1 = a0;
	__m256i mx = _mm256_setzero_si256();
	uint64_t k = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 c = _mm256_loadu_ps(g + i);
		if (e) {
			c = _mm256_add_ps(_mm256_loadu_ps(e + i), c);
			_mm256_storeu_ps(e + i, c);
		}
		__m256i u = _mm256_and_si256(_mm256_castps_si256(c), abs);
		__m256i fin = _mm256_cmpgt_epi32(inf, u);   /* u <= 0x7fffffff: signed is fine */
		mx = _mm256_max_epu32(mx, _mm256_and_si256(u, fin));
		__m256 cz = _mm256_and_ps(c, _mm256_castsi256_ps(fin));   /* +0 where not finite */
		__m256d x0 = _mm256_cvtps_pd(_mm256_castps256_ps128(cz));
		__m256d x1 = _mm256_cvtps_pd(_mm256_extractf128_ps(cz, 1));
		a0 = _mm256_add_pd(a0, x0);
		a1 = _mm256_add_pd(a1, x1);
		b0 = _mm256_add_pd(b0, _mm256_mul_pd(x0, x0));
		b1 = _mm256_add_pd(b1, _mm256_mul_pd(x1, x1));
		k += (uint64_t)__builtin_popcount((unsigned)_mm256_movemask_ps(
			_mm256_castsi256_ps(fin)));
	}
	_mm256_storeu_pd(L->a, a0);
	_mm256_storeu_pd(L->a + 4, a1);
	_mm256_storeu_pd(L->b, b0);
	_mm256_storeu_pd(L->b + 4, b1);
	uint32_t m[8];
	_mm256_storeu_si256((__m256i *)m, mx);
	for (unsigned l = 0; l < 8; l++)
		L->mb = m[l] > L->mb ? m[l] : L->mb;
	L->k = k;
	return i;
}

__attribute__((target("avx2,avx512f,avx512vl,avx512dq"))) static uint64_t
lanes_avx512(const float *g, float *e, uint64_t n, struct lanes *L)
{
	const __m256i abs = _mm256_set1_epi32(0x7fffffff);
	const __m256i inf = _mm256_set1_epi32(0x7f800000);
	__m512d a = _mm512_setzero_pd(), b = a;
	__m256i mx = _mm256_setzero_si256();
	uint64_t k = 0, i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 c = _mm256_loadu_ps(g + i);
		if (e) {
			c = _mm256_add_ps(_mm256_loadu_ps(e + i), c);
			_mm256_storeu_ps(e + i, c);
		}
		__m256i u = _mm256_and_si256(_mm256_castps_si256(c), abs);
		__mmask8 fin = _mm256_cmplt_epu32_mask(u, inf);
		mx = _mm256_mask_max_epu32(mx, fin, mx, u);
		__m512d x = _mm512_maskz_mov_pd(fin, _mm512_cvtps_pd(c));   /* +0 where not finite */
		a = _mm512_add_pd(a, x);
		b = _mm512_add_pd(b, _mm512_mul_pd(x, x));
		k += (uint64_t)__builtin_popcount((unsigned)fin);
	}
	_mm512_storeu_pd(L->a, a);
	_mm512_storeu_pd(L->b, b);
	uint32_t m[8];
	_mm256_storeu_si256((__m256i *)m, mx);
	for (unsigned l = 0; l < 8; l++)
		L->mb = m[l] > L->mb ? m[l] : L->mb;
	L->k = k;
	return i;
}
#endif

void tg_moments_of(const float *g, float *e, uint64_t n, struct tg_moments *m)
{
	struct lanes L;
	memset(&L, 0, sizeof(L));
	uint64_t i = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
	int isa = gw_cpu_isa();
	if (isa >= GW_ISA_AVX512)
		i = lanes_avx512(g, e, n, &L);
	else if (isa >= GW_ISA_AVX2)
		i = lanes_avx2(g, e, n, &L);
#endif
	lanes_tail(g, e, i, n, &L);
	double t1 = L.a[0], t2 = L.b[0];
	for (unsigned l = 1; l < 8; l++) {
		t1 += L.a[l];
		t2 += L.b[l];
	}
	m->s1 = t1;
	m->s2 = t2;
	m->count = L.k;
	m->maxbits = L.mb;
}
