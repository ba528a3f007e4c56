/* One chunk as a worker encodes it and a shard sums it (oracle.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

gw_encoder *oracle_encoder(int codec, const char *params, uint32_t k)
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
		/* Values as the job's parser reads them: a number, or one of an
		 * enumerated parameter's names (rounding=stochastic). */
		int p = gw_param_by_name(kv);
		double v;
		if (p < 0 || gw_param_value((gw_param)p, eq + 1, &v) < 0 ||
		    gw_encoder_set_param(e, (gw_param)p, v) < 0)
			goto fail;
	}
	if (gw_encoder_set_param(e, GW_PARAM_MAX_FRAME_ELEMS, k) < 0)
		goto fail;
	return e;
fail:
	gw_encoder_free(e);
	return NULL;
}

int oracle_frames_sparse(int codec, const char *params)
{
	float x[40];
	for (int i = 0; i < 40; i++)
		x[i] = (float)(i + 1);
	uint8_t buf[1024];
	gw_encoder *e = oracle_encoder(codec, params, 40);
	gw_tensor t = {.id = 0, .dim = 40, .values = x};
	gw_frame_info fi;
	int rc = e ? gw_encode_begin(e, &t) : GW_ENOMEM;
	int n = rc < 0 ? rc : gw_encode_next(e, buf, sizeof(buf));
	rc = n > 0 ? gw_frame_peek(buf, (size_t)n, &fi) : GW_ESTATE;
	gw_encoder_free(e);
	return rc < 0 ? rc : (fi.flags & GW_FF_SPARSE) != 0;
}

int oracle_encode_one(gw_encoder *e, const gw_tensor *t, uint8_t *frame, size_t room)
{
	int n = gw_encode_begin(e, t);
	if (n == GW_OK)
		n = gw_encode_next(e, frame, room);
	uint8_t none[GW_BUDGET_MIN];
	if (n > 0 && gw_encode_next(e, none, sizeof(none)) != 0)
		n = GW_EBUDGET;   /* a chunk is one frame */
	if (n <= 0)
		gw_encode_abandon(e);
	return n < 0 ? n : n ? n : GW_ESTATE;
}

int oracle_decode_chunk(int sparse, const uint8_t *frame, size_t n, float *dst,
			uint64_t base, uint32_t len)
{
	int rc = sparse ? gw_decode(frame, n, dst, len)
			: gw_decode_window(frame, n, dst, base, len);
	return rc < 0 ? rc : 0;
}

int oracle_chunk_add(int sparse, const uint8_t *frame, size_t n, uint64_t base,
		     uint32_t len, float *part, float *sum)
{
	memset(part, 0, len * sizeof(float));
	int rc = oracle_decode_chunk(sparse, frame, n, part, base, len);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < len; i++)
		sum[i] += part[i];
	return 0;
}
