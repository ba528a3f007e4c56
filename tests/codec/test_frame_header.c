/* Frame header and API contract: wire layout, gw_frame_peek fields, checksum handling, error names/texts, the codec registry, and API misuse (NULLs, call order, budgets, bad tensors). */
#include "gw_test.h"

#include <limits.h>
#include <math.h>

static int known(int id)
{
	return id == GW_CODEC_RAW || id == GW_CODEC_BF16 || id == GW_CODEC_INT8;
}

/* The 36-byte header byte by byte (docs/wire-format.md). */
static void test_wire_layout(void **state)
{
	(void)state;
	float v[10];
	for (int i = 0; i < 10; i++)
		v[i] = (float)i - 4.5f;
	gw_tensor t = gw_test_dense_tensor(0xA1B2C3D4u, v, 10);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_RAW);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 1000, &fr));
	GW_CHECK(fr.n == 1, "10 raw values at budget 1000: %zu frames", fr.n);
	const uint8_t *b = fr.f[0].data;
	size_t len = fr.f[0].len;
	GW_CHECK(len == GW_FRAME_HDR_LEN + 40, "raw frame of 10 values is %zu bytes, "
		 "want 36 + 40", len);
	GW_CHECK(b[0] == 'G' && b[1] == 'W', "magic bytes %02x %02x, want 'G' 'W'",
		 b[0], b[1]);
	GW_CHECK(b[GW_TEST_OFF_VERSION] == GW_FRAME_VERSION, "version byte %u",
		 b[GW_TEST_OFF_VERSION]);
	GW_CHECK(b[GW_TEST_OFF_CODEC] == GW_CODEC_RAW, "codec byte %u",
		 b[GW_TEST_OFF_CODEC]);
	GW_CHECK(b[GW_TEST_OFF_FLAGS] == 0 && b[GW_TEST_OFF_FLAGS + 1] == 0,
		 "dense frame flags %02x %02x", b[4], b[5]);
	GW_CHECK(b[GW_TEST_OFF_PARAM_LEN] == 0 && b[GW_TEST_OFF_RESERVED] == 0,
		 "param_len %u reserved %u", b[6], b[7]);
	GW_CHECK(b[8] == 0xD4 && b[9] == 0xC3 && b[10] == 0xB2 && b[11] == 0xA1,
		 "tensor id not little-endian at offset 8");
	GW_CHECK(gw_test_ld32(b + GW_TEST_OFF_COUNT) == 10 &&
			 gw_test_ld64(b + GW_TEST_OFF_START) == 0 &&
			 gw_test_ld32(b + GW_TEST_OFF_SPAN) == 10 &&
			 gw_test_ld32(b + GW_TEST_OFF_PAYLOAD_LEN) == 40,
		 "count/start/span/payload_len fields wrong");
	GW_CHECK(gw_test_ld32(b + GW_TEST_OFF_CHECKSUM) == gw_frame_checksum(b, len),
		 "stored checksum is not gw_frame_checksum of the frame");
	for (int i = 0; i < 10; i++)
		GW_CHECK(gw_test_ld32(b + GW_FRAME_HDR_LEN + 4 * i) == gw_test_bits(v[i]),
			 "raw payload value %d is not the float's little-endian bits", i);
	/* The checksum field does not feed the checksum. */
	uint8_t copy[GW_FRAME_HDR_LEN + 40];
	memcpy(copy, b, len);
	gw_test_st32(copy + GW_TEST_OFF_CHECKSUM, 0xdeadbeef);
	GW_CHECK(gw_frame_checksum(copy, len) == gw_frame_checksum(b, len),
		 "checksum depends on the checksum field");
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

