/* Hostile countsketch frames (built by hand from docs/wire-format.md §4.9 and sealed) are rejected with the right GW_E* code and leave the output — a table, or gw_keyset_decode()'s keys and values — untouched: dense slices with bad params (reserved bits, rows 0 or 17, cols 0, rows * cols too big, dim 0), crossing a row, past the table, wrong lengths; key sets with bad vbits, reserved bytes, db_len, truncated or padded key blocks, keys past the span or the output, a first key other than start, a last key other than start + span - 1, keys above 2^32 without KEY64. And the encoder refuses error feedback at gw_encoder_set_ef(), a slice base and an oversized table at gw_encode_begin(), and sends nothing for an empty tensor. */
#include "gw_test.h"

#include <math.h>

#include <gw/sketch.h>

#define ROWS 3
#define COLS 10
#define CELLS (ROWS * COLS)
#define LIMIT 1000   /* output length of the key-set cases */

struct frame {
	uint8_t b[512];
	size_t len;
};

/* ---- builders ------------------------------------------------------------ */

struct dense {
	uint16_t rows, reserved;
	uint32_t cols;
	uint64_t seed, dim, start;
	uint32_t count;      /* header count (= span) */
	uint32_t nvals;      /* float32 values in the payload */
	uint32_t pad;        /* extra payload bytes */
	uint32_t param_len;  /* 24 unless testing it */
};

static struct dense dense_ok(uint64_t start, uint32_t count)
{
	return (struct dense){.rows = ROWS, .cols = COLS, .seed = 7, .dim = 100,
			      .start = start, .count = count, .nvals = count,
			      .param_len = 24};
}

static void build_dense(struct frame *f, const struct dense *d)
{
	struct gw_frame_info h = {0};
	h.codec = GW_CODEC_COUNTSKETCH;
	h.tensor = 1;
	h.count = d->count;
	h.start = d->start;
	h.span = d->count;
	h.param_len = d->param_len;
	h.payload_len = 4 * d->nvals + d->pad + 24 - d->param_len;
	f->len = GW_FRAME_HDR_LEN + 24 + 4 * (size_t)d->nvals + d->pad;
	GW_CHECK(f->len <= sizeof(f->b), "frame too big");
	memset(f->b, 0, sizeof(f->b));
	gw_frame_write_header(f->b, &h);
	uint8_t *p = f->b + GW_FRAME_HDR_LEN;
	gw_st16(p, d->rows);
	gw_st16(p + 2, d->reserved);
	gw_st32(p + 4, d->cols);
	gw_st64(p + 8, d->seed);
	gw_st64(p + 16, d->dim);
	for (uint32_t i = 0; i < d->nvals; i++)
		gw_stf32(p + 24 + 4 * i, 0.5f + (float)i);
	gw_frame_seal(f->b, f->len);
}

/* keys 5, 6, 40, 99 after base 5: increments 0, 0, 33, 58, one byte each */
static const uint8_t good_db[5] = {0x00, 0, 0, 33, 58};
static const float good_vals[4] = {1.0f, -2.0f, 3.0f, -4.0f};

struct keyset {
	uint16_t flags;
	uint32_t count, span;
	uint64_t start;
	uint8_t params[8];      /* vbits, reserved[3], db_len */
	const uint8_t *db;
	uint32_t db_bytes;      /* bytes of db in the payload */
	uint32_t nvals;         /* float32 values after it */
};

static struct keyset keyset_ok(int with_values)
{
	struct keyset k = {.flags = GW_FF_SPARSE, .count = 4, .span = 95, .start = 5,
			   .db = good_db, .db_bytes = 5, .nvals = with_values ? 4 : 0};
	k.params[0] = with_values ? 32 : 0;
	gw_st32(k.params + 4, 5);
	return k;
}

static void build_keyset(struct frame *f, const struct keyset *k)
{
	struct gw_frame_info h = {0};
	h.codec = GW_CODEC_COUNTSKETCH;
	h.flags = k->flags;
	h.tensor = 2;
	h.count = k->count;
	h.start = k->start;
	h.span = k->span;
	h.param_len = 8;
	h.payload_len = k->db_bytes + 4 * k->nvals;
	f->len = GW_FRAME_HDR_LEN + 8 + (size_t)h.payload_len;
	GW_CHECK(f->len <= sizeof(f->b), "frame too big");
	memset(f->b, 0, sizeof(f->b));
	gw_frame_write_header(f->b, &h);
	uint8_t *p = f->b + GW_FRAME_HDR_LEN;
	memcpy(p, k->params, 8);
	memcpy(p + 8, k->db, k->db_bytes);
	for (uint32_t i = 0; i < k->nvals; i++)
		gw_stf32(p + 8 + k->db_bytes + 4 * i, good_vals[i % 4]);
	gw_frame_seal(f->b, f->len);
}

