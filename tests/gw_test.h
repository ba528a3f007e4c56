/* Helpers shared by the cmocka unit tests: trace loading, frame lists,
 * guarded buffers, a deterministic PRNG and failure macros with messages. */
#ifndef GW_TEST_H
#define GW_TEST_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <gw/codec.h>

/* Private helpers (gw_frame_seal, gw_frame_checksum): tests link the
 * internal archive so they may forge frames. */
#include "../codec/codec_internal.h"
#include "gw_rand.h"   /* the PRNG: common/ */

/* ---- failure messages ---------------------------------------------------- */

/* Fails the current test with a message saying what went wrong. */
#define GW_CHECK(cond, ...)                                                    \
	do {                                                                   \
		if (!(cond)) {                                                 \
			print_error("check failed: %s\n  ", #cond);            \
			fail_msg(__VA_ARGS__);                                 \
		}                                                              \
	} while (0)

/* A gw_* call that must succeed (return >= 0). */
#define GW_OK_CALL(expr)                                                       \
	do {                                                                   \
		int gw_rc_ = (expr);                                           \
		if (gw_rc_ < 0)                                                \
			fail_msg("%s failed: %s (%s)", #expr,                  \
				 gw_error_name(gw_rc_), gw_strerror(gw_rc_));  \
	} while (0)

/* A gw_* call that must return exactly the code want. */
#define GW_EXPECT_RC(expr, want, ...)                                          \
	do {                                                                   \
		int gw_rc_ = (expr), gw_want_ = (want);                        \
		if (gw_rc_ != gw_want_) {                                      \
			print_error("%s returned %d (%s), expected %d (%s)\n  ", \
				    #expr, gw_rc_, gw_error_name(gw_rc_),      \
				    gw_want_, gw_error_name(gw_want_));        \
			fail_msg(__VA_ARGS__);                                 \
		}                                                              \
	} while (0)

/* ---- traces ---------------------------------------------------------------- */

/* Real traces under $GW_TRACES (see /work/shared/data/grads/README.md). */
#define GW_TEST_N_DENSE 24
#define GW_TEST_N_SPARSE 3
#define GW_TEST_SPARSE_DIM (1u << 20)
#define GW_TEST_CNN_PARAMS 25290u      /* all six cnn tensors of one iteration */
extern const char *const gw_test_dense_traces[GW_TEST_N_DENSE];
/* Sparse traces: path stems; "<stem>.keys.u32" and "<stem>.vals.f32". */
extern const char *const gw_test_sparse_traces[GW_TEST_N_SPARSE];
/* Dense traces are grouped by iteration: 4 iterations of 6 tensors. */
#define GW_TEST_CNN_ITERS 4
#define GW_TEST_CNN_TENSORS 6

/* $GW_TRACES, or NULL if unset or empty. */
const char *gw_test_traces_dir(void);

/* Exits 77 (meson: SKIP) with a clear message unless $GW_TRACES is set and
 * every listed trace file can be read. Call at the top of main(). */
void gw_test_require_traces(const char *prog);

/* Quiet check, for programs where only some tests need traces. */
int gw_test_have_traces(void);

/* Inside a cmocka test: skip this test (not the program) without traces. */
#define GW_TEST_NEED_TRACES()                                                  \
	do {                                                                   \
		if (!gw_test_have_traces()) {                                  \
			print_message("  SKIP: no real traces (set GW_TRACES)\n"); \
			skip();                                                \
		}                                                              \
	} while (0)

/* Loads a raw little-endian file; *n gets the element count. NULL (with a
 * message on stderr) if it cannot be read or its size is not a multiple of
 * 4. Caller frees. */
float *gw_test_load_f32(const char *path, size_t *n);
uint32_t *gw_test_load_u32(const char *path, size_t *n);

typedef struct gw_test_dense {
	float *v;
	size_t n;
	const char *name;   /* relative path, e.g. "cnn/it001_fc.bias.f32" */
} gw_test_dense;

typedef struct gw_test_sparse {
	uint32_t *keys;
	float *vals;
	size_t nnz;
	uint64_t dim;
	const char *name;
} gw_test_sparse;

/* Load trace i of the lists above (fails the test on error). */
void gw_test_load_dense(int i, gw_test_dense *d);
void gw_test_load_sparse(int i, gw_test_sparse *s);
void gw_test_dense_free(gw_test_dense *d);
void gw_test_sparse_free(gw_test_sparse *s);

/* All six cnn tensors of iteration it (0..3) concatenated: 25,290 floats. */
float *gw_test_load_cnn_iter(int it, size_t *n);

/* Tensor views. */
gw_tensor gw_test_dense_tensor(uint32_t id, const float *v, uint64_t n);
gw_tensor gw_test_sparse_tensor(uint32_t id, uint64_t dim, const void *keys,
				unsigned key_bits, const float *vals,
				uint64_t nnz);

/* ---- frames -------------------------------------------------------------- */

typedef struct gw_test_frame {
	uint8_t *data;   /* malloc'd, exactly len bytes */
	size_t len;
} gw_test_frame;

typedef struct gw_test_frames {
	gw_test_frame *f;
	size_t n;
} gw_test_frames;

/* begin + next until 0. Each frame is written into a buffer of exactly
 * min(budget, GW_FRAME_MAX) bytes that ends at a PROT_NONE page, so writing
 * past the budget faults. Returns 0 or the first GW_E* code (frames so far
 * are kept in *out). Bounded: fails the test if more frames come than the
 * tensor has elements. */
int gw_test_encode_all(gw_encoder *enc, const gw_tensor *t, size_t budget,
		       gw_test_frames *out);
void gw_test_frames_free(gw_test_frames *fr);

/* Decodes every frame into out (fails the test on any error). */
void gw_test_decode_all(const gw_test_frames *fr, float *out, uint64_t out_len);

/* ---- guarded memory ------------------------------------------------------ */

/* len bytes that end exactly where a PROT_NONE page begins: reading or
 * writing one byte past the end faults, with or without ASan. */
typedef struct gw_test_guard {
	void *map;
	size_t map_len;
	uint8_t *p;    /* the usable bytes: p[0..len) */
	size_t len;
} gw_test_guard;

void gw_test_guard_alloc(gw_test_guard *g, size_t len);
void gw_test_guard_free(gw_test_guard *g);
/* Copies src into a fresh guarded block. */
void gw_test_guard_copy(gw_test_guard *g, const void *src, size_t len);

/* ---- PRNG ---------------------------------------------------------------- */

typedef struct gw_test_rng {
	uint64_t s;
} gw_test_rng;

static inline uint64_t gw_test_rand(gw_test_rng *r)
{
	return gw_splitmix64(&r->s);
}
/* Uniform in [0, n) (n > 0); the modulo bias is irrelevant for tests. */
static inline uint64_t gw_test_below(gw_test_rng *r, uint64_t n)
{
	return gw_test_rand(r) % n;
}
/* Uniform float in [lo, hi). */
static inline float gw_test_uniform(gw_test_rng *r, float lo, float hi)
{
	double u = (double)(gw_test_rand(r) >> 11) * 0x1p-53;
	return (float)(lo + (hi - lo) * u);
}
void gw_test_shuffle(gw_test_rng *r, size_t *idx, size_t n);

/* ---- floats -------------------------------------------------------------- */

static inline uint32_t gw_test_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}
static inline float gw_test_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}
/* Fills n floats with the same value (e.g. -0.0f, the additive identity
 * that keeps every bit pattern of x in -0.0f + x, -0.0 and NaN payloads
 * included). */