/* gw_frame_peek reports what was encoded, for every codec and tensor kind. */
static void test_peek_fields(void **state)
{
	(void)state;
	enum { N = 500 };
	static float v[N];
	static uint32_t k32[N];
	static uint64_t k64[N];
	gw_test_rng r = {3};
	for (int i = 0; i < N; i++) {
		v[i] = gw_test_uniform(&r, -1, 1);
		k32[i] = (uint32_t)(5 * i + 1);
		k64[i] = (uint64_t)(5 * i + 1) + (1ull << 33);
	}
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		for (int kind = 0; kind < 3; kind++) {
			if (!gw_test_codec_accepts(id, kind != 0))
				continue;
			gw_tensor t = kind == 0 ? gw_test_dense_tensor(0xfeed0000u + kind, v, N)
				    : kind == 1 ? gw_test_sparse_tensor(0xfeed0001u, 5 * N, k32, 32, v, N)
						: gw_test_sparse_tensor(0xfeed0002u, (1ull << 34), k64, 64, v, N);
			uint16_t want_flags = kind == 0 ? 0
					    : kind == 1 ? GW_FF_SPARSE
							: GW_FF_SPARSE | GW_FF_KEY64;
			gw_encoder *enc = gw_test_encoder(id);
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, 300, &fr));
			uint64_t next = 0;   /* entry index the next frame starts at */
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				memset(&h, 0xcc, sizeof(h));
				GW_OK_CALL(gw_frame_peek(fr.f[j].data, fr.f[j].len, &h));
				const char *cn = gw_codec_name(id);
				GW_CHECK(h.version == GW_FRAME_VERSION && h.codec == id &&
						 h.tensor == t.id,
					 "%s kind %d frame %zu: version %u codec %u tensor "
					 "%#x", cn, kind, j, h.version, h.codec, h.tensor);
				GW_CHECK(h.frame_len == fr.f[j].len &&
						 h.frame_len == GW_FRAME_HDR_LEN + h.param_len +
									h.payload_len,
					 "%s kind %d frame %zu: frame_len %u, params %u, "
					 "payload %u, bytes %zu", cn, kind, j, h.frame_len,
					 h.param_len, h.payload_len, fr.f[j].len);
				if (known(id)) {
					GW_CHECK(h.flags == want_flags, "%s kind %d frame %zu: "
						 "flags %#x, want %#x", cn, kind, j, h.flags,
						 want_flags);
					GW_CHECK(h.param_len == (id == GW_CODEC_INT8 ? 4u : 0u),
						 "%s: param_len %u", cn, h.param_len);
					uint64_t first = kind == 0 ? next
						       : kind == 1 ? k32[next] : k64[next];
					uint64_t lastk = kind == 0 ? next + h.count - 1
						       : kind == 1 ? k32[next + h.count - 1]
								   : k64[next + h.count - 1];
					GW_CHECK(h.start == first && h.span == lastk - first + 1,
						 "%s kind %d frame %zu: start %llu span %u, want "
						 "%llu / %llu", cn, kind, j,
						 (unsigned long long)h.start, h.span,
						 (unsigned long long)first,
						 (unsigned long long)(lastk - first + 1));
				}
				next += h.count;
			}
			if (known(id))
				GW_CHECK(next == N, "%s kind %d: frames hold %llu of %d",
					 gw_codec_name(id), kind, (unsigned long long)next, N);
			gw_test_frames_free(&fr);
			gw_encoder_free(enc);
		}
	}
}

