/* What the emulation tests of gpudirect's kernels share (emu_check.h). */
#include <math.h>

#include "emu_check.h"

uint64_t tiny_dim(uint64_t dim, int tiny)
{
	return tiny && dim > TINY ? TINY : dim;
}

int trace_parity(void)
{
	const char *e = getenv("GW_HCU_SEED");
	return e && *e ? (int)(strtoull(e, NULL, 0) % 2) : 1;
}

int brief(void)
{
	const char *e = getenv("GW_GPU_EMU_BRIEF");
	return e && !strcmp(e, "1");
}

float *nonfinite_values(gw_test_rng *r, int n, int inf_at)
{
	float *v = malloc((size_t)n * sizeof(float));
	GW_CHECK(v, "out of memory");
	for (int i = 0; i < n; i++)
		v[i] = gw_test_uniform(r, -2, 2);
	v[17] = NAN;
	v[inf_at] = -INFINITY;
	return v;
}

void each_trace(trace_check check, int first, int step, int brief_step, uint64_t max_n,
		gw_test_rng *r, size_t *frames)
{
	int every = brief() ? brief_step : step;
	for (int i = first * !trace_parity(); i < GW_TEST_N_DENSE; i += every) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		check(d.v, GW_MIN(d.n, max_n), d.name, r, frames);
		gw_test_dense_free(&d);
	}
}


void gpu_frames_free(struct gpu_frames *g)
{
	for (uint32_t i = 0; g->slots && i < g->n; i++)
		free(g->slots[i] ? g->slots[i] - i % 4 : NULL);
	GW_FREE_ALL(g->slots, g->lens);
}

/* The library's frames for the same input, with params; e (may be NULL)
 * goes in as the error buffer and comes back as the library leaves it. */
void lib_encode_with(int codec, const char *params, const float *v, float *e,
			    uint64_t dim, size_t budget, gw_test_frames *fr)
{
	gw_encoder *enc = gw_test_encoder_with(codec, params);
	gw_ef *ef = gw_test_ef_set(enc, e, dim);
	gw_tensor t = gw_test_dense_tensor(42, v, dim);
	int rc = gw_test_encode_all(enc, &t, budget, fr);
	GW_CHECK(rc == 0, "%s: library encode at %zu: %s", gw_codec_name(codec), budget,
		 gw_error_name(rc));
	if (e)
		memcpy(e, gw_ef_data(ef), dim * sizeof(float));
	gw_encoder_free(enc);
	gw_ef_free(ef);
}

/* n frames of the emulation against the library's, and the buffers. */
void same_as_library(uint8_t *const *slots, const uint32_t *lens, uint32_t n,
			    const gw_test_frames *fr, const float *e_emu, const float *e_lib,
			    uint64_t dim, const char *what)
{
	GW_CHECK(n == fr->n, "%s: %u frames, library %zu", what, n, fr->n);
	for (uint32_t f = 0; f < n; f++)
		GW_CHECK(lens[f] == fr->f[f].len && !memcmp(slots[f], fr->f[f].data, lens[f]),
			 "%s: frame %u differs (%u bytes, library %zu)", what, f, lens[f],
			 fr->f[f].len);
	for (uint64_t i = 0; e_emu && i < dim; i++)
		GW_CHECK(gw_test_bits(e_emu[i]) == gw_test_bits(e_lib[i]),
			 "%s: error buffer %llu: %08x, library %08x", what, (unsigned long long)i,
			 gw_test_bits(e_emu[i]), gw_test_bits(e_lib[i]));
}

void same_out(const float *a, const float *b, uint64_t dim, const char *what)
{
	for (uint64_t i = 0; i < dim; i++)
		GW_CHECK(gw_test_bits(a[i]) == gw_test_bits(b[i]) || (isnan(a[i]) && isnan(b[i])),
			 "%s: element %llu decoded %08x, library %08x", what, (unsigned long long)i,
			 gw_test_bits(a[i]), gw_test_bits(b[i]));
}

