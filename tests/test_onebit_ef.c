/* onebit's fused error feedback on real traces, dense and sparse: after each round the buffer holds exactly (bitwise) corrected - decoded, where corrected = g + e in float and the levels are the means of the corrected values; over 20 rounds the decoded sum plus the final buffer equals the sum of the inputs for every element, within the float rounding of the two operations per round (2^-24 of |corrected| + |e|, summed). */
#include "gw_test.h"

#include <math.h>

#define ROUNDS 20

static void run(const float *const *g, uint64_t dim, const uint32_t *keys,
		uint64_t nnz, size_t budget, const char *what)
{
	int sparse = keys != NULL;
	uint64_t n = sparse ? nnz : dim;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
	gw_ef *ef = gw_ef_create(dim);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	float *e = gw_ef_data(ef);
	float *c = malloc(n * sizeof(float));
	float *out = malloc(dim * sizeof(float));
	double *sent = calloc(dim, sizeof(double)), *input = calloc(dim, sizeof(double));
	double *tol = calloc(dim, sizeof(double));
	GW_CHECK(c && out && sent && input && tol, "out of memory");

	for (int r = 0; r < ROUNDS; r++) {
		const float *v = g[r % 4];
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = sparse ? keys[i] : i;
			c[i] = v[i] + e[k];
			input[k] += v[i];
		}
		gw_tensor t = sparse ? gw_test_sparse_tensor(9, dim, keys, 32, v, nnz)
				     : gw_test_dense_tensor(9, v, dim);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &fr));
		gw_test_fill(out, dim, 0.0f);
		gw_test_decode_all(&fr, out, dim);

		/* levels are the means of the corrected values, frame by frame */
		uint64_t at = 0;
		for (size_t j = 0; j < fr.n; j++) {
			gw_frame_info h;
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
			/* the encoder's summation order: lane i mod 8 */
			double lp[8] = {0}, ln[8] = {0};
			uint32_t np = 0;
			for (uint32_t i = 0; i < h.count; i++) {
				float x = c[at + i];
				if (x >= 0.0f) {
					lp[i % 8] += x;
					np++;
				} else {
					ln[i % 8] += x;
				}
			}
			double sp = ((lp[0] + lp[1]) + (lp[2] + lp[3])) +
				    ((lp[4] + lp[5]) + (lp[6] + lp[7]));
			double sn = ((ln[0] + ln[1]) + (ln[2] + ln[3])) +
				    ((ln[4] + ln[5]) + (ln[6] + ln[7]));
			float a = np ? (float)(sp / np) : 0.0f;
			float b = np < h.count ? (float)(sn / (h.count - np)) : 0.0f;
			for (uint32_t i = 0; i < h.count; i++) {
				uint64_t k = sparse ? keys[at + i] : at + i;
				float want = c[at + i] >= 0.0f ? a : b;
				GW_CHECK(out[k] == want, "%s round %d: element %llu decoded "
					 "to %a, mean of corrected %a", what, r,
					 (unsigned long long)k, (double)out[k], (double)want);
			}
			at += h.count;
		}
		GW_CHECK(at == n, "%s: frames hold %llu of %llu", what,
			 (unsigned long long)at, (unsigned long long)n);

		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = sparse ? keys[i] : i;
			float want = c[i] - out[k];
			GW_CHECK(gw_test_bits(e[k]) == gw_test_bits(want),
				 "%s round %d: e[%llu] = %a, corrected - decoded = %a",
				 what, r, (unsigned long long)k, (double)e[k],
				 (double)want);
			sent[k] += out[k];
			tol[k] += 0x1p-24 * (fabs((double)c[i]) + fabs((double)e[k]));
		}
		gw_test_frames_free(&fr);
	}
	double tot = 0, tot_tol = 0, worst = 0;
	for (uint64_t k = 0; k < dim; k++) {
		double diff = fabs(sent[k] + e[k] - input[k]);
		double bound = tol[k] * (1 + 1e-9) + 1e-30;
		GW_CHECK(diff <= bound, "%s: element %llu: decoded %.17g + e %.9g != "
			 "input %.17g (diff %.3g > %.3g)", what, (unsigned long long)k,
			 sent[k], (double)e[k], input[k], diff, bound);
		worst = fmax(worst, diff / bound);
		tot += sent[k] + e[k] - input[k];
		tot_tol += tol[k];
	}
	print_message("%s: %d rounds, conservation error %.3g (bound %.3g); worst "
		      "element at %.2f of its bound\n", what, ROUNDS, fabs(tot),
		      tot_tol, worst);
	free(c);
	free(out);
	free(sent);
	free(input);
	free(tol);
	gw_encoder_free(enc);
	gw_ef_free(ef);
}

static void test_dense_cnn(void **state)
{
	(void)state;
	float *g[4];
	size_t n = 0;
	for (int it = 0; it < 4; it++)
		g[it] = gw_test_load_cnn_iter(it, &n);
	run((const float *const *)g, n, NULL, 0, 1500 - 78, "cnn, 1422-byte frames");
	run((const float *const *)g, n, NULL, 0, 64, "cnn, 64-byte frames");
	for (int it = 0; it < 4; it++)
		free(g[it]);
}

/* The three logreg traces have different key sets: use the keys of the
 * first for every round, with each round's values truncated or padded. */
static void test_sparse_logreg(void **state)
{
	(void)state;
	gw_test_sparse s[3];
	for (int i = 0; i < 3; i++)
		gw_test_load_sparse(i, &s[i]);
	float *g[4];
	for (int r = 0; r < 4; r++) {
		g[r] = malloc(s[0].nnz * sizeof(float));
		GW_CHECK(g[r], "out of memory");
		const gw_test_sparse *src = &s[r % 3];
		for (size_t i = 0; i < s[0].nnz; i++)
			g[r][i] = src->vals[i % src->nnz];
	}
	run((const float *const *)g, s[0].dim, s[0].keys, s[0].nnz, 1500 - 78,
	    "logreg sparse");
	for (int r = 0; r < 4; r++)
		free(g[r]);
	for (int i = 0; i < 3; i++)
		gw_test_sparse_free(&s[i]);
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_cnn),
		cmocka_unit_test(test_sparse_logreg),
	};
	return cmocka_run_group_tests_name("onebit_ef", tests, NULL, NULL);
}
