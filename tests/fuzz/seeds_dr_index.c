/* Seeds of the DeepReduce index harnesses fuzz_dr_{raw,bloom,rle,delta}.c
 * (layout in fuzz_dr_index.h: u16 span - 1, u16 count, the section).
 * Valid sections come from the codecs' own encoders over a few fixed
 * offset sets — one key, both ends of the span, runs, dense, sparse, all
 * set — and, for bloom, every policy at several false-positive rates; they
 * are named <what>.ok, so the replay checks that they are accepted. A few
 * broken copies (one byte cut, one byte more, count off by one) are named
 * after the code they must be refused with (regress_main.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepreduce/dr.h"
#include "seeds_dr.h"

#define HDR 4u
#define CAP (HDR + 12 + 8 * 65536u)

struct set {
	const char *what;
	uint32_t span, n;
	uint32_t off[700];
};

/* The offset sets every harness is seeded with. */
static int make_set(int i, struct set *s)
{
	uint64_t r = 0x6472696e64657800ull + (uint64_t)i;
	s->n = 0;
	switch (i) {
	case 0:
		*s = (struct set){"span1", 1, 1, {0}};
		return 1;
	case 1:
		*s = (struct set){"last", 1000, 1, {999}};
		return 1;
	case 2:
		*s = (struct set){"ends", 65536, 2, {0, 65535}};
		return 1;
	case 3:   /* all set */
		s->what = "full";
		s->span = 64;
		for (uint32_t x = 0; x < 64; x++)
			s->off[s->n++] = x;
		return 1;
	case 4:   /* three runs */
		s->what = "runs";
		s->span = 400;
		for (uint32_t x = 0; x < 400; x++)
			if ((x >= 10 && x < 60) || (x >= 100 && x < 101) || x >= 300)
				s->off[s->n++] = x;
		return 1;
	case 5:   /* dense: about half */
	case 6:   /* sparse: about 1 in 90, gaps up to 2^16 */
		s->what = i == 5 ? "dense" : "sparse";
		s->span = i == 5 ? 1200 : 60000;
		for (uint32_t x = 0; x < s->span && s->n < 700; x++)
			if (dr_rng_below(&r, i == 5 ? 2 : 90) == 0)
				s->off[s->n++] = x;
		if (!s->n)
			s->off[s->n++] = 0;
		return 1;
	default:
		return 0;
	}
}

static void put(seed_write_fn write, const char *harness, const char *name,
		uint8_t *buf, uint32_t span, uint32_t count, size_t len)
{
	buf[0] = (uint8_t)(span - 1);
	buf[1] = (uint8_t)((span - 1) >> 8);
	buf[2] = (uint8_t)count;
	buf[3] = (uint8_t)(count >> 8);
	write(harness, name, buf, HDR + len);
}

/* The section of s as io encodes it, a .ok seed, and broken copies. */
static void seed_one(seed_write_fn write, const char *harness,
		     const struct dr_index_ops *io, const struct set *s,
		     const struct dr_index_cfg *cfg, const char *tag, uint8_t *buf)
{
	uint32_t nv = 0;
	int len = io->encode(s->off, s->n, s->span, cfg, buf + HDR, CAP - HDR - 1, &nv);
	if (len >= 0 && nv > 0xffff)
		return;   /* P0 with more positives than the header's count holds */
	if (len < 0) {
		fprintf(stderr, "seeds_dr_index: %s %s%s: encode %d\n", harness, s->what,
			tag, len);
		exit(1);
	}
	char name[96];
	snprintf(name, sizeof(name), "%s%s.ok", s->what, tag);
	put(write, harness, name, buf, s->span, nv, (size_t)len);
	snprintf(name, sizeof(name), "%s%s-cut.GW_ELENGTH", s->what, tag);
	put(write, harness, name, buf, s->span, nv, (size_t)len - 1);
	buf[HDR + len] = 0;
	snprintf(name, sizeof(name), "%s%s-trailing.GW_ELENGTH", s->what, tag);
	put(write, harness, name, buf, s->span, nv, (size_t)len + 1);
	snprintf(name, sizeof(name), "%s%s-count-1", s->what, tag);
	if (nv > 1)
		put(write, harness, name, buf, s->span, nv - 1, (size_t)len);
}

int seeds_dr_index(const char *name, seed_write_fn write)
{
	static const char *const names[] = {"dr_raw", "dr_bloom", "dr_rle", "dr_delta"};
	static const struct dr_index_ops *const ops[] = {
		&dr_index_raw, &dr_index_bloom, &dr_index_rle, &dr_index_delta};
	static const double fprs[] = {0.01, 0.1, 0.5};
	int mine = 0;
	uint8_t *buf = NULL;
	for (int h = 0; h < 4; h++) {
		if (name && strcmp(name, names[h]))
			continue;
		mine = 1;
		if (!buf && !(buf = malloc(CAP))) {
			fprintf(stderr, "seeds_dr_index: out of memory\n");
			exit(1);
		}
		struct set s;
		for (int i = 0; make_set(i, &s); i++) {
			struct dr_index_cfg cfg = {.fpr = 0.01, .seed = (uint32_t)i};
			if (ops[h] != &dr_index_bloom) {
				seed_one(write, names[h], ops[h], &s, &cfg, "", buf);
				continue;
			}
			for (unsigned p = DR_P0; p <= DR_P2; p++)
				for (unsigned f = 0; f < 3; f++)
					for (unsigned k = 0; k <= 3; k += 3) {
						char tag[32];
						snprintf(tag, sizeof(tag), "-p%u-f%g-k%u", p, fprs[f], k);
						cfg.policy = p;
						cfg.fpr = fprs[f];
						cfg.hashes = k;
						seed_one(write, names[h], ops[h], &s, &cfg, tag, buf);
					}
		}
	}
	free(buf);
	return mine;
}
