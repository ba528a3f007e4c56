/* A dense job's tensor layout (gw_dense_job, the member's "layout",
 * "min-elems" and "down-momentum"): chunks that never straddle tensors, a
 * compression context per tensor, tensors sent raw below min_elems, the
 * layout in the job digest, and momentum at the shards with the state
 * change sent down. Each result is checked against a model written here,
 * from the paper's definitions, not from the library's code. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "member_job.h"

/* Tensors of very different scales: with one context for the whole model
 * (one m), the small ones would be all zeros at s = 1.9. */
#define NT 5
static const uint64_t sizes[NT] = {7, 1000, 33, 5003, 2};
static const float scale[NT] = {1.0f, 1e-3f, 5.0f, 2e-2f, 1e-4f};
#define LAYOUT "7,1000,33,5003,2"
#define DIM (7 + 1000 + 33 + 5003 + 2)

static void fill(struct job *j, int round)
{
	for (unsigned r = 0; r < j->w; r++) {
		uint64_t at = 0;
		for (int t = 0; t < NT; t++)
			for (uint64_t i = 0; i < sizes[t]; i++, at++)
				j->buf[r][at] = scale[t] * value(r + 7u * (unsigned)round, at);
	}
}

static void all_ok(const struct job *j)
{
	for (unsigned r = 0; r < j->w; r++)
		if (j->rc[r])
			fail_msg("rank %u: %d (%s)", r, j->rc[r], j->detail[r]);
}

/* Raw both ways: the exact sum in rank order, and one chunk count per
 * tensor (chunk-elems 200: 1 + 5 + 1 + 26 + 1 chunks; 5 + 1 + 26 with
 * min-elems 40, whose three small tensors are one chunk each anyway). */
static void test_raw_layout_is_exact_and_chunked_per_tensor(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, "min-elems", "40", NULL};
	struct job j;
	job_open(&j, 2, DIM, opts);
	for (int round = 0; round < 2; round++) {
		fill(&j, round);
		float want[DIM];
		for (uint64_t i = 0; i < DIM; i++)
			want[i] = 0.0f + j.buf[0][i] + j.buf[1][i];
		job_round(&j, 3);
		all_ok(&j);
		for (unsigned r = 0; r < j.w; r++) {
			assert_int_equal(j.info[r][GW_MI_CHUNKS], 1 + 5 + 1 + 26 + 1);
			if (memcmp(j.buf[r], want, sizeof(want)))
				fail_msg("rank %u round %d: not the exact sum", r, round);
		}
	}
	job_close(&j);
}

/* 3LC up at s = 1.9 (raw down, so the result is the sum of what the
 * workers' frames decode to): per tensor t and worker, m = s max|g| over
 * t (the first round has no error), each value becomes m round(g / m)
 * with |g / m| <= 1 / s < 0.53, so +-m exactly where |g| > m / 2, else 0.
 * With one m for the whole model (the old behaviour), tensors 1, 3 and 4
 * would be all zeros. */
static void test_3lc_m_per_tensor(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "3lc:sparsity=1.9", "down", "raw",
					   "chunk-elems", "320", "layout", LAYOUT, NULL};
	struct job j;
	job_open(&j, 2, DIM, opts);
	fill(&j, 0);
	static float in[2][DIM];
	memcpy(in[0], j.buf[0], sizeof(in[0]));
	memcpy(in[1], j.buf[1], sizeof(in[1]));
	job_round(&j, 3);
	all_ok(&j);
	uint64_t at = 0;
	for (int t = 0; t < NT; at += sizes[t], t++) {
		float m[2];
		for (unsigned w = 0; w < 2; w++) {
			float mx = 0.0f;
			for (uint64_t i = 0; i < sizes[t]; i++)
				mx = fmaxf(mx, fabsf(in[w][at + i]));
			m[w] = 1.9f * mx;
		}
		unsigned nonzero = 0;
		for (uint64_t i = 0; i < sizes[t]; i++) {
			float want = 0.0f;
			for (unsigned w = 0; w < 2; w++) {
				float g = in[w][at + i];
				/* Ties go to 0; away from ties, the quantizer's m and
				 * ours may differ in the last bit only. */
				if (fabsf(fabsf(g) - m[w] / 2) < 1e-5f * m[w])
					goto next;
				want += fabsf(g) > m[w] / 2 ? copysignf(m[w], g) : 0.0f;
			}
			nonzero += want != 0.0f;
			for (unsigned r = 0; r < 2; r++)
				if (fabsf(j.buf[r][at + i] - want) > 1e-5f * (m[0] + m[1]))
					fail_msg("tensor %d elem %llu rank %u: %g, the model says %g", t,
						 (unsigned long long)i, r, j.buf[r][at + i], want);
next:;
		}
		if (!nonzero)
			fail_msg("tensor %d: nothing sent, as with one m for the model", t);
	}
	job_close(&j);
}

