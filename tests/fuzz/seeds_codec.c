/* Seeds of the codec decoder harnesses (fuzz_<codec>.c), written by
 * make_corpus from synthetic tensors through the public encoder.
 *
 * Decoder seeds are valid frames of the codec — dense, sparse with 32-bit
 * and with 64-bit keys (one jump past 2^32), several budgets, with and
 * without max_frame_elems and error feedback — plus copies whose checksum
 * field holds control words of fuzz_common.c, which steer the re-sealing
 * step; countsketch gets slices of small tables and key sets besides
 * (seeds_countsketch()); hq gets frames of other params, on a shared
 * scale, and sum frames of three workers (seeds_hq()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/sketch.h>

#include "codec_internal.h"
#include "fuzz_common.h"
#include "seeds_common.h"

/* Control words for fuzz_common.c's re-sealing step (see its comment). */
static uint32_t ctrl_words(const char *kind, uint32_t *w)
{
	uint32_t flags = !strcmp(kind, "dense") ? 1 : !strcmp(kind, "sparse32") ? 2 : 3;
	uint32_t shape = 2u << 3, start_small = 1u << 5, fix_keys = 1u << 16;
	uint32_t n = 0;
	w[n++] = flags | 4 | shape | start_small | fix_keys;            /* accepted */
	w[n++] = flags | 4 | shape | start_small | fix_keys | (1u << 6);/* one short */
	w[n++] = flags | 4 | (1u << 3) | start_small | (2u << 6) | (17u << 8);
	w[n++] = flags | 4 | (3u << 3) | start_small | (5u << 19);      /* cut */
	w[n++] = flags | 4 | (3u << 3) | start_small | (2u << 19);      /* grown */
	w[n++] = flags | 4 | shape | start_small | fix_keys | (1u << 22) | (3u << 6) |
		 (9u << 8);
	w[n++] = flags | 4 | shape | (1u << 17);                        /* out NULL */
	return n;
}

void seeds_decoder(const char *name, int id)
{
	static const size_t budgets[] = {64, 100, 256, 1424, 8924};
	int caps = gw_codec_caps(id);
	char fname[256];
	unsigned variant = 0;
	mc_reseed(name);
	for (int kind = 0; kind < 3; kind++) {
		if (!(caps & (kind ? GW_CODEC_SPARSE : GW_CODEC_DENSE)))
			continue;
		for (int sp = SP_NONE; sp <= SP_ZERO; sp++) {
			struct tensor s = kind == 0 ? mc_make_dense(sp ? 300 : 3000, sp)
					: mc_make_sparse(sp ? 60 : 600, kind == 1 ? 32 : 64,
							 40, sp);
			for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
				if (sp && b != 1 && b != 3)
					continue;
				struct frames fr;
				bool ef = b == 2;
				uint32_t max_elems = b == 4 ? 500 : 0;
				if (!mc_encode(id, &s.t, budgets[b], max_elems, ef, &fr))
					continue;
				/* first, second and last frame */
				size_t pick[3] = {0, 1, fr.n - 1};
				for (int p = 0; p < 3; p++) {
					size_t i = pick[p];
					if (i >= fr.n || (p == 2 && fr.n - 1 <= 1))
						continue;
					snprintf(fname, sizeof(fname), "%s-%s-sp%d-b%zu-f%zu",
						 name, s.kind, sp, budgets[b], i);
					mc_write_file(name, fname, fr.buf[i], fr.len[i]);
				}
				/* control-word copies of the first frame */
				uint32_t w[16];
				uint32_t nw = ctrl_words(s.kind, w);
				uint8_t *c = fr.buf[0];
				for (uint32_t j = 0; j < nw; j++) {
					if ((variant++ % 3) && j)
						continue;
					gw_fuzz_st32(c + GW_FUZZ_OFF_CHECKSUM, w[j]);
					snprintf(fname, sizeof(fname), "ctrl%08x-%s-%s-sp%d-b%zu",
						 w[j], name, s.kind, sp, budgets[b]);
					mc_write_file(name, fname, c, fr.len[0]);
				}
				mc_frames_free(&fr);
			}
			mc_tensor_free(&s);
		}
	}
	/* short inputs */
	static const uint8_t hdr[] = {'G', 'W', 1};
	mc_write_file(name, "short-3", hdr, sizeof(hdr));
	mc_write_file(name, "empty", "", 0);
}