/* Peek does not read the checksum; verify and decode do. */
static void test_checksum_roles(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	float v[64];
	for (int i = 0; i < 64; i++)
		v[i] = 0.25f * (float)(i - 30);
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		const char *cn = gw_codec_name(ids[c]);
		gw_encoder *enc = gw_test_encoder(ids[c]);
		gw_tensor t = gw_test_dense_tensor(11, v, 64);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 1000, &fr));
		gw_frame_info good, h;
		GW_OK_CALL(gw_frame_verify(fr.f[0].data, fr.f[0].len, &good));
		uint8_t *b = malloc(fr.f[0].len);
		GW_CHECK(b, "out of memory");
		/* 1: the checksum field itself damaged; 2: a payload byte. */
		for (int which = 0; which < 2; which++) {
			memcpy(b, fr.f[0].data, fr.f[0].len);
			if (which == 0)
				b[GW_TEST_OFF_CHECKSUM] ^= 0x5a;
			else
				b[fr.f[0].len - 1] ^= 0x01;
			GW_EXPECT_RC(gw_frame_peek(b, fr.f[0].len, &h), 0,
				     "%s: peek must not look at the checksum", cn);
			GW_CHECK(which == 1 ||
					 (h.codec == good.codec && h.flags == good.flags &&
					  h.tensor == good.tensor && h.count == good.count &&
					  h.start == good.start && h.span == good.span &&
					  h.param_len == good.param_len &&
					  h.payload_len == good.payload_len &&
					  h.frame_len == good.frame_len),
				 "%s: peek of a frame with a bad checksum field "
				 "reports other fields", cn);
			GW_EXPECT_RC(gw_frame_verify(b, fr.f[0].len, &h), GW_ECHECKSUM,
				     "%s: verify of a damaged frame", cn);
			float out[64];
			gw_test_fill(out, 64, 2.0f);
			GW_EXPECT_RC(gw_decode(b, fr.f[0].len, out, 64), GW_ECHECKSUM,
				     "%s: decode of a damaged frame", cn);
			for (int i = 0; i < 64; i++)
				GW_CHECK(out[i] == 2.0f, "%s: refused frame wrote out[%d]",
					 cn, i);
		}
		free(b);
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
}

static void test_error_names(void **state)
{
	(void)state;
	static const char *const names[] = {
		"GW_OK", "GW_EINVAL", "GW_ENOMEM", "GW_ETRUNC", "GW_EMAGIC",
		"GW_EVERSION", "GW_ERESERVED", "GW_ECHECKSUM", "GW_ECODEC",
		"GW_ELENGTH", "GW_ERANGE", "GW_EBUDGET", "GW_EPARAM", "GW_EBOUNDS",
		"GW_ECORRUPT", "GW_ESTATE", "GW_EUNSUPPORTED", "GW_EIO", "GW_ETIMEDOUT",
		"GW_EPEER", "GW_ECONFIG",
	};
	GW_CHECK(sizeof(names) / sizeof(names[0]) == (size_t)-GW_E_LAST,
		 "the test knows %zu codes, the header %d", sizeof(names) / sizeof(names[0]),
		 -GW_E_LAST);
	for (int e = 0; e > GW_E_LAST; e--) {
		const char *n = gw_error_name(e), *s = gw_strerror(e);
		GW_CHECK(n && !strcmp(n, names[-e]), "gw_error_name(%d) = %s, want %s",
			 e, n ? n : "NULL", names[-e]);
		GW_CHECK(s && *s && strcmp(s, "unknown error") != 0,
			 "gw_strerror(%d) = \"%s\"", e, s ? s : "NULL");
		GW_CHECK(gw_is_error(e) == (e < 0), "gw_is_error(%d)", e);
		for (int f = 0; f > e; f--)
			GW_CHECK(strcmp(s, gw_strerror(f)) != 0, "codes %d and %d share "
				 "the text \"%s\"", f, e, s);
	}
	static const int bad[] = {1, 42, GW_E_LAST, GW_E_LAST - 1, -1000, INT_MIN,
				  INT_MAX};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *n = gw_error_name(bad[i]), *s = gw_strerror(bad[i]);
		GW_CHECK(n && s, "name/text of %d must not be NULL", bad[i]);
		GW_CHECK(!strcmp(s, "unknown error"), "gw_strerror(%d) = \"%s\", want "
			 "\"unknown error\"", bad[i], s);
		for (int e = 0; e > GW_E_LAST; e--)
			GW_CHECK(strcmp(n, names[-e]) != 0, "gw_error_name(%d) = %s, a "
				 "real code's name", bad[i], n);
	}
	char want[32];
	snprintf(want, sizeof(want), "%d.%d.%d", GW_VERSION_MAJOR, GW_VERSION_MINOR,
		 GW_VERSION_PATCH);
	GW_CHECK(!strcmp(gw_version_string(), want), "gw_version_string() = %s, "
		 "headers say %s", gw_version_string(), want);
