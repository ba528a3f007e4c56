/* The one list of codecs. Adding a codec: one file with its ops table, one
 * name in GW_CODECS, one id in gw_codec_id. */
#include "codec_internal.h"

/* Each codec's ops table, gw_codec_<name>, in the order gw_codec_list()
 * gives them: the externs and the registry are both made from this list. */
#define GW_CODECS(X) X(raw) X(bf16) X(int8) X(3lc) X(terngrad) X(onebit) \
	X(topk) X(sketchml) X(countsketch) X(deepreduce) X(hq)

#define GW_CODEC_EXTERN(name) extern const struct gw_codec_ops gw_codec_##name;
GW_CODECS(GW_CODEC_EXTERN)

#define GW_CODEC_ENTRY(name) &gw_codec_##name,
static const struct gw_codec_ops *const registry[] = {GW_CODECS(GW_CODEC_ENTRY)};

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
