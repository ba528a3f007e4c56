/* Round trip through every registered codec (gw_codec_list): the input is a
 * tensor, a budget and a few switches; each codec encodes the tensor into
 * frames, every frame is verified and decoded, and the harness checks:
 *
 *  - every frame verifies, names the codec and tensor, and is no longer
 *    than the budget (budgets above GW_FRAME_MAX act as GW_FRAME_MAX);
 *  - a budget at or above gw_encode_min_budget() never fails, one below it
 *    fails with GW_EBUDGET and leaves the encoder where it was;
 *  - GW_PARAM_MAX_FRAME_ELEMS bounds every frame (a codec may refuse a
 *    value it cannot honour when encoding begins, with GW_EBOUNDS);
 *  - every element (dense) or entry (sparse) is covered exactly once, in
 *    order; codecs that send a subset (sparse frames out of a dense tensor,
 *    top-k) cover each at most once;
 *  - decoding adds count values; raw is bit-exact (on the wire and
 *    decoded), bf16 equals a reference round-to-nearest-even, int8 is
 *    within scale/2 per frame and poisons frames with non-finite values;
 *    no element outside the keys is written, not even with +0;
 *  - with error feedback (one codec per input, two rounds): decoded + new
 *    error == corrected input c = g + old error, for every codec — also
 *    when frames are lost and given back with gw_ef_restore(), and when
 *    the tensor is dropped after its first frame with gw_encode_abandon().
 *  Encoder-side kernels run here on hostile values too (NaN, Inf,
 *  subnormals, empty tensors): terngrad's statistics pass
 *  (codec/terngrad_moments.c, folding the error buffer when bit 2 is set)
 *  on every terngrad input, in the ISA copy the CPU picks.
 *
 * Input layout (missing bytes read as 0):
 *   byte 0     bits 0-1 tensor: 0 dense, 1 sparse 32-bit keys, 2 sparse
 *              64-bit keys, 3 sparse 64-bit keys with gaps of 2^31..2^34
 *              (frames are checked from their headers, not decoded: no
 *              output that large is allocated);
 *              bit 2 error feedback; bit 3 GW_PARAM_MAX_FRAME_ELEMS;
 *              bit 4 budget above GW_FRAME_MAX; bits 5-7 extra dim
 *   bytes 1-2  budget, little-endian
 *   byte 3     max_frame_elems - 1
 *   byte 4     bits 0-3 which codec (index into gw_codec_list) gets error
 *              feedback; with it, bit 4: every other frame is lost and
 *              restored, bit 5: abandon the tensor after its first frame
 *   then       dense: float32 values; sparse: entries of (key gap byte,
 *              float32 value)
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"   /* gw_f32_bits, gw_bits_f32 */
#include "fuzz_common.h"
#include "gw_util.h"

#define MAX_CODECS 256
#define HDR_BYTES 5

struct input {
	gw_tensor t;
	bool sparse;
	bool huge;            /* keys too far apart to decode into memory */
	bool ef;
	size_t budget;
	uint32_t max_elems;   /* 0: not set */
	unsigned ef_codec;
	unsigned loss;        /* bit 0 lose every other frame, bit 1 abandon */
	float *vals;
	uint64_t *keys64;
	uint32_t *keys32;
	uint64_t total;       /* dim or nnz */
	bool finite;          /* every value finite and |x| <= 1e30 */
};

static uint64_t key_at(const struct input *in, uint64_t i)
{
	return in->t.key_bits == 64 ? in->keys64[i] : in->keys32[i];
}

/* Element of the output that entry i of the tensor lands on. */
static uint64_t pos_of(const struct input *in, uint64_t i)
{
	return in->sparse ? key_at(in, i) : i;
}

