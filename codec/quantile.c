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

int gw_kll_add_n(gw_kll *s, const float *v, uint64_t n)
{
	/* gw_kll_add's steps in runs: the run ends with the add that takes
	 * held past room, where gw_kll_add would compact. */
	while (n) {
		uint64_t run = s->held < s->room ? s->room - s->held + 1 : 1;
		uint32_t r = (uint32_t)GW_MIN(GW_MIN(run, n), (uint64_t)UINT32_MAX / 2);
		if (reserve(s, 0, s->size[0] + r) < 0)
			return GW_ERR(GW_ENOMEM);
		memcpy(s->item[0] + s->size[0], v, (size_t)r * sizeof(float));
		s->size[0] += r;
		s->n += r;
		s->held += r;
		v += r;
		n -= r;
		if (s->held > s->room) {
			int rc = compress(s);
			if (rc < 0)
				return rc;
		}
	}
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

/* out[] = the ascending runs a[0..na) and b[0..nb) merged. */
static void merge_wv(const struct wv *a, uint64_t na, const struct wv *b, uint64_t nb,
		     struct wv *out)
{
	uint64_t i = 0, j = 0, o = 0;
	while (i < na && j < nb)
		out[o++] = b[j].v < a[i].v ? b[j++] : a[i++];
	while (i < na)
		out[o++] = a[i++];
	while (j < nb)
		out[o++] = b[j++];
}

int gw_kll_splits(const gw_kll *s, uint32_t q, float *splits)
{
	if (!s->n || q < 2)
		return GW_ERR(GW_EINVAL);
	/* Every retained item with its weight, ascending: level 0 radix-sorted,
	 * the levels above (sorted already, see merge_run) merged in. Equal
	 * values may come in any order: the walk below only reads values at
	 * the cumulative weights where the value changes, the same for any
	 * order of ties. */
	uint64_t m = 0;
	for (uint32_t h = 0; h < s->levels; h++)
		m += s->size[h];
	uint32_t n0 = s->size[0];
	struct wv *all = malloc(2 * m * sizeof(*all) + 2 * (size_t)n0 * sizeof(float) + 1);
	if (!all)
		return GW_ERR(GW_ENOMEM);
	struct wv *other = all + m;
	float *l0 = (float *)(other + m), *tmp = l0 + n0;
	memcpy(l0, s->item[0], (size_t)n0 * sizeof(float));
	sort_f32(l0, n0, tmp);
	struct wv *cur = all;
	uint64_t have = 0;
	for (uint32_t i = 0; i < n0; i++)
		cur[have++] = (struct wv){l0[i], 1};
	for (uint32_t h = 1; h < s->levels; h++) {
		if (!s->size[h])
			continue;
		/* the level's run, weighted, behind what the merge writes */
		struct wv *run = other + m - s->size[h];
		for (uint32_t i = 0; i < s->size[h]; i++)
			run[i] = (struct wv){s->item[h][i], 1ull << h};
		merge_wv(cur, have, run, s->size[h], other);
		have += s->size[h];
		struct wv *t = cur;
		cur = other;
		other = t;
	}
	uint64_t cum = 0, j = 0;
	for (uint32_t i = 1; i < q; i++) {
		/* Smallest item whose cumulative weight reaches i n / q. */
		double target = (double)i * (double)s->n / q;
		while (j + 1 < m && (double)(cum + cur[j].w) < target)
			cum += cur[j++].w;
		splits[i - 1] = cur[j].v;
	}
	free(all);
	return GW_OK;
}
