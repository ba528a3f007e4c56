/* Hostile frames are rejected with the right GW_E* code, without reading past the frame (it ends at a PROT_NONE page) and without touching the output buffer: header attacks, truncations, trailing bytes, dense ranges past the output, every single-bit flip of real frames and random garbage for every codec; and each codec's own payload forgeries (hostile_payloads.c: raw/bf16/int8 keys and int8 codes and scales, 3LC's m, pad trits and zero runs on every ISA, terngrad's trits and scale, onebit's levels and padding, top-k's varint gaps, deepreduce's framing), which every registered codec must list. */
#include "gw_test.h"

#include "hostile_payloads.h"

#include <math.h>

/* ---- the rejecting harness ----------------------------------------------- */

static size_t n_rejected;   /* reported per test, so a silent no-op shows */

/* A frame slot ending at a guard page and an output of out_len floats,
 * also ending at a guard page, filled with a pattern and snapshotted. */
struct ctx {
	gw_test_guard fbuf;
	gw_test_guard obuf;
	float *out;
	float *snap;
	uint64_t out_len;
	size_t rejected;
};

static void ctx_init(struct ctx *c, uint64_t out_len)
{
	memset(c, 0, sizeof(*c));
	gw_test_guard_alloc(&c->fbuf, GW_FRAME_MAX + 64);
	gw_test_guard_alloc(&c->obuf, (size_t)out_len * sizeof(float));
	c->out = (float *)(void *)c->obuf.p;
	c->out_len = out_len;
	c->snap = malloc((size_t)out_len * sizeof(float) + 1);
	GW_CHECK(c->snap, "out of memory");
	for (uint64_t i = 0; i < out_len; i++)
		c->out[i] = 1.0f + 0.5f * (float)(i % 64);
	memcpy(c->snap, c->out, (size_t)out_len * sizeof(float));
}

static void ctx_free(struct ctx *c)
{
	gw_test_guard_free(&c->fbuf);
	gw_test_guard_free(&c->obuf);
	free(c->snap);
}

/* The frame bytes placed so that frame[len] is the first guarded byte. */
static const uint8_t *place(struct ctx *c, const uint8_t *frame, size_t len)
{
	GW_CHECK(len <= c->fbuf.len, "frame of %zu bytes too long", len);
	uint8_t *p = c->fbuf.p + (c->fbuf.len - len);
	memmove(p, frame, len);
	return p;
}

/* gw_decode must return want (or, with want == 0, any error) and leave
 * the output exactly as it was. */
static void reject(struct ctx *c, const uint8_t *frame, size_t len, int want,
		   const char *what)
{
	const uint8_t *p = place(c, frame, len);
	int rc = gw_decode(p, len, c->out, c->out_len);
	GW_CHECK(rc < 0 && (want == 0 || rc == want),
		 "%s: gw_decode returned %d (%s), want %s", what, rc,
		 gw_error_name(rc), want ? gw_error_name(want) : "an error");
	GW_CHECK(!memcmp(c->out, c->snap, (size_t)c->out_len * sizeof(float)),
		 "%s: rejected frame (%s) changed the output buffer", what,
		 gw_error_name(rc));
	c->rejected++;
	n_rejected++;
}

/* For frames a codec may or may not accept: if rejected, nothing written. */
static void reject_or_accept(struct ctx *c, const uint8_t *frame, size_t len,
			     const char *what)
{
	const uint8_t *p = place(c, frame, len);
	int rc = gw_decode(p, len, c->out, c->out_len);
	n_rejected += rc < 0;
	if (rc < 0)
		GW_CHECK(!memcmp(c->out, c->snap, (size_t)c->out_len * sizeof(float)),
			 "%s: rejected frame (%s) changed the output buffer", what,
			 gw_error_name(rc));
	else
		memcpy(c->snap, c->out, (size_t)c->out_len * sizeof(float));
}

/* ---- frames to forge from ------------------------------------------------ */

enum { N = 300, SPARSE_DIM = 1000 };

struct src {
	float vals[N];
	uint32_t k32[N];
	uint64_t k64[N];
};

