/* Pipelined rounds (gw_member_allreduce_pipelined and its calls): tensors
 * handed over one at a time, by another thread, in any order, while the
 * round runs; each tensor's results written in place, scaled and in its
 * own type; waiters woken per tensor; the round failed on purpose
 * (cancel), or by a tensor never handed over, with a reason. Each result
 * is checked against a sum written here or against the whole-model call
 * gw_member_allreduce on the same data. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <gw/collective.h>

#include "member_job.h"
#include "gw_dtype.h"

#define NT 6
static const uint64_t sizes[NT] = {7, 1000, 33, 5003, 2, 640};
#define LAYOUT "7,1000,33,5003,2,640"
#define DIM (7 + 1000 + 33 + 5003 + 2 + 640)

/* One rank's side of a pipelined round: its tensors (each its own
 * allocation, as a framework's parameters are), the order it hands them
 * over in and how long it waits before each, and what came back. */
struct side {
	gw_member *m;
	uint32_t tag;
	void *t[NT];
	int dtype[NT];
	float scale;
	unsigned order[NT];
	unsigned delay_us;
	int cancel_after;        /* >= 0: cancel the round after so many */
	unsigned skip;           /* a tensor never handed over (NT: none) */
	int rc_round, rc_ready, rc_wait[NT];
	char detail[256], wait_detail[256];
	uint64_t info[GW_MI_N];
	uint64_t done_ns[NT], handed_ns[NT];
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run(void *p)
{
	struct side *s = p;
	s->rc_round = gw_member_allreduce_pipelined(s->m, s->tag, s->info);
	snprintf(s->detail, sizeof(s->detail), "%s", gw_error_detail());
	return NULL;
}

static void *hand(void *p)
{
	struct side *s = p;
	for (unsigned i = 0; i < NT; i++) {
		if ((int)i == s->cancel_after) {
			gw_member_round_cancel(s->m, s->tag, GW_EINVAL);
			return NULL;
		}
		unsigned t = s->order[i];
		if (s->delay_us)
			usleep(s->delay_us);
		if (t == s->skip)
			continue;
		s->handed_ns[t] = now_ns();
		int rc = gw_member_tensor_ready(s->m, s->tag, t, s->t[t], s->dtype[t], s->scale);
		if (rc < 0 && !s->rc_ready)
			s->rc_ready = rc;
	}
	return NULL;
}

static void *wait_all(void *p)
{
	struct side *s = p;
	for (unsigned i = 0; i < NT; i++) {
		s->rc_wait[i] = gw_member_tensor_wait(s->m, s->tag, i, 20000);
		s->done_ns[i] = now_ns();
		if (s->rc_wait[i] < 0 && !s->wait_detail[0])
			snprintf(s->wait_detail, sizeof(s->wait_detail), "%s", gw_error_detail());
	}
	return NULL;
}

/* One pipelined round of every side, each on three threads. */
static void pipe_round(struct side *s, unsigned w)
{
	pthread_t th[WMAX][3];
	for (unsigned r = 0; r < w; r++) {
		s[r].rc_round = s[r].rc_ready = 0;
		s[r].detail[0] = s[r].wait_detail[0] = 0;
		assert_int_equal(pthread_create(&th[r][0], NULL, run, &s[r]), 0);
		assert_int_equal(pthread_create(&th[r][1], NULL, hand, &s[r]), 0);
		assert_int_equal(pthread_create(&th[r][2], NULL, wait_all, &s[r]), 0);
	}
	for (unsigned r = 0; r < w; r++)
		for (int k = 0; k < 3; k++)
			pthread_join(th[r][k], NULL);
}

static uint64_t start_of(unsigned t)
{
	uint64_t at = 0;
	for (unsigned i = 0; i < t; i++)
		at += sizes[i];
	return at;
}

static void sides_init(struct side *s, struct job *j, int dtype, float scale)
{
	for (unsigned r = 0; r < j->w; r++) {
		memset(&s[r], 0, sizeof(s[r]));
		s[r].m = j->m[r];
		s[r].scale = scale;
		s[r].cancel_after = -1;
		s[r].skip = NT;
		for (unsigned t = 0; t < NT; t++) {
			s[r].dtype[t] = dtype;
			s[r].t[t] = malloc(sizes[t] * sizeof(float));
			assert_non_null(s[r].t[t]);
			s[r].order[t] = t;
		}
	}
}

/* Two members with opts, and their sides: f32, scale 1, every tensor
 * zero, the round tagged tag. */
static void zero_sides(struct job *j, struct side *s, const char *const *opts, uint32_t tag)
{
	job_open(j, 2, DIM, opts);
	sides_init(s, j, GW_DTYPE_F32, 1.0f);
	for (unsigned r = 0; r < 2; r++) {
		s[r].tag = tag;
		for (unsigned t = 0; t < NT; t++)
			memset(s[r].t[t], 0, sizes[t] * sizeof(float));
	}
}

static void sides_free(struct side *s, unsigned w)
{
	for (unsigned r = 0; r < w; r++)
		for (unsigned t = 0; t < NT; t++)
			free(s[r].t[t]);
}

static void sides_ok(const struct side *s, unsigned w)
{
	for (unsigned r = 0; r < w; r++) {
		if (s[r].rc_round || s[r].rc_ready)
			fail_msg("rank %u: round %d, hand-over %d (%s)", r, s[r].rc_round,
				 s[r].rc_ready, s[r].detail);
		for (unsigned t = 0; t < NT; t++)
			if (s[r].rc_wait[t])
				fail_msg("rank %u tensor %u: wait %d (%s)", r, t, s[r].rc_wait[t],
					 s[r].wait_detail);
	}
}

/* Raw both ways, W = 3, each rank handing its tensors over in its own
 * order with pauses between them: every tensor holds the exact sum in rank
 * order times the scale, on every rank, in two rounds (the second reuses
 * the first's state), and the info counts every chunk. */
static void test_raw_any_order_is_exact(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, NULL};
	static const unsigned orders[3][NT] = {{0, 1, 2, 3, 4, 5}, {5, 4, 3, 2, 1, 0},
					       {3, 0, 5, 1, 4, 2}};
	struct job j;
	job_open(&j, 3, DIM, opts);
	struct side s[3];
	sides_init(s, &j, GW_DTYPE_F32, 0.25f);
	for (uint32_t round = 1; round <= 2; round++) {
		for (unsigned r = 0; r < 3; r++) {
			s[r].tag = round;
			s[r].delay_us = 2000;
			memcpy(s[r].order, orders[(r + round) % 3], sizeof(s[r].order));
			for (unsigned t = 0; t < NT; t++)
				for (uint64_t i = 0; i < sizes[t]; i++)
					((float *)s[r].t[t])[i] = value(r + 5 * round, start_of(t) + i);
		}
		pipe_round(s, 3);
		sides_ok(s, 3);
		for (unsigned t = 0; t < NT; t++)
			for (uint64_t i = 0; i < sizes[t]; i++) {
				uint64_t at = start_of(t) + i;
				float want = (0.0f + value(5 * round, at) + value(1 + 5 * round, at) +
					      value(2 + 5 * round, at)) * 0.25f;
				for (unsigned r = 0; r < 3; r++)
					if (((float *)s[r].t[t])[i] != want)
						fail_msg("round %u rank %u tensor %u [%llu]: %g, want %g",
							 round, r, t, (unsigned long long)i,
							 (double)((float *)s[r].t[t])[i], (double)want);
			}
		for (unsigned r = 0; r < 3; r++)
			assert_int_equal(s[r].info[GW_MI_CHUNKS], 1 + 5 + 1 + 26 + 1 + 4);
	}
	sides_free(s, 3);
	job_close(&j);
}