/* ---- the checks ------------------------------------------------------------ */

/* gw_decode of f into a guarded output of out_len floats returns want; a
 * rejected frame leaves every element as it was. */
static int decode(const struct frame *f, size_t len, uint64_t out_len, int want,
		  const char *what)
{
	return gw_test_decode_forged(f->b, len, out_len, want, what);
}

/* gw_keyset_decode of f returns want; rejected, it writes nothing. */
static void keyset_decode(const struct frame *f, uint64_t limit, uint32_t cap,
			  int want, const char *what)
{
	gw_test_guard fg, kg, vg;
	gw_test_guard_copy(&fg, f->b, f->len);
	gw_test_guard_alloc(&kg, cap * sizeof(uint64_t));
	gw_test_guard_alloc(&vg, cap * sizeof(float));
	uint64_t *keys = (uint64_t *)(void *)kg.p;
	float *vals = (float *)(void *)vg.p;
	memset(keys, 0xa5, cap * sizeof(uint64_t));
	memset(vals, 0x5a, cap * sizeof(float));
	int hv = 77;
	int rc = gw_keyset_decode(fg.p, f->len, limit, keys, vals, cap, &hv);
	GW_CHECK(rc == want, "%s: gw_keyset_decode returned %d (%s), expected %d (%s)",
		 what, rc, gw_error_name(rc), want, gw_error_name(want));
	if (rc < 0) {
		GW_CHECK(hv == 77, "%s: rejected but *has_values written", what);
		for (size_t i = 0; i < cap * sizeof(uint64_t); i++)
			GW_CHECK(kg.p[i] == 0xa5, "%s: rejected but keys written", what);
		for (size_t i = 0; i < cap * sizeof(float); i++)
			GW_CHECK(vg.p[i] == 0x5a, "%s: rejected but values written", what);
	}
	gw_test_guard_free(&fg);
	gw_test_guard_free(&kg);
	gw_test_guard_free(&vg);
}

/* ---- dense slices ------------------------------------------------------------ */

static void test_dense_valid(void **state)
{
	(void)state;
	struct frame f;
	struct dense d = dense_ok(10, COLS);   /* row 1, whole */
	build_dense(&f, &d);
	decode(&f, f.len, CELLS, COLS, "row 1");
	d = dense_ok(23, 7);                   /* row 2, columns 3..9 */
	build_dense(&f, &d);
	decode(&f, f.len, CELLS, 7, "end of row 2");
	/* accumulates: out[23 + i] += 0.5 + i */
	float out[CELLS];
	gw_test_fill(out, CELLS, 1.0f);
	GW_EXPECT_RC(gw_decode(f.b, f.len, out, CELLS), 7, "decode");
	for (int i = 0; i < CELLS; i++)
		GW_CHECK(out[i] == (i >= 23 ? 1.5f + (float)(i - 23) : 1.0f),
			 "cell %d: %g", i, (double)out[i]);
	struct gw_frame_parts parts;
	GW_OK_CALL(gw_frame_parts_of(f.b, f.len, &parts));
	GW_CHECK(parts.header == GW_FRAME_HDR_LEN && parts.params == 24 &&
		 parts.keys == 0 && parts.tables == 0 && parts.values == 28,
		 "parts %u %u %u %u %u", parts.header, parts.params, parts.keys,
		 parts.tables, parts.values);
	/* a larger output than the table is fine: frames name cells */
	decode(&f, f.len, 4096, 7, "output larger than the table");
}