static void src_init(struct src *s)
{
	gw_test_rng r = {7};
	for (int i = 0; i < N; i++) {
		s->vals[i] = i % 7 == 0 ? 0.0f : gw_test_uniform(&r, -2.0f, 2.0f);
		s->k32[i] = (uint32_t)(3 * i + 2);
		s->k64[i] = (uint64_t)(3 * i + 2);
	}
}

/* kind 0: dense, 1: sparse 32-bit keys, 2: sparse 64-bit keys. */
static const char *const kind_name[3] = {"dense", "sparse32", "sparse64"};

static int make_frames(int id, int kind, const struct src *s, size_t budget,
		       gw_test_frames *fr, uint64_t *out_len)
{
	if (!gw_test_codec_accepts(id, kind != 0))
		return 0;
	gw_encoder *enc = gw_test_encoder(id);
	gw_tensor t = kind == 0 ? gw_test_dense_tensor(9, s->vals, N)
		    : kind == 1 ? gw_test_sparse_tensor(9, SPARSE_DIM, s->k32, 32, s->vals, N)
				: gw_test_sparse_tensor(9, SPARSE_DIM, s->k64, 64, s->vals, N);
	*out_len = t.dim;
	GW_EXPECT_RC(gw_test_encode_all(enc, &t, budget, fr), 0,
		     "%s: encoding %s failed", gw_codec_name(id), kind_name[kind]);
	gw_encoder_free(enc);
	GW_CHECK(fr->n >= 1, "%s: no frames for %s", gw_codec_name(id),
		 kind_name[kind]);
	return 1;
}

static int known(int id)
{
	return id == GW_CODEC_RAW || id == GW_CODEC_BF16 || id == GW_CODEC_INT8;
}

/* A malloc'd copy of f with room for extra bytes. */
static uint8_t *dup_frame(const gw_test_frame *f, size_t extra)
{
	uint8_t *b = malloc(f->len + extra + 1);
	GW_CHECK(b, "out of memory");
	memcpy(b, f->data, f->len);
	memset(b + f->len, 0, extra);
	return b;
}

/* ---- header-level hostility, every codec ----------------------------------- */

