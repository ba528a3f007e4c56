/* Fuzzes hq's loops (codec/hq_kern.c) below the frame: the code readers,
 * the vector adders a shard runs on every worker's payload, the packers
 * and the rotation. Input: byte 0 = width (2 + byte % 31), byte 1 =
 * limit selector, bytes 2-3 = n (u16 LE, % 4097), bytes 4-7 = a rotation
 * seed, then the payload, copied to a buffer of exactly its size
 * (ceil(n width / 8)) so that ASan sees a read past it.
 * - hq_unpack32 accepts exactly payloads whose codes lie in [-lim, lim]
 *   and whose padding is zero; repacking what it read (hq_pack32, and
 *   hq_pack8 for widths up to 8) gives the payload back byte for byte;
 * - hq_add_codes (widths 2..8, every ISA the CPU has) gives the same
 *   verdict, adds exactly the codes when it accepts and leaves the sums
 *   as they were when it refuses;
 * - the rotation of the codes (as floats) keeps their norm to float
 *   precision and its inverse gives them back.
 * gw_fuzz_last_rc: hq_unpack32's verdict (0 or GW_ECORRUPT). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "gw_cpu.h"
#include "hq_internal.h"

#define HDR 8u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	unsigned w = 2u + data[0] % 31u;
	uint32_t n = ((uint32_t)data[2] | (uint32_t)data[3] << 8) % 4097u;
	uint32_t seed = gw_ld32(data + 4);
	uint64_t wmax = (1ull << (w - 1)) - 1;
	/* The limits a decoder uses: the width's, a worker's Q, tiny ones. */
	uint32_t lims[4] = {(uint32_t)GW_MIN(wmax, (uint64_t)INT32_MAX), 7, 1,
			    (uint32_t)GW_MIN(wmax / 2, (uint64_t)INT32_MAX)};
	uint32_t lim = lims[data[1] % 4];
	size_t plen = (size_t)hq_payload_len(n, w);
	if (size - HDR < plen)
		return 0;
	uint8_t *src = malloc(plen ? plen : 1), *back = calloc(plen + 1, 1);
	int32_t *q = malloc(((size_t)n + 1) * sizeof(int32_t));
	int32_t *acc = malloc(((size_t)n + 1) * sizeof(int32_t));
	int8_t *q8 = malloc((size_t)n + 1);
	float *x = malloc(((size_t)n + 1) * sizeof(float)), *y = malloc(((size_t)n + 1) * sizeof(float));
	GW_FUZZ_CHECK(src && back && q && acc && q8 && x && y);
	memcpy(src, data + HDR, plen);

	int rc = hq_unpack32(src, n, w, lim, q);
	gw_fuzz_last_rc = rc;
	GW_FUZZ_CHECKF(rc == GW_OK || rc == GW_ECORRUPT, "unpack: %d", rc);
	if (rc == GW_OK) {
		for (uint32_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(q[i] >= -(int64_t)lim && q[i] <= (int64_t)lim,
				       "code %u = %d outside +-%u", i, q[i], lim);
		hq_pack32(back, q, n, w);
		GW_FUZZ_CHECKF(!memcmp(back, src, plen), "pack32(unpack) differs, width %u", w);
		if (w <= 8) {
			for (uint32_t i = 0; i < n; i++)
				q8[i] = (int8_t)q[i];
			memset(back, 0, plen + 1);
			hq_pack8(back, q8, n, w);
			GW_FUZZ_CHECKF(!memcmp(back, src, plen), "pack8(unpack) differs, width %u", w);
		}
	}
	if (w <= 8)
		for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
			gw_cpu_force_isa(isa);
			for (uint32_t i = 0; i < n; i++)
				acc[i] = (int32_t)(i * 2654435761u);
			int ra = hq_add_codes(src, n, w, lim, acc);
			GW_FUZZ_CHECKF(ra == rc, "%s: add %d, unpack %d", gw_cpu_isa_name(isa), ra, rc);
			for (uint32_t i = 0; i < n; i++) {
				int32_t want = (int32_t)(i * 2654435761u);
				if (ra == GW_OK)
					want = (int32_t)((uint32_t)want + (uint32_t)q[i]);
				GW_FUZZ_CHECKF(acc[i] == want, "%s: sum %u is %d, want %d",
					       gw_cpu_isa_name(isa), i, acc[i], want);
			}
		}
	gw_cpu_force_isa(-1);

	if (rc == GW_OK && n) {
		double nx = 0, ny = 0, d = 0;
		for (uint32_t i = 0; i < n; i++) {
			x[i] = (float)q[i];
			nx += (double)x[i] * x[i];
		}
		memcpy(y, x, n * sizeof(float));
		hq_rotate(y, n, seed);
		for (uint32_t i = 0; i < n; i++)
			ny += (double)y[i] * y[i];
		GW_FUZZ_CHECKF(fabs(sqrt(ny) - sqrt(nx)) <= 1e-5 * sqrt(nx) + 1e-30,
			       "rotation: norm %g became %g", sqrt(nx), sqrt(ny));
		hq_unrotate(y, n, seed);
		for (uint32_t i = 0; i < n; i++)
			d = fmax(d, fabs((double)y[i] - x[i]));
		GW_FUZZ_CHECKF(d <= 1e-5 * sqrt(nx) + 1e-30, "inverse off by %g (norm %g)", d,
			       sqrt(nx));
	}
	free(src);
	free(back);
	free(q);
	free(acc);
	free(q8);
	free(x);
	free(y);
	return 0;
}
