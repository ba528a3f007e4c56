/* Seeds of the DeepReduce value harnesses fuzz_dr_{f32,deflate,qsgd,poly,
 * dexp}.c: input u16 n (LE) then a section. Valid sections come from the
 * codecs' own encoders over a few fixed shapes of data (gradient-like heavy
 * tails, constants, ramps, one value; f32 and deflate also NaN payloads,
 * infinities, -0 and subnormals) and are named <what>.ok, so the replay
 * checks that they are accepted; a few broken copies are named after the
 * code they must be refused with (regress_main.c). Deterministic: each
 * harness starts its own generator from a fixed state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepreduce/dr.h"
#include "seeds_dr.h"

#define NMAX 1024u
#define CAP (2 + 12 + 256 * 40 + 4 * NMAX + 4096)

static uint64_t rs;

static float unit(void)   /* [0, 1) */
{
	return (float)(dr_rng_next(&rs) >> 40) * 0x1p-24f;
}

enum shape { HEAVY, GAUSS, CONST, RAMP, ZEROS, SPECIAL, SHAPES_ };
static const char *const shape_name[SHAPES_] = {
	"heavy", "gauss", "const", "ramp", "zeros", "special"};

static void fill(float *v, uint32_t n, enum shape s)
{
	static const uint32_t special[] = {
		0x7fc00000u, 0x7f800001u, 0xffc12345u, 0x7f800000u, 0xff800000u,
		0x80000000u, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0x3f800000u,
	};
	for (uint32_t i = 0; i < n; i++) {
		float u = unit(), sg = unit() < 0.5f ? -1.0f : 1.0f;
		switch (s) {
		case HEAVY:
			v[i] = sg * 1e-4f * expf(6.0f * u);
			break;
		case GAUSS:
			v[i] = 1e-2f * (unit() + unit() + unit() - 1.5f);
			break;
		case CONST:
			v[i] = 0.25f;
			break;
		case RAMP:
			v[i] = 1.0f - 0.01f * (float)((i * 7u) % n);
			break;
		case ZEROS:
			v[i] = 0.0f;
			break;
		default:
			memcpy(&v[i], &special[i % 10], 4);
			break;
		}
	}
}

static uint8_t buf[CAP];

/* Encodes v into buf + 2 after n; returns the input's length (0 if the
 * encoder refused). */
static size_t make(const struct dr_value_ops *ops, const float *v, uint32_t n,
		   const struct dr_value_cfg *cfg)
{
	buf[0] = (uint8_t)n;
	buf[1] = (uint8_t)(n >> 8);
	int w = ops->encode(v, n, cfg, buf + 2, CAP - 2);
	if (w < 0) {
		fprintf(stderr, "seeds_dr_value: %s encode of %u values: %d\n",
			ops->name, n, w);
		exit(1);
	}
	return 2 + (size_t)w;
}

static void put(seed_write_fn write, const char *h, const char *what,
		const char *code, size_t len)
{
	char name[128];
	snprintf(name, sizeof(name), "%s.%s", what, code);
	write(h, name, buf, len);
}

static const uint32_t sizes[] = {1, 2, 3, 5, 17, 64, 300, 1000};

static void seeds_lossless(seed_write_fn write, const char *h,
			  const struct dr_value_ops *ops)
{
	float v[NMAX];
	char what[96];
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int s = 0; s < SHAPES_; s++) {
			uint32_t n = sizes[k];
			fill(v, n, (enum shape)s);
			struct dr_value_cfg cfg = {.zlevel = 1 + (int)(k % 9)};
			size_t len = make(ops, v, n, &cfg);
			snprintf(what, sizeof(what), "n%u-%s", n, shape_name[s]);
			put(write, h, what, "ok", len);
		}
	fill(v, 5, HEAVY);
	struct dr_value_cfg cfg = {.zlevel = 6};
	size_t len = make(ops, v, 5, &cfg);
	const char *bad = ops == &dr_value_f32 ? "GW_ELENGTH" : "GW_ECORRUPT";
	put(write, h, "truncated", bad, len - 1);
	buf[len] = 0;
	put(write, h, "trailing-byte", bad, len + 1);
	if (ops == &dr_value_deflate) {
		/* A bomb: 4000 values' worth of zeros, for n = 16. */
		float z[1000] = {0};
		len = make(ops, z, 1000, &cfg);
		buf[0] = 16;
		buf[1] = 0;
		put(write, h, "bomb", "GW_ECORRUPT", len);
	}
}