static void header_attacks(struct ctx *c, int id, int kind,
			   const gw_test_frame *f)
{
	char what[160];
	const char *cn = gw_codec_name(id);
	gw_frame_info h;
	GW_OK_CALL(gw_frame_verify(f->data, f->len, &h));
	uint8_t *b = dup_frame(f, 16);

	/* Truncated at every length. */
	for (size_t l = 0; l < f->len; l++) {
		snprintf(what, sizeof(what), "%s %s frame of %zu bytes cut to %zu",
			 cn, kind_name[kind], f->len, l);
		reject(c, b, l, GW_ETRUNC, what);
		GW_EXPECT_RC(gw_frame_peek(place(c, b, l), l, &h), GW_ETRUNC,
			     "%s: peek of a truncated frame", what);
	}
	/* Trailing bytes. */
	for (size_t extra = 1; extra <= 9; extra += 4) {
		snprintf(what, sizeof(what), "%s %s frame with %zu trailing bytes",
			 cn, kind_name[kind], extra);
		reject(c, b, f->len + extra, GW_ELENGTH, what);
	}

	/* Each mutation below is resealed, so only validation can refuse it. */
#define MUTATE(want, desc, ...)                                                \
	do {                                                                   \
		memcpy(b, f->data, f->len);                                    \
		__VA_ARGS__;                                                   \
		gw_frame_seal(b, f->len);                                      \
		snprintf(what, sizeof(what), "%s %s frame: %s", cn,            \
			 kind_name[kind], desc);                               \
		reject(c, b, f->len, want, what);                              \
	} while (0)

	MUTATE(GW_EMAGIC, "magic 'GX'", b[GW_TEST_OFF_MAGIC + 1] = 'X');
	MUTATE(GW_EMAGIC, "magic byte-swapped", b[0] = 'W'; b[1] = 'G');
	MUTATE(GW_EVERSION, "version 0", b[GW_TEST_OFF_VERSION] = 0);
	MUTATE(GW_EVERSION, "version 2", b[GW_TEST_OFF_VERSION] = 2);
	MUTATE(GW_EVERSION, "version 255", b[GW_TEST_OFF_VERSION] = 255);
	MUTATE(GW_ECODEC, "codec id 0", b[GW_TEST_OFF_CODEC] = 0);
	for (int u = 1; u < 256; u++) {
		if (gw_codec_name(u))
			continue;
		/* The first unregistered id above 0 and 255. */
		MUTATE(GW_ECODEC, "unknown codec id", b[GW_TEST_OFF_CODEC] = (uint8_t)u);
		if (u != 255)
			MUTATE(GW_ECODEC, "codec id 255", b[GW_TEST_OFF_CODEC] = 255);
		break;
	}
	for (int bit = 2; bit < 16; bit++) {
		uint16_t fl = (uint16_t)(h.flags | (1u << bit));
		MUTATE(GW_ERESERVED, "reserved flag bit set",
		       b[GW_TEST_OFF_FLAGS] = (uint8_t)fl;
		       b[GW_TEST_OFF_FLAGS + 1] = (uint8_t)(fl >> 8));
	}
	MUTATE(GW_ERESERVED, "reserved byte 1", b[GW_TEST_OFF_RESERVED] = 1);
	MUTATE(GW_ERESERVED, "reserved byte 0x80", b[GW_TEST_OFF_RESERVED] = 0x80);
	if (!(h.flags & GW_FF_SPARSE))
		MUTATE(GW_ERESERVED, "KEY64 without SPARSE",
		       b[GW_TEST_OFF_FLAGS] |= (uint8_t)GW_FF_KEY64);
	else if (known(id))
		/* Without SPARSE the frame is dense: span must equal count,
		 * and the payload holds no keys. */
		MUTATE(0, "SPARSE cleared", b[GW_TEST_OFF_FLAGS] &= (uint8_t)~GW_FF_SPARSE);

	uint32_t pl = h.payload_len;
	MUTATE(GW_ELENGTH, "payload_len 65536",
	       gw_test_st32(b + GW_TEST_OFF_PAYLOAD_LEN, 65536));
	MUTATE(GW_ELENGTH, "payload_len 2^32 - 1",
	       gw_test_st32(b + GW_TEST_OFF_PAYLOAD_LEN, UINT32_MAX));
	MUTATE(GW_ETRUNC, "payload_len + 1",
	       gw_test_st32(b + GW_TEST_OFF_PAYLOAD_LEN, pl + 1));
	MUTATE(GW_ELENGTH, "payload_len - 1 (a trailing byte)",
	       gw_test_st32(b + GW_TEST_OFF_PAYLOAD_LEN, pl - 1));
	MUTATE(GW_ETRUNC, "param_len 255", b[GW_TEST_OFF_PARAM_LEN] = 255);
	/* Same total length, boundary between params and payload moved. */
	for (int d = -1; d <= 1; d += 2) {
		if (d > 0 ? h.param_len == 255 : h.param_len == 0)
			continue;
		memcpy(b, f->data, f->len);
		b[GW_TEST_OFF_PARAM_LEN] = (uint8_t)(h.param_len + d);
		gw_test_st32(b + GW_TEST_OFF_PAYLOAD_LEN, (uint32_t)(pl - d));
		gw_frame_seal(b, f->len);
		snprintf(what, sizeof(what), "%s %s frame: param_len %+d, payload_len %+d",
			 cn, kind_name[kind], d, -d);
		if (known(id))
			reject(c, b, f->len, GW_ELENGTH, what);
		else
			reject_or_accept(c, b, f->len, what);
	}

	/* Counts that disagree with the payload. */
	int sparse = (h.flags & GW_FF_SPARSE) != 0;
	MUTATE(sparse && !known(id) ? 0 : GW_ELENGTH, "count 0",
	       gw_test_st32(b + GW_TEST_OFF_COUNT, 0);
	       if (!sparse) gw_test_st32(b + GW_TEST_OFF_SPAN, 0));
	if (!sparse) {
		MUTATE(GW_ELENGTH, "dense span != count",
		       gw_test_st32(b + GW_TEST_OFF_SPAN, h.count + 1));
		MUTATE(GW_ERANGE, "start + span wraps 2^64",
		       gw_test_st64(b + GW_TEST_OFF_START, UINT64_MAX - h.span + 2));
		MUTATE(GW_ERANGE, "start 2^40",
		       gw_test_st64(b + GW_TEST_OFF_START, 1ull << 40));
		MUTATE(GW_ERANGE, "start = out_len",
		       gw_test_st64(b + GW_TEST_OFF_START, c->out_len));
	} else {
		MUTATE(GW_ELENGTH, "span < count",
		       gw_test_st32(b + GW_TEST_OFF_SPAN, h.count - 1));
		MUTATE(GW_ERANGE, "start + span wraps 2^64",
		       gw_test_st64(b + GW_TEST_OFF_START, UINT64_MAX - h.span + 2));
	}
	if (known(id)) {
		/* A dense range past out_len is refused (GW_ERANGE) before the
		 * codec sees the payload (GW_ELENGTH). */
		int past = !sparse && h.start + h.count + 1 > c->out_len;
		MUTATE(past ? GW_ERANGE : GW_ELENGTH, "count + 1",
		       gw_test_st32(b + GW_TEST_OFF_COUNT, h.count + 1);
		       if (!sparse) gw_test_st32(b + GW_TEST_OFF_SPAN, h.count + 1);
		       else gw_test_st32(b + GW_TEST_OFF_SPAN, h.span + 1));
		if (h.count > 1)
			MUTATE(GW_ELENGTH, "count - 1",
			       gw_test_st32(b + GW_TEST_OFF_COUNT, h.count - 1);
			       if (!sparse) gw_test_st32(b + GW_TEST_OFF_SPAN, h.count - 1));
		MUTATE(sparse ? GW_ELENGTH : GW_ERANGE, "count 2^32 - 1",
		       gw_test_st32(b + GW_TEST_OFF_COUNT, UINT32_MAX);
		       gw_test_st32(b + GW_TEST_OFF_SPAN, UINT32_MAX));
	} else {
		/* A packing codec may hold count + 1 in the same bytes; it
		 * must still never write before refusing. */
		memcpy(b, f->data, f->len);
		gw_test_st32(b + GW_TEST_OFF_COUNT, UINT32_MAX);
		gw_test_st32(b + GW_TEST_OFF_SPAN, UINT32_MAX);
		gw_frame_seal(b, f->len);
		snprintf(what, sizeof(what), "%s %s frame: count 2^32 - 1", cn,
			 kind_name[kind]);
		reject(c, b, f->len, 0, what);
	}

	/* Checksum: a payload or checksum bit changed without resealing. */
	memcpy(b, f->data, f->len);
	b[f->len - 1] ^= 0x10;
	snprintf(what, sizeof(what), "%s %s frame: last byte changed, not resealed",
		 cn, kind_name[kind]);
	reject(c, b, f->len, GW_ECHECKSUM, what);
	GW_OK_CALL(gw_frame_peek(place(c, b, f->len), f->len, &h));
	memcpy(b, f->data, f->len);
	b[GW_TEST_OFF_CHECKSUM + 2] ^= 0x01;
	snprintf(what, sizeof(what), "%s %s frame: checksum field changed", cn,
		 kind_name[kind]);
	reject(c, b, f->len, GW_ECHECKSUM, what);
#undef MUTATE
	free(b);
}