#ifdef GW_DEBUG
	const char *file = NULL;
	int line = 0;
	GW_EXPECT_RC(gw_frame_peek(NULL, 0, NULL), GW_EINVAL, "peek(NULL)");
	GW_CHECK(gw_error_site(&file, &line) == 1 && file && strstr(file, "frame.c") &&
			 line > 0,
		 "debug build: error site of a refused peek is %s:%d, want frame.c",
		 file ? file : "NULL", line);
#endif
}

static void test_registry(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int n = gw_codec_list(ids, GW_TEST_MAX_CODECS);   /* every codec here */
	GW_CHECK(n > 0 && n <= GW_TEST_MAX_CODECS, "gw_codec_list returned %d", n);
	GW_CHECK(gw_codec_list(NULL, 0) == n, "gw_codec_list(NULL, 0) must count");
	int two[2] = {-7, -7};
	GW_CHECK(gw_codec_list(two, 1) == n && two[0] == ids[0] && two[1] == -7,
		 "gw_codec_list(ids, 1) wrote past cap or miscounted");
	for (int i = 0; i < n; i++) {
		const char *name = gw_codec_name(ids[i]);
		GW_CHECK(ids[i] > 0 && ids[i] < 256, "codec id %d does not fit the "
			 "header byte (0 is invalid)", ids[i]);
		GW_EXPECT_RC(gw_codec_by_name(name), ids[i], "by_name(%s)", name);
		int caps = gw_codec_caps(ids[i]);
		GW_CHECK(caps > 0 && !(caps & ~(int)(GW_CODEC_DENSE | GW_CODEC_SPARSE |
						     GW_CODEC_LOSSY | GW_CODEC_TABLE)) &&
				 (caps & (GW_CODEC_DENSE | GW_CODEC_SPARSE)),
			 "%s caps %#x", name, caps);
		for (int j = 0; j < i; j++)
			GW_CHECK(ids[j] != ids[i] && strcmp(name, gw_codec_name(ids[j])),
				 "codecs %d and %d share an id or a name", ids[j], ids[i]);
	}
	static const struct {
		int id;
		const char *name;
		int caps;
	} first[] = {
		{GW_CODEC_RAW, "raw", GW_CODEC_DENSE | GW_CODEC_SPARSE},
		{GW_CODEC_BF16, "bf16", GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY},
		{GW_CODEC_INT8, "int8", GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY},
	};
	for (int i = 0; i < 3; i++) {
		GW_CHECK(gw_codec_name(first[i].id) &&
				 !strcmp(gw_codec_name(first[i].id), first[i].name) &&
				 gw_codec_caps(first[i].id) == first[i].caps,
			 "codec %d must be \"%s\" with caps %#x", first[i].id,
			 first[i].name, first[i].caps);
	}
	/* The tests' own table (tests/gw_test_codecs.c) knows every codec and
	 * its caps: a codec added to the registry is refused here until it
	 * says what it promises. */
	for (int i = 0; i < n; i++)
		GW_CHECK(gw_test_codec_of(ids[i])->caps == gw_codec_caps(ids[i]),
			 "%s: caps %#x, tests/gw_test_codecs.c says %#x",
			 gw_codec_name(ids[i]), gw_codec_caps(ids[i]),
			 gw_test_codec_of(ids[i])->caps);
	GW_CHECK(gw_codec_name(0) == NULL && gw_codec_name(-1) == NULL &&
			 gw_codec_name(256) == NULL,
		 "invalid ids must have no name");
	GW_EXPECT_RC(gw_codec_caps(0), GW_ECODEC, "caps of id 0");
	GW_EXPECT_RC(gw_codec_by_name("RAW"), GW_ECODEC, "names are case-sensitive");
	GW_EXPECT_RC(gw_codec_by_name(""), GW_ECODEC, "empty name");
	GW_EXPECT_RC(gw_codec_by_name(NULL), GW_EINVAL, "NULL name");
}

