/* The encode driver: validates the tensor, applies generic error feedback
 * for codecs that do not fuse it, and frames what the codec emits. */
#include <math.h>
#include <stdlib.h>

#include "codec_internal.h"

gw_encoder *gw_encoder_create(int codec_id)
{
	gw__detail_clear();
	const struct gw_codec_ops *ops = gw_codec_ops(codec_id);
	if (!ops) {
		gw__detail(GW_ECODEC, "codec id %d: not a codec of this library", codec_id);
		return NULL;
	}
	gw_encoder *enc = calloc(1, sizeof(*enc));
	if (!enc) {
		gw__detail(GW_ENOMEM, "out of memory");
		return NULL;
	}
	enc->ops = ops;
	gw_params_defaults(ops, enc->param);
	return enc;
}

void gw_encoder_free(gw_encoder *enc)
{
	if (!enc)
		return;
	if (enc->ops->state_free)
		enc->ops->state_free(enc->codec_state);
	free(enc->scratch);
	free(enc);
}

int gw_encoder_set_ef(gw_encoder *enc, gw_ef *ef)
{
	if (!enc)
		return GW_ERR(GW_EINVAL);
	if (enc->active)
		return GW_ERR(GW_ESTATE);
	if (ef && (enc->ops->flags & GW_OPS_NO_EF))
		return GW_ERR(GW_EUNSUPPORTED);
	enc->ef = ef;
	return GW_OK;
}

static int check_tensor(const struct gw_codec_ops *ops, const gw_tensor *t)
{
	if (!t->keys) {
		if (!(ops->caps & GW_CODEC_DENSE))
			return GW_ERR(GW_EUNSUPPORTED);
		/* A slice's frames must still name ranges that do not wrap. */
		if (t->base > UINT64_MAX - t->dim)
			return GW_ERR(GW_EINVAL);
		return (t->dim && !t->values) ? GW_ERR(GW_EINVAL) : GW_OK;
	}
	if (t->base)
		return GW_ERR(GW_EINVAL);   /* sparse keys are absolute already */
	if (!(ops->caps & GW_CODEC_SPARSE))
		return GW_ERR(GW_EUNSUPPORTED);
	if (t->key_bits != 32 && t->key_bits != 64)
		return GW_ERR(GW_EINVAL);
	if (t->nnz && !t->values)
		return GW_ERR(GW_EINVAL);
	/* Frames promise ascending keys inside the tensor: refuse input that
	 * would make us emit frames every decoder rejects. */
	for (uint64_t i = 0; i < t->nnz; i++) {
		uint64_t k = gw_tensor_key(t, i);
		if (k >= t->dim || (i && k <= gw_tensor_key(t, i - 1)))
			return GW_ERR(GW_EINVAL);
	}
	return GW_OK;
}

/* Generic error feedback, first half: fold e into the values to send.
 * Dense tensors use the ef buffer itself as the corrected copy; the second
 * half (after each frame) subtracts the decoded frame from it. Also for
 * fused codecs that need every corrected value before the first frame
 * (codec_internal.h). */
int gw_enc_fold(gw_encoder *enc)
{
	float *e = gw_ef_data(enc->ef);
	const gw_tensor *t = &enc->t;
	if (!enc->sparse) {
		for (uint64_t i = 0; i < t->dim; i++)
			e[i] += t->values[i];
		enc->src = e;
		return GW_OK;
	}
	if (enc->scratch_cap < t->nnz) {
		float *s = realloc(enc->scratch, (size_t)t->nnz * sizeof(float));
		if (!s)
			return GW_ERR(GW_ENOMEM);
		enc->scratch = s;
		enc->scratch_cap = t->nnz;
	}
	for (uint64_t i = 0; i < t->nnz; i++) {
		uint64_t k = gw_tensor_key(t, i);
		enc->scratch[i] = t->values[i] + e[k];
		e[k] = enc->scratch[i];
	}
	enc->src = enc->scratch;
	return GW_OK;
}

/* A non-finite input leaves Inf - Inf = NaN in the error buffer, which
 * would poison every later round: restart those entries at 0, as the
 * fused codecs do (docs/wire-format.md §2.5). The frame itself still
 * carried the non-finite value to the receiver. */
static void ef_sanitize(gw_encoder *enc, uint64_t first, uint32_t n)
{
	float *e = gw_ef_data(enc->ef);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = enc->sparse ? gw_tensor_key(&enc->t, first + i) : first + i;
		if (!isfinite(e[k]))
			e[k] = 0.0f;
	}
}

int gw_encode_begin(gw_encoder *enc, const gw_tensor *t)
{
	if (!enc || !t)
		return GW_ERR(GW_EINVAL);
	if (enc->active)
		return GW_ERR(GW_ESTATE);
	int rc = check_tensor(enc->ops, t);
	if (rc < 0)
		return rc;
	if (enc->ef && gw_ef_dim(enc->ef) != t->dim)
		return GW_ERR(GW_EINVAL);
	char why[200];   /* the combination, without touching the detail */
	if (enc->ops->combo && enc->ops->combo(enc, why, sizeof(why)))
		return GW_ERR(GW_EPARAM);
	enc->t = *t;
	enc->sparse = t->keys != NULL;
	enc->total = enc->sparse ? t->nnz : t->dim;
	enc->pos = 0;
	enc->src = t->values;
	if (enc->ops->check) {
		rc = enc->ops->check(enc);
		if (rc < 0)
			return rc;
	}
	if (enc->ef && !(enc->ops->flags & GW_OPS_FUSED_EF)) {
		rc = gw_enc_fold(enc);
		if (rc < 0)
			return rc;
	}
	if (enc->ops->begin) {
		rc = enc->ops->begin(enc);
		if (rc < 0)
			return rc;
	}
	enc->active = true;
	return GW_OK;
}

