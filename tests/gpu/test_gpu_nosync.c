/* The fiber runtime catches a missing barrier: this program is linked with
 * a copy of gw_cuda.cu that drop_sync.py stripped of one __syncthreads()
 * (or of all of them), and runs those kernels on hostcuda against codec/
 * — raw and int8 encoding, 3lc encoding, int8 and 3lc decoding of a real
 * trace — under a few schedules. It passes when the kernels go wrong
 * (frames, verdicts or sums unlike codec/'s), and fails if every result
 * is still right: then a kernel with a missing barrier would pass the
 * suite, as it did before hostcuda. Built from the untouched gw_cuda.cu
 * and run with --control, it must find every result right: the check
 * itself does not fail for its own reasons. */
#include <math.h>

#include "../gw_test.h"
#include "emu.h"
#include "hostcuda.h"

/* Whether the kernel's decode of codec/'s frames fr differs from codec/'s:
 * a verdict other than the values added, or a sum not bit for bit. */
static int decode_differs(int (*decode)(const struct gw_kf_dec *), const gw_test_frames *fr,
			  uint64_t dim)
{
	float *a = calloc(dim, sizeof(float)), *b = calloc(dim, sizeof(float));
	const uint8_t **fp = calloc(fr->n, sizeof(*fp));
	uint32_t *fl = calloc(fr->n, sizeof(*fl));
	int32_t *rcs = calloc(fr->n, sizeof(*rcs));
	GW_CHECK(a && b && fp && fl && rcs, "out of memory");
	for (size_t f = 0; f < fr->n; f++) {
		fp[f] = fr->f[f].data;
		fl[f] = (uint32_t)fr->f[f].len;
		GW_CHECK(gw_decode(fr->f[f].data, fr->f[f].len, b, dim) > 0, "codec/ decode");
	}
	struct gw_kf_dec d = {fp, fl, (uint32_t)fr->n, a, dim, rcs};
	int differs = decode(&d) != GW_OK;
	for (size_t f = 0; f < fr->n; f++)
		differs |= rcs[f] <= 0;
	for (uint64_t i = 0; i < dim; i++)
		differs |= gw_test_bits(a[i]) != gw_test_bits(b[i]);
	GW_FREE_ALL(a, b, fp, fl, rcs);
	return differs;
}

/* Whether the kernels' frames of v differ from codec/'s at budget. */
static int dense_differs(int codec, const float *v, uint64_t dim, size_t budget)
{
	uint32_t per = gw_kd_per_frame(codec, budget, 0);
	struct gw_kd_enc j = {.codec = codec, .g = v, .dim = dim, .tensor = 42, .per_frame = per};
	j.frames = gw_kd_frame_count(&j);
	uint8_t **slots = calloc(j.frames, sizeof(*slots));
	uint32_t *lens = calloc(j.frames, sizeof(*lens));
	GW_CHECK(slots && lens, "out of memory");
	for (uint32_t f = 0; f < j.frames; f++)
		GW_CHECK(slots[f] = calloc(1, budget), "out of memory");
	j.slots = slots;
	j.lens = lens;
	gw_test_frames fr = {0};
	gw_tensor t = gw_test_dense_tensor(42, v, dim);
	gw_encoder *enc = gw_test_encoder(codec);
	GW_CHECK(gw_test_encode_all(enc, &t, budget, &fr) == 0, "codec/ encode");
	int differs = gw_emu_encode_dense(&j) != GW_OK || fr.n != j.frames;
	for (uint32_t f = 0; !differs && f < j.frames; f++)
		differs = lens[f] != fr.f[f].len || memcmp(slots[f], fr.f[f].data, lens[f]);
	differs |= decode_differs(gw_emu_decode_dense, &fr, dim);
	for (uint32_t f = 0; f < j.frames; f++)
		free(slots[f]);
	GW_FREE_ALL(slots, lens);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return differs;
}

