/* Parameter names and bounds: the generic ones every codec accepts, then
 * whatever the codec's ops table lists. */
#include <string.h>

#include "codec_internal.h"

static const char *const names[GW_PARAM_COUNT_] = {
	[GW_PARAM_MAX_FRAME_ELEMS] = "max_frame_elems",
	[GW_PARAM_SPARSITY] = "sparsity",
	[GW_PARAM_SEED] = "seed",
	[GW_PARAM_FRACTION] = "fraction",
	[GW_PARAM_QUANTILES] = "quantiles",
	[GW_PARAM_GROUPS] = "groups",
	[GW_PARAM_ROWS] = "rows",
	[GW_PARAM_COL_RATIO] = "col_ratio",
	[GW_PARAM_COLS] = "cols",
};

static const struct gw_param_spec generic[] = {
	{GW_PARAM_MAX_FRAME_ELEMS, {0, UINT32_MAX, 0, 1}},
};

const char *gw_param_name(gw_param p)
{
	return (unsigned)p < GW_PARAM_COUNT_ ? names[p] : NULL;
}

int gw_param_by_name(const char *name)
{
	if (!name)
		return GW_ERR(GW_EINVAL);
	for (int p = 0; p < GW_PARAM_COUNT_; p++)
		if (names[p] && !strcmp(names[p], name))
			return p;
	return GW_ERR(GW_EPARAM);
}

static const struct gw_param_spec *find(const struct gw_codec_ops *ops,
					gw_param p)
{
	for (size_t i = 0; i < GW_ARRAY_SIZE(generic); i++)
		if (generic[i].param == p)
			return &generic[i];
	for (size_t i = 0; i < ops->nparams; i++)
		if (ops->params[i].param == p)
			return &ops->params[i];
	return NULL;
}

int gw_param_bounds(int id, gw_param p, gw_bounds *b)
{
	const struct gw_codec_ops *ops = gw_codec_ops(id);
	if (!ops)
		return GW_ERR(GW_ECODEC);
	const struct gw_param_spec *s = find(ops, p);
	if (!s)
		return GW_ERR(GW_EPARAM);
	if (b)
		*b = s->bounds;
	return GW_OK;
}

void gw_params_defaults(const struct gw_codec_ops *ops, double *v)
{
	for (int p = 0; p < GW_PARAM_COUNT_; p++) {
		const struct gw_param_spec *s = find(ops, (gw_param)p);
		v[p] = s ? s->bounds.def : 0;
	}
}

int gw_encoder_set_param(gw_encoder *enc, gw_param p, double v)
{
	if (!enc)
		return GW_ERR(GW_EINVAL);
	const struct gw_param_spec *s = find(enc->ops, p);
	if (!s)
		return GW_ERR(GW_EPARAM);
	/* NaN fails both comparisons, so test for "inside" rather than "out". */
	if (!(v >= s->bounds.lo && v <= s->bounds.hi))
		return GW_ERR(GW_EBOUNDS);
	if (s->bounds.integer && v != (double)(int64_t)v)
		return GW_ERR(GW_EBOUNDS);
	if (enc->active)
		return GW_ERR(GW_ESTATE);
	enc->param[p] = v;
	return GW_OK;
}

int gw_encoder_get_param(const gw_encoder *enc, gw_param p, double *v)
{
	if (!enc || !v)
		return GW_ERR(GW_EINVAL);
	if (!find(enc->ops, p))
		return GW_ERR(GW_EPARAM);
	*v = enc->param[p];
	return GW_OK;
}
