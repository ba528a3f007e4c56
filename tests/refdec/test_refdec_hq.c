/* test_refdec's hand-built hq frames (wire-format §4.11.2): each rule
 * alone and in its order, the code limits, and what an accepted frame
 * adds, on every ISA. */
#include <math.h>

#include "../gw_test.h"
#include "gw_cpu.h"
#include "test_refdec.h"

/* hq's 20 bytes of params (§4.11). */
static void hq_par(uint8_t *p, unsigned bits, unsigned width, unsigned flags, uint32_t contrib,
		   uint32_t seed, uint32_t scale, uint32_t next)
{
	p[0] = (uint8_t)bits;
	p[1] = (uint8_t)width;
	p[2] = (uint8_t)flags;
	p[3] = 0;
	td_st32(p + 4, contrib);
	td_st32(p + 8, seed);
	td_st32(p + 12, scale);
	td_st32(p + 16, next);
}

/* n codes of width bits packed as §4.11 says, LSB first; the rest of the
 * last byte zero. Returns the payload's length. */
static uint32_t hq_pack(uint8_t *pay, const int64_t *q, uint32_t n, unsigned width)
{
	uint32_t len = (uint32_t)(((uint64_t)n * width + 7) / 8);
	memset(pay, 0, len);
	for (uint32_t i = 0; i < n; i++)
		for (unsigned k = 0; k < width; k++) {
			uint64_t j = (uint64_t)i * width + k;
			if (((uint64_t)q[i] >> k) & 1)
				pay[j / 8] |= (uint8_t)(1u << (j % 8));
		}
	return len;
}

/* §4.11.2: hq's rules, each alone and in their order, and what an
 * accepted frame adds. */
