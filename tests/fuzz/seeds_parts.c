/* Seeds of the harnesses of codec parts below the frame:
 * fuzz_delta_binary.c (codec/delta_binary.c's key blocks) and
 * fuzz_quantile.c (codec/quantile.c's KLL sketch). Neither draws on the
 * generator: each input comes from fixed formulas. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec_internal.h"
#include "delta_binary.h"
#include "seeds_common.h"

/* delta_binary: header (wide, n, base, limit) + a block gw_db_encode()
 * wrote, for narrow and wide blocks of runs, gaps of every width, one key
 * and none; then one with a flag bit set past the last key. */
void seeds_delta_binary(void)
{
	static const uint64_t gaps[] = {0, 1, 255, 256, 65535, 65536, 0xffffff, 0x1000000, 0xffffffffull};
	uint64_t keys[64];
	uint8_t buf[11 + 16 + 64 * 8];
	int f = 0;
	for (int wide = 0; wide < 2; wide++)
		for (uint32_t n = 0; n <= 40; n += 1 + n) {
			uint64_t k = 7;
			for (uint32_t i = 0; i < n; i++) {
				k += gaps[(i * 5 + n) % 9] + (i ? 1 : 0);
				keys[i] = k;
			}
			memset(buf, 0, 11);
			buf[0] = (uint8_t)wide;
			buf[1] = (uint8_t)n;
			gw_st32(buf + 3, 7);
			size_t len = gw_db_encode(keys, n, 7, wide, buf + 11);
			char name[32];
			snprintf(name, sizeof(name), "block-%d", f++);
			mc_write_file("delta_binary", name, buf, 11 + len);
		}
	buf[0] = 0;
	buf[1] = 1;
	buf[2] = 0;
	buf[11] = 0x04;   /* key 1's flag in a block of one key */
	buf[12] = 3;
	mc_write_file("delta_binary", "reserved-flag", buf, 13);
}

/* quantile: k, log2 q, a merge split and a seed, then values: ascending,
 * descending, all equal, mixed signs and magnitudes, with non-finite ones. */
void seeds_quantile(void)
{
	float v[1000];
	uint8_t buf[11 + sizeof(v)];
	for (int f = 0; f < 5; f++) {
		uint64_t seed = 0x9e3779b97f4a7c15ull * (uint64_t)(f + 1);
		for (int i = 0; i < 1000; i++) {
			switch (f) {
			case 0: v[i] = (float)i; break;
			case 1: v[i] = (float)(1000 - i) * 1e-3f; break;
			case 2: v[i] = 0.25f; break;
			case 3: v[i] = (float)((i * 7919) % 1000 - 500) * (i % 3 ? 1e-6f : 1e3f); break;
			default: v[i] = i % 10 ? (float)i : (i % 20 ? INFINITY : NAN); break;
			}
		}
		buf[0] = (uint8_t)(f * 60);
		buf[1] = (uint8_t)(f + 3);
		buf[2] = (uint8_t)(f * 50);
		memcpy(buf + 3, &seed, 8);
		memcpy(buf + 11, v, sizeof(v));
		char name[32];
		snprintf(name, sizeof(name), "values-%d", f);
		mc_write_file("quantile", name, buf, sizeof(buf));
	}
}
