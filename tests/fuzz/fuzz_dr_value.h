/* The input and the first checks of the DeepReduce value-section harnesses
 * (fuzz_dr_f32.c, fuzz_dr_deflate.c, fuzz_dr_qsgd.c, fuzz_dr_fit.h).
 * Input: u16 n (LE, 1..DR_FUZZ_NMAX, else ignored), then the section,
 * copied to a buffer of exactly its size so that ASan sees any read past
 * it; the output is exactly n floats. */
#ifndef GW_FUZZ_DR_VALUE_H
#define GW_FUZZ_DR_VALUE_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "deepreduce/dr.h"
#include "fuzz_common.h"

#define DR_FUZZ_NMAX 4096u

struct dr_value_input {
	uint32_t n;
	size_t len;     /* section bytes */
	uint8_t *in;    /* the section, in a block of exactly len bytes */
	float *v;       /* n floats, decoded */
	int rc;         /* the decoder's verdict on the section */
};

/* Reads the input into x and decodes its section with ops (the "as is"
 * verdict regress_main checks: .ok / .GW_E* names). Returns 0 if the input
 * is ignored, else 1; dr_value_input_free() then frees x. */
static inline int dr_value_input(const struct dr_value_ops *ops, const uint8_t *data,
				 size_t size, struct dr_value_input *x)
{
	if (size < 2)
		return 0;
	x->n = (uint32_t)data[0] | (uint32_t)data[1] << 8;
	if (!x->n || x->n > DR_FUZZ_NMAX)
		return 0;
	x->len = size - 2;
	x->in = malloc(x->len ? x->len : 1);
	x->v = malloc(x->n * sizeof(float));
	GW_FUZZ_CHECK(x->in && x->v);
	memcpy(x->in, data + 2, x->len);
	x->rc = ops->decode(x->in, x->len, x->n, x->v);
	gw_fuzz_last_rc = x->rc;
	return 1;
}

static inline void dr_value_input_free(struct dr_value_input *x)
{
	free(x->in);
	free(x->v);
}

/* For the codecs that state a bound: bound() on the section must accept
 * what decode() accepted, with a finite bound >= 0 (left in *bound), and
 * never accept what decode() rejects for its layout; decode() rejects
 * with GW_ECORRUPT, GW_ELENGTH or GW_ENOMEM only. */
static inline void dr_value_check_bound(const struct dr_value_ops *ops,
					const struct dr_value_input *x, float *bound)
{
	int brc = ops->bound(x->in, x->len, x->n, bound);
	if (x->rc == 0) {
		GW_FUZZ_CHECKF(brc == 0 && *bound >= 0 && isfinite(*bound), "bound rc %d", brc);
		return;
	}
	GW_FUZZ_CHECKF(x->rc == GW_ECORRUPT || x->rc == GW_ELENGTH || x->rc == GW_ENOMEM,
		       "unexpected rc %d", x->rc);
	GW_FUZZ_CHECK(brc == 0 || brc == x->rc);
}

#endif /* GW_FUZZ_DR_VALUE_H */