/* A lossy codec with error feedback (3LC up and down, int8 up): the
 * pipelined call and the whole-model call on the same data give
 * bit-identical results, round after round, so the error buffers (kept by
 * element of the layout in both) evolve the same. */
static void pipelined_matches_flat(const char *up, const char *down)
{
	const char *const opts[] = {"up", up, "down", down, "chunk-elems", "320",
				    "layout", LAYOUT, NULL};
	struct job a, b;
	job_open(&a, 2, DIM, opts);
	job_open(&b, 2, DIM, opts);
	struct side s[2];
	sides_init(s, &b, GW_DTYPE_F32, 1.0f);
	for (uint32_t round = 1; round <= 4; round++) {
		for (unsigned r = 0; r < 2; r++) {
			s[r].tag = round;
			for (unsigned t = 0; t < NT; t++)
				for (uint64_t i = 0; i < sizes[t]; i++) {
					float v = value(r + 3 * round, start_of(t) + i) *
						  (t == 3 ? 1e-2f : 1.0f);
					((float *)s[r].t[t])[i] = v;
					a.buf[r][start_of(t) + i] = v;
				}
		}
		job_round(&a, 3);
		for (unsigned r = 0; r < 2; r++)
			if (a.rc[r])
				fail_msg("flat rank %u: %d (%s)", r, a.rc[r], a.detail[r]);
		pipe_round(s, 2);
		sides_ok(s, 2);
		for (unsigned r = 0; r < 2; r++)
			for (unsigned t = 0; t < NT; t++)
				if (memcmp(s[r].t[t], a.buf[r] + start_of(t), sizes[t] * sizeof(float)))
					fail_msg("%s/%s round %u rank %u tensor %u: pipelined and "
						 "whole-model results differ", up, down, round, r, t);
	}
	sides_free(s, 2);
	job_close(&a);
	job_close(&b);
}

