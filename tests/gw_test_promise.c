/* The value promise of each codec (gw_test_check_promise, gw_test.h): what
 * the frames of an input decode to, checked frame by frame against what
 * the encoder was given. */
#include "gw_test.h"

#include <math.h>

#include <gw/sketch.h>

/* ---- promises ---------------------------------------------------------------------- */

/* Entries [a, z) of in that frame h covers. */
static void frame_entries(const gw_test_input *in, const gw_frame_info *h,
			  uint64_t *a, uint64_t *z)
{
	*a = gw_test_lower_bound(in, h->start);
	*z = gw_test_lower_bound(in, h->start + h->span);
}

static float out_at(const float *out, const gw_test_input *in, uint64_t i)
{
	return out[gw_test_key(in, i)];
}

/* int8: with s = fl(m/127), inv = fl(127/m), q = rne(fl(c * inv)) and the
 * decoded value fl(q * s), |c - q*s| <= s/2 plus a few float roundings of
 * magnitude <= 2^-24 * m each (the c*inv product, inv, s and the final
 * product): 2^-21 * m covers them with room. Frames with m below ~2^-121
 * send scale 0 and decode to 0: the 2^-120 absolute term covers those. */
static double int8_bound(double m)
{
	return m / 127.0 / 2.0 + m * 0x1p-21 + 0x1p-120;
}

static void per_element(const gw_test_codec *cd, const gw_test_input *in,
			const float *x, const gw_frame_info *info, size_t nf,
			const float *out, const char *what)
{
	for (size_t j = 0; j < nf; j++) {
		uint64_t a, z;
		frame_entries(in, &info[j], &a, &z);
		double m = 0;
		for (uint64_t i = a; i < z; i++)
			m = fmax(m, fabs((double)x[i]));
		for (uint64_t i = a; i < z; i++) {
			float y = out_at(out, in, i);
			unsigned long long k = gw_test_key(in, i);
			if (cd->promise == GW_TEST_EXACT) {
				GW_CHECK(gw_test_bits(x[i]) == gw_test_bits(y),
					 "%s: element %llu: %a decoded as %a (lossless)",
					 what, k, (double)x[i], (double)y);
			} else if (cd->promise == GW_TEST_BF16) {
				uint32_t want = (uint32_t)gw_test_bf16_rne(x[i]) << 16;
				GW_CHECK(gw_test_bits(y) == want, "%s: element %llu: %a "
					 "decoded as %a, RNE reference %a", what, k,
					 (double)x[i], (double)y,
					 (double)gw_test_float(want));
			} else {
				double err = fabs((double)y - (double)x[i]);
				GW_CHECK(err <= int8_bound(m), "%s: element %llu: %a "
					 "decoded as %a, error %g > bound %g (frame max %g)",
					 what, k, (double)x[i], (double)y, err,
					 int8_bound(m), m);
			}
		}
	}
}

/* hq: the frame's own scale is max |rotated x| <= ||x||_2, every code
 * within a step (scale / Q) of its value (half of one rounding to nearest,
 * under one stochastically), and the inverse rotation keeps the error's
 * norm: ||decoded - x||_2 <= sqrt(n) ||x||_2 / Q, with room for the float
 * roundings of the butterflies (log2 n of them, 2^-24 each, relative). */