static void test_dense_hostile(void **state)
{
	(void)state;
	struct frame f;
	struct dense d;
	char what[96];

	d = dense_ok(10, 4);
	build_dense(&f, &d);
	for (size_t l = 0; l < f.len; l++) {
		snprintf(what, sizeof(what), "dense frame cut to %zu of %zu bytes", l, f.len);
		decode(&f, l, CELLS, GW_ETRUNC, what);
	}
	f.b[f.len - 1] ^= 1;
	decode(&f, f.len, CELLS, GW_ECHECKSUM, "a payload bit flipped");

#define DENSE_CASE(want, desc, ...)                                            \
	do {                                                                   \
		d = dense_ok(10, 4);                                           \
		__VA_ARGS__;                                                   \
		build_dense(&f, &d);                                           \
		decode(&f, f.len, CELLS, want, desc);                          \
		struct gw_frame_parts p_;                                      \
		GW_EXPECT_RC(gw_frame_parts_of(f.b, f.len, &p_), want,        \
			     "parts: %s", desc);                               \
	} while (0)

	DENSE_CASE(GW_ERESERVED, "reserved u16 = 1", d.reserved = 1);
	DENSE_CASE(GW_ERESERVED, "reserved u16 = 0x8000", d.reserved = 0x8000);
	DENSE_CASE(GW_ECORRUPT, "rows 0", d.rows = 0);
	DENSE_CASE(GW_ECORRUPT, "rows 17", d.rows = 17);
	DENSE_CASE(GW_ECORRUPT, "rows 65535", d.rows = 65535);
	DENSE_CASE(GW_ECORRUPT, "cols 0", d.cols = 0);
	DENSE_CASE(GW_ECORRUPT, "rows * cols = 2^26 + 16",
		   d.rows = 16; d.cols = (1u << 22) + 1);
	DENSE_CASE(GW_ECORRUPT, "cols 2^32 - 1", d.rows = 1; d.cols = UINT32_MAX);
	DENSE_CASE(GW_ECORRUPT, "dim 0", d.dim = 0);
	DENSE_CASE(GW_ECORRUPT, "slice crosses from row 0 into row 1",
		   d.start = 8; d.count = d.nvals = 4);
	DENSE_CASE(GW_ECORRUPT, "slice of two whole rows",
		   d.start = 0; d.count = d.nvals = 2 * COLS);
	DENSE_CASE(GW_ELENGTH, "payload one value short", d.nvals = 3);
	DENSE_CASE(GW_ELENGTH, "payload one value long", d.nvals = 5);
	DENSE_CASE(GW_ELENGTH, "payload with a trailing byte", d.pad = 1);
	DENSE_CASE(GW_ELENGTH, "payload 3 bytes short", d.nvals = 3; d.pad = 1);
	DENSE_CASE(GW_ELENGTH, "param_len 23", d.param_len = 23);
	DENSE_CASE(GW_ELENGTH, "param_len 25", d.param_len = 25);
	DENSE_CASE(GW_ELENGTH, "param_len 0", d.param_len = 0);
#undef DENSE_CASE

	/* Past the table: past an output of the table's size (the generic
	 * range check), or inside a larger output (the codec's own check). */
	d = dense_ok(CELLS, 1);
	build_dense(&f, &d);
	decode(&f, f.len, CELLS, GW_ERANGE, "start 30 of a 30-cell table, output 30");
	decode(&f, f.len, 64, GW_ECORRUPT, "start 30 of a 30-cell table, output 64");
	d = dense_ok(CELLS + 5, 3);   /* would be columns 5..7 of a row 3 */
	build_dense(&f, &d);
	decode(&f, f.len, 64, GW_ECORRUPT, "start 35 of a 30-cell table, output 64");
	/* start + count overflows 64 bits: the header layer */
	d = dense_ok(UINT64_MAX - 1, 4);
	build_dense(&f, &d);
	decode(&f, f.len, 64, GW_ERANGE, "start 2^64 - 2");
	/* SPARSE set on a dense slice: param_len 24 is no key set */
	d = dense_ok(10, 4);
	build_dense(&f, &d);
	f.b[GW_TEST_OFF_FLAGS] = GW_FF_SPARSE;
	gw_frame_seal(f.b, f.len);
	decode(&f, f.len, CELLS, GW_ELENGTH, "SPARSE flag on a slice");
}

/* ---- key sets ------------------------------------------------------------------ */

