/* gw_member (gw/member.h) and the co-located shard (gw_agg_spawn): the
 * flat surface that framework bindings call. Members of one job run on
 * threads of this process, each with its own sockets and shard thread. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <gw/member.h>

#include "member_job.h"

static void test_set_refuses_bad_options(void **state)
{
	(void)state;
	static const char *const bad[][3] = {
		{"up", "nope", "up: unknown codec 'nope'"},
		{"down", "3lc:sparsity=5", "down: parameter sparsity"},
		{"mode", "fast", "mode: 'fast'"},
		{"timeout-ms", "0", "timeout-ms: '0'"},
		{"liveness-ms", "5", "liveness-ms: 5 is below 10"},
		{"startup-ms", "5", "startup-ms: 5 is below 10"},
		{"window", "12x", "window: '12x'"},
		{"shards", "1.2.3.4", "shards: '1.2.3.4'"},
		{"backend", "verbs", "backend: 'verbs' is not a backend built here ("},
		{"local", "localhost", "local: 'localhost'"},
		{"key", "00ff", "key: not 64 hex digits"},
		{"sketch-momentum", "1", "sketch-momentum: '1'"},
		{"wait", "busy", "wait: 'busy' is not spin or sleep"},
		{"gso", "2", "gso: '2' is not 0 or 1"},
		{"dim", "10", "dim: not an option ("},   /* the CLIs' alone */
		{"colour", "red", "colour: not an option"},
	};
	gw_member *m = gw_member_new();
	assert_non_null(m);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(gw_member_set(m, bad[i][0], bad[i][1]), GW_EINVAL);
		if (!strstr(gw_error_detail(), bad[i][2]))
			fail_msg("%s=%s: detail '%s' lacks '%s'", bad[i][0], bad[i][1],
				 gw_error_detail(), bad[i][2]);
	}
	assert_int_equal(gw_member_open(m, 2, 2), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "rank: 2"));
	assert_int_equal(gw_member_connect(m, 10, "127.0.0.1:1"), GW_ESTATE);
	assert_int_equal(gw_member_open(m, 0, 2), 0);
	assert_int_equal(gw_member_set(m, "up", "raw"), GW_ESTATE);
	/* Co-located: one endpoint per worker. */
	assert_int_equal(gw_member_connect(m, 10, "127.0.0.1:1"), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "1 endpoints for 2 workers' co-located shards"));
	float x = 0;
	assert_int_equal(gw_member_allreduce(m, &x, NULL), GW_ESTATE);
	gw_member_free(m);
}

/* "eal" and "shard-eal" split on spaces into a buffer of their own: words
 * one space apart fill it to the last byte (ASan, which the test suite runs
 * this under, catches a byte past it), and 32 words are refused. */
static void test_eal_words_fit_and_are_bounded(void **state)
{
	(void)state;
	gw_member *m = gw_member_new();
	assert_non_null(m);
	char words[31 * 3 + 1] = "", more[32 * 3 + 1] = "";
	for (int i = 0; i < 31; i++)
		strcat(words, i ? " -x" : "-x");
	snprintf(more, sizeof(more), "%s -x", words);
	static const char *const ok[] = {"a", "-l 0", "  -l   0  ", "--no-huge --no-pci -m 64"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		assert_int_equal(gw_member_set(m, "eal", ok[i]), 0);
		assert_int_equal(gw_member_set(m, "shard-eal", ok[i]), 0);
	}
	assert_int_equal(gw_member_set(m, "eal", words), 0);
	assert_int_equal(gw_member_set(m, "eal", more), GW_EINVAL);
	assert_non_null(strstr(gw_error_detail(), "eal: more than 31 arguments"));
	gw_member_free(m);
}

/* Raw, W = 3: every rank ends with 0 + g0 + g1 + g2, in rank order.
 * Rank 1's process waits and sends its own way (wait, gso are this
 * process's, not the job's). */
static void test_colocated_sum_in_rank_order(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "raw", "down", "raw", NULL};
	static const char *const own[] = {"wait", "sleep", "gso", "0", NULL};
	struct job j;
	job_open_odd(&j, 3, 20011, opts, 1, own);
	for (int round = 0; round < 2; round++) {
		for (unsigned r = 0; r < j.w; r++)
			for (uint64_t i = 0; i < j.dim; i++)
				j.buf[r][i] = value(r + (unsigned)round, i);
		job_round(&j, 7);
		for (unsigned r = 0; r < j.w; r++) {
			assert_int_equal(j.rc[r], 0);
			assert_int_equal(j.info[r][GW_MI_ROUND], (uint64_t)round);
			assert_true(j.info[r][GW_MI_BYTES_UP] >= j.dim * 4);
			for (uint64_t i = 0; i < j.dim; i++) {
				float want = 0.0f;
				for (unsigned q = 0; q < j.w; q++)
					want += value(q + (unsigned)round, i);
				if (j.buf[r][i] != want)
					fail_msg("rank %u elem %llu: %g, want %g", r,
						 (unsigned long long)i, j.buf[r][i], want);
			}
		}
	}
	job_close(&j);
}

/* gso is the udp backend's: another backend's member is refused at open,
 * by name (where this library has another backend). */
