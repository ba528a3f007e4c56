/* Pipelined rounds (gw/collective.h): the calls other threads make while
 * gw_allreduce_pipelined runs — tensors handed over, results waited for,
 * a round cancelled — and what the running round publishes for them.
 *
 * Nothing here touches the dataplane or the engine's state: a tensor's
 * hand-over is a few stores and one release store of its tag, which the
 * round's loop polls between packets (no lock on the hot path). Results
 * and failures go the other way under a mutex, because waiters sleep on a
 * condition variable instead of spinning on cores the training needs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "coll_internal.h"

int coll_pipe_create(gw_comm *c, uint32_t nt)
{
	struct coll_pipe *p = calloc(1, sizeof(*p));
	if (!p || !(p->t = calloc(nt, sizeof(*p->t)))) {
		free(p);
		return GW_ERR(GW_ENOMEM);
	}
	p->nt = nt;
	if (pthread_mutex_init(&p->mu, NULL)) {
		free(p->t);
		free(p);
		return GW_ERR(GW_ENOMEM);
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	int rc = pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (rc) {
		pthread_mutex_destroy(&p->mu);
		free(p->t);
		free(p);
		return GW_ERR(GW_ENOMEM);
	}
	c->pipe = p;
	return GW_OK;
}

void coll_pipe_free(gw_comm *c)
{
	struct coll_pipe *p = c->pipe;
	if (!p)
		return;
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	free(p->t);
	free(p);
	c->pipe = NULL;
}

void coll_pipe_done(struct coll_pipe *p, uint32_t t, uint32_t tag)
{
	pthread_mutex_lock(&p->mu);
	atomic_store_explicit(&p->t[t].done, tag, memory_order_release);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* Called from the thread that failed, whose error detail says why: the
 * waiters get it (details are per thread). A later call for the same
 * round (the member's, which names a dead peer better) replaces it. */
void coll_pipe_failed(struct coll_pipe *p, uint32_t tag, int rc)
{
	const char *why = gw_error_detail();
	pthread_mutex_lock(&p->mu);
	if (p->fail_tag != tag || why[0]) {
		p->fail_tag = tag;
		p->fail_rc = rc;
		snprintf(p->why, sizeof(p->why), "%s", why);
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int coll_pipe_of(gw_comm *c, uint32_t tag, struct coll_pipe **out)
{
	gw__detail_clear();
	if (!c)
		return GW_ERRF(GW_EINVAL, "comm: missing");
	if (!tag)
		return GW_ERRF(GW_EINVAL, "tag: 0 names no round");
	if (!c->pipe)
		return GW_ERRF(GW_EUNSUPPORTED, "pipelined rounds: the job needs the dense "
			       "engine, a tensor layout and no device executor");
	*out = c->pipe;
	return GW_OK;
}

/* Tensor `tensor` of c's pipe, for round tag, or GW_E*. */
static int pipe_tensor(gw_comm *c, uint32_t tag, uint32_t tensor, struct coll_pipe **p,
		       struct coll_pipe_tensor **t)
{
	int rc = coll_pipe_of(c, tag, p);
	if (rc < 0)
		return rc;
	if (tensor >= (*p)->nt)
		return GW_ERRF(GW_EINVAL, "tensor: %u, but the layout has %u", tensor, (*p)->nt);
	*t = &(*p)->t[tensor];
	return GW_OK;
}

int gw_comm_tensor_ready(gw_comm *c, uint32_t tag, uint32_t tensor, void *data,
			 gw_dtype dtype, float scale)
{
	struct coll_pipe *p = NULL;
	struct coll_pipe_tensor *t = NULL;
	int rc = pipe_tensor(c, tag, tensor, &p, &t);
	if (rc < 0)
		return rc;
	if (!data)
		return GW_ERRF(GW_EINVAL, "data: missing (tensor %u)", tensor);
	if ((unsigned)dtype > GW_DTYPE_F16)
		return GW_ERRF(GW_EINVAL, "dtype: %d is not float32, bf16 or fp16", (int)dtype);
	if (!(scale == scale) || scale - scale != 0.0f)
		return GW_ERRF(GW_EINVAL, "scale: not finite");
	if (atomic_load_explicit(&t->ready, memory_order_relaxed) == tag)
		return GW_ERRF(GW_ESTATE, "tensor %u: handed over twice for round tag %u",
			       tensor, tag);
	t->data = data;
	t->dtype = (uint8_t)dtype;
	t->scale = scale;
	atomic_store_explicit(&t->ready, tag, memory_order_release);
	return GW_OK;
}

int gw_comm_tensor_wait(gw_comm *c, uint32_t tag, uint32_t tensor, uint32_t timeout_ms)
{
	struct coll_pipe *p = NULL;
	struct coll_pipe_tensor *t = NULL;
	int rc = pipe_tensor(c, tag, tensor, &p, &t);
	if (rc < 0)
		return rc;
	if (atomic_load_explicit(&t->done, memory_order_acquire) == tag)
		return GW_OK;
	struct timespec end;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += timeout_ms / 1000u;
	end.tv_nsec += (long)(timeout_ms % 1000u) * 1000000L;
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->mu);
	rc = GW_OK;
	while (atomic_load_explicit(&t->done, memory_order_acquire) != tag) {
		if (p->fail_tag == tag) {
			rc = p->why[0] ? gw__detail(p->fail_rc, "%s", p->why) : p->fail_rc;
			break;
		}
		if (pthread_cond_timedwait(&p->cv, &p->mu, &end) == ETIMEDOUT &&
		    atomic_load_explicit(&t->done, memory_order_acquire) != tag &&
		    p->fail_tag != tag) {
			rc = GW_ERRF(GW_ETIMEDOUT, "tensor %u: no results of round tag %u "
				     "within %u ms", tensor, tag, timeout_ms);
			break;
		}
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

int gw_comm_round_cancel(gw_comm *c, uint32_t tag, int rc)
{
	struct coll_pipe *p = NULL;
	int r = coll_pipe_of(c, tag, &p);
	if (r < 0)
		return r;
	if (rc >= 0)
		return GW_ERRF(GW_EINVAL, "rc: %d is not a GW_E* code", rc);
	atomic_store_explicit(&p->cancel_rc, rc, memory_order_relaxed);
	atomic_store_explicit(&p->cancel_tag, tag, memory_order_release);
	coll_pipe_failed(p, tag, rc);
	return GW_OK;
}