static void test_keyset_valid(void **state)
{
	(void)state;
	struct frame f;
	for (int v = 0; v < 2; v++) {
		struct keyset k = keyset_ok(v);
		build_keyset(&f, &k);
		float out[LIMIT];
		gw_test_fill(out, LIMIT, 0.0f);
		GW_EXPECT_RC(gw_decode(f.b, f.len, out, LIMIT), v ? 4 : 0,
			     "key set %s values", v ? "with" : "without");
		for (int i = 0; i < LIMIT; i++) {
			float want = !v ? 0.0f : i == 5 ? 1.0f : i == 6 ? -2.0f
				     : i == 40 ? 3.0f : i == 99 ? -4.0f : 0.0f;
			GW_CHECK(out[i] == want, "element %d: %g, want %g", i,
				 (double)out[i], (double)want);
		}
		uint64_t keys[4];
		float vals[4] = {0};
		int hv = -1;
		GW_EXPECT_RC(gw_keyset_decode(f.b, f.len, 100, keys, vals, 4, &hv), 4,
			     "gw_keyset_decode");
		GW_CHECK(hv == v && keys[0] == 5 && keys[1] == 6 && keys[2] == 40 &&
			 keys[3] == 99, "has_values %d keys %llu %llu %llu %llu", hv,
			 (unsigned long long)keys[0], (unsigned long long)keys[1],
			 (unsigned long long)keys[2], (unsigned long long)keys[3]);
		struct gw_frame_parts parts;
		GW_OK_CALL(gw_frame_parts_of(f.b, f.len, &parts));
		GW_CHECK(parts.params == 8 && parts.keys == 5 &&
			 parts.values == (v ? 16u : 0u), "parts %u %u %u", parts.params,
			 parts.keys, parts.values);
	}
}