static void parse(struct input *in, const uint8_t *data, size_t size)
{
	uint8_t h[HDR_BYTES] = {0};
	memcpy(h, data, GW_MIN(size, (size_t)HDR_BYTES));
	const uint8_t *p = data + GW_MIN(size, (size_t)HDR_BYTES);
	size_t rest = size - GW_MIN(size, (size_t)HDR_BYTES);

	memset(in, 0, sizeof(*in));
	unsigned kind = h[0] & 3;
	in->sparse = kind != 0;
	in->huge = kind == 3;
	in->ef = h[0] & 4;
	in->max_elems = (h[0] & 8) ? (uint32_t)h[3] + 1 : 0;
	in->budget = (size_t)(h[1] | h[2] << 8);
	if (h[0] & 16)
		in->budget += (size_t)GW_FRAME_MAX + 1;
	in->ef_codec = h[4] & 15;
	in->loss = (h[4] >> 4) & 3;
	uint64_t extra = h[0] >> 5;

	size_t n = in->sparse ? rest / 5 : rest / 4;
	in->vals = malloc((n ? n : 1) * sizeof(float));
	GW_FUZZ_CHECK(in->vals);
	in->finite = true;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *v = in->sparse ? p + 5 * i + 1 : p + 4 * i;
		in->vals[i] = gw_bits_f32(gw_fuzz_ld32(v));
		if (!isfinite(in->vals[i]) || fabsf(in->vals[i]) > 1e30f)
			in->finite = false;
	}
	in->t.id = 0x9e3779b9u ^ (uint32_t)size;
	in->t.values = in->vals;
	in->total = n;
	if (!in->sparse) {
		in->t.dim = n;
		return;
	}
	in->t.key_bits = kind == 1 ? 32 : 64;
	in->t.nnz = n;
	if (kind == 1) {
		in->keys32 = malloc((n ? n : 1) * sizeof(uint32_t));
		GW_FUZZ_CHECK(in->keys32);
		in->t.keys = in->keys32;
	} else {
		in->keys64 = malloc((n ? n : 1) * sizeof(uint64_t));
		GW_FUZZ_CHECK(in->keys64);
		in->t.keys = in->keys64;
	}
	uint64_t k = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t g = p[5 * i];
		uint64_t gap = g & 0x1f;
		if (in->huge && g >= 0xf8)
			gap = (uint64_t)(g - 0xf7) << 31;
		k = (i ? k + 1 : 0) + gap;
		if (kind == 1)
			in->keys32[i] = (uint32_t)k;
		else
			in->keys64[i] = k;
	}
	in->t.dim = (n ? k + 1 : 0) + extra;
	/* without a large gap the tensor decodes like the others */
	if (in->t.dim <= (1u << 20))
		in->huge = false;
}

/* bf16 of x by the definition: the nearer of the two bf16 neighbours of x,
 * the even one on a tie, +-Inf past the largest finite bf16. Returns the
 * float32 bits of the result; NaN is handled by the caller. */
static uint32_t bf16_ref(float x)
{
	uint32_t u = gw_f32_bits(x);
	uint32_t lo = u & 0xffff0000u;
	if (u == lo)
		return lo;
	uint32_t hi = lo + 0x10000u;
	double dx = fabs((double)x);
	double dlo = fabs((double)gw_bits_f32(lo));
	double dhi = (hi & 0x7fffffffu) == 0x7f800000u ? ldexp(1.0, 128)
						       : fabs((double)gw_bits_f32(hi));
	double a = dx - dlo, b = dhi - dx;
	if (a != b)
		return a < b ? lo : hi;
	return (lo & 0x10000u) ? hi : lo;
}

struct run {
	const struct input *in;
	int id;
	int caps;
	float *out;           /* dim floats, or NULL (huge) */
	const float *c;       /* corrected values g + e_old, one per entry */
	/* coverage */
	bool strict;          /* every entry exactly once, in order */
	uint64_t next;        /* strict: next entry expected */
	uint64_t sent;        /* entries in frames so far */
	uint64_t frames;
	/* error feedback with losses */
	gw_ef *ef;            /* attached, or NULL */
	unsigned loss;        /* input's loss bits, only with ef */
	bool abandoned;
};

/* Which codecs send every element they are given (all but the ones that
 * select a subset). A dense tensor coming out as sparse frames counts as
 * selecting too. */
/* top-k keeps a fraction; sketchml drops exact zeros; deepreduce's count
 * is the values a frame carries (Bloom false positives included, a P1/P2
 * draw instead of the keys). */
