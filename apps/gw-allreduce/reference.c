/* The reference model of gw_allreduce (see reference.h). It uses only the
 * public codec API: if the collective layer and this model disagree, one
 * of them got the protocol wrong. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

struct reference {
	gw_coll_job job;
	gw_encoder **enc, *down;
	gw_ef **ef;
	gw_ef ***views;       /* sparse uplink: per worker, per chunk */
	int sparse_up, sparse_down;   /* codecs whose frames are sparse: a
				       * chunk is a tensor of its own */
	float *ef_down, *parts, *sum, *tmp;
	uint8_t **frames;     /* per worker: every frame of its tensor */
	size_t *flen_off;
	uint32_t chunks;
};

#define FRAME_ROOM 65536u

void reference_free(struct reference *r)
{
	if (!r)
		return;
	for (unsigned w = 0; w < r->job.workers; w++) {
		if (r->enc)
			gw_encoder_free(r->enc[w]);
		for (uint32_t c = 0; r->views && r->views[w] && c < r->chunks; c++)
			gw_ef_free(r->views[w][c]);
		if (r->views)
			free(r->views[w]);
		if (r->ef)
			gw_ef_free(r->ef[w]);
	}
	free(r->views);
	free(r->enc);
	free(r->ef);
	gw_encoder_free(r->down);
	free(r->ef_down);
	free(r->parts);
	free(r->sum);
	free(r->tmp);
	free(r);
}

static gw_encoder *make_encoder(int codec, const char *params, uint32_t k)
{
	gw_encoder *e = gw_encoder_create(codec);
	if (!e)
		return NULL;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", params ? params : "");
	char *save = NULL;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			goto fail;
		*eq = '\0';
		int p = gw_param_by_name(kv);
		if (p < 0 || gw_encoder_set_param(e, (gw_param)p, atof(eq + 1)) < 0)
			goto fail;
	}
	if (gw_encoder_set_param(e, GW_PARAM_MAX_FRAME_ELEMS, k) < 0)
		goto fail;
	return e;
fail:
	gw_encoder_free(e);
	return NULL;
}

/* 1 if the codec's frames are sparse, 0 if dense, < 0 on error. */
static int frames_sparse(int codec, const char *params)
{
	float x[40];
	for (int i = 0; i < 40; i++)
		x[i] = (float)(i + 1);
	uint8_t buf[1024];
	gw_encoder *e = make_encoder(codec, params, 40);
	gw_tensor t = {.id = 0, .dim = 40, .values = x};
	gw_frame_info fi;
	int rc = e ? gw_encode_begin(e, &t) : GW_ENOMEM;
	int n = rc < 0 ? rc : gw_encode_next(e, buf, sizeof(buf));
	rc = n > 0 ? gw_frame_peek(buf, (size_t)n, &fi) : GW_ESTATE;
	gw_encoder_free(e);
	return rc < 0 ? rc : (fi.flags & GW_FF_SPARSE) != 0;
}

struct reference *reference_create(const gw_coll_job *job)
{
	struct reference *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->job = *job;
	unsigned W = job->workers;
	uint32_t K = job->chunk_elems;
	r->chunks = (uint32_t)((job->dim + K - 1) / K);
	r->enc = calloc(W, sizeof(*r->enc));
	r->ef = calloc(W, sizeof(*r->ef));
	r->parts = malloc((size_t)W * K * sizeof(float));
	r->sum = malloc(K * sizeof(float));
	r->tmp = malloc(K * sizeof(float));
	r->down = make_encoder(job->down_codec, job->down_params, K);
	if (!r->enc || !r->ef || !r->parts || !r->sum || !r->tmp || !r->down)
		goto fail;
	int ef = (gw_codec_caps(job->up_codec) & GW_CODEC_LOSSY) ||
		 job->mode == GW_COLL_LOSS_TOLERANT;
	r->sparse_up = frames_sparse(job->up_codec, job->up_params);
	r->sparse_down = frames_sparse(job->down_codec, job->down_params);
	if (r->sparse_up < 0 || r->sparse_down < 0)
		goto fail;
	if (r->sparse_up && ef && !(r->views = calloc(W, sizeof(*r->views))))
		goto fail;
	for (unsigned w = 0; w < W; w++) {
		r->enc[w] = make_encoder(job->up_codec, job->up_params, K);
		if (!r->enc[w])
			goto fail;
		if (ef && !(r->ef[w] = gw_ef_create(job->dim)))
			goto fail;
		if (ef && !r->sparse_up && gw_encoder_set_ef(r->enc[w], r->ef[w]) < 0)
			goto fail;
		if (!r->views)
			continue;
		if (!(r->views[w] = calloc(r->chunks, sizeof(**r->views))))
			goto fail;
		for (uint32_t c = 0; c < r->chunks; c++) {
			uint64_t b = (uint64_t)c * K;
			if (!(r->views[w][c] = gw_ef_view(r->ef[w], b,
							  job->dim - b < K ? job->dim - b : K)))
				goto fail;
		}
	}
	if (gw_codec_caps(job->down_codec) & GW_CODEC_LOSSY) {
		r->ef_down = calloc(job->dim, sizeof(float));
		if (!r->ef_down)
			goto fail;
	}
	return r;
fail:
	reference_free(r);
	return NULL;
}

