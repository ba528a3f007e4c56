/* The body of the curve-fit value harnesses (fuzz_dr_poly.c,
 * fuzz_dr_dexp.c). Input: see fuzz_dr_value.h. An accepted section must
 * decode to finite values, and bound() must accept it with a finite bound
 * >= 0. The decoded values are then fitted again (with the section's own
 * settings where it has any): unless the encoder refuses them (GW_EINVAL:
 * a fit that overflows float32), that section must decode within the
 * bound it states — the encoder's bound is measured with the decoder's
 * arithmetic. Rejections are GW_ECORRUPT or GW_ELENGTH, and bound() never
 * accepts what decode() rejects for its layout. */
#ifndef GW_FUZZ_DR_FIT_H
#define GW_FUZZ_DR_FIT_H

#include "fuzz_dr_value.h"

struct dr_fit_fuzz {
	const struct dr_value_ops *ops;
	/* the encoder settings to re-fit with, read from the section */
	void (*cfg)(const uint8_t *section, struct dr_value_cfg *cfg);
	size_t fixed_cap;   /* section bytes besides 4 per value, at most */
};

static inline void refit(const struct dr_fit_fuzz *f, const float *v, uint32_t n, const uint8_t *in)
{
	const struct dr_value_ops *ops = f->ops;
	struct dr_value_cfg cfg = {0};
	if (f->cfg)
		f->cfg(in, &cfg);
	size_t cap = f->fixed_cap + 4 * (size_t)n;
	uint8_t *out = malloc(cap);
	float *back = malloc(n * sizeof(float));
	GW_FUZZ_CHECK(out && back);
	int w = ops->encode(v, n, &cfg, out, cap);
	GW_FUZZ_CHECKF(w > 0 || w == GW_EINVAL, "re-encode: %d", w);
	if (w > 0) {
		float bound;
		GW_FUZZ_CHECK(ops->bound(out, (size_t)w, n, &bound) == 0);
		GW_FUZZ_CHECK(ops->decode(out, (size_t)w, n, back) == 0);
		for (uint32_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(fabs((double)back[i] - v[i]) <= bound,
				       "value %u: %a -> %a, bound %a", i, (double)v[i],
				       (double)back[i], (double)bound);
	}
	free(out);
	free(back);
}

static inline int dr_fit_fuzz_one(const struct dr_fit_fuzz *f, const uint8_t *data, size_t size)
{
	struct dr_value_input x;
	if (!dr_value_input(f->ops, data, size, &x))
		return 0;
	float bound;
	dr_value_check_bound(f->ops, &x, &bound);
	if (x.rc == 0) {
		for (uint32_t i = 0; i < x.n; i++)
			GW_FUZZ_CHECKF(isfinite(x.v[i]), "value %u not finite", i);
		refit(f, x.v, x.n, x.in);
	}
	dr_value_input_free(&x);
	return 0;
}

#endif /* GW_FUZZ_DR_FIT_H */