/* countsketch beyond seeds_decoder(), whose default table (5 x 16384
 * cells) outgrows the outputs the harness allocates: slices of small
 * tables, and key sets (gw_keyset_encode) with and without values, with
 * 32- and 64-bit keys; then copies of each with byte 35 (the selector of
 * fuzz_countsketch.c, the top byte of fuzz_common.c's control word) set. */
void seeds_countsketch(void)
{
	static const struct {
		uint32_t rows, cols, dim;
		size_t budget;
	} tables[] = {
		{1, 1, 1, 64}, {3, 10, 50, 100}, {5, 328, 20480, 1424},
		{16, 64, 300, 256}, {2, 4096, 100, 8924},
	};
	char fname[128];
	uint8_t *buf = malloc(GW_FRAME_MAX);
	if (!buf)
		abort();
	mc_reseed("countsketch-extra");
	for (size_t t = 0; t < GW_ARRAY_SIZE(tables); t++) {
		struct tensor s = mc_make_dense(tables[t].dim, t == 3 ? SP_NONFINITE : SP_NONE);
		gw_encoder *enc = gw_encoder_create(GW_CODEC_COUNTSKETCH);
		if (!enc || gw_encoder_set_param(enc, GW_PARAM_ROWS, tables[t].rows) < 0 ||
		    gw_encoder_set_param(enc, GW_PARAM_COLS, tables[t].cols) < 0 ||
		    gw_encoder_set_param(enc, GW_PARAM_SEED, (double)t) < 0 ||
		    gw_encode_begin(enc, &s.t) < 0)
			abort();
		int n;
		for (unsigned f = 0; (n = gw_encode_next(enc, buf, tables[t].budget)) > 0; f++) {
			if (f > 2 && f % 16)
				continue;
			snprintf(fname, sizeof(fname), "cs-slice-%ux%u-f%u", tables[t].rows,
				 tables[t].cols, f);
			mc_write_file("countsketch", fname, buf, (size_t)n);
			buf[GW_FUZZ_OFF_CHECKSUM + 3] = (uint8_t)(f % 8);
			snprintf(fname, sizeof(fname), "cs-slice-%ux%u-f%u-sel%u",
				 tables[t].rows, tables[t].cols, f, f % 8);
			mc_write_file("countsketch", fname, buf, (size_t)n);
		}
		if (n < 0)
			abort();
		gw_encoder_free(enc);
		mc_tensor_free(&s);
	}
	static const uint32_t counts[] = {1, 2, 5, 100, 3000};
	for (size_t c = 0; c < GW_ARRAY_SIZE(counts); c++)
		for (int bits = 32; bits <= 64; bits += 32) {
			uint32_t n = counts[c];
			struct tensor s = mc_make_sparse(n, (unsigned)bits, c == 3 ? 70000 : 40,
							 c == 2 ? SP_EDGES : SP_NONE);
			uint64_t *k = malloc(n * sizeof(uint64_t));
			if (!k)
				abort();
			/* one frame: no jump of 2^32 (make_sparse puts one in
			 * the middle of 64-bit keys) */
			for (uint32_t i = 0; i < n; i++)
				k[i] = bits == 64 ? (1ull << 33) + 3 * (uint64_t)i : s.k32[i];
			for (int v = 0; v < 2; v++) {
				int len = gw_keyset_encode(5, k, v ? s.vals : NULL, n, buf,
							   GW_FRAME_MAX);
				if (len < 0)
					abort();
				snprintf(fname, sizeof(fname), "cs-keys%d-n%u-%s", bits, n,
					 v ? "values" : "keys");
				mc_write_file("countsketch", fname, buf, (size_t)len);
				buf[GW_FUZZ_OFF_CHECKSUM + 3] = (uint8_t)(c + v);
				snprintf(fname, sizeof(fname), "cs-keys%d-n%u-%s-sel%zu", bits,
					 n, v ? "values" : "keys", c + v);
				mc_write_file("countsketch", fname, buf, (size_t)len);
			}
			free(k);
			mc_tensor_free(&s);
		}
	free(buf);
}