/* Worker w's frame of chunk c (elements [base, base + len)). */
static int encode_up(struct reference *r, unsigned w, uint32_t c, const float *g,
		     uint64_t base, uint32_t len, uint8_t *frame)
{
	if (!r->sparse_up)
		return gw_encode_next(r->enc[w], frame, FRAME_ROOM);
	gw_tensor t = {.id = 0, .dim = len, .values = g + base};
	int rc = r->views ? gw_encoder_set_ef(r->enc[w], r->views[w][c]) : 0;
	if (rc == 0)
		rc = gw_encode_begin(r->enc[w], &t);
	int n = rc < 0 ? rc : gw_encode_next(r->enc[w], frame, FRAME_ROOM);
	uint8_t none[64];
	if (n > 0 && gw_encode_next(r->enc[w], none, sizeof(none)) != 0)
		return GW_ESTATE;   /* a chunk is one frame */
	return n;
}

/* Adds a frame of chunk [base, base + len) into dst, which holds it. */
static int decode_chunk(int sparse, const uint8_t *frame, int n, float *dst,
			uint64_t base, uint32_t len)
{
	if (sparse)
		return gw_decode(frame, (size_t)n, dst, len);
	return gw_decode_window(frame, (size_t)n, dst, base, len);
}

int reference_round(struct reference *r, const float *const *grads, float *out)
{
	unsigned W = r->job.workers;
	uint32_t K = r->job.chunk_elems;
	static uint8_t frame[FRAME_ROOM], res[FRAME_ROOM];
	for (unsigned w = 0; w < W && !r->sparse_up; w++) {
		gw_tensor t = {.id = 0, .dim = r->job.dim, .values = grads[w]};
		int rc = gw_encode_begin(r->enc[w], &t);
		if (rc < 0)
			return rc;
	}
	memset(out, 0, r->job.dim * sizeof(float));
	for (uint32_t c = 0; c < r->chunks; c++) {
		uint64_t base = (uint64_t)c * K;
		uint32_t len = (uint32_t)(r->job.dim - base < K ? r->job.dim - base : K);
		memset(r->sum, 0, len * sizeof(float));
		for (unsigned w = 0; w < W; w++) {
			int n = encode_up(r, w, c, grads[w], base, len, frame);
			if (n <= 0)
				return n < 0 ? n : GW_ESTATE;
			float *part = r->parts + (size_t)w * K;
			memset(part, 0, len * sizeof(float));
			int rc = decode_chunk(r->sparse_up, frame, n, part, base, len);
			if (rc < 0)
				return rc;
			for (uint32_t i = 0; i < len; i++)
				r->sum[i] += part[i];
		}
		if (r->ef_down)
			for (uint32_t i = 0; i < len; i++)
				r->sum[i] += r->ef_down[base + i];
		gw_tensor t = {.id = 0, .dim = len, .values = r->sum,
			       .base = r->sparse_down ? 0 : base};
		int rc = gw_encode_begin(r->down, &t);
		int n = rc < 0 ? rc : gw_encode_next(r->down, res, sizeof(res));
		if (n <= 0)
			return n < 0 ? n : GW_ESTATE;
		gw_encode_abandon(r->down);
		if (r->ef_down) {
			memset(r->tmp, 0, len * sizeof(float));
			rc = decode_chunk(r->sparse_down, res, n, r->tmp, base, len);
			if (rc < 0)
				return rc;
			for (uint32_t i = 0; i < len; i++)
				r->ef_down[base + i] = r->sum[i] - r->tmp[i];
		}
		rc = decode_chunk(r->sparse_down, res, n, out + base, base, len);
		if (rc < 0)
			return rc;
	}
	uint8_t none[64];
	for (unsigned w = 0; w < W && !r->sparse_up; w++)
		if (gw_encode_next(r->enc[w], none, sizeof(none)) != 0)
			return GW_ESTATE;
	return 0;
}
