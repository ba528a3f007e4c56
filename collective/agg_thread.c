/* A co-located shard: gw_agg_serve() on a progress thread of the calling
 * process. A job whose every worker hosts one shard needs no aggregator
 * process, and its traffic is a reduce-scatter (each worker sends chunk c
 * to shard c % S) followed by an all-gather (the shard sends the sum to
 * every worker): what NCCL's ring moves, in one hop per direction. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>

#include "coll_internal.h"

struct gw_agg_thread {
	pthread_t tid;
	gw_agg *agg;
	volatile sig_atomic_t stop;
	int rc;
	atomic_int done;      /* serve returned: rc and detail are final */
	char detail[256];     /* the serving thread's detail: it is per thread */
};

static void *serve(void *arg)
{
	/* Named, so that a framework can tell its CPU time from the others'
	 * (gradwire.torch's stats find it by name in /proc). */
	prctl(PR_SET_NAME, "gw-shard", 0, 0, 0);
	gw_agg_thread *t = arg;
	t->rc = gw_agg_serve(t->agg, &t->stop, 0);
	if (t->rc < 0)
		snprintf(t->detail, sizeof(t->detail), "%s", gw_error_detail());
	atomic_store(&t->done, 1);
	return NULL;
}

gw_agg_thread *gw_agg_spawn(gw_agg *a)
{
	gw__detail_clear();
	if (!a) {
		gw__detail(GW_ERR(GW_EINVAL), "agg: missing");
		return NULL;
	}
	gw_agg_thread *t = calloc(1, sizeof(*t));
	if (!t) {
		gw__detail(GW_ERR(GW_ENOMEM), "out of memory");
		return NULL;
	}
	t->agg = a;
	int e = pthread_create(&t->tid, NULL, serve, t);
	if (e) {
		free(t);
		gw__detail(GW_ERR(GW_EIO), "pthread_create: error %d", e);
		return NULL;
	}
	return t;
}

int gw_agg_join(gw_agg_thread *t)
{
	gw__detail_clear();
	if (!t)
		return GW_OK;
	t->stop = 1;    /* the serve loop reads it at least every idle wait */
	pthread_join(t->tid, NULL);
	int rc = t->rc;
	if (rc < 0)
		gw__detail(rc, "co-located shard: %s", t->detail[0] ? t->detail
			   : gw_strerror(rc));
	free(t);
	return rc;
}

int gw_agg_thread_status(const gw_agg_thread *t)
{
	if (!t)
		return GW_ERR(GW_EINVAL);
	if (!atomic_load((atomic_int *)&t->done))
		return 1;
	if (t->rc < 0)
		gw__detail(t->rc, "co-located shard: %s", t->detail[0] ? t->detail
			   : gw_strerror(t->rc));
	return t->rc;
}
