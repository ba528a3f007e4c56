/* KLL quantile sketch (see quantile.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "gw_rand.h"
#include "quantile.h"

/* Float bits mapped so that unsigned order is float order. */
static inline uint32_t order_key(float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	return u ^ ((u >> 31) ? 0xffffffffu : 0x80000000u);
}

/* Ascending sort of a[0..n): LSD radix over the order keys, 4 passes of 8
 * bits (no comparisons to mispredict: a compaction sorts ~k items), with
 * tmp holding n items; insertion sort for a handful. */
static void sort_f32(float *a, uint32_t n, float *tmp)
{
	if (n < 32) {
		for (uint32_t i = 1; i < n; i++) {
			float v = a[i];
			uint32_t j = i;
			while (j && a[j - 1] > v) {
				a[j] = a[j - 1];
				j--;
			}
			a[j] = v;
		}
		return;
	}
	uint32_t cnt[4][256];
	memset(cnt, 0, sizeof(cnt));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = order_key(a[i]);
		for (unsigned d = 0; d < 4; d++)
			cnt[d][(k >> (8 * d)) & 0xffu]++;
	}
	float *src = a, *dst = tmp;
	for (unsigned d = 0; d < 4; d++) {
		if (cnt[d][(order_key(a[0]) >> (8 * d)) & 0xffu] == n)
			continue;   /* every item has this digit: nothing moves */
		uint32_t sum = 0;
		for (unsigned b = 0; b < 256; b++) {
			uint32_t c = cnt[d][b];
			cnt[d][b] = sum;
			sum += c;
		}
		for (uint32_t i = 0; i < n; i++)
			dst[cnt[d][(order_key(src[i]) >> (8 * d)) & 0xffu]++] = src[i];
		float *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, (size_t)n * sizeof(float));
}

static void set_caps(gw_kll *s)
{
	s->room = 0;
	for (uint32_t h = 0; h < s->levels; h++) {
		double c = floor((double)s->k * pow(2.0 / 3.0, (double)(s->levels - 1 - h)));
		s->cap[h] = c < 2 ? 2 : (uint32_t)c;
		if (h == 0 && s->cap[h] < GW_KLL_BATCH)
			s->cap[h] = GW_KLL_BATCH;
		s->room += s->cap[h];
	}
}

static int reserve(gw_kll *s, uint32_t h, uint32_t want)
{
	if (s->alloc[h] >= want)
		return GW_OK;
	uint32_t n = s->alloc[h] ? s->alloc[h] : 16;
	while (n < want)
		n *= 2;
	float *p = realloc(s->item[h], (size_t)n * sizeof(float));
	if (!p)
		return GW_ERR(GW_ENOMEM);
	s->item[h] = p;
	s->alloc[h] = n;
	return GW_OK;
}

/* Levels above 0 are kept sorted: a run arriving from a compaction (or a
 * merged sketch) is sorted already, so it is merged in from the back in
 * place, and compacting such a level needs no sort — sorting the many
 * small upper levels dominated the sketch's cost. */
static int merge_run(gw_kll *s, uint32_t h, const float *run, uint32_t n)
{
	int rc = reserve(s, h, s->size[h] + n);
	if (rc < 0)
		return rc;
	float *a = s->item[h];
	uint32_t i = s->size[h], j = n, o = s->size[h] + n;
	while (j) {
		if (i && a[i - 1] > run[j - 1])
			a[--o] = a[--i];
		else
			a[--o] = run[--j];
	}
	s->size[h] += n;
	return GW_OK;
}

int gw_kll_init(gw_kll *s, uint32_t k, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	if (k < 8)
		return GW_ERR(GW_EINVAL);
	s->k = k;
	gw_kll_reset(s, seed);
	return reserve(s, 0, k);
}

void gw_kll_free(gw_kll *s)
{
	for (uint32_t h = 0; h < GW_KLL_LEVELS_MAX; h++)
		free(s->item[h]);
	free(s->tmp);
	memset(s, 0, sizeof(*s));
}

void gw_kll_reset(gw_kll *s, uint64_t seed)
{
	s->levels = 1;
	s->n = s->held = 0;
	s->rng = seed;
	memset(s->size, 0, sizeof(s->size));
	set_caps(s);
}

