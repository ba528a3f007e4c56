/* The decoder harness every fuzz_<codec>.c shares, and the frame checks
 * fuzz_frame.c uses too.
 *
 * Frames carry a checksum, so bytes a fuzzer invents never get past
 * gw_frame_verify(). gw_fuzz_decoder() therefore decodes each input twice:
 *
 *  (a) as it is — what a receiver does with whatever arrives — through
 *      gw_decode() and gw_ef_restore(), which must agree;
 *  (b) as a frame of the harness's codec: magic, version and codec id
 *      forced, flags, lengths, start, span and keys fixed up as far as the
 *      control word asks, then sealed with gw_frame_seal(), so the codec's
 *      decoder sees hostile params and payloads.
 *
 * The control word of (b) is the input's checksum field (bytes 32..35),
 * which (b) overwrites anyway: a valid frame from the seed corpus decodes
 * in (a), and the fuzzer steers (b) by mutating four bytes.
 *
 *   bits 0-1   flags: 0 as given, 1 dense, 2 sparse 32-bit, 3 sparse 64-bit
 *   bit  2     clear the reserved byte
 *   bits 3-4   lengths: 0 as given; 1 param_len/payload_len fitted to the
 *              input; 2 as 1 in the codec's shape (param_len, count from
 *              payload_len, span); 3 as 2, then the buffer grown or cut by
 *              a few bytes after sealing
 *   bit  5     start modulo 4096, so that an output can hold the range
 *   bits 6-7   output length: 0 what the header needs, 1 one less, 2 the
 *              small number in bits 8-15, 3 what it needs plus that number
 *   bits 8-15  that small number
 *   bit  16    sparse, codec shape: rewrite keys ascending, from start to start + span - 1
 *   bit  17    pass out = NULL (with a non-zero out_len: GW_EINVAL)
 *   bit  18    leave the checksum unsealed
 *   bits 19-21 lengths mode 3: grow (0-3) or cut (4-7 → 1-4) that many bytes
 *   bit  22    sparse, codec shape: span = count exactly
 *   bit  23    sparse, keys rewritten: then move one key by -4..+3
 *   bits 24-28 which key (31: the last), bits 29-31 how far (value - 4)
 *
 * The output is a heap block of exactly out_len floats, so AddressSanitizer
 * sees any write outside it; its size is derived from the header, small, so
 * GW_ERANGE paths are taken as often as accepting ones. */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "fuzz_common.h"
#include "refdec.h"
#include "emu.h"   /* gpudirect's decode kernels, on the CPU */

/* Largest output the harness allocates (floats): more than any frame up
 * to libFuzzer's -max_len covers past a start below 4096, small enough to
 * keep an input cheap. */
#define OUT_CAP (1u << 14)

/* What every output starts as: non-zero, varied values, so untouched
 * elements must keep their bits (touched ones may change). */
static float pattern[OUT_CAP];

static const float *out_pattern(void)
{
	if (pattern[0] == 0.0f)
		for (uint32_t i = 0; i < OUT_CAP; i++)
			pattern[i] = (float)(i % 509) - 254.5f;
	return pattern;
}

int gw_fuzz_last_rc = GW_FUZZ_RC_NONE;

void gw_fuzz_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gw-fuzz: check failed at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	const char *site;
	int site_line;
	if (gw_error_site(&site, &site_line))
		fprintf(stderr, " (last gw error raised at %s:%d)", site, site_line);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

void gw_fuzz_check_code(int rc)
{
	if (rc >= 0)
		return;
	GW_FUZZ_CHECKF(rc > GW_E_LAST, "return code %d is no GW_E* code", rc);
	GW_FUZZ_CHECK(strcmp(gw_error_name(rc), "GW_E?") != 0);
	GW_FUZZ_CHECK(gw_strerror(rc) != NULL);
}

