/* The model of a dense job, gw_allreduce (oracle.h), written from the
 * job's definition: the tensor is its layout's tensors (one without a
 * layout), each encoded by every worker as a tensor of its own (its id,
 * its slice of the error buffer), cut into chunks of chunk_elems that
 * never straddle two; tensors below min_elems go raw; the shard sums each
 * chunk in rank order, keeps momentum when the job has down_momentum, and
 * encodes each chunk on its own with its error buffer.
 *
 * An hq job is summed in integers: every worker quantises chunk c of round
 * R on the scale the shard's previous result for c named (0 in the first
 * round) with the rotation seed mix64(mix64(job << 32 | R) ^ c) (low 32
 * bits), its stochastic draws from seed ^ mix64(rank + 1); the shard adds
 * the codes and sends their sum, naming the largest of the workers'
 * maxima as the scale of the next round (docs/collective.md). */
#include <stdlib.h>
#include <string.h>

#include "gw_rand.h"
#include "gw_util.h"
#include "oracle.h"

struct otensor {
	uint64_t start, n;
	int raw;
};

struct ochunk {
	uint64_t start, off;   /* in the flat tensor; in its tensor */
	uint32_t len, t;
};

struct oracle_dense {
	gw_coll_job job;
	float mu;
	struct otensor *t;
	uint32_t nt, chunks;
	struct ochunk *c;
	gw_encoder **enc, **raw, *down, *rawdown;
	gw_ef **ef;
	gw_ef ***views;       /* per worker: per chunk (sparse uplink) or per
			       * tensor (dense) */
	int sparse_up, sparse_down;   /* codecs whose frames are sparse: a
				       * chunk is a tensor of its own */
	float *ef_down, *mom, *parts, *sum, *tmp;
	int hq;
	float *hq_scale;      /* per chunk: the next round's scale */
	int32_t *isum;
	uint32_t round;
};

#define FRAME_ROOM 65536u

void oracle_dense_free(struct oracle_dense *r)
{
	if (!r)
		return;
	uint32_t nv = r->sparse_up ? r->chunks : r->nt;
	for (unsigned w = 0; w < r->job.workers; w++) {
		if (r->enc)
			gw_encoder_free(r->enc[w]);
		if (r->raw)
			gw_encoder_free(r->raw[w]);
		for (uint32_t c = 0; r->views && r->views[w] && c < nv; c++)
			gw_ef_free(r->views[w][c]);
		if (r->views)
			free(r->views[w]);
		if (r->ef)
			gw_ef_free(r->ef[w]);
	}
	gw_encoder_free(r->down);
	gw_encoder_free(r->rawdown);
	GW_FREE_ALL(r->hq_scale, r->isum);
	GW_FREE_ALL(r->views, r->enc, r->raw, r->ef, r->ef_down, r->mom, r->parts, r->sum,
		    r->tmp, r->t, r->c, r);
}

/* The tensors and chunks of the job. */
static int layout(struct oracle_dense *r, const gw_dense_job *dj)
{
	uint32_t K = r->job.chunk_elems, min = dj ? dj->min_elems : 0;
	r->nt = dj && dj->ntensors ? dj->ntensors : 1;
	if (!(r->t = calloc(r->nt, sizeof(*r->t))))
		return -1;
	uint64_t at = 0, chunks = 0;
	for (uint32_t i = 0; i < r->nt; i++) {
		uint64_t n = dj && dj->ntensors ? dj->tensor_elems[i] : r->job.dim;
		r->t[i] = (struct otensor){.start = at, .n = n, .raw = n < min};
		at += n;
		chunks += r->t[i].raw ? 1 : (n + K - 1) / K;
	}
	r->chunks = (uint32_t)chunks;
	if (!(r->c = calloc(r->chunks, sizeof(*r->c))))
		return -1;
	uint32_t c = 0;
	for (uint32_t i = 0; i < r->nt; i++)
		for (uint64_t off = 0; off < r->t[i].n; off += K, c++)
			r->c[c] = (struct ochunk){.start = r->t[i].start + off, .off = off, .t = i,
				.len = (uint32_t)(r->t[i].n - off < K ? r->t[i].n - off : K)};
	return 0;
}

