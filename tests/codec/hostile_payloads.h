/* Per-codec payload forgeries of test_hostile_frames (hostile_payloads.c,
 * hostile_sparse.c):
 * valid frames with their codec's own fields broken, resealed so that only
 * the codec's validation can refuse them. */
#ifndef HOSTILE_PAYLOADS_H
#define HOSTILE_PAYLOADS_H

#include <stddef.h>
#include <stdint.h>

struct hostile_payload {
	const char *codec;       /* gw_codec_name() */
	void (*attack)(int id);  /* NULL: none beyond the generic ones ... */
	const char *why_none;    /* ... and why */
};

/* One entry per registered codec; test_hostile_frames refuses a codec
 * without one. */
extern const struct hostile_payload hostile_payloads[];
extern const size_t hostile_npayloads;

/* Seals f[0..len) unless told not to, then gw_test_decode_forged(). */
int hostile_forged(uint8_t *f, size_t len, uint64_t out_len, int seal, int want,
		   const char *what);

/* hostile_sparse.c */
void hostile_topk(int id);
void hostile_deepreduce(int id);
/* hostile_hq.c */
void hostile_hq(int id);

#endif /* HOSTILE_PAYLOADS_H */