/* Calls fn for the frames (budget 256) of the source in every kind up to
 * kinds that every codec takes. */
static void each_frames(int kinds, void (*fn)(int id, int kind, const gw_test_frames *fr,
					      uint64_t out_len))
{
	struct src s;
	src_init(&s);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int ci = 0; ci < nc; ci++) {
		for (int kind = 0; kind < kinds; kind++) {
			gw_test_frames fr;
			uint64_t out_len;
			if (!make_frames(ids[ci], kind, &s, 256, &fr, &out_len))
				continue;
			fn(ids[ci], kind, &fr, out_len);
			gw_test_frames_free(&fr);
		}
	}
}

static void first_and_last(int id, int kind, const gw_test_frames *fr, uint64_t out_len)
{
	struct ctx c;
	ctx_init(&c, out_len);
	header_attacks(&c, id, kind, &fr->f[0]);
	if (fr->n > 1)
		header_attacks(&c, id, kind, &fr->f[fr->n - 1]);
	ctx_free(&c);
}

static void test_header_attacks(void **state)
{
	(void)state;
	each_frames(3, first_and_last);
}

/* A valid dense frame whose range ends past out_len is GW_ERANGE; the
 * same frame into exactly enough output decodes. */
static void out_of_range(int id, int kind, const gw_test_frames *fr, uint64_t out_len)
{
	(void)kind;
	(void)out_len;
	for (size_t j = 0; j < fr->n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_peek(fr->f[j].data, fr->f[j].len, &h));
		uint64_t end = h.start + h.span;
		struct ctx c;
		ctx_init(&c, end - 1);
		char what[96];
		snprintf(what, sizeof(what), "%s frame [%llu,+%u) into %llu outputs",
			 gw_codec_name(id), (unsigned long long)h.start, h.span,
			 (unsigned long long)(end - 1));
		reject(&c, fr->f[j].data, fr->f[j].len, GW_ERANGE, what);
		ctx_free(&c);
		ctx_init(&c, end);
		const uint8_t *p = place(&c, fr->f[j].data, fr->f[j].len);
		int rc = gw_decode(p, fr->f[j].len, c.out, end);
		GW_CHECK(rc == (int)h.count, "%s frame [%llu,+%u) into exactly %llu "
			 "outputs: %s", gw_codec_name(id), (unsigned long long)h.start,
			 h.span, (unsigned long long)end, gw_error_name(rc));
		ctx_free(&c);
	}
}

