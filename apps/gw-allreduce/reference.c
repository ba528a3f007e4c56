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
		if (r->ef)
			gw_ef_free(r->ef[w]);
	}
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
	for (unsigned w = 0; w < W; w++) {
		r->enc[w] = make_encoder(job->up_codec, job->up_params, K);
		if (!r->enc[w])
			goto fail;
		if (ef && (!(r->ef[w] = gw_ef_create(job->dim)) ||
			   gw_encoder_set_ef(r->enc[w], r->ef[w]) < 0))
			goto fail;
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

int reference_round(struct reference *r, const float *const *grads, float *out)
{
	unsigned W = r->job.workers;
	uint32_t K = r->job.chunk_elems;
	static uint8_t frame[FRAME_ROOM], res[FRAME_ROOM];
	for (unsigned w = 0; w < W; w++) {
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
			int n = gw_encode_next(r->enc[w], frame, sizeof(frame));
			if (n <= 0)
				return n < 0 ? n : GW_ESTATE;
			float *part = r->parts + (size_t)w * K;
			memset(part, 0, len * sizeof(float));
			int rc = gw_decode_window(frame, (size_t)n, part, base, len);
			if (rc < 0)
				return rc;
			for (uint32_t i = 0; i < len; i++)
				r->sum[i] += part[i];
		}
		if (r->ef_down)
			for (uint32_t i = 0; i < len; i++)
				r->sum[i] += r->ef_down[base + i];
		gw_tensor t = {.id = 0, .dim = len, .values = r->sum, .base = base};
		int rc = gw_encode_begin(r->down, &t);
		int n = rc < 0 ? rc : gw_encode_next(r->down, res, sizeof(res));
		if (n <= 0)
			return n < 0 ? n : GW_ESTATE;
		gw_encode_abandon(r->down);
		if (r->ef_down) {
			memset(r->tmp, 0, len * sizeof(float));
			rc = gw_decode_window(res, (size_t)n, r->tmp, base, len);
			if (rc < 0)
				return rc;
			for (uint32_t i = 0; i < len; i++)
				r->ef_down[base + i] = r->sum[i] - r->tmp[i];
		}
		rc = gw_decode(res, (size_t)n, out, r->job.dim);
		if (rc < 0)
			return rc;
	}
	uint8_t none[64];
	for (unsigned w = 0; w < W; w++)
		if (gw_encode_next(r->enc[w], none, sizeof(none)) != 0)
			return GW_ESTATE;
	return 0;
}