static void test_3lc_pipelined_equals_flat(void **state)
{
	(void)state;
	pipelined_matches_flat("3lc:sparsity=1.5", "3lc");
}

static void test_int8_pipelined_equals_flat(void **state)
{
	(void)state;
	pipelined_matches_flat("int8", "raw");
}

/* bf16 and fp16 tensors (the types of models cast with .bfloat16() and
 * .half()), raw: the float32 sum of their values, scaled, rounded once to
 * the tensor's type. Values include what each type rounds: halves'
 * subnormals, bf16's 8-bit mantissa. */
static void test_bf16_fp16_tensors(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, NULL};
	struct job j;
	job_open(&j, 2, DIM, opts);
	struct side s[2];
	sides_init(s, &j, GW_DTYPE_F32, 0.5f);
	for (unsigned r = 0; r < 2; r++) {
		s[r].tag = 7;
		for (unsigned t = 0; t < NT; t++) {
			s[r].dtype[t] = t % 2 ? GW_DTYPE_BF16 : GW_DTYPE_F16;
			uint16_t *h = s[r].t[t];
			for (uint64_t i = 0; i < sizes[t]; i++) {
				float v = value(r, start_of(t) + i) * (i % 3 ? 1.0f : 1e-5f);
				h[i] = t % 2 ? gw_f32_to_bf16(v) : gw_f32_to_f16(v);
			}
		}
	}
	uint16_t *want[NT];
	for (unsigned t = 0; t < NT; t++) {
		want[t] = malloc(sizes[t] * sizeof(uint16_t));
		const uint16_t *a = s[0].t[t], *b = s[1].t[t];
		for (uint64_t i = 0; i < sizes[t]; i++)
			want[t][i] = t % 2
				? gw_f32_to_bf16((0.0f + gw_bf16_to_f32(a[i]) + gw_bf16_to_f32(b[i])) * 0.5f)
				: gw_f32_to_f16((0.0f + gw_f16_to_f32(a[i]) + gw_f16_to_f32(b[i])) * 0.5f);
	}
	pipe_round(s, 2);
	sides_ok(s, 2);
	for (unsigned r = 0; r < 2; r++)
		for (unsigned t = 0; t < NT; t++)
			if (memcmp(s[r].t[t], want[t], sizes[t] * sizeof(uint16_t)))
				fail_msg("rank %u tensor %u (%s): not the rounded sum", r, t,
					 t % 2 ? "bf16" : "fp16");
	for (unsigned t = 0; t < NT; t++)
		free(want[t]);
	sides_free(s, 2);
	job_close(&j);
}

/* The conversions themselves, on every half and bf16 value: widening then
 * narrowing gives the value back (NaNs stay NaN), and narrowing rounds to
 * nearest even (midpoints between neighbours). */