/* deepreduce beyond seeds_decoder(), which sees only the default
 * combination: two frames of every index codec (Bloom under each policy)
 * with every value codec, from a gradient-like tensor's top 20%. */
void seeds_deepreduce(void)
{
	static const char *idx[] = {"raw", "rle", "delta", "bloom,policy=p0",
				    "bloom,policy=p1", "bloom,policy=p2"};
	static const char *val[] = {"f32", "deflate", "qsgd", "poly", "dexp"};
	char spec[96], fname[128];
	uint8_t *buf = malloc(GW_FRAME_MAX);
	if (!buf)
		abort();
	mc_reseed("deepreduce-extra");
	struct tensor s = mc_make_dense(2000, SP_NONE);
	for (size_t i = 0; i < GW_ARRAY_SIZE(idx); i++)
		for (size_t v = 0; v < GW_ARRAY_SIZE(val); v++) {
			snprintf(spec, sizeof(spec), "deepreduce:index=%s,value=%s,fraction=0.2,fpr=0.05",
				 idx[i], val[v]);
			if (i < 3)   /* fpr belongs to the Bloom filter only */
				*strstr(spec, ",fpr=") = '\0';
			gw_encoder *enc = gw_encoder_from_string(spec);
			if (!enc || gw_encode_begin(enc, &s.t) < 0)
				abort();
			int n;
			for (unsigned f = 0; f < 2 && (n = gw_encode_next(enc, buf, 600)) > 0; f++) {
				snprintf(fname, sizeof(fname), "dr-%zu-%zu-f%u", i, v, f);
				mc_write_file("deepreduce", fname, buf, (size_t)n);
			}
			gw_encode_abandon(enc);
			gw_encoder_free(enc);
		}
	mc_tensor_free(&s);
	free(buf);
}

/* hq beyond seeds_decoder(), which sees only the defaults: workers' frames
 * under other params, on their own scale and on a shared one, and a
 * shard's sum frames of three workers (gw_sum_add, gw_sum_encode), one
 * poisoned, one as wide as 32 bits; then copies with byte 35 (the
 * selector of fuzz_hq.c's gw_sum_add step) set. */
static void hq_write(const char *what, unsigned f, uint8_t *buf, size_t len)
{
	char fname[128];
	snprintf(fname, sizeof(fname), "hq-%s-f%u", what, f);
	mc_write_file("hq", fname, buf, len);
	uint8_t sel = (uint8_t)(mc_next_u64() % 16);
	buf[GW_FUZZ_OFF_CHECKSUM + 3] = sel;
	snprintf(fname, sizeof(fname), "hq-%s-f%u-sel%u", what, f, sel);
	mc_write_file("hq", fname, buf, len);
	gw_frame_seal(buf, len);
}

