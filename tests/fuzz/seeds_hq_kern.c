/* Seeds of fuzz_hq_kern.c (its input layout is there): payloads of every
 * width, codes at their limits, and the ways a payload is refused (a code
 * past the limit, padding set). Each name carries the verdict
 * regress_main checks: .ok or .GW_ECORRUPT. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "seeds_dr.h"

/* n codes of width w, LSB first, into p (zeroed first); code i = f(i). */
static size_t pack(uint8_t *p, uint32_t n, unsigned w, int64_t (*f)(uint32_t, unsigned))
{
	size_t len = ((size_t)n * w + 7) / 8;
	memset(p, 0, len + 1);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t c = (uint64_t)f(i, w);
		for (unsigned k = 0; k < w; k++)
			if ((c >> k) & 1)
				p[((size_t)i * w + k) / 8] |= (uint8_t)(1u << (((size_t)i * w + k) % 8));
	}
	return len;
}

/* Codes sweeping [-(2^(w-1) - 1), 2^(w-1) - 1]. */
static int64_t sweep(uint32_t i, unsigned w)
{
	int64_t m = (int64_t)((1ull << (w - 1)) - 1);
	return (int64_t)(i % (uint64_t)(2 * m + 1)) - m;
}

static int64_t most_negative(uint32_t i, unsigned w)
{
	return i == 3 ? -(int64_t)(1ull << (w - 1)) : 0;
}

int seeds_hq_kern(const char *name, seed_write_fn write)
{
	if (name && strcmp(name, "hq_kern"))
		return 0;
	static uint8_t in[8 + 4097 * 4 + 8];
	static const uint32_t ns[] = {0, 1, 7, 8, 9, 63, 64, 65, 2048, 2200, 4096};
	char nm[64];
	for (unsigned w = 2; w <= 32; w += (w < 8 ? 1 : 6))
		for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
			uint32_t n = ns[k];
			memset(in, 0, 8);
			in[0] = (uint8_t)(w - 2);
			in[1] = 0;   /* the width's limit */
			in[2] = (uint8_t)n, in[3] = (uint8_t)(n >> 8);
			in[4] = (uint8_t)(w * 31 + k);
			size_t len = pack(in + 8, n, w, sweep);
			snprintf(nm, sizeof(nm), "w%u-n%u.ok", w, n);
			write("hq_kern", nm, in, 8 + len);
		}
	/* -2^(w-1), one past the width's limit; then padding set. */
	for (unsigned w = 2; w <= 8; w++) {
		memset(in, 0, 8);
		in[0] = (uint8_t)(w - 2);
		in[2] = 9;
		size_t len = pack(in + 8, 9, w, most_negative);
		snprintf(nm, sizeof(nm), "w%u-most-negative.GW_ECORRUPT", w);
		write("hq_kern", nm, in, 8 + len);
		len = pack(in + 8, 9, w, sweep);
		if ((9 * w) % 8) {
			in[8 + len - 1] |= 0x80;
			snprintf(nm, sizeof(nm), "w%u-padding.GW_ECORRUPT", w);
			write("hq_kern", nm, in, 8 + len);
		}
	}
	/* A worker's 4-bit codes held to Q = 7 (selector 1): 7 passes, the
	 * width's -8 does not. */
	memset(in, 0, 8);
	in[0] = 2, in[1] = 1, in[2] = 16;
	size_t len = pack(in + 8, 16, 4, sweep);
	write("hq_kern", "w4-q7.ok", in, 8 + len);
	return 1;
}