void hand_built_hq(struct bufs *b, uint8_t *f, uint8_t *pay)
{
	uint8_t hp[20];
	int64_t q[8192];
	uint32_t s7 = 0x40e00000;   /* 7.0f: bits 4 give step 1 */
	uint32_t one = 0x3f800000, inf = 0x7f800000, nan = 0x7fc00000, zero_neg = 0x80000000;
	size_t n;
	uint32_t pl;
	const unsigned R = 0x1, S = 0x2, P = 0x4;
	static const int64_t w5[5] = {3, -7, 0, 7, -1};

#define HQ(count, plen_, paylen)                                                              \
	td_build(f, GW_CODEC_HQ, 0, (count), 40, (count), hp, (plen_), pay, (paylen))

	/* an unrotated worker frame: code q adds q exactly */
	pl = hq_pack(pay, w5, 5, 4);
	hq_par(hp, 4, 4, 0, 1, 0, s7, s7);
	n = HQ(5, 20, pl);
	td_expect(b, f, n, 100, 5, "hq unrotated, bits 4, step 1");
	for (int i = 0; i < 5; i++)
		GW_CHECK(gw_test_bits(b->lib[40 + i]) == gw_test_bits(b->init[40 + i] + (float)w5[i]),
			 "hq: element %d: %a, want %a", i, (double)b->lib[40 + i],
			 (double)(b->init[40 + i] + (float)w5[i]));
	/* 1: params length */
	n = td_build(f, GW_CODEC_HQ, 0, 5, 40, 5, hp, 19, pay, pl);
	td_expect(b, f, n, 100, GW_ELENGTH, "hq params of 19 bytes");
	n = td_build(f, GW_CODEC_HQ, 0, 5, 40, 5, NULL, 0, pay, pl);
	td_expect(b, f, n, 100, GW_ELENGTH, "hq without params");
	/* Each rule alone and in its order, one frame of 5 codes at 40 each:
	 * params (and the reserved byte, p[3]), the payload's length, what
	 * decoding it gives. */
	const struct {
		unsigned bits, width, flags;
		uint32_t contrib, seed, scale, next;
		uint8_t reserved;
		uint32_t paylen;
		int want;
		const char *what;
	} rule[] = {
		/* 2 before 3: reserved flag, reserved byte */
		{9, 4, 0x8, 1, 0, s7, s7, 0, pl, GW_ERESERVED, "hq reserved flag 3 and bits 9"},
		{4, 4, 0x80, 1, 0, s7, s7, 0, pl, GW_ERESERVED, "hq reserved flag 7"},
		{4, 4, 0, 1, 0, s7, s7, 1, pl, GW_ERESERVED, "hq reserved byte"},
		/* 3: bits, width, contributors */
		{1, 1, 0, 1, 0, s7, s7, 0, 1, GW_ECORRUPT, "hq bits 1"},
		{9, 9, 0, 1, 0, s7, s7, 0, 6, GW_ECORRUPT, "hq bits 9"},
		{4, 5, 0, 1, 0, s7, s7, 0, 4, GW_ECORRUPT, "hq worker width 5, bits 4"},
		{4, 4, 0, 2, 0, s7, s7, 0, pl, GW_ECORRUPT, "hq worker of 2 contributors"},
		{4, 4, 0, 0, 0, s7, s7, 0, pl, GW_ECORRUPT, "hq worker of 0 contributors"},
		{4, 33, S, 2, 0, s7, s7, 0, 21, GW_ECORRUPT, "hq sum width 33"},
		{4, 1, S, 2, 0, s7, s7, 0, 1, GW_ECORRUPT, "hq sum width 1"},
		{4, 4, S, 0, 0, s7, s7, 0, pl, GW_ECORRUPT, "hq sum of 0 contributors"},
		{4, 4, S, 1, 0, s7, s7, 0, pl, 5, "hq sum of 1 contributor"},
		{4, 2, S, 5, 0, s7, s7, 0, 2, GW_ECORRUPT,
		 "hq sum width 2 with codes of 4 bits: 7 > 1"},
		/* 3 before 4 before 5 before 6 */
		{4, 5, 0, 1, 9, zero_neg, s7, 0, 1, GW_ECORRUPT,
		 "hq width, seed, scale and length wrong"},
		/* 4: a seed without ROTATED */
		{4, 4, 0, 1, 9, s7, s7, 0, pl, GW_ECORRUPT, "hq seed without ROTATED"},
		{4, 4, R, 1, 0, s7, s7, 0, pl, 5, "hq ROTATED with seed 0"},
		/* 5: scale and next: finite, sign bit clear */
		{4, 4, R, 1, 77, zero_neg, s7, 0, pl, GW_ECORRUPT, "hq scale -0"},
		{4, 4, R, 1, 77, s7, zero_neg, 0, pl, GW_ECORRUPT, "hq next -0"},
		{4, 4, R, 1, 77, nan, s7, 0, pl, GW_ECORRUPT, "hq scale NaN"},
		{4, 4, R, 1, 77, s7, 0xffc00000, 0, pl, GW_ECORRUPT, "hq next -NaN"},
		{4, 4, R, 1, 77, inf, s7, 0, pl, GW_ECORRUPT, "hq scale +Inf"},
		{4, 4, R, 1, 77, s7, inf, 0, pl, GW_ECORRUPT, "hq next +Inf"},
		{4, 4, R, 1, 77, 0xbf800000, s7, 0, pl, GW_ECORRUPT, "hq scale -1"},
		{4, 4, R, 1, 77, 0, 0, 0, pl, 5, "hq scale and next 0"},
		{4, 4, R, 1, 77, 0x00000001, 0x7f7fffff, 0, pl, 5,
		 "hq scale the least subnormal, next FLT_MAX"},
		{4, 4, R, 1, 77, 0x7f7fffff, one, 0, pl, 5, "hq scale FLT_MAX"},
		/* 5 before 6 */
		{4, 4, 0, 1, 0, nan, s7, 0, pl + 1, GW_ECORRUPT, "hq scale NaN and payload long"},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(rule); i++) {
		hq_par(hp, rule[i].bits, rule[i].width, rule[i].flags, rule[i].contrib,
		       rule[i].seed, rule[i].scale, rule[i].next);
		hp[3] = rule[i].reserved;
		n = HQ(5, 20, rule[i].paylen);
		td_expect(b, f, n, 100, rule[i].want, rule[i].what);
	}
	/* 6 before 7 */
	pay[0] = 0x08;   /* code 0: -8 */
	hq_par(hp, 4, 4, 0, 1, 0, s7, s7);
	n = HQ(5, 20, pl - 1);
	td_expect(b, f, n, 100, GW_ELENGTH, "hq payload short, a code -8");
	n = HQ(5, 20, pl + 1);
	td_expect(b, f, n, 100, GW_ELENGTH, "hq payload long, a code -8");
	/* 7: codes within [-L, L], padding zero */
	n = HQ(5, 20, pl);
	td_expect(b, f, n, 100, GW_ECORRUPT, "hq worker code -2^(bits-1)");
	pl = hq_pack(pay, w5, 5, 4);
	pay[2] |= 0x10;   /* the first padding bit (bit 20) */
	n = HQ(5, 20, pl);
	td_expect(b, f, n, 100, GW_ECORRUPT, "hq padding bit 20");
	pl = hq_pack(pay, w5, 5, 4);
	pay[2] |= 0x80;   /* the last padding bit */
	n = HQ(5, 20, pl);
	td_expect(b, f, n, 100, GW_ECORRUPT, "hq padding bit 23");
	hq_par(hp, 4, 4, P, 1, 0, s7, s7);
	pay[2] = 0x80;
	n = HQ(5, 20, pl);
	td_expect(b, f, n, 100, GW_ECORRUPT, "hq POISON with a padding bit");
	pl = hq_pack(pay, w5, 5, 4);
	n = HQ(5, 20, pl);
	td_expect(b, f, n, 100, 5, "hq POISON");
	for (int i = 0; i < 5; i++)
		GW_CHECK(isnan(b->lib[40 + i]), "hq POISON: element %d is %a", i,
			 (double)b->lib[40 + i]);
	GW_CHECK(gw_test_bits(b->lib[45]) == gw_test_bits(b->init[45]), "hq POISON: beyond");
	/* L = min(contributors Q, 2^(width-1) - 1) */
	static const struct {
		unsigned bits, width;
		uint32_t contrib;
		int64_t code;
		int want;
	} lim[] = {
		{2, 4, 2, 2, 1},   {2, 4, 2, -2, 1},  {2, 4, 2, 3, GW_ECORRUPT},
		{2, 4, 2, -3, GW_ECORRUPT},	      {2, 3, 100, 3, 1},
		{2, 3, 100, -3, 1}, {2, 3, 100, -4, GW_ECORRUPT},
		{8, 32, 0xffffffffu, 0x7fffffff, 1},  {8, 32, 0xffffffffu, -0x7fffffff, 1},
		{8, 32, 0xffffffffu, -0x80000000ll, GW_ECORRUPT},
		{8, 31, 16909320, 0x3fffffff, 1},     {8, 32, 16909320, 2147483640, 1},
		{8, 32, 16909320, 2147483641, GW_ECORRUPT},
		{3, 2, 1, 1, 1},    {3, 2, 1, -2, GW_ECORRUPT},  {3, 3, 1, -3, 1},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(lim); i++) {
		char what[120];
		snprintf(what, sizeof(what), "hq %s bits %u width %u of %u: code %lld",
			 lim[i].bits == lim[i].width && lim[i].contrib == 1 ? "worker" : "sum",
			 lim[i].bits, lim[i].width, lim[i].contrib, (long long)lim[i].code);
		unsigned fl = lim[i].bits == lim[i].width && lim[i].contrib == 1 ? 0 : S;
		hq_par(hp, lim[i].bits, lim[i].width, fl | R, lim[i].contrib, 5, s7, s7);
		pl = hq_pack(pay, &lim[i].code, 1, lim[i].width);
		n = HQ(1, 20, pl);
		td_expect(b, f, n, 100, lim[i].want, what);
	}
	/* Rotated frames whose blocks are 4096, 2048, ..., 1: every block
	 * size, odd and even k, sign draws past the first 64 values. */
	gw_test_rng r = {99};
	uint32_t counts[] = {1, 2, 3, 7, 64, 65, 4096, 8191, 6000};
	for (size_t c = 0; c < GW_ARRAY_SIZE(counts); c++)
		for (unsigned width = 2; width <= 32; width += 10) {
			uint32_t cnt = counts[c];
			int64_t L = width == 32 ? 0x7fffffff : ((int64_t)1 << (width - 1)) - 1;
			for (uint32_t i = 0; i < cnt; i++)
				q[i] = (int64_t)gw_test_below(&r, 2 * (uint64_t)L + 1) - L;
			hq_par(hp, 8, width, S | R, 0xffffffffu, (uint32_t)gw_test_rand(&r),
			       0x3e4ccccd, s7);
			pl = hq_pack(pay, q, cnt, width);
			n = td_build(f, GW_CODEC_HQ, 0, cnt, 3, cnt, hp, 20, pay, pl);
			/* the library's every ISA path against the one reference */
			for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
				if (gw_cpu_force_isa(isa) < 0)
					continue;
				char what[80];
				snprintf(what, sizeof(what), "hq rotated sum of %u codes of %u bits, %s",
					 cnt, width, gw_cpu_isa_name(isa));
				td_expect(b, f, n, 1 << 16, (int)cnt, what);
			}
			gw_cpu_force_isa(-1);
		}
#undef HQ
}

