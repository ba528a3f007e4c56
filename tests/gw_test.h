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

/* ---- main ------------------------------------------------------------------ */

/* The main() of a test program: runs the cmocka tests listed (each a
 * cmocka_unit_test(...)) as the group called name. With need_traces it
 * first exits 77 (SKIP) unless the real traces are there. */
#define GW_TEST_MAIN(name, need_traces, ...)                                   \
	GW_TEST_MAIN_GROUP(name, need_traces, NULL, NULL, __VA_ARGS__)
/* The same with a group setup and teardown (cmocka's group functions). */
#define GW_TEST_MAIN_GROUP(name, need_traces, setup, teardown, ...)            \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		const struct CMUnitTest gw_tests_[] = {__VA_ARGS__};           \
		gw_test_init(argv[0], need_traces);                            \
		(void)argc;                                                    \
		return cmocka_run_group_tests_name(name, gw_tests_, setup,     \
						   teardown);                  \
	}

/* What GW_TEST_MAIN does before the tests: exits 77 without the traces
 * if they are needed, and keeps freed memory in the process (glibc hands
 * it back whenever the heap's top shrinks by 128 KiB: tests that encode
 * in loops spent most of their time in brk()). */
void gw_test_init(const char *prog, int need_traces);

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

/* Calls dense on each dense trace in turn, then sparse on each sparse one
 * (either may be NULL: none), each loaded (fails the test on an error) and
 * freed after. */
void gw_test_each_trace(void (*dense)(const gw_test_dense *d, void *arg),
			void (*sparse)(const gw_test_sparse *s, void *arg), void *arg);

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

/* The k largest magnitudes of v[0..n), in position order (what a top-k
 * index codec hands a value codec). Caller frees. */
float *gw_test_top_k_values(const float *v, size_t n, uint32_t k);

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