void gw_frame_fuzz_check_info(const uint8_t *b, size_t len,
			      const gw_frame_info *h)
{
	GW_FUZZ_CHECK(len >= GW_FRAME_HDR_LEN);
	GW_FUZZ_CHECK(b[0] == 'G' && b[1] == 'W');
	GW_FUZZ_CHECK(h->version == GW_FRAME_VERSION && b[2] == h->version);
	GW_FUZZ_CHECK(h->codec == b[GW_FUZZ_OFF_CODEC]);
	GW_FUZZ_CHECK(gw_codec_name(h->codec) != NULL);
	GW_FUZZ_CHECK(h->flags == (b[4] | b[5] << 8));
	GW_FUZZ_CHECK(!(h->flags & ~GW_FF_KNOWN));
	GW_FUZZ_CHECK(!(h->flags & GW_FF_KEY64) || (h->flags & GW_FF_SPARSE));
	GW_FUZZ_CHECK(b[GW_FUZZ_OFF_RESERVED] == 0);
	GW_FUZZ_CHECK(h->param_len == b[GW_FUZZ_OFF_PARAM_LEN]);
	GW_FUZZ_CHECK(h->tensor == gw_fuzz_ld32(b + GW_FUZZ_OFF_TENSOR));
	GW_FUZZ_CHECK(h->count == gw_fuzz_ld32(b + GW_FUZZ_OFF_COUNT));
	GW_FUZZ_CHECK(h->start == gw_fuzz_ld64(b + GW_FUZZ_OFF_START));
	GW_FUZZ_CHECK(h->span == gw_fuzz_ld32(b + GW_FUZZ_OFF_SPAN));
	GW_FUZZ_CHECK(h->payload_len == gw_fuzz_ld32(b + GW_FUZZ_OFF_PAYLOAD_LEN));
	GW_FUZZ_CHECK(h->payload_len <= GW_FRAME_MAX);
	GW_FUZZ_CHECK(h->frame_len <= GW_FRAME_MAX);
	GW_FUZZ_CHECK(h->frame_len == len);
	GW_FUZZ_CHECK((uint64_t)h->frame_len ==
		      (uint64_t)GW_FRAME_HDR_LEN + h->param_len + h->payload_len);
	/* the kinds of frame the codec writes, not the tensors it takes */
	unsigned kinds = gw_codec_ops(h->codec)->frames;
	if (h->flags & GW_FF_SPARSE) {
		GW_FUZZ_CHECK(kinds & GW_FRAME_KIND_SPARSE);
		GW_FUZZ_CHECK(h->count <= h->span);
	} else {
		GW_FUZZ_CHECK(kinds & GW_FRAME_KIND_DENSE);
		GW_FUZZ_CHECK(h->count >= 1 && h->span == h->count);
	}
	GW_FUZZ_CHECK(h->start <= UINT64_MAX - h->span);
}

static bool same_info(const gw_frame_info *a, const gw_frame_info *b)
{
	return a->version == b->version && a->codec == b->codec &&
	       a->flags == b->flags && a->tensor == b->tensor &&
	       a->count == b->count && a->start == b->start &&
	       a->span == b->span && a->param_len == b->param_len &&
	       a->payload_len == b->payload_len && a->frame_len == b->frame_len;
}

int gw_fuzz_peek_verify(const uint8_t *b, size_t len, gw_frame_info *info)
{
	gw_frame_info p, v;
	memset(&p, 0xa5, sizeof(p));
	memset(&v, 0x5a, sizeof(v));
	int prc = gw_frame_peek(b, len, &p);
	int vrc = gw_frame_verify(b, len, &v);
	gw_fuzz_check_code(prc);
	gw_fuzz_check_code(vrc);
	GW_FUZZ_CHECK(prc <= 0 && vrc <= 0);
	if (prc < 0) {
		/* verify is peek plus the checksum */
		GW_FUZZ_CHECKF(vrc == prc, "peek %s, verify %s",
			       gw_error_name(prc), gw_error_name(vrc));
		return vrc;
	}
	gw_frame_fuzz_check_info(b, len, &p);
	if (vrc < 0) {
		GW_FUZZ_CHECKF(vrc == GW_ECHECKSUM, "peek ok, verify %s",
			       gw_error_name(vrc));
		GW_FUZZ_CHECK(gw_fuzz_ld32(b + GW_FUZZ_OFF_CHECKSUM) !=
			      gw_frame_checksum(b, len));
		return vrc;
	}
	GW_FUZZ_CHECK(same_info(&p, &v));
	GW_FUZZ_CHECK(gw_fuzz_ld32(b + GW_FUZZ_OFF_CHECKSUM) ==
		      gw_frame_checksum(b, len));
	*info = v;
	return 0;
}