static void check_hq(const gw_encoder *enc, const gw_test_input *in, const float *x,
		     const gw_frame_info *info, size_t nf, const float *out, const char *what)
{
	double Q = (double)((1u << ((unsigned)gw_test_param(enc, GW_PARAM_BITS) - 1)) - 1);
	for (size_t j = 0; j < nf; j++) {
		uint64_t a, z;
		frame_entries(in, &info[j], &a, &z);
		double nx = 0, ne = 0;
		for (uint64_t i = a; i < z; i++) {
			double d = (double)out_at(out, in, i) - (double)x[i];
			nx += (double)x[i] * x[i];
			ne += d * d;
		}
		nx = sqrt(nx);
		ne = sqrt(ne);
		/* A frame whose norm is near FLT_MAX overflows its rotation
		 * (poisoned, wire-format §4.11.5) or its inverse. */
		if (!isfinite(ne) && nx >= 0x1p127)
			continue;
		double n = (double)(z - a);
		double bound = sqrt(n) * nx / Q * (1 + 1e-3) + nx * 0x1p-18 + 0x1p-120;
		GW_CHECK(ne <= bound, "%s: frame %zu (%llu values): error norm %g > bound %g "
			 "(norm %g, Q %g)", what, j, (unsigned long long)(z - a), ne, bound, nx, Q);
	}
}

static void check_3lc(const gw_encoder *enc, const gw_test_input *in,
		      const float *x, const gw_frame_info *info, size_t nf,
		      const float *out, const char *what)
{
	double s = gw_test_param(enc, GW_PARAM_SPARSITY), mx = 0;
	for (uint64_t i = 0; i < in->n; i++)
		mx = fmax(mx, fabs((double)x[i]));
	float m = (float)(s * mx);
	for (size_t j = 0; j < nf; j++) {
		uint64_t a, z;
		frame_entries(in, &info[j], &a, &z);
		for (uint64_t i = a; i < z; i++) {
			float c2 = x[i] + x[i];
			float want = c2 > m ? m : c2 < -m ? -m : -0.0f;
			float y = out_at(out, in, i);
			GW_CHECK(gw_test_bits(y) == gw_test_bits(want),
				 "%s s=%g: element %llu (%a) decoded to %a, expected %a",
				 what, s, (unsigned long long)gw_test_key(in, i),
				 (double)x[i], (double)y, (double)want);
		}
	}
}

/* Value x decoded to y with scale m: the terngrad contract. */
static void check_trit(float x, float y, float m, unsigned long long k,
		       const char *what)
{
	GW_CHECK(y == 0.0f || y == m || y == -m, "%s: element %llu: %a decoded to %a, "
		 "not in {-m, 0, m} (m %a)", what, k, (double)x, (double)y, (double)m);
	if (y != 0.0f)
		GW_CHECK((y > 0) == (x > 0), "%s: element %llu: %a decoded to %a "
			 "(sign flipped)", what, k, (double)x, (double)y);
	else   /* outputs start at -0.0; a zero trit leaves them untouched */
		GW_CHECK(gw_test_bits(y) == 0x80000000u, "%s: element %llu: zero trit "
			 "wrote %a into -0.0", what, k, (double)y);
	if (x == 0.0f)
		GW_CHECK(y == 0.0f, "%s: element %llu: 0 decoded to %a", what, k,
			 (double)y);
	if (fabsf(x) >= m)   /* the largest magnitude, or clipped */
		GW_CHECK(y == (x > 0 ? m : -m), "%s: element %llu: %a at or beyond the "
			 "scale %a decoded to %a (probability 1)", what, k, (double)x,
			 (double)m, (double)y);
}

/* The scale of wire-format §4.5: the largest finite |x|, lowered to
 * clip * sigma (population standard deviation of the finite values; sums
 * in double in eight lanes, value i to lane i mod 8 with non-finite values
 * adding 0, lanes added 0 to 7) when that is positive and smaller. */
static float ternary_scale(const float *x, uint64_t n, double clip)
{
	double mx = 0, a[8] = {0}, b[8] = {0};
	uint64_t k = 0;
	for (uint64_t i = 0; i < n; i++) {
		double v = isfinite(x[i]) ? x[i] : 0.0;
		if (isfinite(x[i])) {
			mx = fmax(mx, fabs(v));
			k++;
		}
		a[i % 8] += v;
		b[i % 8] += v * v;
	}
	double s1 = a[0], s2 = b[0];
	for (int l = 1; l < 8; l++) {
		s1 += a[l];
		s2 += b[l];
	}
	float m = (float)mx;
	if (clip > 0 && k) {
		double mean = s1 / (double)k, var = s2 / (double)k - mean * mean;
		float c = var > 0 ? (float)(clip * sqrt(var)) : 0.0f;
		if (c > 0.0f && c < m)
			m = c;
	}
	return m;
}