static bool sends_every_element(int id)
{
	return id != GW_CODEC_TOPK && id != GW_CODEC_SKETCHML && id != GW_CODEC_DEEPREDUCE;
}

/* Per-frame value checks for entries [e0, e0 + n) of the tensor. */
static void check_values(struct run *r, const uint8_t *frame,
			 const gw_frame_info *h, uint64_t e0, uint32_t n)
{
	const struct input *in = r->in;
	if (!r->out || !n)
		return;
	const float *c = r->c;

	if (r->id == GW_CODEC_RAW || !(r->caps & GW_CODEC_LOSSY)) {
		for (uint32_t j = 0; j < n; j++) {
			float d = r->out[pos_of(in, e0 + j)];
			float x = c[e0 + j];
			if (isnan(x))
				GW_FUZZ_CHECK(isnan(d));
			else
				GW_FUZZ_CHECKF(gw_f32_bits(d) == gw_f32_bits(x),
					       "codec %d: entry %llu sent %08x got %08x",
					       r->id, (unsigned long long)(e0 + j),
					       gw_f32_bits(x), gw_f32_bits(d));
		}
	}
	if (r->id == GW_CODEC_RAW) {
		/* bit-exact on the wire, NaN payloads included */
		unsigned kb = (h->flags & GW_FF_SPARSE)
				      ? ((h->flags & GW_FF_KEY64) ? 8 : 4)
				      : 0;
		const uint8_t *v = frame + GW_FRAME_HDR_LEN + h->param_len +
				   (size_t)kb * h->count;
		for (uint32_t j = 0; j < n; j++)
			GW_FUZZ_CHECK(gw_fuzz_ld32(v + 4 * (size_t)j) ==
				      gw_f32_bits(c[e0 + j]));
	} else if (r->id == GW_CODEC_BF16) {
		for (uint32_t j = 0; j < n; j++) {
			float d = r->out[pos_of(in, e0 + j)];
			float x = c[e0 + j];
			if (isnan(x)) {
				GW_FUZZ_CHECK(isnan(d));
				continue;
			}
			GW_FUZZ_CHECKF(gw_f32_bits(d) == bf16_ref(x),
				       "bf16(%08x) decoded %08x, expected %08x",
				       gw_f32_bits(x), gw_f32_bits(d), bf16_ref(x));
		}
	} else if (r->id == GW_CODEC_INT8) {
		float m = 0.0f;
		bool bad = false;
		for (uint32_t j = 0; j < n; j++) {
			float x = c[e0 + j];
			if (!isfinite(x))
				bad = true;
			else if (fabsf(x) > m)
				m = fabsf(x);
		}
		float scale = m / 127.0f;
		bool zero = scale == 0.0f || !isfinite(127.0f / m);

		for (uint32_t j = 0; j < n; j++) {
			float d = r->out[pos_of(in, e0 + j)];
			float x = c[e0 + j];
			if (bad) {
				GW_FUZZ_CHECKF(isnan(d), "int8: poisoned frame decoded %g",
					       (double)d);
				continue;
			}
			if (zero) {
				GW_FUZZ_CHECK(d == 0.0f);
				continue;
			}
			double err = fabs((double)d - (double)x);
			double tol = (double)scale * 0.501 + 1e-45;
			GW_FUZZ_CHECKF(err <= tol,
				       "int8: %a decoded %a, error %g > %g (scale %a)",
				       (double)x, (double)d, err, tol, (double)scale);
		}
	}
}