void seeds_hq(void)
{
	static const char *params[] = {"rotate=0", "bits=2", "bits=3", "bits=8",
				       "bits=2,rotate=0", "bits=5,rounding=stochastic"};
	static const size_t budgets[] = {100, 600, 2000};
	enum { W = 3 };
	char spec[96], what[96];
	uint8_t *buf = malloc(GW_FRAME_MAX);
	uint8_t *wf[W];
	int wlen[W];
	int32_t *acc = malloc(GW_FRAME_MAX * 8 * sizeof(int32_t));
	if (!buf || !acc)
		abort();
	for (int w = 0; w < W; w++)
		if (!(wf[w] = malloc(GW_FRAME_MAX)))
			abort();
	mc_reseed("hq-extra");
	/* workers' frames on their own scale */
	for (size_t p = 0; p < GW_ARRAY_SIZE(params); p++) {
		struct tensor s = mc_make_dense(700, p % 3 == 2 ? SP_EDGES : SP_NONE);
		snprintf(spec, sizeof(spec), "hq:%s", params[p]);
		gw_encoder *enc = gw_encoder_from_string(spec);
		if (!enc || gw_encode_begin(enc, &s.t) < 0)
			abort();
		int n;
		for (unsigned f = 0; f < 2 && (n = gw_encode_next(enc, buf, budgets[p % 3])) > 0;
		     f++) {
			snprintf(what, sizeof(what), "own-%zu", p);
			hq_write(what, f, buf, (size_t)n);
		}
		gw_encode_abandon(enc);
		gw_encoder_free(enc);
		mc_tensor_free(&s);
	}
	/* W workers on a shared scale and seed, and their sums */
	static const char *sum_params[] = {"", "rotate=0", "bits=2", "bits=8"};
	for (size_t p = 0; p < GW_ARRAY_SIZE(sum_params); p++)
		for (int poison = 0; poison < 2; poison++) {
			struct tensor s[W];
			gw_encoder *enc[W];
			for (int w = 0; w < W; w++) {
				s[w] = mc_make_dense(300, poison && w == 1 ? SP_NONFINITE : SP_NONE);
				snprintf(spec, sizeof(spec), "hq%s%s", *sum_params[p] ? ":" : "",
					 sum_params[p]);
				enc[w] = gw_encoder_from_string(spec);
				if (!enc[w] || gw_encode_begin(enc[w], &s[w].t) < 0)
					abort();
			}
			for (unsigned f = 0; f < 3; f++) {
				float scale = f == 1 ? 1e-3f : 4e-3f;
				for (int w = 0; w < W; w++) {
					if (gw_encoder_set_shared(enc[w], scale, 1000 + f) < 0)
						abort();
					wlen[w] = gw_encode_next(enc[w], wf[w], 120);
					if (wlen[w] < 0 || (wlen[w] == 0) != (wlen[0] == 0))
						abort();
				}
				if (!wlen[0])
					break;   /* 2 bits: two frames hold it */
				gw_frame_info fi;
				if (gw_frame_peek(wf[0], (size_t)wlen[0], &fi) < 0)
					abort();
				memset(acc, 0, fi.count * sizeof(int32_t));
				gw_sum_info si, sum;
				for (int w = 0; w < W; w++) {
					if (gw_sum_add(wf[w], (size_t)wlen[w], acc, fi.start, fi.count,
						       &si) != (int)fi.count)
						abort();
					if (!w)
						sum = si;
					sum.next = GW_MAX(sum.next, si.next);
					sum.poisoned |= si.poisoned;
				}
				snprintf(what, sizeof(what), "shared-%zu-%d", p, poison);
				hq_write(what, f, wf[0], (size_t)wlen[0]);
				sum.contributors = W;
				int n = gw_sum_encode(buf, GW_FRAME_MAX, 11, fi.start, acc, fi.count,
						      &sum);
				if (n <= 0)
					abort();
				snprintf(what, sizeof(what), "sum-%zu-%d", p, poison);
				hq_write(what, f, buf, (size_t)n);
				/* as if 2^22 - 1 such sums were summed again */
				for (uint32_t i = 0; i < fi.count; i++)
					acc[i] *= (1 << 22) - 1;
				sum.contributors *= (1u << 22) - 1;
				n = gw_sum_encode(buf, GW_FRAME_MAX, 11, fi.start, acc, fi.count, &sum);
				if (n <= 0)
					abort();
				snprintf(what, sizeof(what), "wide-%zu-%d", p, poison);
				hq_write(what, f, buf, (size_t)n);
			}
			for (int w = 0; w < W; w++) {
				gw_encode_abandon(enc[w]);
				gw_encoder_free(enc[w]);
				mc_tensor_free(&s[w]);
			}
		}
	for (int w = 0; w < W; w++)
		free(wf[w]);
	free(acc);
	free(buf);
}