static void test_api_misuse(void **state)
{
	(void)state;
	float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	uint8_t buf[256];
	gw_frame_info h;
	gw_tensor t = gw_test_dense_tensor(1, v, 8);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_RAW);

	GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof(buf)), GW_ESTATE,
		     "next before any begin");
	GW_EXPECT_RC(gw_encode_begin(NULL, &t), GW_EINVAL, "begin(NULL, t)");
	GW_EXPECT_RC(gw_encode_begin(enc, NULL), GW_EINVAL, "begin(enc, NULL)");
	GW_EXPECT_RC(gw_encode_min_budget(NULL, &t), GW_EINVAL, "min_budget(NULL)");
	GW_EXPECT_RC(gw_encode_min_budget(enc, NULL), GW_EINVAL, "min_budget(enc, NULL)");
	GW_EXPECT_RC(gw_encoder_set_ef(NULL, NULL), GW_EINVAL, "set_ef(NULL)");
	GW_OK_CALL(gw_encode_begin(enc, &t));
	GW_EXPECT_RC(gw_encode_next(NULL, buf, sizeof(buf)), GW_EINVAL, "next(NULL)");
	GW_EXPECT_RC(gw_encode_next(enc, NULL, sizeof(buf)), GW_EINVAL,
		     "next into NULL");
	gw_ef *ef = gw_ef_create(8);
	GW_CHECK(ef, "gw_ef_create failed");
	GW_EXPECT_RC(gw_encoder_set_ef(enc, ef), GW_ESTATE,
		     "attaching feedback between begin and the last frame");
	int len = gw_encode_next(enc, buf, sizeof(buf));
	GW_CHECK(len > 0, "raw frame of 8 values: %s", gw_error_name(len));
	GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof(buf)), 0, "tensor done");
	GW_CHECK(gw_encode_next(enc, buf, sizeof(buf)) <= 0,
		 "a frame came after the tensor was done");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	GW_OK_CALL(gw_encoder_set_ef(enc, NULL));

	/* Decoding and peeking with NULLs. */
	GW_EXPECT_RC(gw_frame_peek(NULL, 100, &h), GW_EINVAL, "peek(NULL buf)");
	GW_EXPECT_RC(gw_frame_peek(buf, (size_t)len, NULL), GW_EINVAL,
		     "peek(NULL info)");
	GW_EXPECT_RC(gw_frame_verify(NULL, 100, &h), GW_EINVAL, "verify(NULL)");
	float out[8] = {0};
	GW_EXPECT_RC(gw_decode(NULL, 100, out, 8), GW_EINVAL, "decode(NULL buf)");
	GW_EXPECT_RC(gw_decode(buf, (size_t)len, NULL, 8), GW_EINVAL,
		     "decode into NULL with out_len 8");
	GW_EXPECT_RC(gw_decode(buf, (size_t)len, NULL, 0), GW_ERANGE,
		     "decode of 8 elements into nothing");
	GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, 8), 8, "valid decode");
	for (int i = 0; i < 8; i++)
		GW_CHECK(out[i] == v[i], "raw decode out[%d] = %g", i, (double)out[i]);

	/* Tensors the encoder must refuse. */
	static const uint32_t unsorted[3] = {1, 5, 3}, dup[3] = {1, 3, 3},
			      big[3] = {1, 2, 10}, sorted[3] = {1, 2, 3};
	static const uint64_t unsorted64[3] = {1ull << 40, 5, 6};
	gw_tensor bad[] = {
		gw_test_sparse_tensor(1, 10, unsorted, 32, v, 3),
		gw_test_sparse_tensor(1, 10, dup, 32, v, 3),
		gw_test_sparse_tensor(1, 10, big, 32, v, 3),   /* key 10 == dim */
		gw_test_sparse_tensor(1, 1ull << 41, unsorted64, 64, v, 3),
		gw_test_sparse_tensor(1, 10, sorted, 16, v, 3),  /* key_bits */
		gw_test_sparse_tensor(1, 10, sorted, 0, v, 3),
		gw_test_sparse_tensor(1, 10, sorted, 32, NULL, 3),
		gw_test_dense_tensor(1, NULL, 8),
	};
	static const char *const why[] = {
		"unsorted keys", "duplicate keys", "key == dim", "unsorted 64-bit keys",
		"key_bits 16", "key_bits 0", "sparse values NULL", "dense values NULL",
	};
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		gw_encoder *e2 = gw_test_encoder(ids[c]);
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			if (!gw_test_codec_accepts(ids[c], bad[i].keys != NULL))
				continue;
			GW_EXPECT_RC(gw_encode_begin(e2, &bad[i]), GW_EINVAL, "%s: %s",
				     gw_codec_name(ids[c]), why[i]);
			GW_EXPECT_RC(gw_encode_next(e2, buf, sizeof(buf)), GW_ESTATE,
				     "%s: next after a refused begin (%s)",
				     gw_codec_name(ids[c]), why[i]);
		}
		/* Feedback of the wrong dimension. */
		gw_ef *ef9 = gw_ef_create(9);
		GW_CHECK(ef9, "gw_ef_create failed");
		GW_OK_CALL(gw_encoder_set_ef(e2, ef9));
		if (gw_test_codec_accepts(ids[c], 0))
			GW_EXPECT_RC(gw_encode_begin(e2, &t), GW_EINVAL,
				     "%s: 8-element tensor, 9-element feedback",
				     gw_codec_name(ids[c]));
		gw_tensor sp = gw_test_sparse_tensor(1, 10, big, 32, v, 2);
		if (gw_test_codec_accepts(ids[c], 1))
			GW_EXPECT_RC(gw_encode_begin(e2, &sp), GW_EINVAL,
				     "%s: sparse dim 10, 9-element feedback",
				     gw_codec_name(ids[c]));
		gw_encoder_free(e2);
		gw_ef_free(ef9);
	}
	gw_encoder_free(NULL);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