static void test_dtype_conversions_round_trip(void **state)
{
	(void)state;
	for (uint32_t h = 0; h < 0x10000u; h++) {
		float f = gw_f16_to_f32((uint16_t)h), b = gw_bf16_to_f32((uint16_t)h);
		if (isnan(f))
			assert_true(isnan(gw_f16_to_f32(gw_f32_to_f16(f))));
		else if (gw_f32_to_f16(f) != h)
			fail_msg("fp16 %04x -> %g -> %04x", h, (double)f, gw_f32_to_f16(f));
		if (isnan(b))
			assert_true(isnan(gw_bf16_to_f32(gw_f32_to_bf16(b))));
		else if (gw_f32_to_bf16(b) != h)
			fail_msg("bf16 %04x -> %g -> %04x", h, (double)b, gw_f32_to_bf16(b));
	}
	assert_int_equal(gw_f32_to_f16(1.0f + 0x1p-11f), 0x3c00);   /* tie: even */
	assert_int_equal(gw_f32_to_f16(1.0f + 0x1.8p-11f), 0x3c01);
	assert_int_equal(gw_f32_to_f16(65520.0f), 0x7c00);           /* to inf */
	assert_int_equal(gw_f32_to_f16(65519.0f), 0x7bff);
	assert_int_equal(gw_f32_to_f16(0x1p-25f), 0x0000);           /* tie: 0 */
	assert_int_equal(gw_f32_to_f16(0x1.8p-25f), 0x0001);
	assert_int_equal(gw_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
	assert_int_equal(gw_f32_to_bf16(1.0f + 0x1.8p-8f), 0x3f81);
}

/* A round the caller cancels (a tensor it cannot hand over) ends at once
 * on that rank with the caller's code, and its waiters wake with it; the
 * peer, which never gets that rank's chunks, times out and says so. */
static void test_cancel_fails_round_and_waiters(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, "timeout-ms", "1500", NULL};
	struct job j;
	struct side s[2];
	zero_sides(&j, s, opts, 3);
	s[0].cancel_after = 2;
	uint64_t t0 = now_ns();
	pipe_round(s, 2);
	assert_int_equal(s[0].rc_round, GW_EINVAL);
	for (unsigned t = 0; t < NT; t++)
		assert_true(s[0].rc_wait[t] == GW_EINVAL || s[0].rc_wait[t] == GW_OK);
	assert_int_equal(s[0].rc_wait[NT - 1], GW_EINVAL);
	assert_true(s[1].rc_round < 0);
	assert_int_equal(s[1].rc_wait[NT - 1], s[1].rc_round);
	assert_true(now_ns() - t0 < 10000000000ull);
	sides_free(s, 2);
	job_close(&j);
}

/* A tensor never handed over: the round gives up at its timeout and names
 * that tensor, not a shard. */
static void test_missing_tensor_named(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, "timeout-ms", "800", NULL};
	struct job j;
	struct side s[2];
	zero_sides(&j, s, opts, 9);
	s[0].skip = s[1].skip = 3;
	pipe_round(s, 2);
	for (unsigned r = 0; r < 2; r++) {
		assert_int_equal(s[r].rc_round, GW_ETIMEDOUT);
		if (!strstr(s[r].detail, "tensor 3 of 6 was not handed over"))
			fail_msg("rank %u: '%s'", r, s[r].detail);
		assert_int_equal(s[r].rc_wait[0], GW_OK);   /* before it in the layout */
		assert_int_equal(s[r].rc_wait[3], GW_ETIMEDOUT);
		if (!strstr(s[r].wait_detail, "tensor 3"))
			fail_msg("rank %u waiter: '%s'", r, s[r].wait_detail);
	}
	sides_free(s, 2);
	job_close(&j);
}

/* Bad arguments are refused by name, before anything is sent; a job
 * without a layout has no pipelined rounds. */
