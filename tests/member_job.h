/* Members of one job on threads of this process, each with its own
 * sockets and co-located shard thread: what test_member and test_layout
 * run jobs with. Included by one test file each (static functions). */
#ifndef GW_TEST_MEMBER_JOB_H
#define GW_TEST_MEMBER_JOB_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/member.h>

#define WMAX 4

struct job {
	gw_member *m[WMAX];
	float *buf[WMAX];
	uint64_t info[WMAX][GW_MI_N];
	int rc[WMAX];
	unsigned w;
	uint64_t dim;
	char detail[WMAX][256];
};

static struct {
	struct job *j;
	unsigned rank;
} args[WMAX];

/* W members with the options opts (name, value, ..., NULL), rank odd
 * with odd_opts after them (or NULL), connected. */
static void job_open_odd(struct job *j, unsigned w, uint64_t dim, const char *const *opts,
			 unsigned odd, const char *const *odd_opts)
{
	memset(j, 0, sizeof(*j));
	j->w = w;
	j->dim = dim;
	char eps[WMAX * 64] = "";
	for (unsigned r = 0; r < w; r++) {
		j->m[r] = gw_member_new();
		assert_non_null(j->m[r]);
		for (const char *const *o = opts; o && *o; o += 2)
			assert_int_equal(gw_member_set(j->m[r], o[0], o[1]), 0);
		for (const char *const *o = odd_opts; r == odd && o && *o; o += 2)
			assert_int_equal(gw_member_set(j->m[r], o[0], o[1]), 0);
		assert_int_equal(gw_member_open(j->m[r], r, w), 0);
		char ep[64];
		assert_int_equal(gw_member_endpoint(j->m[r], ep, sizeof(ep)), 0);
		if (r)
			strcat(eps, ",");
		strcat(eps, ep);
		j->buf[r] = malloc(dim * sizeof(float));
		assert_non_null(j->buf[r]);
	}
	for (unsigned r = 0; r < w; r++)
		assert_int_equal(gw_member_connect(j->m[r], dim, eps), 0);
}

static void job_open(struct job *j, unsigned w, uint64_t dim, const char *const *opts)
{
	job_open_odd(j, w, dim, opts, w, NULL);
}

static void job_close(struct job *j)
{
	for (unsigned r = 0; r < j->w; r++) {
		gw_member_free(j->m[r]);
		free(j->buf[r]);
	}
}

static void *one(void *p)
{
	struct job *j = args[(size_t)p].j;
	unsigned r = args[(size_t)p].rank;
	j->rc[r] = gw_member_allreduce(j->m[r], j->buf[r], j->info[r]);
	snprintf(j->detail[r], sizeof(j->detail[r]), "%s", gw_error_detail());
	return NULL;
}

/* One allreduce by the ranks in mask, concurrently. */
static void job_round(struct job *j, unsigned mask)
{
	pthread_t t[WMAX];
	for (unsigned r = 0; r < j->w; r++) {
		args[r].j = j;
		args[r].rank = r;
		if (mask >> r & 1)
			assert_int_equal(pthread_create(&t[r], NULL, one, (void *)(size_t)r), 0);
	}
	for (unsigned r = 0; r < j->w; r++)
		if (mask >> r & 1)
			pthread_join(t[r], NULL);
}

static float value(unsigned r, uint64_t i)
{
	return (float)((int)((i * 2654435761u + r * 40503u) % 2001) - 1000) / 997.0f;
}

#endif
