/* What make_corpus's seeders share (seeds_common.c): a deterministic
 * generator, synthetic tensors, their frames, and the writing of corpus
 * files; then the entry points of the seeders that use them. The mc_
 * prefix (make_corpus) keeps these names apart from the libraries linked
 * into the program. The seeders of seeds_dr.h and fuzz_coll.h need none
 * of this: they only get mc_write_file(). */
#ifndef GW_SEEDS_COMMON_H
#define GW_SEEDS_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gw/codec.h>

/* ---- deterministic synthetic data -------------------------------------- */

uint64_t mc_next_u64(void);

/* Every seed set starts from its own fixed state, so that writing one
 * harness's seeds gives the same files as writing all of them. */
void mc_reseed(const char *name);

/* roughly normal, gradient-like: sum of uniforms, times a scale */
float mc_gradient(float scale);

enum special {
	SP_NONE,      /* smooth gradient values */
	SP_NONFINITE, /* a NaN and an Inf in the middle */
	SP_EDGES,     /* -0, denormals, huge and tiny magnitudes */
	SP_ZERO,      /* all zero */
};

void mc_fill_values(float *v, size_t n, enum special sp);
void mc_random_bytes(uint8_t *b, size_t n);

/* ---- files ------------------------------------------------------------- */

/* Makes dir (if need be) the directory the files go to. */
void mc_open_outdir(const char *dir);
/* Writes data[0..len) to <outdir>/<sub>/<name>; exits on failure. */
void mc_write_file(const char *sub, const char *name, const void *data,
		   size_t len);
/* Files written so far. */
unsigned long mc_written(void);

/* ---- tensors ----------------------------------------------------------- */

struct tensor {
	gw_tensor t;
	float *vals;
	uint32_t *k32;
	uint64_t *k64;
	const char *kind;   /* "dense", "sparse32", "sparse64" */
};

void mc_tensor_free(struct tensor *s);
struct tensor mc_make_dense(uint64_t dim, enum special sp);
/* keys with gaps below max_gap; key64 tensors start above 2^32 and take
 * one jump of more than 2^32, so encoders must split the span */
struct tensor mc_make_sparse(uint64_t nnz, unsigned bits, uint64_t max_gap,
			     enum special sp);

/* ---- frames ------------------------------------------------------------ */

#define MAX_FRAMES 4096

struct frames {
	size_t n;
	uint8_t *buf[MAX_FRAMES];
	size_t len[MAX_FRAMES];
};

void mc_frames_free(struct frames *fr);
/* All frames of t under codec id at budget; false if the codec refuses. */
bool mc_encode(int id, const gw_tensor *t, size_t budget, uint32_t max_elems,
	       bool ef, struct frames *fr);
/* A valid frame of codec id: dense (kind 0) or sparse with 32/64-bit keys. */
size_t mc_valid_frame(int id, int kind, uint64_t n, uint8_t *out);

/* ---- the seeders ------------------------------------------------------- */

/* seeds_codec.c: the decoder harness of codec id, and what the defaults
 * of countsketch, deepreduce and hq leave out. */
void seeds_decoder(const char *name, int id);
void seeds_countsketch(void);
void seeds_deepreduce(void);
void seeds_hq(void);
/* seeds_frame.c: fuzz_frame.c, fuzz_roundtrip.c */
void seeds_frame(void);
void seeds_roundtrip(void);
/* seeds_parts.c: the codec parts below the frame, fuzz_delta_binary.c and
 * fuzz_quantile.c */
void seeds_delta_binary(void);
void seeds_quantile(void);
/* seeds_pkt.c: fuzz_pkt.c */
void seeds_pkt(void);
/* seeds_libsvm.c: fuzz_libsvm.c */
void seeds_libsvm(void);

/* The hostile set (make_corpus --hostile): hostile_frame.c's frames of
 * the decoder harnesses and of fuzz_frame.c, and of hq; hostile_pkt.c's
 * packets. */
void hostile_frames(void);
void hostile_hq(void);
void hostile_pkt(void);

#endif
