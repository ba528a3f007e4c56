/* KLL quantile sketch (see quantile.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "quantile.h"

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Ascending sort; quicksort with insertion sort below 16 items. */
static void sort_f32(float *a, uint32_t n)
{
	while (n > 16) {
		float x = a[0], y = a[n / 2], z = a[n - 1];
		float p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		uint32_t i = 0, j = n - 1;
		for (;;) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i >= j)
				break;
			float t = a[i];
			a[i++] = a[j];
			a[j--] = t;
		}
		/* Recurse into the smaller side, loop on the larger. */
		if (j + 1 < n - j - 1) {
			sort_f32(a, j + 1);
			a += j + 1;
			n -= j + 1;
		} else {
			sort_f32(a + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	for (uint32_t i = 1; i < n; i++) {
		float v = a[i];
		uint32_t j = i;
		while (j && a[j - 1] > v) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = v;
	}
}

static void set_caps(gw_kll *s)
{
	s->room = 0;
	for (uint32_t h = 0; h < s->levels; h++) {
		double c = floor((double)s->k * pow(2.0 / 3.0, (double)(s->levels - 1 - h)));
		s->cap[h] = c < 2 ? 2 : (uint32_t)c;
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
	sort_f32(a, m);
	/* An odd item out stays (the smallest); the rest halve. */
	uint32_t keep = m & 1u, pairs = m / 2;
	int rc = reserve(s, h + 1, s->size[h + 1] + pairs);
	if (rc < 0)
		return rc;
	uint32_t off = (uint32_t)(splitmix(&s->rng) & 1u);
	float *up = s->item[h + 1] + s->size[h + 1];
	for (uint32_t i = 0; i < pairs; i++)
		up[i] = a[keep + 2 * i + off];
	s->size[h + 1] += pairs;
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
		int rc = reserve(a, h, a->size[h] + b->size[h]);
		if (rc < 0)
			return rc;
		memcpy(a->item[h] + a->size[h], b->item[h], b->size[h] * sizeof(float));
		a->size[h] += b->size[h];
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
