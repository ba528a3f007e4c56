/* Radix selection (select.h). */
#include "select.h"

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