/* Compacts the lowest level at or over its capacity. */
static int compress(gw_kll *s)
{
	uint32_t h = 0;
	while (h < s->levels && s->size[h] < s->cap[h])
		h++;
	if (h == s->levels)
		return GW_OK;
	if (h + 1 == s->levels) {
		if (s->levels == GW_KLL_LEVELS_MAX)
			return GW_ERR(GW_ENOMEM);
		s->levels++;
		set_caps(s);
	}
	float *a = s->item[h];
	uint32_t m = s->size[h];
	if (h == 0) {
		if (s->tmp_cap < m) {
			float *t = realloc(s->tmp, (size_t)m * sizeof(float));
			if (!t)
				return GW_ERR(GW_ENOMEM);
			s->tmp = t;
			s->tmp_cap = m;
		}
		sort_f32(a, m, s->tmp);
	}
	/* An odd item out stays (the smallest); the rest halve, in place (the
	 * survivors' index 2i + off >= i), then join the level above. */
	uint32_t keep = m & 1u, pairs = m / 2;
	uint32_t off = (uint32_t)(gw_splitmix64(&s->rng) & 1u);
	for (uint32_t i = 0; i < pairs; i++)
		a[keep + i] = a[keep + 2 * i + off];
	int rc = merge_run(s, h + 1, a + keep, pairs);
	if (rc < 0)
		return rc;
	s->size[h] = keep;
	s->held -= pairs;
	return GW_OK;
}

int gw_kll_add(gw_kll *s, float v)
{
	if (s->size[0] == s->alloc[0] && reserve(s, 0, s->size[0] + 1) < 0)
		return GW_ERR(GW_ENOMEM);
	s->item[0][s->size[0]++] = v;
	s->n++;
	if (++s->held > s->room)
		return compress(s);
	return GW_OK;
}

int gw_kll_merge(gw_kll *a, const gw_kll *b)
{
	if (a->k != b->k)
		return GW_ERR(GW_EINVAL);
	if (b->levels > a->levels) {
		a->levels = b->levels;
		set_caps(a);
	}
	for (uint32_t h = 0; h < b->levels; h++) {
		if (!b->size[h])
			continue;
		int rc;
		if (h == 0) {
			rc = reserve(a, 0, a->size[0] + b->size[0]);
			if (rc == 0) {
				memcpy(a->item[0] + a->size[0], b->item[0],
				       b->size[0] * sizeof(float));
				a->size[0] += b->size[0];
			}
		} else {
			rc = merge_run(a, h, b->item[h], b->size[h]);
		}
		if (rc < 0)
			return rc;
		a->held += b->size[h];
	}
	a->n += b->n;
	a->rng ^= b->rng;
	while (a->held > a->room) {
		uint64_t before = a->held;
		int rc = compress(a);
		if (rc < 0)
			return rc;
		if (a->held == before)
			break;   /* only odd items out left: within two per level */
	}
	return GW_OK;
}

uint64_t gw_kll_rank(const gw_kll *s, float v)
{
	uint64_t r = 0;
	for (uint32_t h = 0; h < s->levels; h++)
		for (uint32_t i = 0; i < s->size[h]; i++)
			if (s->item[h][i] < v)
				r += 1ull << h;
	return r;
}

struct wv {
	float v;
	uint64_t w;
};

static int cmp_wv(const void *x, const void *y)
{
	float a = ((const struct wv *)x)->v, b = ((const struct wv *)y)->v;
	return (a > b) - (a < b);
}

int gw_kll_splits(const gw_kll *s, uint32_t q, float *splits)
{
	if (!s->n || q < 2)
		return GW_ERR(GW_EINVAL);
	struct wv *all = malloc(s->held * sizeof(*all));
	if (!all)
		return GW_ERR(GW_ENOMEM);
	uint64_t m = 0;
	for (uint32_t h = 0; h < s->levels; h++)
		for (uint32_t i = 0; i < s->size[h]; i++)
			all[m++] = (struct wv){s->item[h][i], 1ull << h};
	qsort(all, m, sizeof(*all), cmp_wv);
	uint64_t cum = 0, j = 0;
	for (uint32_t i = 1; i < q; i++) {
		/* Smallest item whose cumulative weight reaches i n / q. */
		double target = (double)i * (double)s->n / q;
		while (j + 1 < m && (double)(cum + all[j].w) < target)
			cum += all[j++].w;
		splits[i - 1] = all[j].v;
	}
	free(all);
	return GW_OK;
}