static void test_keyset_hostile(void **state)
{
	(void)state;
	struct frame f;
	struct keyset k;
	char what[96];

	k = keyset_ok(1);
	build_keyset(&f, &k);
	for (size_t l = 0; l < f.len; l++) {
		snprintf(what, sizeof(what), "key set cut to %zu of %zu bytes", l, f.len);
		decode(&f, l, LIMIT, GW_ETRUNC, what);
	}

	/* each case with and without values where it makes sense */
#define KEYSET_CASE(want, desc, ...)                                           \
	do {                                                                   \
		for (int v_ = 0; v_ < 2; v_++) {                               \
			k = keyset_ok(v_);                                     \
			__VA_ARGS__;                                           \
			build_keyset(&f, &k);                                  \
			snprintf(what, sizeof(what), "%s (%s values)", desc,   \
				 v_ ? "with" : "no");                          \
			decode(&f, f.len, LIMIT, want, what);                  \
			keyset_decode(&f, LIMIT, 8, want, what);               \
		}                                                              \
	} while (0)

	KEYSET_CASE(GW_ERESERVED, "vbits 16", k.params[0] = 16);
	KEYSET_CASE(GW_ERESERVED, "vbits 31", k.params[0] = 31);
	KEYSET_CASE(GW_ERESERVED, "vbits 64", k.params[0] = 64);
	KEYSET_CASE(GW_ERESERVED, "vbits 0x20 | 0x80", k.params[0] = 0xa0);
	KEYSET_CASE(GW_ERESERVED, "reserved byte 1", k.params[1] = 1);
	KEYSET_CASE(GW_ERESERVED, "reserved byte 3 = 0x80", k.params[3] = 0x80);
	KEYSET_CASE(GW_ELENGTH, "db_len one short", gw_st32(k.params + 4, 4));
	KEYSET_CASE(GW_ELENGTH, "db_len one long", gw_st32(k.params + 4, 6));
	KEYSET_CASE(GW_ELENGTH, "db_len 2^32 - 1", gw_st32(k.params + 4, UINT32_MAX));
	KEYSET_CASE(GW_ELENGTH, "values missing (vbits 32, no values)",
		    k.params[0] = 32; k.nvals = 0);
	KEYSET_CASE(GW_ELENGTH, "values present with vbits 0",
		    k.params[0] = 0; k.nvals = 4);
	KEYSET_CASE(GW_ELENGTH, "one value short", k.params[0] = 32; k.nvals = 3);
	/* the key block is shorter than db_len says: a padding byte */
	static const uint8_t padded[6] = {0x00, 0, 0, 33, 58, 0};
	KEYSET_CASE(GW_ELENGTH, "a byte after the key block, inside db_len",
		    k.db = padded; k.db_bytes = 6; gw_st32(k.params + 4, 6));
	/* the key block needs more bytes than db_len: key 4 is a 2-byte increment */
	static const uint8_t longer[5] = {0x40, 0, 0, 33, 58};
	KEYSET_CASE(GW_ELENGTH, "the key block runs past db_len", k.db = longer);
	static const uint8_t res_flags[4] = {0xc0, 0, 0, 33};   /* 3 keys */
	KEYSET_CASE(GW_ECORRUPT, "flag bits past the last key",
		    k.db = res_flags; k.db_bytes = 4; gw_st32(k.params + 4, 4);
		    k.count = 3; k.span = 36; k.nvals = v_ ? 3 : 0);
	KEYSET_CASE(GW_ELENGTH, "count 0", k.count = 0; k.db_bytes = 0;
		    gw_st32(k.params + 4, 0); k.nvals = 0);
	KEYSET_CASE(GW_ELENGTH, "count above span", k.count = 4; k.span = 3);
	static const uint8_t not_start[5] = {0x00, 1, 0, 33, 57};   /* 6 7 41 99 */
	KEYSET_CASE(GW_ECORRUPT, "first key 6, start 5", k.db = not_start);
	KEYSET_CASE(GW_ECORRUPT, "last key 99, span says 100", k.span = 96);
	KEYSET_CASE(GW_ECORRUPT, "last key 99 past the span's 94", k.span = 90);
	/* keys at or past the output */
	for (int v = 0; v < 2; v++) {
		k = keyset_ok(v);
		build_keyset(&f, &k);
		snprintf(what, sizeof(what), "last key 99, output 99 (%s values)",
			 v ? "with" : "no");
		decode(&f, f.len, 99, GW_ERANGE, what);
		keyset_decode(&f, 99, 8, GW_ERANGE, what);
		decode(&f, f.len, 100, v ? 4 : 0, "last key 99, output 100");
		keyset_decode(&f, 100, 8, 4, "last key 99, limit 100");
		keyset_decode(&f, LIMIT, 3, GW_ELENGTH, "cap 3 for 4 keys");
	}
	/* a key above 2^32 - 1 needs KEY64 (as in topk and sketchml) */
	k = keyset_ok(1);
	k.start = (1ull << 32) + 5;
	build_keyset(&f, &k);
	keyset_decode(&f, UINT64_MAX, 8, GW_ECORRUPT, "key 2^32 + 5 without KEY64");
	k.flags |= GW_FF_KEY64;
	build_keyset(&f, &k);
	keyset_decode(&f, UINT64_MAX, 8, 4, "key 2^32 + 5 with KEY64");
	decode(&f, f.len, LIMIT, GW_ERANGE, "key 2^32 + 5 with KEY64, small output");
	/* not a countsketch key set */
	struct dense d = dense_ok(10, 4);
	build_dense(&f, &d);
	keyset_decode(&f, LIMIT, 8, GW_ECODEC, "a dense slice");
	k = keyset_ok(1);
	build_keyset(&f, &k);
	f.b[GW_TEST_OFF_CODEC] = GW_CODEC_RAW;
	gw_frame_seal(f.b, f.len);
	keyset_decode(&f, LIMIT, 8, GW_ECODEC, "a raw frame");
	k = keyset_ok(1);
	build_keyset(&f, &k);
	f.b[f.len - 1] ^= 0x80;
	keyset_decode(&f, LIMIT, 8, GW_ECHECKSUM, "a value bit flipped");
	uint64_t keys[4];
	GW_EXPECT_RC(gw_keyset_decode(NULL, 10, LIMIT, keys, NULL, 4, NULL), GW_EINVAL,
		     "buf NULL");
	GW_EXPECT_RC(gw_keyset_decode(f.b, f.len, LIMIT, NULL, NULL, 4, NULL),
		     GW_EINVAL, "keys NULL");
}

/* ---- the encoder's refusals ------------------------------------------------------ */