struct oracle_dense *oracle_dense_create(const gw_coll_job *job)
{
	struct oracle_dense *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->job = *job;
	/* The engine's defaults (0: raw; down after an hq uplink: hq). */
	if (!r->job.up_codec)
		r->job.up_codec = GW_CODEC_RAW;
	if (!r->job.down_codec)
		r->job.down_codec = r->job.up_codec == GW_CODEC_HQ ? GW_CODEC_HQ : GW_CODEC_RAW;
	job = &r->job;
	const gw_dense_job *dj = job->engine == GW_COLL_DENSE ? job->engine_params : NULL;
	r->mu = dj ? dj->down_momentum : 0.0f;
	unsigned W = job->workers;
	uint32_t K = job->chunk_elems;
	if (layout(r, dj) < 0)
		goto fail;
	r->enc = calloc(W, sizeof(*r->enc));
	r->raw = calloc(W, sizeof(*r->raw));
	r->ef = calloc(W, sizeof(*r->ef));
	r->parts = malloc((size_t)W * K * sizeof(float));
	r->sum = malloc(K * sizeof(float));
	r->tmp = malloc(K * sizeof(float));
	r->down = oracle_encoder(job->down_codec, job->down_params, K);
	r->rawdown = oracle_encoder(GW_CODEC_RAW, NULL, K);
	if (!r->enc || !r->raw || !r->ef || !r->parts || !r->sum || !r->tmp || !r->down ||
	    !r->rawdown)
		goto fail;
	int ef = (gw_codec_caps(job->up_codec) & GW_CODEC_LOSSY) ||
		 job->mode == GW_COLL_LOSS_TOLERANT;
	r->sparse_up = oracle_frames_sparse(job->up_codec, job->up_params);
	r->sparse_down = oracle_frames_sparse(job->down_codec, job->down_params);
	if (r->sparse_up < 0 || r->sparse_down < 0)
		goto fail;
	if (ef && !(r->views = calloc(W, sizeof(*r->views))))
		goto fail;
	uint32_t nv = r->sparse_up ? r->chunks : r->nt;
	for (unsigned w = 0; w < W; w++) {
		r->enc[w] = oracle_encoder(job->up_codec, job->up_params, K);
		r->raw[w] = oracle_encoder(GW_CODEC_RAW, NULL, K);
		if (!r->enc[w] || !r->raw[w])
			goto fail;
		if (!ef)
			continue;
		if (!(r->ef[w] = gw_ef_create(job->dim)) ||
		    !(r->views[w] = calloc(nv, sizeof(**r->views))))
			goto fail;
		for (uint32_t v = 0; v < nv; v++) {
			uint64_t b = r->sparse_up ? r->c[v].start : r->t[v].start;
			uint64_t n = r->sparse_up ? r->c[v].len : r->t[v].n;
			if (!(r->views[w][v] = gw_ef_view(r->ef[w], b, n)))
				goto fail;
		}
	}
	if (gw_codec_caps(job->down_codec) & GW_CODEC_LOSSY) {
		r->ef_down = calloc(job->dim, sizeof(float));
		if (!r->ef_down)
			goto fail;
	}
	if (r->mu > 0.0f && !(r->mom = calloc(job->dim, sizeof(float))))
		goto fail;
	r->hq = job->up_codec == GW_CODEC_HQ;
	if (r->hq) {
		if (!(r->hq_scale = calloc(r->chunks + 1, sizeof(float))) ||
		    !(r->isum = malloc((size_t)K * sizeof(int32_t))))
			goto fail;
		for (unsigned w = 0; w < W; w++) {
			double s = 0;
			gw_encoder_get_param(r->enc[w], GW_PARAM_SEED, &s);
			gw_encoder_set_param(r->enc[w], GW_PARAM_SEED,
					     (double)(((uint64_t)s ^ gw_mix64(w + 1u)) & 0xffffffffu));
		}
	}
	return r;
fail:
	oracle_dense_free(r);
	return NULL;
}

/* Worker w's frame of chunk c: the next frame of its tensor (begun at the
 * tensor's first chunk), or the chunk alone (sparse frames), with that
 * tensor's or chunk's slice of the error buffer. */
static int encode_up(struct oracle_dense *r, unsigned w, uint32_t c, const float *g,
		     uint8_t *frame)
{
	const struct ochunk *k = &r->c[c];
	const struct otensor *T = &r->t[k->t];
	gw_encoder *e = T->raw ? r->raw[w] : r->enc[w];
	if (r->hq && !T->raw) {
		uint32_t seed = (uint32_t)gw_mix64(gw_mix64(((uint64_t)r->job.job << 32) | r->round) ^ c);
		int rc = gw_encoder_set_shared(e, r->hq_scale[c], seed);
		if (rc < 0)
			return rc;
	}
	if (r->sparse_up) {
		gw_tensor t = {.id = k->t, .dim = k->len, .values = g + k->start};
		int rc = r->views ? gw_encoder_set_ef(e, r->views[w][c]) : 0;
		return rc < 0 ? rc : oracle_encode_one(e, &t, frame, FRAME_ROOM);
	}
	if (k->off == 0) {
		gw_tensor t = {.id = k->t, .dim = T->n, .values = g + T->start};
		int rc = r->views ? gw_encoder_set_ef(e, r->views[w][k->t]) : 0;
		if (rc == 0)
			rc = gw_encode_begin(e, &t);
		if (rc < 0)
			return rc;
	}
	int n = gw_encode_next(e, frame, FRAME_ROOM);
	uint8_t none[64];
	if (n > 0 && k->off + k->len == T->n && gw_encode_next(e, none, sizeof(none)) != 0)
		return GW_ESTATE;   /* the tensor's frames are its chunks */
	return n;
}