/* Whether the kernels' 3lc frames of v (one tensor, s = 1) differ. */
static int tlc_differs(const float *v, uint64_t dim, size_t budget)
{
	uint64_t nb = (dim + 4) / 5;
	uint32_t P = (uint32_t)budget - 40, maxf = (uint32_t)((nb + P - 1) / P), mx = 0,
		 ntok = 0, err = 0;
	uint8_t *bytes = malloc(nb), **slots = calloc(maxf, sizeof(*slots));
	uint32_t *runs = malloc(nb * 4), *tok = malloc(nb * 4), *tb = malloc(nb * 4);
	uint32_t *tiles = malloc(gw_ks_tiles(nb) * 4 + 4), *lens = calloc(maxf, 4);
	GW_CHECK(bytes && slots && runs && tok && tb && tiles && lens, "out of memory");
	for (uint32_t f = 0; f < maxf; f++)
		GW_CHECK(slots[f] = calloc(1, budget), "out of memory");
	struct gw_kt_enc j = {.g = v, .dim = dim, .tensor = 42, .sparsity = 1.0, .room = P,
			      .nb = nb, .bytes = bytes, .runs = runs, .tok = tok, .tok_byte = tb,
			      .tiles = tiles, .mx = &mx, .ntok = &ntok, .err = &err, .slots = slots,
			      .lens = lens, .max_frames = maxf};
	gw_kt_limit(&j, 0);
	uint32_t frames = 0;
	int differs = gw_emu_encode_3lc(&j, &frames) != GW_OK;
	gw_test_frames fr = {0};
	gw_tensor t = gw_test_dense_tensor(42, v, dim);
	gw_encoder *enc = gw_test_encoder_with(GW_CODEC_3LC, "sparsity=1");
	GW_CHECK(gw_test_encode_all(enc, &t, budget, &fr) == 0, "codec/ 3lc encode");
	differs |= fr.n != frames;
	for (uint32_t f = 0; !differs && f < frames; f++)
		differs = lens[f] != fr.f[f].len || memcmp(slots[f], fr.f[f].data, lens[f]);
	differs |= decode_differs(gw_emu_decode_3lc, &fr, dim);
	for (uint32_t f = 0; f < maxf; f++)
		free(slots[f]);
	GW_FREE_ALL(bytes, slots, runs, tok, tb, tiles, lens);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return differs;
}

int main(int argc, char **argv)
{
	int control = argc > 1 && !strcmp(argv[1], "--control");
	gw_test_init(argv[0], 1);
	gw_test_dense d = {0};
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {   /* a trace of many frames */
		gw_test_load_dense(i, &d);
		if (d.n >= 8192)
			break;
		gw_test_dense_free(&d);
	}
	GW_CHECK(d.n >= 8192, "no trace of 8192 elements");
	uint64_t dim = d.n < 20000 ? d.n : 20000;
	unsigned caught = 0, seeds = 4;
	for (uint64_t seed = 1; seed <= seeds; seed++) {
		gw_hcu_set_seed(seed);
		gw_hcu_clear_sticky();
		int bad = dense_differs(GW_CODEC_INT8, d.v, dim, 1424) ||
			  dense_differs(GW_CODEC_RAW, d.v, dim, 1424) ||
			  tlc_differs(d.v, dim, 1424);
		printf("seed %llu: %s\n", (unsigned long long)seed,
		       bad ? "the kernels went wrong" : "every result right");
		caught += bad;
	}
	gw_test_dense_free(&d);
	if (control) {
		GW_CHECK(caught == 0, "the untouched kernels went wrong under %u of %u "
			 "schedules", caught, seeds);
		printf("ok: the untouched kernels right under %u schedules\n", seeds);
		return 0;
	}
	GW_CHECK(caught > 0, "kernels without a barrier gave codec/'s results under %u "
		 "schedules", seeds);
	printf("ok: caught under %u of %u schedules\n", caught, seeds);
	return 0;
}