static void check_ternary(const gw_encoder *enc, const gw_test_input *in, const float *x,
			  const gw_test_frames *fr, const gw_frame_info *info,
			  const float *out, const char *what)
{
	double clip;
	GW_OK_CALL(gw_encoder_get_param(enc, GW_PARAM_CLIP, &clip));
	float m = ternary_scale(x, in->n, clip);
	for (size_t j = 0; j < fr->n; j++) {
		const gw_frame_info *h = &info[j];
		GW_CHECK(h->param_len == 4 && gw_test_ld32(fr->f[j].data +
							   GW_FRAME_HDR_LEN) ==
							  gw_test_bits(m),
			 "%s: frame %zu: param_len %u, scale %08x, want the tensor's "
			 "%a (clip %g)", what, j, h->param_len,
			 gw_test_ld32(fr->f[j].data + GW_FRAME_HDR_LEN), (double)m, clip);
		if (!in->keys)
			GW_CHECK(h->payload_len == (h->count + 4) / 5,
				 "%s: frame %zu payload %u for %u trits", what, j,
				 h->payload_len, h->count);
	}
	for (size_t j = 0; j < fr->n; j++) {
		uint64_t a, z;
		frame_entries(in, &info[j], &a, &z);
		for (uint64_t i = a; i < z; i++)
			check_trit(x[i], out_at(out, in, i), m, gw_test_key(in, i), what);
	}
}

/* ---- two means (onebit) ---- */

struct split {
	double sp, sn;        /* sums of non-negative / negative values */
	uint32_t np, nn;
	float a, b;           /* reference levels */
};

/* The encoder's documented summation order: value i to lane i mod 8, each
 * lane in double in index order, lanes combined pairwise. */