static void on_frame(struct run *r, const uint8_t *buf, size_t n,
		     size_t eff_budget)
{
	const struct input *in = r->in;
	gw_frame_info h;
	GW_FUZZ_CHECKF(n <= eff_budget, "codec %d: frame of %zu bytes, budget %zu",
		       r->id, n, eff_budget);
	int vrc = gw_fuzz_peek_verify(buf, n, &h);
	GW_FUZZ_CHECKF(vrc == 0, "codec %d emitted a frame that fails %s", r->id,
		       gw_error_name(vrc));
	GW_FUZZ_CHECK(h.codec == r->id);
	GW_FUZZ_CHECK(h.tensor == in->t.id);
	GW_FUZZ_CHECK(h.frame_len == n);
	if (in->max_elems)
		GW_FUZZ_CHECKF(h.count <= in->max_elems, "count %u > max %u",
			       h.count, in->max_elems);
	bool fsparse = h.flags & GW_FF_SPARSE;
	if (in->sparse) {
		GW_FUZZ_CHECK(fsparse);
		GW_FUZZ_CHECK(!!(h.flags & GW_FF_KEY64) == (in->t.key_bits == 64));
	}
	if (!in->sparse && fsparse)
		r->strict = false;
	GW_FUZZ_CHECK(h.start + h.span <= in->t.dim);
	if (fsparse)
		GW_FUZZ_CHECK(h.count <= h.span);

	uint64_t e0 = r->next;
	if (r->strict) {
		GW_FUZZ_CHECKF(h.count >= 1, "codec %d: empty frame", r->id);
		GW_FUZZ_CHECKF(e0 + h.count <= in->total,
			       "codec %d: frames cover %llu+ entries of %llu",
			       r->id, (unsigned long long)(e0 + h.count),
			       (unsigned long long)in->total);
		if (!fsparse) {
			GW_FUZZ_CHECKF(h.start == e0, "dense frame at %llu, expected %llu",
				       (unsigned long long)h.start,
				       (unsigned long long)e0);
		} else {
			/* entries e0 .. e0+count-1 lie in the frame's range */
			GW_FUZZ_CHECK(h.start <= key_at(in, e0));
			GW_FUZZ_CHECK(key_at(in, e0 + h.count - 1) - h.start < h.span);
		}
		r->next += h.count;
	}
	r->sent += h.count;
	bool lost = (r->loss & 1) && (r->frames & 1);
	r->frames++;

	if (lost) {
		/* not delivered: its values go back into the error buffer */
		int rc = gw_ef_restore(r->ef, buf, n);
		GW_FUZZ_CHECKF(rc >= 0 && (uint32_t)rc == h.count,
			       "codec %d: restore of its own frame: %d (%s)", r->id,
			       rc, gw_error_name(rc));
	} else if (r->out) {
		int rc = gw_decode(buf, n, r->out, in->t.dim);
		GW_FUZZ_CHECKF(rc >= 0 && (uint32_t)rc == h.count,
			       "codec %d: own frame decodes to %d (%s), count %u",
			       r->id, rc, gw_error_name(rc), h.count);
		if (r->strict)
			check_values(r, buf, &h, e0, h.count);
	} else {
		/* keys past any output we could allocate: a valid frame can
		 * only be out of range */
		int rc = gw_decode(buf, n, NULL, 0);
		GW_FUZZ_CHECKF(rc == (h.count ? GW_ERANGE : 0),
			       "codec %d: huge sparse frame into nothing: %d",
			       r->id, rc);
	}
}