/* Output length a header asks for, from its raw fields (valid or not). */
static uint64_t header_need(const uint8_t *b, size_t len)
{
	if (len < GW_FRAME_HDR_LEN)
		return 0;
	uint64_t start = gw_fuzz_ld64(b + GW_FUZZ_OFF_START);
	uint64_t n = (b[GW_FUZZ_OFF_FLAGS] & GW_FF_SPARSE)
			     ? gw_fuzz_ld32(b + GW_FUZZ_OFF_SPAN)
			     : gw_fuzz_ld32(b + GW_FUZZ_OFF_COUNT);
	return start > UINT64_MAX - n ? UINT64_MAX : start + n;
}

/* Each element the frame names must have received exactly c->value(). */
static void check_values(const struct gw_fuzz_codec *c, const gw_frame_info *h,
			 const uint8_t *params, const uint8_t *payload,
			 const float *before, const float *out)
{
	unsigned kb = (h->flags & GW_FF_SPARSE) ? ((h->flags & GW_FF_KEY64) ? 8 : 4)
						: 0;
	const uint8_t *vals = payload + (size_t)kb * h->count;
	for (uint32_t i = 0; i < h->count; i++) {
		uint64_t p = !kb ? h->start + i
			: kb == 8 ? gw_fuzz_ld64(payload + 8 * (size_t)i)
				  : gw_fuzz_ld32(payload + 4 * (size_t)i);
		float want = before[p] + c->value(h, params, vals, i);
		if (want != want)
			GW_FUZZ_CHECKF(out[p] != out[p], "%s: element %llu: want NaN, got %a",
				       c->name, (unsigned long long)p, (double)out[p]);
		else
			GW_FUZZ_CHECKF(gw_f32_bits(out[p]) == gw_f32_bits(want),
				       "%s: element %llu: want %a, got %a", c->name,
				       (unsigned long long)p, (double)want,
				       (double)out[p]);
	}
}

/* The reference decoder written from the spec (tests/refdec/) must decide
 * the frame alike, with the same code, and leave the same output (any
 * NaN for any NaN: which NaN a sum of two gives is not normative). */
static void against_refdec(const uint8_t *f, size_t len, const float *out,
			   const float *before, uint64_t out_len, int rc)
{
	float *r = malloc(out_len * sizeof(float));
	GW_FUZZ_CHECK(r);
	memcpy(r, before, out_len * sizeof(float));
	int rr = refdec_decode(f, len, r, out_len);
	if (rr != REFDEC_UNCOVERED) {
		GW_FUZZ_CHECKF(rr == rc, "library %s, reference decoder %s",
			       rc < 0 ? gw_error_name(rc) : "accepted",
			       rr < 0 ? gw_error_name(rr) : "accepted");
		for (uint64_t i = 0; i < out_len; i++)
			GW_FUZZ_CHECKF(gw_f32_bits(out[i]) == gw_f32_bits(r[i]) ||
					       (out[i] != out[i] && r[i] != r[i]),
				       "element %llu: library %08x, reference decoder %08x",
				       (unsigned long long)i, gw_f32_bits(out[i]),
				       gw_f32_bits(r[i]));
	}
	free(r);
}

/* gpudirect's decode kernel for the frame's codec (gw_cuda.cu's own,
 * run on hostcuda's fibers) must decide it as the
 * library does and leave the same output, or decline a frame it does not
 * take (a sparse one, another codec's) with GW_EUNSUPPORTED. */
