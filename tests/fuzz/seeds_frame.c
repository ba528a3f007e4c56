/* Seeds of the frame-level harnesses: fuzz_frame.c (a valid frame of
 * every codec and kind, and a steered copy of each) and fuzz_roundtrip.c.
 * Roundtrip seeds follow the input layout of fuzz_roundtrip.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "fuzz_common.h"
#include "seeds_common.h"

void seeds_frame(void)
{
	int ids[256];
	int n = gw_codec_list(ids, 256);
	char fname[256];
	mc_reseed("frame");
	for (int i = 0; i < n && i < 256; i++) {
		int caps = gw_codec_caps(ids[i]);
		for (int kind = 0; kind < 3; kind++) {
			if (!(caps & (kind ? GW_CODEC_SPARSE : GW_CODEC_DENSE)))
				continue;
			struct tensor s = kind == 0 ? mc_make_dense(200, SP_NONE)
					: mc_make_sparse(40, kind == 1 ? 32 : 64, 50, SP_NONE);
			struct frames fr;
			if (mc_encode(ids[i], &s.t, 256, 0, false, &fr)) {
				snprintf(fname, sizeof(fname), "%s-%s",
					 gw_codec_name(ids[i]), s.kind);
				mc_write_file("frame", fname, fr.buf[0], fr.len[0]);
				/* steered: magic/version forced, fitted, sealed */
				uint8_t *c = fr.buf[0];
				gw_fuzz_st32(c + GW_FUZZ_OFF_CHECKSUM, 0x1f);
				c[GW_FUZZ_OFF_CODEC] = (uint8_t)(200 + i);
				snprintf(fname, sizeof(fname), "ctrl-%s-%s-codec%d",
					 gw_codec_name(ids[i]), s.kind, 200 + i);
				mc_write_file("frame", fname, c, fr.len[0]);
				mc_frames_free(&fr);
			}
			mc_tensor_free(&s);
		}
	}
	uint8_t hdr[GW_FRAME_HDR_LEN] = {'G', 'W', 1, 1};
	mc_write_file("frame", "header-only", hdr, sizeof(hdr));
}

/* fuzz_roundtrip.c's layout: mode, budget (2), max_elems-1, ef codec,
 * then values (dense) or (gap, value) entries (sparse). */
void seeds_roundtrip(void)
{
	static const struct {
		uint8_t mode;
		uint16_t budget;
		uint8_t max_elems;
		unsigned n;
		enum special sp;
	} cases[] = {
		{0x00, 64, 0, 64, SP_NONE},
		{0x00, 1424, 0, 2000, SP_NONE},
		{0x04, 100, 0, 300, SP_NONE},      /* error feedback */
		{0x0c, 8924, 9, 1000, SP_NONE},    /* feedback, max_frame_elems 10 */
		{0x00, 200, 0, 100, SP_NONFINITE},
		{0x00, 200, 0, 100, SP_EDGES},
		{0x10, 1000, 0, 500, SP_NONE},     /* budget above GW_FRAME_MAX */
		{0x00, 10, 0, 50, SP_NONE},        /* budget below the minimum */
		{0x01, 64, 0, 50, SP_NONE},
		{0x01, 1424, 0, 1500, SP_NONE},
		{0x25, 256, 0, 200, SP_NONE},      /* sparse32, feedback, extra dim */
		{0x02, 100, 0, 100, SP_EDGES},
		{0x06, 300, 0, 300, SP_NONE},
		{0x0a, 1424, 4, 300, SP_NONFINITE},
		{0x03, 100, 0, 200, SP_NONE},      /* gaps past 2^32 */
		{0x03, 8924, 0, 1000, SP_NONE},
		{0x00, 64, 0, 0, SP_NONE},         /* empty tensor */
		{0x01, 64, 0, 0, SP_NONE},
	};
	char fname[64];
	mc_reseed("roundtrip");
	for (size_t c = 0; c < GW_ARRAY_SIZE(cases); c++) {
		bool sparse = cases[c].mode & 3;
		bool huge = (cases[c].mode & 3) == 3;
		unsigned n = cases[c].n;
		size_t len = 5 + (size_t)n * (sparse ? 5 : 4);
		uint8_t *b = malloc(len);
		float *v = malloc((n ? n : 1) * sizeof(float));
		if (!b || !v)
			abort();
		mc_fill_values(v, n, cases[c].sp);
		b[0] = cases[c].mode;
		b[1] = (uint8_t)cases[c].budget;
		b[2] = (uint8_t)(cases[c].budget >> 8);
		b[3] = cases[c].max_elems;
		/* feedback codec; with feedback, also frame losses */
		b[4] = (uint8_t)((c % 16) | ((cases[c].mode & 4) ? (c % 4) << 4 : 0));
		for (unsigned i = 0; i < n; i++) {
			uint32_t u;
			memcpy(&u, &v[i], 4);
			if (sparse) {
				uint8_t gap = (uint8_t)(mc_next_u64() % 32);
				if (huge && i % 50 == 49)
					gap = (uint8_t)(0xf8 + mc_next_u64() % 8);
				b[5 + 5 * (size_t)i] = gap;
				gw_fuzz_st32(b + 5 + 5 * (size_t)i + 1, u);
			} else {
				gw_fuzz_st32(b + 5 + 4 * (size_t)i, u);
			}
		}
		snprintf(fname, sizeof(fname), "rt-%02zu-mode%02x-b%u-n%u", c,
			 cases[c].mode, cases[c].budget, n);
		mc_write_file("roundtrip", fname, b, len);
		free(b);
		free(v);
	}
}
