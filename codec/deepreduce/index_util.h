/* Private to the DeepReduce index codecs: what every encoder checks of its
 * input before writing anything. */
#ifndef GW_DR_INDEX_UTIL_H
#define GW_DR_INDEX_UTIL_H

#include <stdint.h>

#include "../codec_internal.h"
#include "dr.h"

/* The encoders' contract (dr.h): n >= 1 strictly ascending offsets below
 * span <= DR_SPAN_MAX. Checked, because a section built from anything
 * else would decode to other positions than the caller meant: the O(1)
 * part first, the O(n) part only once the section is known to fit — a
 * caller that shrinks its frame on GW_EBUDGET asks with large n first. */
static inline int dr_index_check_args(const uint32_t *off, uint32_t n,
				      uint32_t span)
{
	if (!off || n == 0 || span > DR_SPAN_MAX || n > span)
		return GW_ERR(GW_EINVAL);
	return GW_OK;
}

static inline int dr_index_check_input(const uint32_t *off, uint32_t n,
				       uint32_t span)
{
	if (dr_index_check_args(off, n, span) < 0)
		return GW_ERR(GW_EINVAL);
	for (uint32_t i = 0; i < n; i++)
		if (off[i] >= span || (i && off[i] <= off[i - 1]))
			return GW_ERR(GW_EINVAL);
	return GW_OK;
}

/* Both checks around the O(1) budget test of an encoder whose section
 * takes at least min bytes. */
static inline int dr_index_check_fit(const uint32_t *off, uint32_t n,
				     uint32_t span, uint64_t min, size_t cap)
{
	int rc = dr_index_check_args(off, n, span);
	if (rc < 0)
		return rc;
	if (min > cap)
		return GW_ERR(GW_EBUDGET);
	return dr_index_check_input(off, n, span);
}

#endif /* GW_DR_INDEX_UTIL_H */