static void against_gpu(const uint8_t *f, size_t len, const float *out, const float *before,
			uint64_t out_len, int rc)
{
	if (len < GW_FRAME_HDR_LEN || len > UINT32_MAX)
		return;
	unsigned codec = f[3];
	if (codec != GW_CODEC_RAW && codec != GW_CODEC_BF16 && codec != GW_CODEC_INT8 &&
	    codec != GW_CODEC_3LC && codec != GW_CODEC_TOPK && codec != GW_CODEC_HQ)
		return;
	float *g = malloc(out_len * sizeof(float));
	GW_FUZZ_CHECK(g);
	memcpy(g, before, out_len * sizeof(float));
	uint32_t l32 = (uint32_t)len;
	int32_t grc = 0;
	struct gw_kf_dec d = {&f, &l32, 1, g, out_len, &grc};
	if (codec == GW_CODEC_3LC)
		gw_emu_decode_3lc(&d);
	else if (codec == GW_CODEC_TOPK)
		gw_emu_decode_topk(&d);
	else if (codec == GW_CODEC_HQ)
		gw_emu_decode_hq(&d);
	else
		gw_emu_decode_dense(&d);
	int sparse = f[4] & 1;
	int takes = codec == GW_CODEC_TOPK ? sparse : !sparse;
	if (grc == GW_EUNSUPPORTED && rc != GW_EUNSUPPORTED) {
		GW_FUZZ_CHECKF(!takes, "gpu decoder declined a frame of its kind (library %s)",
			       rc < 0 ? gw_error_name(rc) : "accepted");
	} else {
		GW_FUZZ_CHECKF(grc == rc, "library %s, gpu decoder %s",
			       rc < 0 ? gw_error_name(rc) : "accepted",
			       grc < 0 ? gw_error_name(grc) : "accepted");
		for (uint64_t i = 0; i < out_len; i++)
			GW_FUZZ_CHECKF(gw_f32_bits(out[i]) == gw_f32_bits(g[i]) ||
					       (out[i] != out[i] && g[i] != g[i]),
				       "element %llu: library %08x, gpu decoder %08x",
				       (unsigned long long)i, gw_f32_bits(out[i]), gw_f32_bits(g[i]));
	}
	free(g);
}

/* Decodes the frame in f[0..len) into a fresh output of out_len floats
 * (NULL if null_out) and checks every promise gw_decode() makes. Returns
 * gw_decode()'s result. */
static int decode_and_check(const struct gw_fuzz_codec *c, const uint8_t *f,
			    size_t len, uint64_t out_len, bool null_out)
{
	gw_frame_info h;
	int vrc = gw_fuzz_peek_verify(f, len, &h);

	out_len = GW_MIN(out_len, (uint64_t)OUT_CAP);
	float *out = NULL;
	const float *ref = out_pattern();
	if (!null_out && out_len) {
		out = malloc(out_len * sizeof(float));
		GW_FUZZ_CHECK(out);
		memcpy(out, ref, out_len * sizeof(float));
	}
	int rc = gw_decode(f, len, out, out_len);
	gw_fuzz_check_code(rc);
	if (out) {
		against_refdec(f, len, out, ref, out_len, rc);
		against_gpu(f, len, out, ref, out_len, rc);
	}

	if (vrc < 0) {
		GW_FUZZ_CHECKF(rc == vrc, "verify %s, decode %s",
			       gw_error_name(vrc), gw_error_name(rc));
	} else if (!out && out_len) {
		GW_FUZZ_CHECKF(rc == GW_EINVAL, "out NULL, out_len %llu: %d",
			       (unsigned long long)out_len, rc);
	} else if (!(h.flags & GW_FF_SPARSE) && h.start + h.count > out_len) {
		GW_FUZZ_CHECKF(rc == GW_ERANGE,
			       "dense [%llu, +%u) past out_len %llu: %s",
			       (unsigned long long)h.start, h.count,
			       (unsigned long long)out_len, gw_error_name(rc));
	}

	if (rc < 0) {
		/* rejected: nothing written */
		if (out)
			GW_FUZZ_CHECKF(!memcmp(out, ref, out_len * sizeof(float)),
				       "%s but the output changed",
				       gw_error_name(rc));
	} else {
		GW_FUZZ_CHECK(vrc == 0);
		GW_FUZZ_CHECK(h.codec == c->id);
		uint32_t added = c->added ? c->added(&h, f + GW_FRAME_HDR_LEN)
					  : h.count;
		GW_FUZZ_CHECKF((uint32_t)rc == added,
			       "decode returned %d for count %u (%u values)", rc,
			       h.count, added);
		unsigned kb = (h.flags & GW_FF_SPARSE)
				      ? ((h.flags & GW_FF_KEY64) ? 8 : 4)
				      : 0;
		if (c->param_len >= 0)
			GW_FUZZ_CHECKF(h.param_len == (uint32_t)c->param_len,
				       "%s accepted param_len %u", c->name,
				       h.param_len);
		if (c->value_bytes)
			GW_FUZZ_CHECKF((uint64_t)h.payload_len ==
					       (uint64_t)h.count *
						       (kb + c->value_bytes),
				       "%s accepted payload_len %u for count %u",
				       c->name, h.payload_len, h.count);
		const uint8_t *params = f + GW_FRAME_HDR_LEN;
		const uint8_t *payload = params + h.param_len;
		if (c->accepted)
			c->accepted(&h, params, payload);
		if (c->value && out)
			check_values(c, &h, params, payload, ref, out);
		/* Only the frame's range may change, at most count elements. */
		uint64_t lo = h.start;
		uint64_t hi = h.start + h.span;
		uint64_t changed = 0;
		for (uint64_t i = 0; out && i < out_len; i++) {
			if (gw_f32_bits(out[i]) == gw_f32_bits(ref[i]))
				continue;
			changed++;
			GW_FUZZ_CHECKF(i >= lo && i < hi,
				       "element %llu outside [%llu, %llu) written",
				       (unsigned long long)i,
				       (unsigned long long)lo,
				       (unsigned long long)hi);
		}
		GW_FUZZ_CHECK(changed <= h.count);
	}
	free(out);
	return rc;
}

