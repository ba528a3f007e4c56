/* DeepReduce value codec "f32": the values as they are, n float32
 * little-endian, 4n bytes. The lossless baseline every other value codec is
 * measured against; NaN payloads, infinities and -0 travel bit for bit. */

#include "../codec_internal.h"
#include "dr.h"
#include "value_le.h"

static int f32_encode(const float *v, uint32_t n,
		      const struct dr_value_cfg *cfg, uint8_t *out, size_t cap)
{
	(void)cfg;
	uint64_t need = (uint64_t)n * 4;
	if (need > cap)
		return GW_ERR(GW_EBUDGET);
	if (need > INT32_MAX)
		return GW_ERR(GW_EINVAL);   /* the return value is the length */
	dr_f32_put_le(out, v, n);
	return (int)need;
}

static int f32_decode(const uint8_t *in, size_t len, uint32_t n, float *v)
{
	if (len != (uint64_t)n * 4)
		return GW_ERR(GW_ELENGTH);
	dr_f32_get_le(v, in, n);
	return GW_OK;
}

const struct dr_value_ops dr_value_f32 = {
	.name = "f32",
	.encode = f32_encode,
	.decode = f32_decode,
};
