/* The one list of codecs. Adding a codec: one file with its ops table, one
 * line here, one id in gw_codec_id. */
#include "codec_internal.h"

extern const struct gw_codec_ops gw_codec_raw;
extern const struct gw_codec_ops gw_codec_bf16;
extern const struct gw_codec_ops gw_codec_int8;
extern const struct gw_codec_ops gw_codec_3lc;
extern const struct gw_codec_ops gw_codec_terngrad;
extern const struct gw_codec_ops gw_codec_onebit;
extern const struct gw_codec_ops gw_codec_topk;
extern const struct gw_codec_ops gw_codec_sketchml;
extern const struct gw_codec_ops gw_codec_countsketch;
extern const struct gw_codec_ops gw_codec_deepreduce;
extern const struct gw_codec_ops gw_codec_hq;

static const struct gw_codec_ops *const registry[] = {
	&gw_codec_raw,
	&gw_codec_bf16,
	&gw_codec_int8,
	&gw_codec_3lc,
	&gw_codec_terngrad,
	&gw_codec_onebit,
	&gw_codec_topk,
	&gw_codec_sketchml,
	&gw_codec_countsketch,
	&gw_codec_deepreduce,
	&gw_codec_hq,
};

const struct gw_codec_ops *gw_codec_ops(int id)
{
	for (size_t i = 0; i < GW_ARRAY_SIZE(registry); i++)
		if (registry[i]->id == id)
			return registry[i];
	return NULL;
}

int gw_codec_by_name(const char *name)
{
	if (!name)
		return GW_ERR(GW_EINVAL);
	for (size_t i = 0; i < GW_ARRAY_SIZE(registry); i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i]->id;
	return GW_ERR(GW_ECODEC);
}

const char *gw_codec_name(int id)
{
	const struct gw_codec_ops *ops = gw_codec_ops(id);
	return ops ? ops->name : NULL;
}

int gw_codec_list(int *ids, int cap)
{
	int n = (int)GW_ARRAY_SIZE(registry);
	for (int i = 0; ids && i < n && i < cap; i++)
		ids[i] = registry[i]->id;
	return n;
}

int gw_codec_caps(int id)
{
	const struct gw_codec_ops *ops = gw_codec_ops(id);
	return ops ? (int)ops->caps : GW_ERR(GW_ECODEC);
}