void gw_test_fill(float *out, size_t n, float v);

/* Reference bfloat16 of x, round to nearest, ties to even, computed by
 * comparing distances in double (independent of the codec's bit trick).
 * NaN: upper half with the quiet bit set. Returns the 16-bit code. */
uint16_t gw_test_bf16_rne(float x);

/* ---- codecs -------------------------------------------------------------- */

#define GW_TEST_MAX_CODECS 64
/* Registered codec ids (fails the test if there are too many). */
int gw_test_codecs(int *ids);
/* Whether codec id accepts dense (sparse = 0) or sparse tensors. */
int gw_test_codec_accepts(int id, int sparse);
/* Encoder for id (fails the test if it cannot be created). */
gw_encoder *gw_test_encoder(int id);
/* 1 if codec id may send fewer entries than the tensor has: top-k keeps a
 * fraction, sketchml drops exact zeros (both take a parameter naming it). */
int gw_test_sends_subset(int id);
/* Codecs whose sparse frames may carry values at keys the tensor does not
 * hold (deepreduce's Bloom false positives: 0 for a sparse input). */
int gw_test_sends_superset(int id);

/* Little-endian header field offsets of the wire format (frame.c). */
enum {
	GW_TEST_OFF_MAGIC = 0,
	GW_TEST_OFF_VERSION = 2,
	GW_TEST_OFF_CODEC = 3,
	GW_TEST_OFF_FLAGS = 4,
	GW_TEST_OFF_PARAM_LEN = 6,
	GW_TEST_OFF_RESERVED = 7,
	GW_TEST_OFF_TENSOR = 8,
	GW_TEST_OFF_COUNT = 12,
	GW_TEST_OFF_START = 16,
	GW_TEST_OFF_SPAN = 24,
	GW_TEST_OFF_PAYLOAD_LEN = 28,
	GW_TEST_OFF_CHECKSUM = 32,
};
uint32_t gw_test_ld32(const uint8_t *p);
uint64_t gw_test_ld64(const uint8_t *p);
void gw_test_st32(uint8_t *p, uint32_t v);
void gw_test_st64(uint8_t *p, uint64_t v);

#endif /* GW_TEST_H */