static void test_dense_out_of_range(void **state)
{
	(void)state;
	each_frames(1, out_of_range);
}

/* ---- each codec's own payload ---------------------------------------------- */

static void test_payload_attacks(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int n = gw_codec_list(ids, GW_TEST_MAX_CODECS);
	GW_CHECK(n > 0 && n <= GW_TEST_MAX_CODECS, "gw_codec_list returned %d", n);
	for (int c = 0; c < n; c++) {
		const char *name = gw_codec_name(ids[c]);
		const struct hostile_payload *hp = NULL;
		for (size_t i = 0; i < hostile_npayloads; i++)
			if (!strcmp(hostile_payloads[i].codec, name))
				hp = &hostile_payloads[i];
		GW_CHECK(hp, "codec \"%s\" has no entry in tests/codec/hostile_payloads.c: "
			 "add its payload forgeries there (or say why it has none)",
			 name);
		if (!hp->attack) {
			print_message("  %s: no payload forgeries of its own: %s\n", name,
				      hp->why_none);
			continue;
		}
		/* Codecs with SIMD paths give every verdict on each of them. */
		const gw_test_codec *cd = gw_test_codec_of(ids[c]);
		for (int isa = 0; isa < gw_test_isa_count(cd); isa++) {
			gw_test_isa(cd, isa);
			hp->attack(ids[c]);
		}
		gw_test_isa(cd, -1);
	}
}

/* ---- every single-bit flip of real frames ---------------------------------- */

static void flip_all_bits(int id, const char *name, const gw_test_frame *f)
{
	gw_frame_info h;
	GW_OK_CALL(gw_frame_verify(f->data, f->len, &h));
	/* Output just large enough for this frame, so the frame itself is
	 * valid there and only the flip can make it fail. */
	uint64_t out_len = h.start + h.span;
	GW_CHECK(out_len <= (1u << 22), "%s %s: first frame ends at %llu; pick "
		 "an earlier frame", gw_codec_name(id), name,
		 (unsigned long long)out_len);
	struct ctx c;
	ctx_init(&c, out_len);
	uint8_t *b = dup_frame(f, 0);
	char what[128];
	for (size_t byte = 0; byte < f->len; byte++) {
		for (int bit = 0; bit < 8; bit++) {
			b[byte] ^= (uint8_t)(1u << bit);
			snprintf(what, sizeof(what), "%s %s frame (%zu bytes), bit %d of "
				 "byte %zu flipped", gw_codec_name(id), name, f->len,
				 bit, byte);
			reject(&c, b, f->len, 0, what);
			b[byte] ^= (uint8_t)(1u << bit);
		}
	}
	free(b);
	ctx_free(&c);
}

