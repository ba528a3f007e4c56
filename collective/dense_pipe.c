/* The dense worker's side of pipelined rounds (gw_allreduce_pipelined):
 * where a tensor's values come from and where its results go, when each
 * tensor of the layout lives in the caller's memory of its own, in the
 * caller's type.
 *
 * float32 tensors are read in place by the encoders (3LC's begin reads
 * its tensor once, whole; the others read a chunk per frame) and their
 * results are written over them: a chunk's result can only arrive after
 * this worker encoded that chunk (the loop drops one that comes earlier),
 * so no value is overwritten before it is read. bf16 and fp16 tensors
 * are widened whole into one scratch at their first chunk: the encoder's
 * statistics (3LC's m, int8's scale) need all of a tensor. Results are
 * decoded into a chunk of scratch and stored scaled (and narrowed) while
 * they are in cache. */
#include <stdlib.h>

#include "dense.h"
#include "gw_dtype.h"

int dense_pipe_init(gw_comm *c)
{
	struct dense_worker *d = c->eng;
	const struct coll_layout *L = &c->L;
	if (!L->dense.t)
		return GW_OK;   /* one flat tensor: gw_allreduce only */
	d->racc = malloc((size_t)L->job.chunk_elems * sizeof(float));
	d->tres = calloc(L->dense.nt, sizeof(*d->tres));
	if (!d->racc || !d->tres)
		return GW_ERR(GW_ENOMEM);
	d->wide_ti = UINT32_MAX;
	return coll_pipe_create(c, L->dense.nt);
}

void dense_pipe_fini(gw_comm *c)
{
	struct dense_worker *d = c->eng;
	GW_FREE_ALL(d->racc, d->tres, d->wide);
}

int dense_pipe_ready(const gw_comm *c, uint32_t ch)
{
	const struct dense_worker *d = c->eng;
	return coll_pipe_ready(c->pipe, coll_tensor_index(&c->L, ch), d->tag);
}

static void widen(const struct coll_pipe_tensor *t, float *out, uint64_t n)
{
	if (t->dtype == GW_DTYPE_BF16) {
		const uint16_t *h = t->data;
		for (uint64_t i = 0; i < n; i++)
			out[i] = gw_bf16_to_f32(h[i]);
	} else {
		const uint16_t *h = t->data;
		for (uint64_t i = 0; i < n; i++)
			out[i] = gw_f16_to_f32(h[i]);
	}
}

const float *dense_pipe_values(gw_comm *c, uint32_t ti)
{
	struct dense_worker *d = c->eng;
	const struct coll_pipe_tensor *t = &c->pipe->t[ti];
	uint64_t n = c->L.dense.t[ti].n;
	if (t->dtype == GW_DTYPE_F32)
		return t->data;
	if (d->wide_ti == ti && d->wide_tag == d->tag)
		return d->wide;
	if (n > d->wide_cap) {
		float *w = realloc(d->wide, n * sizeof(float));
		if (!w)
			return NULL;
		d->wide = w;
		d->wide_cap = n;
	}
	widen(t, d->wide, n);
	d->wide_ti = ti;
	d->wide_tag = d->tag;
	return d->wide;
}

void dense_pipe_store(gw_comm *c, uint32_t ch, const float *v)
{
	const struct coll_layout *L = &c->L;
	uint32_t ti = coll_tensor_index(L, ch), n = coll_chunk_len(L, ch);
	const struct coll_pipe_tensor *t = &c->pipe->t[ti];
	uint64_t off = coll_chunk_off(L, ch);
	float s = t->scale;
	if (t->dtype == GW_DTYPE_F32) {
		float *o = (float *)t->data + off;
		for (uint32_t i = 0; i < n; i++)
			o[i] = v[i] * s;
	} else if (t->dtype == GW_DTYPE_BF16) {
		uint16_t *o = (uint16_t *)t->data + off;
		for (uint32_t i = 0; i < n; i++)
			o[i] = gw_f32_to_bf16(v[i] * s);
	} else {
		uint16_t *o = (uint16_t *)t->data + off;
		for (uint32_t i = 0; i < n; i++)
			o[i] = gw_f32_to_f16(v[i] * s);
	}
}