void oracle_dense_set_round(struct oracle_dense *r, uint32_t round)
{
	r->round = round;
}

/* Chunk c of an hq job: the workers' codes summed, the sum frame into res;
 * its length or GW_E*. */
static int hq_chunk(struct oracle_dense *r, uint32_t c, const float *const *grads,
		    uint8_t *frame, uint8_t *res, size_t room)
{
	const struct ochunk *k = &r->c[c];
	gw_sum_info si = {0}, wi;
	float next = 0.0f;
	uint8_t poisoned = 0;
	memset(r->isum, 0, k->len * sizeof(int32_t));
	for (unsigned w = 0; w < r->job.workers; w++) {
		int n = encode_up(r, w, c, grads[w], frame);
		if (n <= 0)
			return n < 0 ? n : GW_ESTATE;
		int rc = gw_sum_add(frame, (size_t)n, r->isum, k->off, k->len, &wi);
		if (rc < 0)
			return rc;
		next = wi.next > next ? wi.next : next;
		poisoned |= wi.poisoned;
		si = wi;
	}
	si.next = next;
	si.poisoned = poisoned;
	si.contributors = r->job.workers;
	r->hq_scale[c] = next;
	return gw_sum_encode(res, room, k->t, k->off, r->isum, k->len, &si);
}

int oracle_dense_round(struct oracle_dense *r, const float *const *grads, float *out)
{
	unsigned W = r->job.workers;
	uint32_t K = r->job.chunk_elems;
	static uint8_t frame[FRAME_ROOM], res[FRAME_ROOM];
	memset(out, 0, r->job.dim * sizeof(float));
	for (uint32_t c = 0; c < r->chunks; c++) {
		const struct ochunk *k = &r->c[c];
		int raw = r->t[k->t].raw;
		int sp_up = r->sparse_up && !raw, sp_down = r->sparse_down && !raw;
		uint32_t len = k->len;
		if (r->hq && !raw) {
			int n = hq_chunk(r, c, grads, frame, res, sizeof(res));
			int rc = n < 0 ? n : oracle_decode_chunk(0, res, (size_t)n, out + k->start,
								 k->off, len);
			if (rc < 0)
				return rc;
			continue;
		}
		memset(r->sum, 0, len * sizeof(float));
		for (unsigned w = 0; w < W; w++) {
			int n = encode_up(r, w, c, grads[w], frame);
			if (n <= 0)
				return n < 0 ? n : GW_ESTATE;
			int rc = oracle_chunk_add(sp_up, frame, (size_t)n, k->off, len,
						  r->parts + (size_t)w * K, r->sum);
			if (rc < 0)
				return rc;
		}
		float *x = r->sum;
		if (r->mom) {   /* the shard's v <- mu v + sum goes down */
			x = r->mom + k->start;
			for (uint32_t i = 0; i < len; i++)
				x[i] = r->mu * x[i] + r->sum[i];
			memcpy(r->sum, x, len * sizeof(float));
			x = r->sum;
		}
		int lossy = r->ef_down && !raw;
		if (lossy)
			for (uint32_t i = 0; i < len; i++)
				x[i] += r->ef_down[k->start + i];
		gw_tensor t = {.id = k->t, .dim = len, .values = x, .base = sp_down ? 0 : k->off};
		int n = oracle_encode_one(raw ? r->rawdown : r->down, &t, res, sizeof(res));
		if (n < 0)
			return n;
		int rc;
		if (lossy) {
			memset(r->tmp, 0, len * sizeof(float));
			rc = oracle_decode_chunk(sp_down, res, (size_t)n, r->tmp, k->off, len);
			if (rc < 0)
				return rc;
			for (uint32_t i = 0; i < len; i++)
				r->ef_down[k->start + i] = x[i] - r->tmp[i];
		}
		rc = oracle_decode_chunk(sp_down, res, (size_t)n, out + k->start, k->off, len);
		if (rc < 0)
			return rc;
	}
	r->round++;
	return 0;
}