int gw_encode_abandon(gw_encoder *enc)
{
	if (!enc)
		return GW_ERR(GW_EINVAL);
	if (!enc->active)
		return GW_OK;
	if (enc->ops->abandon) {
		enc->ops->abandon(enc);
		enc->active = false;
		return GW_OK;
	}
	/* Encode the rest and give each frame back to the error buffer: this
	 * works the same for fused and generic feedback, whatever the codec
	 * has already folded into the buffer. */
	uint8_t *buf = enc->ef ? malloc(GW_FRAME_MAX) : NULL;
	int rc = GW_OK;
	if (enc->ef && !buf)
		rc = GW_ERR(GW_ENOMEM);
	while (rc == GW_OK && enc->ef) {
		int n = gw_encode_next(enc, buf, GW_FRAME_MAX);
		if (n <= 0) {
			rc = n;
			break;
		}
		int r = gw_ef_restore(enc->ef, buf, (size_t)n);
		if (r < 0)
			rc = r;
	}
	free(buf);
	enc->active = false;
	return rc;
}

int gw_encode_min_budget(const gw_encoder *enc, const gw_tensor *t)
{
	if (!enc || !t)
		return GW_ERR(GW_EINVAL);
	size_t kb = t->keys ? t->key_bits / 8 : 0;
	size_t min = GW_FRAME_HDR_LEN + enc->ops->min_body(enc, kb);
	return (int)GW_MAX(min, (size_t)GW_BUDGET_MIN);
}

int gw_encode_next(gw_encoder *enc, void *buf, size_t budget)
{
	if (!enc || !buf)
		return GW_ERR(GW_EINVAL);
	if (!enc->active)
		return GW_ERR(GW_ESTATE);
	if (enc->pos >= enc->total) {
		enc->active = false;
		return 0;
	}
	budget = GW_MIN(budget, (size_t)GW_FRAME_MAX);
	size_t min = GW_FRAME_HDR_LEN + enc->ops->min_body(enc, gw_enc_key_bytes(enc));
	if (budget < min || budget < GW_BUDGET_MIN)
		return GW_ERR(GW_EBUDGET);

	uint8_t *b = buf;
	struct gw_frame_info h = {0};
	h.codec = enc->ops->id;
	h.tensor = enc->t.id;
	if (enc->sparse)
		h.flags = GW_FF_SPARSE | (enc->t.key_bits == 64 ? GW_FF_KEY64 : 0);
	int body = enc->ops->encode(enc, b + GW_FRAME_HDR_LEN,
				    budget - GW_FRAME_HDR_LEN, &h);
	if (body < 0)
		return body;
	h.payload_len = (uint32_t)body - h.param_len;
	h.frame_len = GW_FRAME_HDR_LEN + (uint32_t)body;
	/* Codecs work in slice coordinates (and so does the error buffer
	 * below); the wire names the elements of the whole tensor. */
	struct gw_frame_info wire = h;
	if (!enc->sparse)
		wire.start += enc->t.base;
	gw_frame_write_header(b, &wire);
	gw_frame_seal(b, h.frame_len);

	if (enc->ef && !(enc->ops->flags & GW_OPS_FUSED_EF)) {
		/* Second half of generic feedback: e <- c - decode(frame). */
		const uint8_t *params = b + GW_FRAME_HDR_LEN;
		uint64_t first = enc->pos - h.count;   /* entries of this frame */
		int rc = enc->ops->decode(&h, params, params + h.param_len,
					  gw_ef_data(enc->ef), enc->t.dim, -1.0f);
		if (rc < 0)
			return rc;
		ef_sanitize(enc, first, h.count);
	}
	return (int)h.frame_len;
}

uint32_t gw_frame_take(const gw_encoder *enc, size_t cap, size_t fixed,
		       size_t per_entry)
{
	if (cap < fixed + per_entry)
		return 0;
	uint64_t n = (cap - fixed) / per_entry;
	n = GW_MIN(n, enc->total - enc->pos);
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	if (lim)
		n = GW_MIN(n, lim);
	n = GW_MIN(n, (uint64_t)UINT32_MAX);
	if (enc->sparse && n > 1) {
		/* The span field is 32 bits: end the frame before the first key
		 * that lies 2^32 - 1 or more above the frame's first key. Keys
		 * ascend, so binary search keeps far-apart 64-bit keys linear. */
		uint64_t k0 = gw_tensor_key(&enc->t, enc->pos);
		uint64_t lo = 1, hi = n;   /* key[pos + lo - 1] fits; find last fit */
		while (lo < hi) {
			uint64_t mid = lo + (hi - lo + 1) / 2;
			if (gw_tensor_key(&enc->t, enc->pos + mid - 1) - k0 < UINT32_MAX)
				lo = mid;
			else
				hi = mid - 1;
		}
		n = lo;
	}
	return (uint32_t)n;
}

void gw_frame_range(const gw_encoder *enc, uint32_t n, struct gw_frame_info *h)
{
	h->count = n;
	if (!enc->sparse) {
		h->start = enc->pos;
		h->span = n;
		return;
	}
	uint64_t k0 = gw_tensor_key(&enc->t, enc->pos);
	h->start = k0;
	h->span = (uint32_t)(gw_tensor_key(&enc->t, enc->pos + n - 1) - k0 + 1);
}