/* Decodes n frames with the emulated kernel for codec. */
void emu_decode(int codec, const uint8_t *const *frames, const uint32_t *lens,
		       uint32_t n, float *out, uint64_t out_len, int32_t *rcs)
{
	if (codec == GW_CODEC_3LC) {
		struct gw_kf_dec d = {frames, lens, n, out, out_len, rcs};
		gw_emu_decode_3lc(&d);
	} else if (codec == GW_CODEC_TOPK) {
		struct gw_kf_dec d = {frames, lens, n, out, out_len, rcs};
		gw_emu_decode_topk(&d);
	} else if (codec == GW_CODEC_HQ) {
		struct gw_kf_dec d = {frames, lens, n, out, out_len, rcs};
		gw_emu_decode_hq(&d);
	} else {
		struct gw_kf_dec d = {frames, lens, n, out, out_len, rcs};
		gw_emu_decode_dense(&d);
	}
}

/* The emulated decode of the library's frames, and of mutations of them,
 * against gw_decode. */
void compare_decode(int codec, const gw_test_frames *fr, uint64_t dim, gw_test_rng *r,
			   const char *what)
{
	float *a = malloc(dim * sizeof(float)), *b = malloc(dim * sizeof(float));
	const uint8_t **frames = malloc(fr->n * sizeof(*frames));
	uint32_t *lens = malloc(fr->n * sizeof(*lens));
	int32_t *rcs = malloc(fr->n * sizeof(*rcs));
	GW_CHECK(a && b && frames && lens && rcs, "out of memory");
	for (uint64_t i = 0; i < dim; i++)
		a[i] = b[i] = (i % 5) ? gw_test_uniform(r, -1, 1) : ((i & 8) ? -0.0f : 0.0f);
	for (size_t f = 0; f < fr->n; f++) {
		frames[f] = fr->f[f].data;
		lens[f] = (uint32_t)fr->f[f].len;
	}
	emu_decode(codec, frames, lens, (uint32_t)fr->n, a, dim, rcs);
	for (size_t f = 0; f < fr->n; f++) {
		int rc = gw_decode(fr->f[f].data, fr->f[f].len, b, dim);
		GW_CHECK(rcs[f] == rc, "%s frame %zu: emulated decode %d, library %d", what, f,
			 rcs[f], rc);
	}
	same_out(a, b, dim, what);
	/* Mutations, one frame at a time: the same verdict, nothing written on
	 * a reject (the GPU declines sparse frames and other codecs, which the
	 * library may take). */
	size_t every = fr->n > 32 ? fr->n / 32 : 1;
	for (size_t f = 0; f < fr->n; f += every) {
		for (int m = 0; m < 12; m++) {
			size_t len = fr->f[f].len;
			uint8_t *c = malloc(len);
			GW_CHECK(c, "out of memory");
			memcpy(c, fr->f[f].data, len);
			size_t at = m < 4 ? gw_test_below(r, 36) : gw_test_below(r, len);
			c[at] = (uint8_t)gw_test_rand(r);
			if (m & 1)
				gw_frame_seal(c, len);
			const uint8_t *one = c;
			uint32_t l32 = (uint32_t)len;
			int32_t rc1;
			memcpy(b, a, dim * sizeof(float));
			emu_decode(codec, &one, &l32, 1, a, dim, &rc1);
			int rc2 = gw_decode(c, len, b, dim);
			/* Whether the kernel takes the mutated frame's kind. */
			int takes = codec == GW_CODEC_TOPK ? c[3] == 7 && (c[4] & 1)
							   : c[3] == (uint8_t)codec && !(c[4] & 1);
			if (rc1 == GW_EUNSUPPORTED && rc2 != GW_EUNSUPPORTED) {
				GW_CHECK(!takes,
					 "%s: emulated decode declined a dense %u frame", what,
					 c[3]);
				memcpy(a, b, dim * sizeof(float));   /* the library's sum stands */
			} else {
				GW_CHECK(rc1 == rc2, "%s frame %zu, byte %zu: emulated %d, library %d",
					 what, f, at, rc1, rc2);
			}
			same_out(a, b, dim, what);
			free(c);
		}
	}
	GW_FREE_ALL(a, b, frames, lens, rcs);
}