static void test_bad_arguments_refused(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "layout", "10,20", NULL};
	struct job j;
	job_open(&j, 1, 30, opts);
	float x[30];
	gw_member *m = j.m[0];
	assert_int_equal(gw_member_tensor_ready(m, 0, 0, x, 0, 1.0f), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "tag"));
	assert_int_equal(gw_member_tensor_ready(m, 1, 2, x, 0, 1.0f), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "tensor: 2, but the layout has 2"));
	assert_int_equal(gw_member_tensor_ready(m, 1, 0, NULL, 0, 1.0f), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "data"));
	assert_int_equal(gw_member_tensor_ready(m, 1, 0, x, 7, 1.0f), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "dtype"));
	assert_int_equal(gw_member_tensor_ready(m, 1, 0, x, 0, NAN), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "scale"));
	assert_int_equal(gw_member_round_cancel(m, 1, 3), GW_EINVAL);
	assert_int_equal(gw_member_tensor_ready(m, 1, 0, x, 0, 1.0f), GW_OK);
	assert_int_equal(gw_member_tensor_ready(m, 1, 0, x, 0, 1.0f), GW_ESTATE);
	assert_non_null(strstr(gw_error_detail(), "twice"));
	assert_int_equal(gw_member_tensor_ready(m, 1, 1, x + 10, 0, 1.0f), GW_OK);
	assert_int_equal(gw_member_allreduce_pipelined(m, 1, NULL), GW_OK);
	assert_int_equal(gw_member_tensor_wait(m, 1, 1, 0), GW_OK);
	job_close(&j);

	static const char *const flat[] = {"up", "raw", NULL};
	job_open(&j, 1, 30, flat);
	assert_int_equal(gw_member_tensor_ready(j.m[0], 1, 0, x, 0, 1.0f), GW_EUNSUPPORTED);
	assert_non_null(strstr(gw_error_detail(), "layout"));
	assert_int_equal(gw_member_allreduce_pipelined(j.m[0], 1, NULL), GW_EUNSUPPORTED);
	job_close(&j);
}

/* Loss-tolerant, one worker late: the other's chunks finish without it
 * (deadline), and the late one gets results for chunks it has not encoded
 * yet. It drops them (its values still sit in that memory), sends its
 * UPs when its tensors come, and gets the stored results back, left out:
 * both hold the prompt worker's values only, and the late worker's mass
 * stays in its error buffer for the next round, which both then finish
 * with everyone: the sum of round 2 plus the late worker's round 1. */
static void test_late_worker_keeps_mass(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", "chunk-elems", "200",
					   "layout", LAYOUT, "mode", "loss-tolerant",
					   "deadline-us", "20000", NULL};
	struct job j;
	job_open(&j, 2, DIM, opts);
	struct side s[2];
	sides_init(s, &j, GW_DTYPE_F32, 1.0f);
	for (uint32_t round = 1; round <= 2; round++) {
		for (unsigned r = 0; r < 2; r++) {
			s[r].tag = round;
			s[r].delay_us = r == 1 && round == 1 ? 60000 : 0;
			for (unsigned t = 0; t < NT; t++)
				for (uint64_t i = 0; i < sizes[t]; i++)
					((float *)s[r].t[t])[i] = (float)(int)((r + 1) * (i % 7) + round);
		}
		pipe_round(s, 2);
		sides_ok(s, 2);
		for (unsigned t = 0; t < NT; t++)
			for (uint64_t i = 0; i < sizes[t]; i++) {
				float a = (float)(int)(1 * (i % 7) + round);
				float b = (float)(int)(2 * (i % 7) + round);
				float want = round == 1 ? a : a + b + (float)(int)(2 * (i % 7) + 1);
				for (unsigned r = 0; r < 2; r++)
					if (((float *)s[r].t[t])[i] != want)
						fail_msg("round %u rank %u tensor %u [%llu]: %g, want %g",
							 round, r, t, (unsigned long long)i,
							 (double)((float *)s[r].t[t])[i], (double)want);
			}
		if (round == 1)
			assert_int_equal(s[1].info[GW_MI_LEFT_OUT], s[1].info[GW_MI_CHUNKS]);
	}
	sides_free(s, 2);
	job_close(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dtype_conversions_round_trip),
		cmocka_unit_test(test_bad_arguments_refused),
		cmocka_unit_test(test_raw_any_order_is_exact),
		cmocka_unit_test(test_3lc_pipelined_equals_flat),
		cmocka_unit_test(test_int8_pipelined_equals_flat),
		cmocka_unit_test(test_bf16_fp16_tensors),
		cmocka_unit_test(test_cancel_fails_round_and_waiters),
		cmocka_unit_test(test_missing_tensor_named),
		cmocka_unit_test(test_late_worker_keeps_mass),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
