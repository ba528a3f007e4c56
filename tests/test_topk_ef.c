/* topk's fused error feedback on real traces, dense and sparse: each round sends the k largest |g + e| (corrected in float), a sent coordinate's buffer is exactly 0 and an unsent one holds exactly its corrected value; over 20 rounds the decoded sum plus the final buffer equals the sum of the inputs for every coordinate, within the rounding of g + e (2^-24 |corrected| per round, summed); a tensor abandoned after its first frame keeps the unsent selected values in the buffer. */
#include "gw_test.h"

#include <math.h>

#define ROUNDS 20

static void run(const float *const *g, uint64_t dim, const uint32_t *keys,
		uint64_t nnz, double fraction, size_t budget, const char *what)
{
	int sparse = keys != NULL;
	uint64_t n = sparse ? nnz : dim;
	uint64_t k = (uint64_t)ceil(fraction * (double)n);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, fraction));
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
			uint64_t key = sparse ? keys[i] : i;
			c[i] = v[i] + e[key];
			input[key] += v[i];
			tol[key] += 0x1p-24 * fabs((double)c[i]);
		}
		gw_tensor t = sparse ? gw_test_sparse_tensor(9, dim, keys, 32, v, nnz)
				     : gw_test_dense_tensor(9, v, dim);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &fr));
		uint64_t count = 0;
		for (size_t j = 0; j < fr.n; j++) {
			gw_frame_info h;
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
			count += h.count;
		}
		GW_CHECK(count == k, "%s round %d: %llu sent, k %llu", what, r,
			 (unsigned long long)count, (unsigned long long)k);
		/* NaN marks "not sent": decoding adds to it and keeps NaN */
		gw_test_fill(out, dim, NAN);
		for (uint64_t i = 0; i < n; i++)
			out[sparse ? keys[i] : i] = -0.0f;
		gw_test_decode_all(&fr, out, dim);
		float min_sent = INFINITY, max_unsent = 0;
		uint64_t nsent = 0;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t key = sparse ? keys[i] : i;
			/* a sent -0.0 is indistinguishable from unsent 0: both
			 * leave e == 0 == c, so either reading is right */
			bool was_sent = gw_test_bits(e[key]) == 0 && c[i] != 0.0f;
			if (was_sent) {
				GW_CHECK(out[key] == c[i], "%s round %d: key %llu: e 0 "
					 "but decoded %a, corrected %a", what, r,
					 (unsigned long long)key, (double)out[key],
					 (double)c[i]);
				min_sent = fminf(min_sent, fabsf(c[i]));
				nsent++;
			} else {
				GW_CHECK(gw_test_bits(e[key]) == gw_test_bits(c[i]) ||
						 (c[i] == 0.0f && e[key] == 0.0f),
					 "%s round %d: key %llu: e %a, corrected %a",
					 what, r, (unsigned long long)key, (double)e[key],
					 (double)c[i]);
				if (out[key] != 0.0f)
					GW_CHECK(0, "%s round %d: unsent key %llu decoded %a",
						 what, r, (unsigned long long)key,
						 (double)out[key]);
				max_unsent = fmaxf(max_unsent, fabsf(c[i]));
			}
			sent[key] += out[key];
		}
		GW_CHECK(nsent <= k && min_sent >= max_unsent,
			 "%s round %d: %llu sent, smallest sent |c| %a < largest "
			 "unsent %a", what, r, (unsigned long long)nsent,
			 (double)min_sent, (double)max_unsent);
		gw_test_frames_free(&fr);
	}
	double tot = 0, tot_tol = 0, worst = 0;
	for (uint64_t key = 0; key < dim; key++) {
		double diff = fabs(sent[key] + e[key] - input[key]);
		double bound = tol[key] * (1 + 1e-9) + 1e-30;
		GW_CHECK(diff <= bound, "%s: coordinate %llu: decoded %.17g + e %.9g "
			 "!= input %.17g (diff %.3g > %.3g)", what,
			 (unsigned long long)key, sent[key], (double)e[key],
			 input[key], diff, bound);
		worst = fmax(worst, diff / bound);
		tot += sent[key] + e[key] - input[key];
		tot_tol += tol[key];
	}
	print_message("%s: %d rounds, k %llu: conservation error %.3g (bound %.3g); "
		      "worst coordinate at %.2f of its bound\n", what, ROUNDS,
		      (unsigned long long)k, fabs(tot), tot_tol, worst);
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
	run((const float *const *)g, n, NULL, 0, 0.01, 1500 - 78, "cnn f 0.01");
	run((const float *const *)g, n, NULL, 0, 0.1, 64, "cnn f 0.1, 64-byte frames");
	for (int it = 0; it < 4; it++)
		free(g[it]);
}

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
	run((const float *const *)g, s[0].dim, s[0].keys, s[0].nnz, 0.01,
	    1500 - 78, "logreg sparse f 0.01");
	for (int r = 0; r < 4; r++)
		free(g[r]);
	for (int i = 0; i < 3; i++)
		gw_test_sparse_free(&s[i]);
}

/* Stopping after the first frame: only what was framed leaves the buffer. */
static void test_abandoned_tensor(void **state)
{
	(void)state;
	enum { N = 1000 };
	float v[N];
	for (int i = 0; i < N; i++)
		v[i] = (float)((i * 37) % 101) - 50.0f;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.2));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 10));
	gw_ef *ef = gw_ef_create(N);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_tensor t = gw_test_dense_tensor(1, v, N);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	uint8_t buf[1024];
	int len = gw_encode_next(enc, buf, sizeof(buf));
	GW_CHECK(len > 0, "first frame: %d", len);
	float out[N] = {0};
	GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, N), 10, "first frame");
	const float *e = gw_ef_data(ef);
	int zeros = 0;
	for (int i = 0; i < N; i++) {
		if (out[i] != 0.0f) {
			GW_CHECK(gw_test_bits(e[i]) == 0, "sent %d: e %a", i, (double)e[i]);
			zeros++;
		} else {
			GW_CHECK(gw_test_bits(e[i]) == gw_test_bits(v[i]),
				 "unsent %d: e %a, v %a", i, (double)e[i], (double)v[i]);
		}
	}
	GW_CHECK(zeros == 10, "%d values sent", zeros);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_cnn),
		cmocka_unit_test(test_sparse_logreg),
		cmocka_unit_test(test_abandoned_tensor),
	};
	return cmocka_run_group_tests_name("topk_ef", tests, NULL, NULL);
}