/* Encodes the tensor once with enc (begun), checking every frame. */
static void encode_all(struct run *r, gw_encoder *enc)
{
	const struct input *in = r->in;
	int min = gw_encode_min_budget(enc, &in->t);
	GW_FUZZ_CHECKF(min >= (int)GW_BUDGET_MIN && min <= (int)GW_FRAME_MAX,
		       "codec %d: min budget %d", r->id, min);
	size_t budget = in->budget;
	size_t eff = GW_MIN(budget, (size_t)GW_FRAME_MAX);
	/* exactly the budget: a frame past it is a heap overflow */
	uint8_t *buf = malloc(eff ? eff : 1);
	GW_FUZZ_CHECK(buf);
	r->strict = sends_every_element(r->id);
	r->next = r->sent = r->frames = 0;
	r->abandoned = false;

	for (;;) {
		int n = gw_encode_next(enc, buf, budget);
		gw_fuzz_check_code(n);
		if (n == 0)
			break;
		if (eff < (size_t)min) {
			GW_FUZZ_CHECKF(n == GW_EBUDGET,
				       "codec %d: budget %zu below min %d gave %d",
				       r->id, eff, min, n);
			/* the encoder stayed put: retry at the minimum */
			budget = eff = (size_t)min;
			free(buf);
			buf = malloc(eff);
			GW_FUZZ_CHECK(buf);
			continue;
		}
		GW_FUZZ_CHECKF(n > 0, "codec %d: encode_next %s at budget %zu (min %d)",
			       r->id, gw_error_name(n), eff, min);
		on_frame(r, buf, (size_t)n, eff);
		if (r->loss & 2) {
			int rc = gw_encode_abandon(enc);
			GW_FUZZ_CHECKF(rc == 0, "codec %d: abandon %s", r->id,
				       gw_error_name(rc));
			r->abandoned = true;
			break;
		}
		GW_FUZZ_CHECKF(r->frames <= in->total + 16,
			       "codec %d: %llu frames for %llu entries", r->id,
			       (unsigned long long)r->frames,
			       (unsigned long long)in->total);
	}
	GW_FUZZ_CHECK(gw_encode_next(enc, buf, budget) == GW_ESTATE);
	if (r->abandoned)
		;   /* the rest stayed in the error buffer: checked by the caller */
	else if (r->strict)
		GW_FUZZ_CHECKF(r->next == in->total,
			       "codec %d: %llu of %llu entries sent", r->id,
			       (unsigned long long)r->next,
			       (unsigned long long)in->total);
	else
		GW_FUZZ_CHECK(r->sent <= in->t.dim);
	free(buf);
}

/* Whether any element of v[0..dim) that is no key of the tensor differs
 * from the float with bits `bits` (-0.0 for outputs, 0.0 for error
 * buffers): decoding and feedback must leave them alone, bit for bit.
 * Compared a block at a time: an instrumented loop per element is slow. */
static bool touched_outside_keys(const struct input *in, const float *v,
				 uint32_t bits)
{
	enum { BLOCK = 1024 };
	static float ref[BLOCK];
	static uint32_t ref_bits = 1;
	if (ref_bits != bits) {
		for (int i = 0; i < BLOCK; i++)
			ref[i] = gw_bits_f32(bits);
		ref_bits = bits;
	}
	uint64_t from = 0;
	for (uint64_t k = 0; k <= in->total; k++) {
		uint64_t to = k < in->total ? key_at(in, k) : in->t.dim;
		while (from < to) {
			uint64_t n = GW_MIN(to - from, (uint64_t)BLOCK);
			if (memcmp(v + from, ref, n * sizeof(float)))
				return true;
			from += n;
		}
		from = to + 1;
	}
	return false;
}