/* (b): the input made into a frame of codec c, as ctrl asks. */
static void decode_shaped(const struct gw_fuzz_codec *c, const uint8_t *data,
			  size_t size)
{
	/* at least a header; room to grow by a few bytes in lengths mode 3
	 * and for codec params the input is too short to hold */
	size_t cap = GW_MAX(size, (size_t)GW_FRAME_HDR_LEN) + 256 + 8;
	uint8_t *f = calloc(1, cap);
	GW_FUZZ_CHECK(f);
	memcpy(f, data, size);
	size_t len = GW_MAX(size, (size_t)GW_FRAME_HDR_LEN);
	uint32_t ctrl = gw_fuzz_ld32(f + GW_FUZZ_OFF_CHECKSUM);

	f[0] = 'G';
	f[1] = 'W';
	f[GW_FUZZ_OFF_VERSION] = GW_FRAME_VERSION;
	f[GW_FUZZ_OFF_CODEC] = (uint8_t)c->id;
	static const uint16_t flag_modes[4] = {
		0, 0, GW_FF_SPARSE, GW_FF_SPARSE | GW_FF_KEY64};
	if (ctrl & 3) {
		f[GW_FUZZ_OFF_FLAGS] = (uint8_t)flag_modes[ctrl & 3];
		f[GW_FUZZ_OFF_FLAGS + 1] = 0;
	}
	if (ctrl & (1u << 2))
		f[GW_FUZZ_OFF_RESERVED] = 0;
	if (ctrl & (1u << 5))
		gw_fuzz_st64(f + GW_FUZZ_OFF_START,
			     gw_fuzz_ld64(f + GW_FUZZ_OFF_START) % 4096);

	unsigned lenmode = (ctrl >> 3) & 3;
	bool sparse = f[GW_FUZZ_OFF_FLAGS] & GW_FF_SPARSE;
	unsigned kb = sparse ? ((f[GW_FUZZ_OFF_FLAGS] & GW_FF_KEY64) ? 8 : 4) : 0;
	if (lenmode) {
		size_t plen = f[GW_FUZZ_OFF_PARAM_LEN];
		if (lenmode >= 2 && c->param_len >= 0)
			plen = (size_t)c->param_len;
		if (GW_FRAME_HDR_LEN + plen > len) {
			if (lenmode >= 2)
				len = GW_FRAME_HDR_LEN + plen; /* zeros */
			else
				plen = len - GW_FRAME_HDR_LEN;
		}
		/* a harness-built frame never exceeds the format's maximum */
		len = GW_MIN(len, GW_FRAME_HDR_LEN + plen + GW_FRAME_MAX);
		size_t pay = len - GW_FRAME_HDR_LEN - plen;
		if (lenmode >= 2) {
			uint32_t count = gw_fuzz_ld32(f + GW_FUZZ_OFF_COUNT);
			if (c->value_bytes) {
				size_t per = kb + c->value_bytes;
				count = (uint32_t)(pay / per);
				pay = (size_t)count * per;
				len = GW_FRAME_HDR_LEN + plen + pay;
			}
			uint32_t span = gw_fuzz_ld32(f + GW_FUZZ_OFF_SPAN);
			if (!sparse || (ctrl & (1u << 22)))
				span = count;
			else if (span < count)
				span = count + (span & 7);
			gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, count);
			gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, span);
			if (sparse && (ctrl & (1u << 16)) && count &&
			    (uint64_t)count * kb <= pay) {
				uint64_t start = gw_fuzz_ld64(f + GW_FUZZ_OFF_START);
				uint8_t *keys = f + GW_FRAME_HDR_LEN + plen;
				uint32_t nudge = UINT32_MAX;
				if (ctrl & (1u << 23))
					nudge = ((ctrl >> 24) & 31) == 31
							? count - 1
							: ((ctrl >> 24) & 31) % count;
				for (uint32_t i = 0; i < count; i++) {
					/* first key start, last start + span - 1 */
					uint64_t k = count == 1 ? start
						     : start + (uint64_t)i * (span - 1) / (count - 1);
					if (i == nudge)
						k += (uint64_t)((ctrl >> 29) & 7) - 4;
					if (kb == 8)
						gw_fuzz_st64(keys + 8 * (size_t)i, k);
					else
						gw_fuzz_st32(keys + 4 * (size_t)i, (uint32_t)k);
				}
			}
		}
		f[GW_FUZZ_OFF_PARAM_LEN] = (uint8_t)plen;
		gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, (uint32_t)pay);
	}

	if (ctrl & (1u << 18))
		gw_fuzz_st32(f + GW_FUZZ_OFF_CHECKSUM, ctrl);
	else
		gw_frame_seal(f, len);

	if (lenmode == 3) {
		unsigned d = (ctrl >> 19) & 7;
		if (d < 4)
			len += d;                 /* trailing zero bytes */
		else
			len -= GW_MIN(len, (size_t)(d - 3));
	}

	uint64_t need = header_need(f, len);
	uint64_t small = (ctrl >> 8) & 0xff;
	uint64_t out_len;
	switch ((ctrl >> 6) & 3) {
	case 0: out_len = need; break;
	case 1: out_len = need ? need - 1 : 0; break;
	case 2: out_len = small; break;
	default: out_len = need > UINT64_MAX - small ? UINT64_MAX : need + small;
	}

	/* exactly len bytes, so that reading past the frame is caught */
	uint8_t *frame = malloc(len ? len : 1);
	GW_FUZZ_CHECK(frame);
	memcpy(frame, f, len);
	decode_and_check(c, frame, len, out_len, ctrl & (1u << 17));
	free(frame);
	free(f);
}