static void test_encoder_refusals(void **state)
{
	(void)state;
	float x[64];
	gw_test_fill(x, 64, 1.0f);
	uint32_t k32[4] = {1, 5, 9, 60};
	gw_tensor dense = gw_test_dense_tensor(1, x, 64);
	gw_tensor sparse = gw_test_sparse_tensor(1, 64, k32, 32, x, 4);
	uint8_t buf[GW_FRAME_MAX];

	/* error feedback: the table is not the tensor */
	gw_ef *ef = gw_ef_create(64);
	GW_CHECK(ef, "gw_ef_create");
	for (int sp = 0; sp < 2; sp++) {
		gw_encoder *enc = gw_test_encoder(GW_CODEC_COUNTSKETCH);
		GW_EXPECT_RC(gw_encoder_set_ef(enc, ef), GW_EUNSUPPORTED,
			     "error feedback attached (%s)", sp ? "sparse" : "dense");
		GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof(buf)), GW_ESTATE,
			     "next before begin");
		/* detached, the same encoder works */
		GW_OK_CALL(gw_encoder_set_ef(enc, NULL));
		GW_OK_CALL(gw_encode_begin(enc, sp ? &sparse : &dense));
		GW_OK_CALL(gw_encode_abandon(enc));
		gw_encoder_free(enc);
	}
	gw_ef_free(ef);

	/* a slice base: frames name table cells, not tensor elements */
	gw_encoder *enc = gw_test_encoder(GW_CODEC_COUNTSKETCH);
	gw_tensor slice = dense;
	slice.base = 640;
	GW_EXPECT_RC(gw_encode_begin(enc, &slice), GW_EINVAL, "base 640");

	/* rows * cols above GW_CSK_CELLS_MAX, each within its own bounds */
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_ROWS, 2));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_COLS, GW_CSK_CELLS_MAX));
	GW_EXPECT_RC(gw_encode_begin(enc, &dense), GW_EBOUNDS, "2 x 2^26 cells");
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_ROWS, 16));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_COLS, GW_CSK_CELLS_MAX / 16 + 1));
	GW_EXPECT_RC(gw_encode_begin(enc, &dense), GW_EBOUNDS, "16 x (2^22 + 1) cells");
	/* key sets do not use the table: a sparse tensor still encodes */
	GW_OK_CALL(gw_encode_begin(enc, &sparse));
	GW_OK_CALL(gw_encode_abandon(enc));
	/* a table inside the limit is fine again */
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_COLS, 4096));
	GW_OK_CALL(gw_encode_begin(enc, &dense));
	GW_OK_CALL(gw_encode_abandon(enc));
	GW_CHECK(gw_encoder_set_param(enc, GW_PARAM_ROWS, 0) < 0, "rows 0 accepted");
	GW_CHECK(gw_encoder_set_param(enc, GW_PARAM_ROWS, 17) < 0, "rows 17 accepted");
	GW_CHECK(gw_encoder_set_param(enc, GW_PARAM_COLS, 0) < 0, "cols 0 accepted");
	GW_CHECK(gw_encoder_set_param(enc, GW_PARAM_COLS, GW_CSK_CELLS_MAX + 1.0) < 0,
		 "cols 2^26 + 1 accepted");
	gw_encoder_free(enc);
}

/* Regression: an empty dense tensor sent its (all-zero) table in frames
 * whose dim param was 0, which every decoder rejects (GW_ECORRUPT). It now
 * sends nothing, like every other codec. */
static void test_empty_tensor(void **state)
{
	(void)state;
	float x[1] = {0};
	gw_tensor t = gw_test_dense_tensor(1, x, 0);
	uint8_t buf[GW_FRAME_MAX];
	gw_encoder *enc = gw_test_encoder(GW_CODEC_COUNTSKETCH);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_COLS, 100));
	GW_OK_CALL(gw_encode_begin(enc, &t));
	GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof(buf)), 0,
		     "an empty tensor sends no frames");
	/* a tensor of zeros is not empty: its table goes out, and decodes */
	float zeros[10] = {0};
	t = gw_test_dense_tensor(1, zeros, 10);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	int n = gw_encode_next(enc, buf, sizeof(buf));
	GW_CHECK(n > 0, "first frame of a zero tensor: %d", n);
	float table[5 * 100] = {0};
	GW_EXPECT_RC(gw_decode(buf, (size_t)n, table, 500), 100, "zero table row 0");
	gw_encoder_free(enc);
}

GW_TEST_MAIN("countsketch_hostile", 0,
	     cmocka_unit_test(test_dense_valid),
	     cmocka_unit_test(test_dense_hostile),
	     cmocka_unit_test(test_keyset_valid),
	     cmocka_unit_test(test_keyset_hostile),
	     cmocka_unit_test(test_encoder_refusals),
	     cmocka_unit_test(test_empty_tensor))
