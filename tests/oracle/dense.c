/* The model of a dense job, gw_allreduce (oracle.h). */
#include <stdlib.h>
#include <string.h>

#include "gw_util.h"
#include "oracle.h"

struct oracle_dense {
	gw_coll_job job;
	gw_encoder **enc, *down;
	gw_ef **ef;
	gw_ef ***views;       /* sparse uplink: per worker, per chunk */
	int sparse_up, sparse_down;   /* codecs whose frames are sparse: a
				       * chunk is a tensor of its own */
	float *ef_down, *parts, *sum, *tmp;
	uint32_t chunks;
};

#define FRAME_ROOM 65536u

void oracle_dense_free(struct oracle_dense *r)
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
	gw_encoder_free(r->down);
	GW_FREE_ALL(r->views, r->enc, r->ef, r->ef_down, r->parts, r->sum, r->tmp, r);
}

struct oracle_dense *oracle_dense_create(const gw_coll_job *job)
{
	struct oracle_dense *r = calloc(1, sizeof(*r));
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
	r->down = oracle_encoder(job->down_codec, job->down_params, K);
	if (!r->enc || !r->ef || !r->parts || !r->sum || !r->tmp || !r->down)
		goto fail;
	int ef = (gw_codec_caps(job->up_codec) & GW_CODEC_LOSSY) ||
		 job->mode == GW_COLL_LOSS_TOLERANT;
	r->sparse_up = oracle_frames_sparse(job->up_codec, job->up_params);
	r->sparse_down = oracle_frames_sparse(job->down_codec, job->down_params);
	if (r->sparse_up < 0 || r->sparse_down < 0)
		goto fail;
	if (r->sparse_up && ef && !(r->views = calloc(W, sizeof(*r->views))))
		goto fail;
	for (unsigned w = 0; w < W; w++) {
		r->enc[w] = oracle_encoder(job->up_codec, job->up_params, K);
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
	oracle_dense_free(r);
	return NULL;
}

/* Worker w's frame of chunk c (elements [base, base + len)): the next
 * frame of its whole tensor, or the chunk alone (sparse frames), with the
 * chunk's view of the error buffer. */
static int encode_up(struct oracle_dense *r, unsigned w, uint32_t c, const float *g,
		     uint64_t base, uint32_t len, uint8_t *frame)
{
	if (!r->sparse_up)
		return gw_encode_next(r->enc[w], frame, FRAME_ROOM);
	gw_tensor t = {.id = 0, .dim = len, .values = g + base};
	int rc = r->views ? gw_encoder_set_ef(r->enc[w], r->views[w][c]) : 0;
	return rc < 0 ? rc : oracle_encode_one(r->enc[w], &t, frame, FRAME_ROOM);
}

int oracle_dense_round(struct oracle_dense *r, const float *const *grads, float *out)
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
			int rc = oracle_chunk_add(r->sparse_up, frame, (size_t)n, base, len,
						  r->parts + (size_t)w * K, r->sum);
			if (rc < 0)
				return rc;
		}
		if (r->ef_down)
			for (uint32_t i = 0; i < len; i++)
				r->sum[i] += r->ef_down[base + i];
		gw_tensor t = {.id = 0, .dim = len, .values = r->sum,
			       .base = r->sparse_down ? 0 : base};
		int n = oracle_encode_one(r->down, &t, res, sizeof(res));
		if (n < 0)
			return n;
		int rc;
		if (r->ef_down) {
			memset(r->tmp, 0, len * sizeof(float));
			rc = oracle_decode_chunk(r->sparse_down, res, (size_t)n, r->tmp, base,
						 len);
			if (rc < 0)
				return rc;
			for (uint32_t i = 0; i < len; i++)
				r->ef_down[base + i] = r->sum[i] - r->tmp[i];
		}
		rc = oracle_decode_chunk(r->sparse_down, res, (size_t)n, out + base, base, len);
		if (rc < 0)
			return rc;
	}
	uint8_t none[64];
	for (unsigned w = 0; w < W && !r->sparse_up; w++)
		if (gw_encode_next(r->enc[w], none, sizeof(none)) != 0)
			return GW_ESTATE;
	return 0;
}