static void test_bit_flips(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	gw_test_dense d1, d2;
	gw_test_load_dense(10, &d1);   /* cnn/it010_fc.weight */
	gw_test_load_dense(20, &d2);   /* cnn/it135_conv2.weight */
	gw_test_sparse sp;
	gw_test_load_sparse(0, &sp);
	uint64_t *k64 = malloc(sp.nnz * sizeof(uint64_t));
	GW_CHECK(k64, "out of memory");
	for (size_t i = 0; i < sp.nnz; i++)
		k64[i] = sp.keys[i];
	struct {
		gw_tensor t;
		size_t budget;
		const char *name;
	} cases[] = {
		{gw_test_dense_tensor(1, d1.v, d1.n), 256, d1.name},
		{gw_test_dense_tensor(1, d1.v, d1.n), 1500 - 78, d1.name},
		{gw_test_dense_tensor(2, d2.v, d2.n), 1000, d2.name},
		{gw_test_sparse_tensor(3, sp.dim, sp.keys, 32, sp.vals, sp.nnz), 1500 - 78,
		 sp.name},
		{gw_test_sparse_tensor(4, sp.dim, k64, 64, sp.vals, sp.nnz), 600,
		 "logreg_spam/it001 (64-bit keys)"},
	};
	for (int ci = 0; ci < nc; ci++) {
		for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
			if (!gw_test_codec_accepts(ids[ci], cases[k].t.keys != NULL))
				continue;
			gw_encoder *enc = gw_test_encoder(ids[ci]);
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &cases[k].t, cases[k].budget, &fr));
			GW_CHECK(fr.n >= 1, "%s: no frames", gw_codec_name(ids[ci]));
			flip_all_bits(ids[ci], cases[k].name, &fr.f[0]);
			gw_test_frames_free(&fr);
			gw_encoder_free(enc);
		}
	}
	free(k64);
	gw_test_sparse_free(&sp);
	gw_test_dense_free(&d1);
	gw_test_dense_free(&d2);
}

/* Random garbage of every length up to 200 bytes, with and without a
 * valid magic/version prefix and checksum: never accepted. */
static void test_garbage(void **state)
{
	(void)state;
	struct ctx c;
	ctx_init(&c, 64);
	gw_test_rng r = {99};
	uint8_t b[256];
	char what[96];
	for (size_t len = 0; len <= 200; len++) {
		for (int t = 0; t < 20; t++) {
			for (size_t i = 0; i < len; i++)
				b[i] = (uint8_t)gw_test_rand(&r);
			if (t % 2 && len >= GW_FRAME_HDR_LEN) {
				b[0] = 'G';
				b[1] = 'W';
				b[2] = GW_FRAME_VERSION;
				gw_frame_seal(b, len);
			}
			snprintf(what, sizeof(what), "random %zu bytes (trial %d)", len, t);
			reject_or_accept(&c, b, len, what);
		}
	}
	ctx_free(&c);
}

static int report(void **state)
{
	(void)state;
	print_message("  %zu hostile frames rejected with the output untouched\n",
		      n_rejected);
	n_rejected = 0;
	return 0;
}

GW_TEST_MAIN("hostile_frames", 0,
	     cmocka_unit_test_teardown(test_header_attacks, report),
	     cmocka_unit_test_teardown(test_dense_out_of_range, report),
	     cmocka_unit_test(test_payload_attacks),
	     cmocka_unit_test_teardown(test_bit_flips, report),
	     cmocka_unit_test_teardown(test_garbage, report))