static void run_codec(const struct input *in, int id, bool with_ef)
{
	int caps = gw_codec_caps(id);
	GW_FUZZ_CHECK(caps >= 0);
	gw_encoder *enc = gw_encoder_create(id);
	GW_FUZZ_CHECK(enc);
	if (in->max_elems)
		GW_FUZZ_CHECK(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS,
						   in->max_elems) == 0);
	bool kind_ok = (caps & (in->sparse ? GW_CODEC_SPARSE : GW_CODEC_DENSE));
	if (id == GW_CODEC_COUNTSKETCH && !in->sparse) {
		/* Its dense frames are slices of a sketch table, not of the
		 * tensor: fuzz_countsketch and test_countsketch_* check them. */
		gw_encoder_free(enc);
		return;
	}
	if (!kind_ok) {
		int rc = gw_encode_begin(enc, &in->t);
		GW_FUZZ_CHECKF(rc == GW_EUNSUPPORTED, "codec %d: kind refused with %d",
			       id, rc);
		gw_encoder_free(enc);
		return;
	}
	gw_ef *ef = NULL;
	if (with_ef) {
		ef = gw_ef_create(in->t.dim);
		GW_FUZZ_CHECK(ef);
		if (gw_encoder_set_ef(enc, ef) < 0) {
			/* a codec may refuse feedback: then run without */
			gw_ef_free(ef);
			ef = NULL;
		}
	}
	uint64_t dim = in->t.dim;
	float *out = in->huge ? NULL : malloc((dim ? dim : 1) * sizeof(float));
	float *c = malloc((in->total ? in->total : 1) * sizeof(float));
	float *e_old = ef ? malloc((dim ? dim : 1) * sizeof(float)) : NULL;
	GW_FUZZ_CHECK((out || in->huge) && c && (e_old || !ef));

	for (int round = 0; round < (ef ? 2 : 1); round++) {
		/* what the codec is asked to send: g, or g + e with feedback */
		if (ef)
			memcpy(e_old, gw_ef_data(ef), dim * sizeof(float));
		for (uint64_t i = 0; i < in->total; i++)
			c[i] = ef ? in->vals[i] + e_old[pos_of(in, i)] : in->vals[i];
		for (uint64_t i = 0; out && i < dim; i++)
			out[i] = -0.0f;   /* -0 + x == x for every x */
		struct run r = {.in = in, .id = id, .caps = caps, .out = out, .c = c,
				.ef = ef, .loss = ef ? in->loss : 0};
		int rc = gw_encode_begin(enc, &in->t);
		/* A codec may refuse, when the tensor starts, a max_frame_elems
		 * it cannot honour (3lc: frames hold whole groups of 5). */
		if (rc == GW_EBOUNDS && in->max_elems)
			break;
		GW_FUZZ_CHECKF(rc == 0, "codec %d: begin %s", id, gw_error_name(rc));
		encode_all(&r, enc);

		/* deepreduce's Bloom false positives carry what the error
		 * buffer holds there: 0 without feedback. */
		if (out && in->sparse && id != GW_CODEC_DEEPREDUCE)
			GW_FUZZ_CHECKF(!touched_outside_keys(in, out, 0x80000000u),
				       "codec %d wrote outside the keys", id);
		if (out && in->sparse && id == GW_CODEC_DEEPREDUCE && !ef)
			for (uint64_t i = 0, k = 0; i < dim; i++) {
				bool key = k < in->total && pos_of(in, k) == i;
				k += key;
				GW_FUZZ_CHECKF(key || out[i] == 0.0f,
					       "deepreduce wrote %g outside the keys", out[i]);
			}
		if (ef && out) {
			/* e_new = c - decoded (what was delivered), up to the
			 * rounding of that step. A lost or abandoned value went
			 * through (c - level) + level with a level that shows
			 * nowhere: allow rounding at the scale of the largest
			 * |c| too (levels do not exceed 2 max |c|). */
			const float *e = gw_ef_data(ef);
			double maxc = 0;
			for (uint64_t i = 0; in->loss && i < in->total; i++)
				maxc = fmax(maxc, fabs((double)c[i]));
			for (uint64_t i = 0; i < in->total; i++) {
				uint64_t p = pos_of(in, i);
				double d = out[p], ce = c[i], en = e[p];
				double mag = fmax(fabs(ce), fmax(fabs(d), fabs(en)));
				double tol = mag * 0x1p-21 + maxc * 0x1p-20 + 0x1p-126;
				GW_FUZZ_CHECKF(fabs(d + en - ce) <= tol,
					       "codec %d ef: c %a decoded %a e %a", id,
					       ce, d, en);
				if (id == GW_CODEC_RAW && !in->loss)
					GW_FUZZ_CHECK(e[p] == 0.0f);   /* all sent */
			}
			if (in->sparse)
				GW_FUZZ_CHECKF(!touched_outside_keys(in, e, 0),
					       "codec %d: feedback outside the keys", id);
		}
	}
	free(e_old);
	free(c);
	free(out);
	gw_encoder_free(enc);
	gw_ef_free(ef);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in;
	parse(&in, data, size);

	int ids[MAX_CODECS];
	int n = gw_codec_list(ids, MAX_CODECS);
	GW_FUZZ_CHECK(n > 0 && n <= MAX_CODECS);
	/* feedback needs finite values and an error buffer of dim floats */
	bool ef_ok = in.ef && in.finite && !in.huge;
	for (int i = 0; i < n; i++) {
		GW_FUZZ_CHECK(gw_codec_name(ids[i]) != NULL);
		run_codec(&in, ids[i], false);
		if (ef_ok && in.ef_codec % (unsigned)n == (unsigned)i)
			run_codec(&in, ids[i], true);
	}
	free(in.vals);
	free(in.keys32);
	free(in.keys64);
	return 0;
}
