/* GRADWIRE_0.1's forms of the codec calls that 0.2 changed: each took a
 * message buffer (err, errlen) where 0.2 gives gw_error_detail(). Kept so
 * that a binary linked against libgradwire 0.1 runs unchanged; built into
 * libgradwire.so only (a .symver needs the map's version nodes), never
 * declared in a header. */
#include <stdio.h>

#include <gw/codec.h>

#define GW_COMPAT(name, ver) __asm__(".symver " #name "_v01, " #name "@" ver)

static void copy_detail(char *err, size_t errlen)
{
	if (err && errlen)
		snprintf(err, errlen, "%s", gw_error_detail());
}

GW_API int gw_encoder_set_params_v01(gw_encoder *enc, const char *list, char *err,
				     size_t errlen);
GW_COMPAT(gw_encoder_set_params, "GRADWIRE_0.1");
int gw_encoder_set_params_v01(gw_encoder *enc, const char *list, char *err, size_t errlen)
{
	int rc = gw_encoder_set_params(enc, list);
	if (rc < 0)
		copy_detail(err, errlen);
	return rc;
}

GW_API int gw_encoder_check_params_v01(const gw_encoder *enc, char *err, size_t errlen);
GW_COMPAT(gw_encoder_check_params, "GRADWIRE_0.1");
int gw_encoder_check_params_v01(const gw_encoder *enc, char *err, size_t errlen)
{
	int rc = gw_encoder_check_params(enc);
	if (rc < 0)
		copy_detail(err, errlen);
	return rc;
}

GW_API gw_encoder *gw_encoder_from_string_v01(const char *spec, char *err, size_t errlen);
GW_COMPAT(gw_encoder_from_string, "GRADWIRE_0.1");
gw_encoder *gw_encoder_from_string_v01(const char *spec, char *err, size_t errlen)
{
	gw_encoder *enc = gw_encoder_from_string(spec);
	if (!enc)
		copy_detail(err, errlen);
	return enc;
}