static void test_gso_is_udps(void **state)
{
	(void)state;
	const char *other = NULL;
	for (const char *const *b = gw_dp_backends(); *b && !other; b++)
		if (strcmp(*b, "udp"))
			other = *b;
	if (!other)
		skip();
	gw_member *m = gw_member_new();
	assert_non_null(m);
	assert_int_equal(gw_member_set(m, "backend", other), 0);
	assert_int_equal(gw_member_set(m, "gso", "1"), 0);
	assert_int_equal(gw_member_open(m, 0, 1), GW_EINVAL);
	if (!strstr(gw_error_detail(), "gso: ") || !strstr(gw_error_detail(), other))
		fail_msg("detail: '%s'", gw_error_detail());
	gw_member_free(m);
}

/* An unknown backend is refused with the list of the built ones, the one
 * line every message prints (gw_dp_backends_text). */
static void test_backend_lists_built(void **state)
{
	(void)state;
	char all[128], cut[4];
	size_t need = gw_dp_backends_text(NULL, 0);
	assert_int_equal(gw_dp_backends_text(all, sizeof(all)), need);
	assert_int_equal(strlen(all), need);
	assert_true(!strncmp(all, "udp", 3));   /* the one always built */
	size_t k = 0;
	for (const char *const *b = gw_dp_backends(); *b; b++)
		k += strlen(*b) + (k ? 2 : 0);
	assert_int_equal(k, need);
	assert_int_equal(gw_dp_backends_text(cut, sizeof(cut)), need);
	assert_string_equal(cut, "udp");
	gw_member *m = gw_member_new();
	assert_non_null(m);
	assert_int_equal(gw_member_set(m, "backend", "carrier-pigeon"), GW_EINVAL);
	if (!strstr(gw_error_detail(), "backend: 'carrier-pigeon'") ||
	    !strstr(gw_error_detail(), all))
		fail_msg("detail: '%s'", gw_error_detail());
	gw_member_free(m);
}

/* A rank that never calls: the other times out within timeout-ms and its
 * detail names the silent rank, seen by its own shard. */
static void test_timeout_names_the_silent_rank(void **state)
{
	(void)state;
	static const char *const opts[] = {"timeout-ms", "300", NULL};
	struct job j;
	job_open(&j, 3, 4000, opts);
	for (unsigned r = 0; r < j.w; r++)
		memset(j.buf[r], 0, j.dim * sizeof(float));
	job_round(&j, 1u | 4u);    /* ranks 0 and 2; rank 1 is silent */
	for (unsigned r = 0; r < j.w; r += 2) {
		assert_int_equal(j.rc[r], GW_ETIMEDOUT);
		if (!strstr(j.detail[r], "rank 1 sent nothing") ||
		    !strstr(j.detail[r], "after 300 ms"))
			fail_msg("rank %u: detail '%s'", r, j.detail[r]);
	}
	job_close(&j);
}

/* Sketched-SGD through the member: a k-sparse update, zero elsewhere, the
 * same on every rank. */
static void test_sketched_update_is_sparse_and_shared(void **state)
{
	(void)state;
	static const char *const opts[] = {"up", "sketched-sgd", "topk", "50", NULL};
	struct job j;
	job_open(&j, 2, 5000, opts);
	for (unsigned r = 0; r < j.w; r++)
		for (uint64_t i = 0; i < j.dim; i++)
			j.buf[r][i] = value(r, i) * (i % 97 == 0 ? 50.0f : 1.0f);
	job_round(&j, 3);
	for (unsigned r = 0; r < j.w; r++) {
		assert_int_equal(j.rc[r], 0);
		assert_int_equal(j.info[r][GW_MI_NNZ], 50);
		uint64_t nz = 0;
		for (uint64_t i = 0; i < j.dim; i++)
			nz += j.buf[r][i] != 0.0f;
		assert_true(nz <= 50);
		assert_true(nz > 0);
	}
	assert_memory_equal(j.buf[0], j.buf[1], j.dim * sizeof(float));
	job_close(&j);
}

/* gw_agg_spawn: serves until joined; a join after a status check returns
 * serve's 0. NULL is refused with a detail. */
static void test_spawn_status_join(void **state)
{
	(void)state;
	assert_null(gw_agg_spawn(NULL));
	assert_non_null(strstr(gw_error_detail(), "agg: missing"));
	assert_int_equal(gw_agg_join(NULL), 0);
	assert_int_equal(gw_agg_thread_status(NULL), GW_EINVAL);
	gw_dp *dp;
	gw_dp_config dc = {.backend = "udp"};
	assert_int_equal(gw_endpoint_parse("127.0.0.1:0", &dc.local), 0);
	assert_int_equal(gw_dp_open(&dc, &dp), 0);
	gw_agg_config ac = {.job = {.job = 1, .dim = 100, .chunk_elems = 40, .workers = 1,
				       .shards = 1}};
	gw_agg *a = gw_agg_create(&dp, 1, &ac);
	if (!a)
		fail_msg("gw_agg_create: %s", gw_error_detail());
	gw_agg_thread *t = gw_agg_spawn(a);
	assert_non_null(t);
	assert_int_equal(gw_agg_thread_status(t), 1);
	assert_int_equal(gw_agg_join(t), 0);
	gw_agg_free(a);
	gw_dp_close(dp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_refuses_bad_options),
		cmocka_unit_test(test_eal_words_fit_and_are_bounded),
		cmocka_unit_test(test_colocated_sum_in_rank_order),
		cmocka_unit_test(test_gso_is_udps),
		cmocka_unit_test(test_backend_lists_built),
		cmocka_unit_test(test_timeout_names_the_silent_rank),
		cmocka_unit_test(test_sketched_update_is_sparse_and_shared),
		cmocka_unit_test(test_spawn_status_join),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