/* The codec's own bit casts (codec_internal.h), under the tests' names. */
static inline uint32_t gw_test_bits(float f)
{
	return gw_f32_bits(f);
}
static inline float gw_test_float(uint32_t u)
{
	return gw_bits_f32(u);
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
/* The same, only those that take sparse (sparse = 1) or dense tensors. */
int gw_test_codecs_taking(int sparse, int *ids);
/* Whether codec id accepts dense (sparse = 0) or sparse tensors. */
int gw_test_codec_accepts(int id, int sparse);
/* Encoder for id (fails the test if it cannot be created). */
gw_encoder *gw_test_encoder(int id);
/* Encoder for id with the parameter list params ("name=value,...", "" or
 * NULL for the defaults) applied (fails the test naming a refusal). */
gw_encoder *gw_test_encoder_with(int id, const char *params);

/* Encodes t with a fresh encoder for id and params at budget into *fr
 * (fails the test, naming the codec and what, on an error). */
void gw_test_encode_with(int id, const char *params, const gw_tensor *t,
			 size_t budget, gw_test_frames *fr, const char *what);

/* The same, and where the codec sends a fraction (GW_PARAM_FRACTION) that
 * params leave open and the combination allows it, fraction f. */
gw_encoder *gw_test_encoder_fraction(int id, const char *params, double f);

/* An error buffer holding e[0..n), set as enc's (fails the test on an
 * error); NULL, and nothing set, where e is NULL. Caller frees. */
gw_ef *gw_test_ef_set(gw_encoder *enc, const float *e, uint64_t n);

/* ---- what each codec promises -------------------------------------------- */

/* How what gw_decode() adds relates to what the encoder was given: the
 * tensor's values or, with error feedback, the corrected values g + e. */
typedef enum gw_test_promise {
	GW_TEST_EXACT,      /* bit for bit */
	GW_TEST_BF16,       /* bfloat16, round to nearest, ties to even */
	GW_TEST_INT8,       /* within half the frame's scale max|x| / 127 */
	GW_TEST_3LC,        /* sign(x) m where 2|x| > m, m = (float)(s max|x|) of
			     * the tensor; nothing written elsewhere */
	GW_TEST_TERNARY,    /* -m, 0 or m with x's sign, m the tensor's largest
			     * finite |x| (sent as the frame's scale); zeros and
			     * 0 trits write nothing; |x| = m decodes exactly */
	GW_TEST_TWO_MEANS,  /* per frame: the means of its non-negative and of its
			     * negative values (sums in double in 8 lanes, i mod 8,
			     * combined pairwise; rounded once), sent as the two
			     * levels; one bit per value, LSB first */
	GW_TEST_TOP_K,      /* the k = ceil(fraction n) largest |x|, exactly; no
			     * unsent |x| above a sent one */
	GW_TEST_MINMAX,     /* sign kept (the bucket bound: test_sketchml_minmax) */
	GW_TEST_STATED,     /* within the bound each frame states (0: exact); with
			     * an exact index every selected entry is written */
	GW_TEST_HQ,         /* per frame, the error's L2 norm at most sqrt(n) times
			     * the step ||x||_2 / Q (a rotation keeps norms; each
			     * code is within a step of its rotated value) */
} gw_test_promise;

/* What a NaN or +-Inf among the values encoded becomes (wire-format.md
 * section 2.5); with error feedback no residual stays non-finite. */
typedef enum gw_test_poison {
	GW_TEST_CARRIED,    /* itself, whatever made it non-finite (g, the
			     * buffer, g + e overflowing), as the promise says
			     * (raw bit-exact but a signalling NaN quieted, bf16
			     * NaN quiet of its sign, a selection ranks it above
			     * every finite value; a lossy Bloom index may lose
			     * it as it may lose any key) */
	GW_TEST_FRAME,      /* every value of its frame decodes to NaN; the other
			     * frames decode as if it were absent */
	GW_TEST_TENSOR,     /* every value of the tensor decodes to NaN (3lc) */
	GW_TEST_REFUSED,    /* gw_encode_begin() refuses with GW_EINVAL */
} gw_test_poison;

/* Error feedback's rounding. Every codec leaves e = fl(fl(g + e) - decoded)
 * bit for bit each round; the bound on |sum decoded + final buffer - sum
 * inputs| per element is the sum over rounds of c_abs |g + e| + g_abs |g|
 * + eb_abs |e before| + ea_abs |e after| + gd_abs (|g| + |decoded|),
 * times (1 + rel), plus abs. */
typedef struct gw_test_ef_tol {
	double c_abs, g_abs, eb_abs, ea_abs, gd_abs, rel, abs;
} gw_test_ef_tol;

#define GW_TEST_KEEPS_KIND 0x01u  /* frames keep the tensor's kind and key width */
#define GW_TEST_SUBSET 0x02u      /* may send fewer entries than the tensor has */
#define GW_TEST_SUPERSET 0x04u    /* may send entries at keys the tensor lacks
				   * (deepreduce's Bloom false positives) */
#define GW_TEST_GROUPS5 0x08u     /* dense frames start on multiples of 5 and
				   * hold whole groups but the last */
#define GW_TEST_ISA 0x10u         /* SIMD paths (gw_cpu_force_isa): tests that
				   * encode or decode run once per ISA */
#define GW_TEST_BRIEF 0x20u       /* variants run on the brief inputs only */
#define GW_TEST_SIGNED_ZERO 0x40u /* frames carry the sign of a zero */

typedef struct gw_test_codec {
	const char *name;
	int caps;                  /* gw_codec_caps() */
	gw_test_promise promise;
	gw_test_poison poison;
	unsigned flags;            /* GW_TEST_* above */
	/* Parameter lists the behaviour tests run besides the defaults,
	 * NULL-terminated (NULL: the defaults only). */
	const char *const *variants;
	gw_test_ef_tol ef;
	/* Parameters under which a constant gradient with feedback reaches
	 * every coordinate within 12 rounds though each round sends 10%, or
	 * NULL for a codec that sends every entry every round. */
	const char *sweep;
} gw_test_codec;

/* The parameter lists codec cd is tested with: "" (the defaults), then its
 * variants. Returns how many (fails the test above cap). */
#define GW_TEST_MAX_VARIANTS 64
size_t gw_test_variants(const gw_test_codec *cd, const char **out, size_t cap);

/* One way the behaviour tests run a codec: its parameters and, for a codec
 * with SIMD paths, the ISA (forced while fn runs). */
typedef struct gw_test_variant {
	int id;
	const gw_test_codec *codec;
	const char *params;      /* "" for the defaults */
	int first;               /* the defaults, on the default ISA */
	int brief;               /* a variant of a GW_TEST_BRIEF codec */
	char name[160];          /* "3lc avx2 [sparsity=1.5]", for messages */
} gw_test_variant;

/* Calls fn for every codec (but sketch-table ones), its defaults and every
 * variant; with every_isa, once per ISA of a codec with SIMD paths. */
void gw_test_each_variant(int every_isa,
			  void (*fn)(const gw_test_variant *v, void *arg), void *arg);

/* What the tests know of codec id. Every registered codec must have an
 * entry: one missing fails the test, naming the codec, so a codec added
 * to the registry is tested or refused, never skipped. */
const gw_test_codec *gw_test_codec_of(int id);
/* How many ISA levels the tests of cd run under: every one this CPU has for
 * a codec with SIMD paths (GW_TEST_ISA), else 1. */
int gw_test_isa_count(const gw_test_codec *cd);
/* Forces ISA level isa (0 scalar, 1 avx2, 2 avx512) for a codec with SIMD
 * paths (nothing otherwise); -1 restores the default. Returns a name for
 * messages ("" without SIMD paths). */
const char *gw_test_isa(const gw_test_codec *cd, int isa);

/* 1 if enc's frames may leave out entries it was given: deepreduce's lossy
 * Bloom policies (P1, P2) lose keys to false positives. */
int gw_test_may_drop(const gw_encoder *enc);

/* The value of enc's parameter p (fails the test on an error); whether an
 * enumerated parameter p of enc is the one called name ("bloom"). */
double gw_test_param(const gw_encoder *enc, gw_param p);
int gw_test_named(const gw_encoder *enc, gw_param p, const char *name);

/* Codec id's promise about non-finite values under enc's parameters. */
gw_test_poison gw_test_poison_of(const gw_encoder *enc);

/* A tensor the behaviour tests feed a codec, with its keys as 32-bit
 * integers for lookups (the tensor itself may carry them as 64-bit). */
typedef struct gw_test_input {
	const char *name;
	gw_tensor t;
	const uint32_t *keys;   /* NULL: dense, element i is key i */
	const float *vals;      /* what the promise is checked against: the
				 * tensor's values or the corrected ones */
	uint64_t n;             /* elements or entries */
	uint64_t dim;           /* output length */
	unsigned index;         /* position in the list (seeds) */
	int coarse;             /* a repeat (64-bit keys): fewer budgets */
	/* What a superset codec's false positive at a coordinate without a
	 * key carries (dim values: with feedback, the buffer there); NULL: 0 */
	const float *between;
} gw_test_input;

/* Key of entry i, and the index of the first entry whose key is >= k. */
uint64_t gw_test_key(const gw_test_input *in, uint64_t i);
uint64_t gw_test_lower_bound(const gw_test_input *in, uint64_t k);

/* Calls fn for every input (fails the test without the traces). Full: the
 * 24 dense traces, the 4 cnn iterations concatenated, the 3 sparse traces
 * with 32-bit keys and again with 64-bit keys (coarse). Brief: cnn
 * iteration 2 concatenated and sparse trace 1 below a quarter of its key
 * space. Kinds codec id does not accept are left out. */
void gw_test_each_input(int id, int brief,
			void (*fn)(const gw_test_input *in, void *arg), void *arg);

/* Budgets to try: the sets below, each with gw_encode_min_budget() and
 * one more, every value once. Returns how many (at most 16). */
enum { GW_TEST_BUDGETS_ALL, GW_TEST_BUDGETS_COARSE, GW_TEST_BUDGETS_BRIEF };
size_t gw_test_budgets(int set, int min, size_t *out);

/* One encoding of the matrix: codec, variant, input, budget. */
typedef struct gw_test_case {
	int id;
	const gw_test_codec *codec;
	const char *variant;     /* "" for the defaults */
	const gw_test_input *in;
	gw_encoder *enc;
	size_t budget;
	gw_test_frames fr;
	gw_frame_info *info;     /* gw_frame_verify() of each frame */
	char what[200];          /* for messages */
} gw_test_case;

/* For every codec (but sketch-table ones), its defaults and variants,
 * every input it accepts (gw_test_each_input; variants of a GW_TEST_BRIEF
 * codec on the brief ones) and every budget of budget_set (brief inputs:
 * GW_TEST_BUDGETS_BRIEF): encodes (fails on an error), verifies every
 * frame and calls fn. A codec with a seed parameter gets 1000 + the
 * input's index. */
void gw_test_each_case(int budget_set, void (*fn)(gw_test_case *c, void *arg),
		       void *arg);

/* Checks frames fr (headers info) that enc made from in, decoded into
 * out (which held -0.0), against the codec's promise, x being the values
 * the encoder was given for in's entries (in->vals, or with feedback the
 * corrected values). */
void gw_test_check_promise(const gw_encoder *enc, const gw_test_input *in,
			   const float *x, const gw_test_frames *fr,
			   const gw_frame_info *info, const float *out,
			   const char *what);

/* ---- forged frames ---------------------------------------------------------- */

/* Accepted as want by gw_test_decode_forged: any GW_E* code; anything. */
#define GW_TEST_ANY_ERROR (-100000)
#define GW_TEST_ANY_RESULT (-100001)

/* Decodes frame[0..len) from a copy that ends at a PROT_NONE page into an
 * output of out_len floats that also does, filled with i + 0.25; checks
 * that the result is want (or any error, or anything) and that a refusal
 * left every output bit as it was. Returns the result. */
int gw_test_decode_forged(const uint8_t *frame, size_t len, uint64_t out_len,
			  int want, const char *what);

/* ---- scratch ------------------------------------------------------------------- */

/* A buffer of at least bytes, kept in slot (0..15) from call to call and
 * grown as needed; its contents are undefined. A fresh multi-MiB output
 * per encoding would spend the tests' time faulting pages in. */
void *gw_test_scratch(unsigned slot, size_t bytes);

/* ---- keys -------------------------------------------------------------------- */

/* A malloc'd copy of n 32-bit keys as 64-bit ones (fails on no memory). */
uint64_t *gw_test_keys64(const uint32_t *keys, size_t n);

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