/* A budget too small for one element is GW_EBUDGET, writes nothing, and
 * costs nothing: retrying with a larger budget continues where the encoder
 * was, so the frames (and the error buffer) equal those of a run that never
 * failed. */
static void budget_retry(int id, int with_ef)
{
	enum { N = 400 };
	float v[N];
	gw_test_rng r = {11};
	for (int i = 0; i < N; i++)
		v[i] = gw_test_uniform(&r, -3, 3);
	gw_tensor t = gw_test_dense_tensor(21, v, N);
	const char *cn = gw_codec_name(id);

	gw_encoder *ref = gw_test_encoder(id);
	gw_ef *ef_ref = with_ef ? gw_ef_create(N) : NULL;
	GW_OK_CALL(gw_encoder_set_ef(ref, ef_ref));
	gw_test_frames want;
	GW_OK_CALL(gw_test_encode_all(ref, &t, 256, &want));

	gw_encoder *enc = gw_test_encoder(id);
	gw_ef *ef = with_ef ? gw_ef_create(N) : NULL;
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	int min = gw_encode_min_budget(enc, &t);
	GW_CHECK(min >= (int)GW_BUDGET_MIN && min <= 256, "%s: min budget %d", cn, min);
	gw_test_guard g;
	gw_test_guard_alloc(&g, 256);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	const size_t small[] = {0, 1, GW_FRAME_HDR_LEN, GW_BUDGET_MIN - 1, (size_t)min - 1};
	size_t j = 0;
	for (int guard = 0;; guard++) {
		GW_CHECK(guard <= N, "%s: endless frames", cn);
		/* (Once every frame is out, any budget gets 0: done.) */
		for (size_t s = 0; j < want.n && s < sizeof(small) / sizeof(small[0]); s++) {
			memset(g.p, 0x5c, g.len);
			GW_EXPECT_RC(gw_encode_next(enc, g.p + g.len - small[s], small[s]),
				     GW_EBUDGET, "%s: budget %zu before frame %zu", cn,
				     small[s], j);
			for (size_t i = 0; i < g.len; i++)
				GW_CHECK(g.p[i] == 0x5c, "%s: a refused budget of %zu wrote "
					 "byte %zu", cn, small[s], i);
		}
		int len = gw_encode_next(enc, g.p, 256);
		if (len == 0)
			break;
		GW_CHECK(len > 0, "%s: retry with budget 256 failed: %s", cn,
			 gw_error_name(len));
		GW_CHECK(j < want.n && (size_t)len == want.f[j].len &&
				 !memcmp(g.p, want.f[j].data, (size_t)len),
			 "%s%s: frame %zu after refused budgets differs from the "
			 "uninterrupted run", cn, with_ef ? " with feedback" : "", j);
		j++;
	}
	GW_CHECK(j == want.n, "%s: %zu frames after retries, %zu without", cn, j,
		 want.n);
	if (with_ef)
		GW_CHECK(!memcmp(gw_ef_data(ef), gw_ef_data(ef_ref), N * sizeof(float)),
			 "%s: error buffer after refused budgets differs from the "
			 "uninterrupted run", cn);
	gw_test_guard_free(&g);
	gw_test_frames_free(&want);
	gw_encoder_free(enc);
	gw_encoder_free(ref);
	gw_ef_free(ef);
	gw_ef_free(ef_ref);
}