/* gw_ef_restore() gives an undelivered frame back to an error buffer: it
 * must add exactly what gw_decode() adds — except that a non-finite result
 * restarts at 0, the buffer never keeps poison — and refuse what it
 * refuses. */
static void check_restore(const uint8_t *f, size_t len, uint64_t dim)
{
	gw_ef *ef = gw_ef_create(dim);
	float *z = calloc(dim, sizeof(float));
	GW_FUZZ_CHECK(ef && z);
	int rd = gw_decode(f, len, z, dim);
	int rr = gw_ef_restore(ef, f, len);
	GW_FUZZ_CHECKF(rr == rd, "gw_ef_restore %d, gw_decode %d", rr, rd);
	for (uint64_t i = 0; i < dim; i++)
		if (!isfinite(z[i]))
			z[i] = 0.0f;
	GW_FUZZ_CHECK(!memcmp(z, gw_ef_data(ef), dim * sizeof(float)));
	GW_FUZZ_CHECK(gw_ef_restore(NULL, f, len) == GW_EINVAL);
	free(z);
	gw_ef_free(ef);
}

void gw_fuzz_decoder(const struct gw_fuzz_codec *c, const uint8_t *data,
		     size_t size)
{
	GW_FUZZ_CHECKF(gw_codec_by_name(c->name) == c->id,
		       "harness codec %s is not registered as id %d", c->name,
		       c->id);

	/* (a) as it is: a copy of exactly size bytes (libFuzzer's buffer is
	 * exact too; a corpus file read by regress_main may not be). */
	uint8_t *copy = malloc(size ? size : 1);
	GW_FUZZ_CHECK(copy);
	memcpy(copy, data, size);
	uint64_t need = header_need(copy, size);
	gw_fuzz_last_rc = decode_and_check(c, copy, size, need, false);
	/* and one element short of it, to reach GW_ERANGE */
	if (need && need <= OUT_CAP) {
		decode_and_check(c, copy, size, need - 1, false);
		check_restore(copy, size, need);
	}
	free(copy);

	/* (b) made into a frame of this codec */
	decode_shaped(c, data, size);
}