/* A worker whose layout differs is named by the digest in its first call:
 * its shard's and its own calls fail with GW_ECONFIG naming the layout. */
static void test_other_layout_is_refused_by_name(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "timeout-ms", "5000",
					   "layout", LAYOUT, NULL};
	static const char *const other[] = {"layout", "7,1000,33,5000,5", NULL};
	struct job j;
	job_open_odd(&j, 2, DIM, opts, 1, other);
	fill(&j, 0);
	job_round(&j, 3);
	int named = 0;
	for (unsigned r = 0; r < 2; r++) {
		assert_int_not_equal(j.rc[r], 0);
		named += j.rc[r] == GW_ECONFIG && strstr(j.detail[r], "layout:") != NULL;
	}
	if (!named)
		fail_msg("no rank names the layout: '%s' / '%s'", j.detail[0], j.detail[1]);
	job_close(&j);
}

/* down-momentum 0.9, raw both ways: every round each rank gets the
 * shard's v <- 0.9 v + (0 + g0 + g1), bit for bit; the workers' replicas
 * are identical. */
static void test_state_change_down_is_momentum_at_the_shard(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, "down-momentum", "0.9", NULL};
	struct job j;
	job_open(&j, 2, DIM, opts);
	static float v[DIM];
	memset(v, 0, sizeof(v));
	for (int round = 0; round < 3; round++) {
		fill(&j, round);
		for (uint64_t i = 0; i < DIM; i++)
			v[i] = 0.9f * v[i] + (0.0f + j.buf[0][i] + j.buf[1][i]);
		job_round(&j, 3);
		all_ok(&j);
		for (unsigned r = 0; r < 2; r++)
			if (memcmp(j.buf[r], v, sizeof(v)))
				fail_msg("round %d rank %u: not the shard's momentum", round, r);
	}
	job_close(&j);
}

/* The member refuses bad layout options by name, when set. */
static void test_bad_layout_options_refused(void **state)
{
	(void)state;
	static const char *const bad[][3] = {
		{"layout", "7,,3", "layout: tensor 1: '' is not"},
		{"layout", "7,0", "layout: tensor 1: '0' is not"},
		{"layout", "-3", "layout: tensor 0: '-3' is not"},
		{"layout", "12x", "layout: tensor 0: '12x' is not"},
		{"min-elems", "-1", "min-elems:"},
		{"down-momentum", "1", "down-momentum: '1' is not a number in [0, 1)"},
		{"down-momentum", "x", "down-momentum: 'x'"},
	};
	gw_member *m = gw_member_new();
	assert_non_null(m);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gw_member_set(m, bad[i][0], bad[i][1]), GW_EINVAL);
		if (!strstr(gw_error_detail(), bad[i][2]))
			fail_msg("%s=%s: '%s' lacks '%s'", bad[i][0], bad[i][1], gw_error_detail(),
				 bad[i][2]);
	}
	/* Sizes that do not add up to dim: refused at connect, by name. */
	assert_int_equal(gw_member_set(m, "layout", "10,20"), 0);
	assert_int_equal(gw_member_open(m, 0, 1), 0);
	char ep[64];
	assert_int_equal(gw_member_endpoint(m, ep, sizeof(ep)), 0);
	assert_int_equal(gw_member_connect(m, 31, ep), GW_EINVAL);
	if (!strstr(gw_error_detail(), "the sizes add up to 30, not dim (31)"))
		fail_msg("connect: '%s'", gw_error_detail());
	gw_member_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_layout_is_exact_and_chunked_per_tensor),
		cmocka_unit_test(test_3lc_m_per_tensor),
		cmocka_unit_test(test_other_layout_is_refused_by_name),
		cmocka_unit_test(test_state_change_down_is_momentum_at_the_shard),
		cmocka_unit_test(test_bad_layout_options_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
