/* terngrad's clipping statistics over a tensor (wire-format §4.5): the
 * sums of the finite values and of their squares in eight lanes (value i
 * to lane i mod 8, lanes added 0..7 at the end), their count and the
 * largest finite magnitude's bits; with an error buffer the same pass
 * folds it (e <- e + g) and measures the corrected values. One baseline
 * loop and AVX2 / AVX-512 copies, chosen by gw_cpu_isa(), that perform
 * the same IEEE operations per lane and give the same bits. */
#ifndef GW_TERNGRAD_MOMENTS_H
#define GW_TERNGRAD_MOMENTS_H

#include <stdint.h>

struct tg_moments {
	double s1, s2;    /* sum of x, sum of x * x over finite x */
	uint64_t count;   /* finite values */
	uint32_t maxbits; /* largest finite |x|'s bits, 0 if none */
};

/* g[0..n); e NULL, or folded in place first. */
void tg_moments_of(const float *g, float *e, uint64_t n, struct tg_moments *m);

#endif /* GW_TERNGRAD_MOMENTS_H */