static void seeds_qsgd(seed_write_fn write, const char *h)
{
	static const unsigned lv[][2] = {{1, 1}, {1, 512}, {7, 8}, {127, 512},
					 {127, 64}, {32767, 3}, {3, 1000}};
	float v[NMAX];
	char what[96];
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int s = 0; s < SPECIAL; s++) {
			uint32_t n = sizes[k];
			const unsigned *c = lv[(k + (size_t)s) % 7];
			fill(v, n, (enum shape)s);
			struct dr_value_cfg cfg = {.levels = c[0], .bucket = c[1],
						   .seed = 1000u * k + (unsigned)s};
			size_t len = make(&dr_value_qsgd, v, n, &cfg);
			snprintf(what, sizeof(what), "n%u-%s-s%u-b%u", n,
				 shape_name[s], c[0], c[1]);
			put(write, h, what, "ok", len);
		}
	fill(v, 17, HEAVY);
	struct dr_value_cfg cfg = {.levels = 3, .bucket = 8, .seed = 9};
	size_t len = make(&dr_value_qsgd, v, 17, &cfg);
	buf[len] = 0;
	put(write, h, "trailing-byte", "GW_ELENGTH", len + 1);
	put(write, h, "truncated", "GW_ELENGTH", len - 1);
	uint8_t keep = buf[2];
	buf[2] = 0;
	buf[3] = 0;
	put(write, h, "s-zero", "GW_ECORRUPT", len);
	buf[2] = keep;
	memcpy(buf + 2 + 6, "\x00\x00\xc0\x7f", 4);
	put(write, h, "nan-norm", "GW_ECORRUPT", len);
}

static void seeds_fit(seed_write_fn write, const char *h,
		      const struct dr_value_ops *ops)
{
	static const unsigned dp[][2] = {{0, 0}, {1, 0}, {1, 4}, {2, 8},
					 {3, 2}, {5, 16}, {8, 3}, {0, 64}};
	float v[NMAX];
	char what[96];
	int poly = ops == &dr_value_poly;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++)
		for (int s = 0; s < SPECIAL; s++) {
			uint32_t n = sizes[k];
			const unsigned *c = dp[(k + (size_t)s) % 8];
			fill(v, n, (enum shape)s);
			struct dr_value_cfg cfg = {.degree = c[0], .pieces = c[1]};
			size_t len = make(ops, v, n, &cfg);
			if (poly)
				snprintf(what, sizeof(what), "n%u-%s-d%u-p%u", n,
					 shape_name[s], c[0], c[1]);
			else
				snprintf(what, sizeof(what), "n%u-%s", n,
					 shape_name[s]);
			put(write, h, what, "ok", len);
		}
	/* Broken copies of a section of 17 values (map of 5 bits each). */
	fill(v, 17, HEAVY);
	struct dr_value_cfg cfg = {.degree = 1, .pieces = 2};
	size_t len = make(ops, v, 17, &cfg);
	buf[len] = 0;
	put(write, h, "trailing-byte", "GW_ELENGTH", len + 1);
	put(write, h, "truncated", "GW_ELENGTH", len - 1);
	size_t map = len - (17 * 5 + 7) / 8;
	uint8_t m0 = buf[map];
	/* Ranks 0 and 1 -> the first two entries both 0 or both 1. */
	buf[map] = (uint8_t)((m0 & 0xe0) | ((m0 >> 5) & 0x1f));
	if (buf[map] != m0)
		put(write, h, "map-duplicate", "GW_ECORRUPT", len);
	buf[map] = m0;
	size_t bound = poly ? 2 + 8 : 2 + 16;
	memcpy(buf + bound, "\x00\x00\xc0\x7f", 4);
	put(write, h, "nan-bound", "GW_ECORRUPT", len);
	if (poly) {
		make(ops, v, 17, &cfg);
		buf[2] = DR_DEGREE_MAX + 1;
		put(write, h, "degree-9", "GW_ECORRUPT", len);
		make(ops, v, 17, &cfg);
		buf[2 + 4] = 16;   /* n field: 16, not 17 */
		put(write, h, "n-mismatch", "GW_ELENGTH", len);
	}
}

int seeds_dr_value(const char *name, seed_write_fn write)
{
	static const char *const names[] = {"dr_f32", "dr_deflate", "dr_qsgd",
					    "dr_poly", "dr_dexp"};
	int mine = 0;
	for (int i = 0; i < 5; i++) {
		if (name && strcmp(name, names[i]))
			continue;
		mine = 1;
		rs = 0x6472766175650000ull + (uint64_t)i;
		switch (i) {
		case 0:
			seeds_lossless(write, names[i], &dr_value_f32);
			break;
		case 1:
			seeds_lossless(write, names[i], &dr_value_deflate);
			break;
		case 2:
			seeds_qsgd(write, names[i]);
			break;
		default:
			seeds_fit(write, names[i], i == 3 ? &dr_value_poly : &dr_value_dexp);
			break;
		}
	}
	return mine;
}