static void test_budget_retry(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		budget_retry(ids[c], 0);
		budget_retry(ids[c], 1);
	}
}

/* Budgets above GW_FRAME_MAX act as GW_FRAME_MAX. */
static void test_budget_clamp(void **state)
{
	(void)state;
	enum { N = 40000 };
	float *v = malloc(N * sizeof(float));
	GW_CHECK(v, "out of memory");
	for (int i = 0; i < N; i++)
		v[i] = (float)(i % 100) - 50.0f;
	gw_tensor t = gw_test_dense_tensor(1, v, N);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	static const size_t budgets[] = {GW_FRAME_MAX, GW_FRAME_MAX + 1, 1u << 20,
					 SIZE_MAX};
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		gw_encoder *enc = gw_test_encoder(ids[c]);
		for (int b = 0; b < 4; b++) {
			gw_test_frames fr;
			/* The helper's buffer is min(budget, GW_FRAME_MAX) bytes
			 * long and ends at a guard page. */
			GW_OK_CALL(gw_test_encode_all(enc, &t, budgets[b], &fr));
			for (size_t j = 0; j < fr.n; j++)
				GW_CHECK(fr.f[j].len <= GW_FRAME_MAX, "%s: budget %zu gave a "
					 "%zu-byte frame", gw_codec_name(ids[c]), budgets[b],
					 fr.f[j].len);
			gw_test_frames_free(&fr);
		}
		gw_encoder_free(enc);
	}
	free(v);
}

GW_TEST_MAIN("frame_header", 0,
	     cmocka_unit_test(test_wire_layout),
	     cmocka_unit_test(test_peek_fields),
	     cmocka_unit_test(test_checksum_roles),
	     cmocka_unit_test(test_error_names),
	     cmocka_unit_test(test_registry),
	     cmocka_unit_test(test_api_misuse),
	     cmocka_unit_test(test_budget_retry),
	     cmocka_unit_test(test_budget_clamp))