static double lane_sum(const double *l)
{
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

static struct split split_of(const float *x, uint64_t n)
{
	struct split s = {0};
	double lp[8] = {0}, ln[8] = {0};
	for (uint64_t i = 0; i < n; i++) {
		if (x[i] >= 0.0f) {
			lp[i % 8] += x[i];
			s.np++;
		} else {
			ln[i % 8] += x[i];
			s.nn++;
		}
	}
	s.sp = lane_sum(lp);
	s.sn = lane_sum(ln);
	s.a = s.np ? (float)(s.sp / s.np) : 0.0f;
	s.b = s.nn ? (float)(s.sn / s.nn) : 0.0f;
	return s;
}

static double sq_err(const float *x, uint64_t n, double a, double b)
{
	double e = 0;
	for (uint64_t i = 0; i < n; i++) {
		double d = (double)x[i] - (x[i] >= 0.0f ? a : b);
		e += d * d;
	}
	return e;
}

/* Among floats, level v is nearest the exact mean m: its neighbours are no
 * closer, so no better for the squared error. */
static void check_nearest(const char *what, size_t j, const char *level, float v,
			  double m)
{
	GW_CHECK(fabs(v - m) <= fabs(nextafterf(v, INFINITY) - m) &&
			 fabs(v - m) <= fabs(nextafterf(v, -INFINITY) - m),
		 "%s frame %zu: %s %a is not the float nearest %a", what, j, level,
		 (double)v, m);
}

/* x[0..n) is frame j's input, levels its two params. */
static void check_means(const char *what, size_t j, const float *x, uint64_t n,
			const uint8_t *levels)
{
	struct split s = split_of(x, n);
	GW_CHECK(gw_test_ld32(levels) == gw_test_bits(s.a) &&
			 gw_test_ld32(levels + 4) == gw_test_bits(s.b),
		 "%s frame %zu: levels %08x %08x, want the means %a (of %u) and %a "
		 "(of %u), +0 for a side without values", what, j,
		 gw_test_ld32(levels), gw_test_ld32(levels + 4), (double)s.a, s.np,
		 (double)s.b, s.nn);
	if (s.np)
		check_nearest(what, j, "a", s.a, s.sp / s.np);
	if (s.nn)
		check_nearest(what, j, "b", s.b, s.sn / s.nn);
	/* Coarser alternatives, directly. */
	double mx = 0, mn = 0, mabs = 0;
	for (uint64_t i = 0; i < n; i++) {
		mx = fmax(mx, x[i]);
		mn = fmin(mn, x[i]);
		mabs += fabs((double)x[i]) / (double)n;
	}
	double alts[][2] = {
		{mx, mn}, {mabs, -mabs}, {s.a * 1.01, s.b}, {s.a * 0.99, s.b},
		{s.a, s.b * 1.01}, {s.a, s.b * 0.99}, {0, 0},
	};
	/* Levels travel as float32: compare with float alternatives (a double
	 * level between two floats can beat the float nearest the mean by a
	 * rounding error, which no frame could carry). */
	double best = sq_err(x, n, s.a, s.b);
	for (size_t k = 0; k < GW_ARRAY_SIZE(alts); k++) {
		double e = sq_err(x, n, (float)alts[k][0], (float)alts[k][1]);
		GW_CHECK(best <= e * (1 + 1e-12), "%s frame %zu: squared error %.17g "
			 "of the means exceeds %.17g of levels (%g, %g)", what, j,
			 best, e, alts[k][0], alts[k][1]);
	}
}

static void check_two_means(const gw_test_input *in, const float *x,
			    const gw_test_frames *fr, const gw_frame_info *info,
			    const float *out, const char *what)
{
	for (size_t j = 0; j < fr->n; j++) {
		const gw_frame_info *h = &info[j];
		uint64_t a, z;
		frame_entries(in, h, &a, &z);
		GW_CHECK(h->param_len == 8 && z - a == h->count,
			 "%s frame %zu: param_len %u, %u entries, range holds %llu",
			 what, j, h->param_len, h->count, (unsigned long long)(z - a));
		if (in->keys)
			GW_CHECK(in->keys[a] == h->start &&
					 in->keys[z - 1] == h->start + h->span - 1,
				 "%s frame %zu: range [%llu,+%u) is not its first to "
				 "last key", what, j, (unsigned long long)h->start,
				 h->span);
		const uint8_t *levels = fr->f[j].data + GW_FRAME_HDR_LEN;
		check_means(what, j, x + a, z - a, levels);
		struct split s = split_of(x + a, z - a);
		for (uint64_t i = a; i < z; i++) {
			float want = x[i] >= 0.0f ? s.a : s.b;
			float y = out_at(out, in, i);
			GW_CHECK(gw_test_bits(y) == gw_test_bits(want),
				 "%s frame %zu: value %llu (%a) decoded to %a, expected "
				 "the %s mean %a", what, j,
				 (unsigned long long)gw_test_key(in, i), (double)x[i],
				 (double)y, x[i] >= 0.0f ? "non-negative" : "negative",
				 (double)want);
		}
		if (in->keys)
			continue;
		/* bit i of the frame is byte i/8, bit i%8 */
		GW_CHECK(h->payload_len == (h->count + 7) / 8, "%s frame %zu: payload "
			 "%u for %u bits", what, j, h->payload_len, h->count);
		const uint8_t *bits = levels + 8;
		for (uint32_t k = 0; k < h->count; k++)
			GW_CHECK(((bits[k / 8] >> (k % 8)) & 1) == (x[a + k] >= 0.0f),
				 "%s frame %zu: bit %u", what, j, k);
	}
}

/* ---- top-k ---- */

static void check_top_k(const gw_encoder *enc, const gw_test_input *in,
			const float *x, const gw_frame_info *info, size_t nf,
			const float *out, const char *what)
{
	double f = gw_test_param(enc, GW_PARAM_FRACTION);
	uint64_t k = (uint64_t)ceil(f * (double)in->n), count = 0;
	for (size_t j = 0; j < nf; j++)
		count += info[j].count;
	GW_CHECK(count == k, "%s: %llu entries sent, k = ceil(%g * %llu) = %llu", what,
		 (unsigned long long)count, f, (unsigned long long)in->n,
		 (unsigned long long)k);
	/* A sent zero is indistinguishable from an unsent one: either reading
	 * is right, so zeros count as neither. */
	float min_sent = INFINITY, max_unsent = 0;
	uint64_t nsent = 0;
	for (uint64_t i = 0; i < in->n; i++) {
		float y = out_at(out, in, i);
		if (gw_test_bits(y) != 0x80000000u) {
			GW_CHECK(gw_test_bits(y) == gw_test_bits(x[i]), "%s: key %llu "
				 "decoded %a, sent %a", what,
				 (unsigned long long)gw_test_key(in, i), (double)y,
				 (double)x[i]);
			min_sent = fminf(min_sent, fabsf(x[i]));
			nsent++;
		} else if (x[i] != 0.0f) {
			max_unsent = fmaxf(max_unsent, fabsf(x[i]));
		}
	}
	GW_CHECK(nsent <= k && min_sent >= max_unsent, "%s: %llu sent, smallest "
		 "sent |x| %a < largest unsent %a", what, (unsigned long long)nsent,
		 (double)min_sent, (double)max_unsent);
}

static void check_minmax(const gw_test_input *in, const float *x,
			 const gw_frame_info *info, size_t nf, const float *out,
			 const char *what)
{
	for (size_t j = 0; j < nf; j++) {
		uint64_t a, z;
		frame_entries(in, &info[j], &a, &z);
		for (uint64_t i = a; i < z; i++) {
			float y = out_at(out, in, i);
			GW_CHECK(!(y > 0 && !(x[i] > 0)) && !(y < 0 && !(x[i] < 0)),
				 "%s: key %llu: %a decoded to %a (sign changed)", what,
				 (unsigned long long)gw_test_key(in, i), (double)x[i],
				 (double)y);
		}
	}
}

/* ---- stated bounds (deepreduce) ---- */

/* The entries the sparsifier selects (1 per entry of in), or NULL when
 * the test cannot know (random-r). */
static uint8_t *dr_selected(const gw_encoder *enc, const gw_test_input *in,
			    const float *x)
{
	uint8_t *sel = calloc(in->n ? in->n : 1, 1);
	GW_CHECK(sel, "out of memory");
	if (in->keys) {   /* inherently sparse input is used as it is */
		memset(sel, 1, in->n);
	} else if (gw_test_named(enc, GW_PARAM_SPARSIFIER, "none")) {
		for (uint64_t i = 0; i < in->n; i++)
			sel[i] = x[i] != 0.0f || !isfinite(x[i]);
	} else if (gw_test_named(enc, GW_PARAM_SPARSIFIER, "topr")) {
		double rd = ceil(gw_test_param(enc, GW_PARAM_FRACTION) * (double)in->n);
		uint64_t r = rd < 1 ? 1 : rd >= (double)in->n ? in->n : (uint64_t)rd;
		uint64_t *top = malloc(r * sizeof(uint64_t));
		GW_CHECK(top && gw_top_abs(x, in->n, r, top) == (int64_t)r, "top-r");
		for (uint64_t i = 0; i < r; i++)
			sel[top[i]] = 1;
		free(top);
	} else {
		free(sel);
		return NULL;
	}
	return sel;
}

static void check_stated(const gw_encoder *enc, const gw_test_input *in,
			 const float *x, const gw_test_frames *fr,
			 const gw_frame_info *info, const float *out, const char *what)
{
	int exact_index = !gw_test_named(enc, GW_PARAM_INDEX, "bloom") ||
			  gw_test_named(enc, GW_PARAM_POLICY, "p0");
	int exact_values = gw_test_named(enc, GW_PARAM_VALUE, "f32") ||
			   gw_test_named(enc, GW_PARAM_VALUE, "deflate");
	uint8_t *sel = dr_selected(enc, in, x);
	uint64_t covered = 0, nsel = 0;
	for (size_t j = 0; j < fr->n; j++) {
		const gw_frame_info *h = &info[j];
		float bound = -1;
		GW_EXPECT_RC(gw_frame_bound(fr->f[j].data, fr->f[j].len, &bound), 0,
			     "%s: frame %zu states no bound", what, j);
		GW_CHECK(bound >= 0 && isfinite(bound), "%s: frame %zu bound %g", what,
			 j, (double)bound);
		if (exact_values)
			GW_CHECK(bound == 0, "%s: lossless values state bound %g", what,
				 (double)bound);
		/* Every key of the range: the tensor's entries, and (false
		 * positives of a Bloom index) keys between them, worth 0 or what
		 * in->between says. */
		uint64_t a, z;
		frame_entries(in, h, &a, &z);
		for (uint64_t k = h->start, i = a; k < h->start + h->span; k++) {
			int has = i < z && gw_test_key(in, i) == k;
			float ref = has ? x[i] : in->between ? in->between[k] : 0.0f;
			float y = out[k];
			int selected = has && sel && sel[i];
			if (gw_test_bits(y) != 0x80000000u || (exact_index && selected))
				GW_CHECK(fabsf(y - ref) <= bound, "%s: key %llu decoded %.9g, "
					 "sent %.9g, bound %.9g", what,
					 (unsigned long long)k, (double)y, (double)ref,
					 (double)bound);
			if (exact_index && exact_values && (selected || has))
				/* an unselected entry may travel as a false positive */
				GW_CHECK(y == ref || (!selected && y == 0.0f),
					 "%s: key %llu decoded %.9g, want %.9g", what,
					 (unsigned long long)k, (double)y, (double)ref);
			covered += selected;
			i += has;
			if (!in->keys && !has)
				break;
		}
	}
	for (uint64_t i = 0; sel && i < in->n; i++)
		nsel += sel[i];
	if (sel && exact_index)
		GW_CHECK(covered == nsel, "%s: frames cover %llu of %llu selected keys",
			 what, (unsigned long long)covered, (unsigned long long)nsel);
	free(sel);
}

void gw_test_check_promise(const gw_encoder *enc, const gw_test_input *in,
			   const float *x, const gw_test_frames *fr,
			   const gw_frame_info *info, const float *out,
			   const char *what)
{
	const gw_test_codec *cd = gw_test_codec_of(enc->ops->id);
	switch (cd->promise) {
	case GW_TEST_EXACT:
	case GW_TEST_BF16:
	case GW_TEST_INT8:
		per_element(cd, in, x, info, fr->n, out, what);
		break;
	case GW_TEST_3LC:
		check_3lc(enc, in, x, info, fr->n, out, what);
		break;
	case GW_TEST_TERNARY:
		check_ternary(enc, in, x, fr, info, out, what);
		break;
	case GW_TEST_TWO_MEANS:
		check_two_means(in, x, fr, info, out, what);
		break;
	case GW_TEST_TOP_K:
		check_top_k(enc, in, x, info, fr->n, out, what);
		break;
	case GW_TEST_MINMAX:
		check_minmax(in, x, info, fr->n, out, what);
		break;
	case GW_TEST_STATED:
		check_stated(enc, in, x, fr, info, out, what);
		break;
	case GW_TEST_HQ:
		check_hq(enc, in, x, info, fr->n, out, what);
		break;
	}
}
