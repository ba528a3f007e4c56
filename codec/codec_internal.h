/* Implementer's header for gradwire codecs: the ops table every codec file
 * fills in, the encoder state it works on, and the frame helpers. */
#ifndef GW_CODEC_INTERNAL_H
#define GW_CODEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <gw/codec.h>

#include "gw_util.h"
#include "gw_wire.h"

/* The public names of <gw/codec.h> are the wire's (common/gw_wire.h, the
 * one definition gpudirect's kernels compile too): an installed header
 * cannot include a private one, so it spells the values out, and these
 * hold them to the definition. */
_Static_assert(GW_FRAME_MAGIC == GW_WIRE_MAGIC, "frame magic");
_Static_assert(GW_FRAME_VERSION == GW_WIRE_VERSION, "frame version");
_Static_assert(GW_FRAME_HDR_LEN == GW_WIRE_HDR_LEN, "frame header length");
_Static_assert(GW_FRAME_MAX == GW_WIRE_FRAME_MAX, "largest frame");
_Static_assert(GW_BUDGET_MIN == GW_WIRE_BUDGET_MIN, "smallest budget");
_Static_assert(GW_WIRE_OFF_CHECKSUM + 4 == GW_WIRE_HDR_LEN, "the header is 36 bytes");
_Static_assert(GW_FF_SPARSE == GW_WIRE_F_SPARSE && GW_FF_KEY64 == GW_WIRE_F_KEY64 &&
	       GW_FF_KNOWN == GW_WIRE_F_KNOWN, "frame flags");
_Static_assert(GW_CODEC_RAW == GW_WIRE_CODEC_RAW && GW_CODEC_BF16 == GW_WIRE_CODEC_BF16 &&
	       GW_CODEC_INT8 == GW_WIRE_CODEC_INT8 && GW_CODEC_3LC == GW_WIRE_CODEC_3LC &&
	       GW_CODEC_TERNGRAD == GW_WIRE_CODEC_TERNGRAD &&
	       GW_CODEC_ONEBIT == GW_WIRE_CODEC_ONEBIT && GW_CODEC_TOPK == GW_WIRE_CODEC_TOPK &&
	       GW_CODEC_SKETCHML == GW_WIRE_CODEC_SKETCHML &&
	       GW_CODEC_COUNTSKETCH == GW_WIRE_CODEC_COUNTSKETCH &&
	       GW_CODEC_DEEPREDUCE == GW_WIRE_CODEC_DEEPREDUCE &&
	       GW_CODEC_HQ == GW_WIRE_CODEC_HQ, "codec ids");
_Static_assert(GW_WIRE_CODEC_LAST == GW_CODEC_HQ, "the highest codec id");

struct gw_codec_ops;

/* A parameter a codec accepts, with its bounds. */
struct gw_param_spec {
	gw_param param;
	gw_bounds bounds;
};

/* Encoder state shared by the driver (encoder.c) and the codec. */
struct gw_encoder {
	const struct gw_codec_ops *ops;
	double param[GW_PARAM_COUNT_];
	gw_ef *ef;
	gw_tensor t;
	bool active;             /* between begin and the last frame */
	bool sparse;
	uint64_t total;          /* dim (dense) or nnz (sparse) */
	uint64_t pos;            /* next element / entry to encode */
	/* Values the codec encodes. Without error feedback: t.values. With the
	 * generic (unfused) feedback path: the corrected values g + e — the ef
	 * buffer itself for dense tensors, or scratch for sparse ones. */
	const float *src;
	float *scratch;          /* sparse ef: nnz corrected values */
	uint64_t scratch_cap;
	void *codec_state;       /* codec-private, freed by ops->state_free */
	uint32_t set_mask;       /* bit p: param p was set by the caller */
};

/* Where a codec writes a frame: the header has been reserved; the codec
 * fills params and payload and reports their lengths. */
struct gw_frame_out {
	uint8_t *params;         /* param_len bytes go here */
	size_t cap;              /* bytes available for params + payload */
};

/* One codec. Missing optional ops are NULL. */
#define GW_FRAME_KIND_DENSE 0x1u
#define GW_FRAME_KIND_SPARSE 0x2u
#define GW_FRAME_KINDS (GW_FRAME_KIND_DENSE | GW_FRAME_KIND_SPARSE)

struct gw_codec_ops {
	const char *name;
	uint8_t id;              /* gw_codec_id */
	unsigned caps;           /* GW_CODEC_*: the tensors it takes */
	/* The kinds of frame it writes (GW_FRAME_KIND_*): gw_frame_peek()
	 * rejects the other kind (wire-format §2.1 rule 7). Not caps: top-k
	 * takes dense tensors but writes sparse frames only. */
	unsigned frames;
	const struct gw_param_spec *params;  /* codec-specific params */
	size_t nparams;

	/* Bytes of params + payload for one element (dense) or entry (sparse,
	 * key of key_bytes included), beyond the fixed header. */
	size_t (*min_body)(const struct gw_encoder *enc, size_t key_bytes);

	/* Optional: called by gw_encode_begin() before anything is modified
	 * (in particular before generic error feedback is folded in): checks
	 * the parameters against the tensor and reserves memory, so that a
	 * refused begin leaves the encoder and the error buffer as they were.
	 * Returns 0 or GW_E*. */
	int (*check)(struct gw_encoder *enc);

	/* Optional: called by gw_encode_begin() after the tensor was checked
	 * (and, for unfused codecs, error feedback folded in) — a codec that
	 * needs a whole-tensor pass (a global scale, a top-k selection, a
	 * pre-packed stream) does it here. Returns 0 or GW_E*. */
	int (*begin)(struct gw_encoder *enc);

	/* Encodes elements/entries from enc->pos on: writes params and payload
	 * into body[0..cap), fills the header fields it owns (*count, *start,
	 * *span, *param_len, *flags may gain codec bits — none today) and
	 * advances enc->pos. Returns params + payload bytes written, or GW_E*.
	 * If the codec sets GW_OPS_FUSED_EF, it also updates enc->ef itself. */
	int (*encode)(struct gw_encoder *enc, uint8_t *body, size_t cap,
		      struct gw_frame_info *hdr);

	/* Adds alpha * decoded values into out. hdr has been validated against
	 * the frame length and out_len; the codec validates its own params and
	 * payload BEFORE writing anything into out. Returns values added. */
	int (*decode)(const struct gw_frame_info *hdr, const uint8_t *params,
		      const uint8_t *payload, float *out, uint64_t out_len,
		      float alpha);

	/* Optional: validates params and payload like decode() and fills
	 * parts->keys, tables and values. Returns 0 or GW_E*. */
	int (*parts)(const struct gw_frame_info *hdr, const uint8_t *params,
		     const uint8_t *payload, struct gw_frame_parts *parts);

	/* Optional: checks that the parameters set (enc->set_mask) make a
	 * valid combination; NULL if they do, else why not, naming the
	 * parameter (gw_encoder_check_params, gw_encode_begin). */
	const char *(*combo)(const struct gw_encoder *enc, char *buf, size_t len);

	/* Optional: validates like decode() and reads the error bound the
	 * frame states (gw_frame_bound). Returns 0 or GW_E*. */
	int (*bound)(const struct gw_frame_info *hdr, const uint8_t *params,
		     const uint8_t *payload, float *bound);

	/* Optional: drops the rest of the tensor, leaving its values in the
	 * error buffer exactly (gw_encode_abandon): for a fused codec that
	 * folds per frame, e += g over what was not encoded. Without it the
	 * driver encodes the rest and restores each frame, which is exact
	 * only where c - decoded + decoded is c. */
	void (*abandon)(struct gw_encoder *enc);

	/* Optional: the scale and rotation seed of the next frame
	 * (gw_encoder_set_shared; summable codecs). Returns 0 or GW_E*. */
	int (*shared)(struct gw_encoder *enc, float scale, uint32_t seed);

	unsigned flags;          /* GW_OPS_* */
	void (*state_free)(void *state);
};

#define GW_OPS_FUSED_EF 0x1u  /* encode() applies error feedback itself */
#define GW_OPS_NO_EF 0x2u     /* refuses error feedback (gw_encoder_set_ef) */

/* The params and nparams of an ops table, from one array, so that the
 * count cannot fall out of step with the table. */
#define GW_OPS_PARAMS(tbl) .params = (tbl), .nparams = GW_ARRAY_SIZE(tbl)

/* The codec's zeroed state (size bytes), allocated on the encoder's first
 * begin and kept for the next tensors (ops->state_free frees it). NULL
 * when out of memory. */
static inline void *gw_codec_state(struct gw_encoder *enc, size_t size)
{
	if (!enc->codec_state)
		enc->codec_state = calloc(1, size);
	return enc->codec_state;
}

/* A float's bits (memcpy: no aliasing), the float of bits u, and a
 * bfloat16's value. */
static inline uint32_t gw_f32_bits(float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	return u;
}

static inline float gw_bits_f32(uint32_t u)
{
	float v;
	memcpy(&v, &u, 4);
	return v;
}

static inline float gw_bf16_f32(uint16_t h)
{
	return gw_bits_f32((uint32_t)h << 16);
}

/* Bytes per key in a frame (0 for dense frames). */
static inline unsigned gw_hdr_key_bytes(const struct gw_frame_info *h)
{
	if (!(h->flags & GW_FF_SPARSE))
		return 0;
	return (h->flags & GW_FF_KEY64) ? 8 : 4;
}

/* Whether hdr has plen bytes of params and a payload of its keys followed
 * by packed bytes of bit-packed values (onebit, terngrad). */
static inline int gw_packed_lengths_ok(const struct gw_frame_info *h, unsigned plen,
				       uint64_t packed)
{
	return h->param_len == plen &&
	       h->payload_len == (uint64_t)h->count * gw_hdr_key_bytes(h) + packed;
}

/* Bytes per key of the tensor being encoded (0 for dense tensors). */
static inline unsigned gw_enc_key_bytes(const struct gw_encoder *enc)
{
	return enc->sparse ? enc->t.key_bits / 8 : 0;
}

/* Every accepted param of ops starts at its default (params.c). */
void gw_params_defaults(const struct gw_codec_ops *ops, double *v);

/* Registry lookup (registry.c). */
const struct gw_codec_ops *gw_codec_ops(int id);

/* Frame helpers (frame.c). */
void gw_frame_write_header(uint8_t *buf, const struct gw_frame_info *h);
/* Computes and stores the checksum over a complete frame of len bytes. */
void gw_frame_seal(uint8_t *buf, size_t len);
uint32_t gw_frame_checksum(const uint8_t *buf, size_t len);

/* Sparse key sections (keys.c): keys stored as absolute little-endian
 * integers of key_bytes (4 or 8) each. */
void gw_keys_put(uint8_t *dst, const void *keys, uint64_t first, uint32_t n,
		 unsigned key_bytes);
/* Validates n keys at src: strictly ascending, inside [start, start+span),
 * below out_len. Returns 0 or GW_ECORRUPT / GW_ERANGE. */
int gw_keys_check(const uint8_t *src, uint32_t n, unsigned key_bytes,
		  uint64_t start, uint32_t span, uint64_t out_len);
/* Key i of a key section (inline: the decoders' sparse loops read one
 * per value). */
static inline uint64_t gw_keys_get(const uint8_t *src, uint32_t i, unsigned key_bytes)
{
	return key_bytes == 8 ? gw_ld64(src + 8 * (size_t)i)
			      : gw_ld32(src + 4 * (size_t)i);
}
/* Key i of the tensor being encoded. */
static inline uint64_t gw_tensor_key(const gw_tensor *t, uint64_t i)
{
	/* Inline: every sparse encode reads it once or more per entry, and
	 * the call was 3-5 % of SketchML's and DeepReduce's encodes. */
	return t->key_bits == 64 ? ((const uint64_t *)t->keys)[i]
				 : ((const uint32_t *)t->keys)[i];
}

/* The element entry i of the tensor being encoded stands for, in the
 * tensor and in its error buffer: its key (sparse) or i itself. */
static inline uint64_t gw_enc_elem(const struct gw_encoder *enc, uint64_t i)
{
	return enc->sparse ? gw_tensor_key(&enc->t, i) : i;
}

/* Entry i of the source plus its error (e: the error buffer, or NULL
 * without feedback): what a fused-feedback codec encodes. */
static inline float gw_enc_corrected(const struct gw_encoder *enc, const float *e,
				     uint64_t i)
{
	float g = enc->src[i];
	if (!e)
		return g;
	return g + e[enc->sparse ? gw_tensor_key(&enc->t, i) : i];
}

/* e <- e + g over the tensor (the error buffer enc->ef must be set) and
 * enc->src pointed at the corrected values: the buffer itself (dense) or
 * the encoder's scratch (sparse, the buffer updated at each key).
 * GW_ENOMEM if the scratch cannot grow. */
int gw_enc_fold(gw_encoder *enc);

/* Chooses how many entries starting at enc->pos go into a frame whose
 * per-entry body cost is per_entry bytes plus fixed bytes, given cap; also
 * honours GW_PARAM_MAX_FRAME_ELEMS and, for sparse tensors, the 32-bit span
 * limit. Returns 0 if none fits. */
uint32_t gw_frame_take(const struct gw_encoder *enc, size_t cap, size_t fixed,
		       size_t per_entry);

/* gw_frame_take for bit-packed values: entries that fit in bytes when each
 * costs kb key bytes and its values share ceil(n / per) packed bytes.
 * Takes what n * (per * kb + 1) <= per * bytes allows, then trims the
 * rounding; 0 if none fits. */
static inline uint32_t gw_frame_take_packed(const struct gw_encoder *enc, size_t bytes,
					    unsigned kb, unsigned per)
{
	uint32_t n = gw_frame_take(enc, per * bytes, 0, per * (size_t)kb + 1);
	while (n && (uint64_t)n * kb + (n + per - 1) / per > bytes)
		n--;
	return n;
}

/* Fills the range fields of hdr for n entries taken at enc->pos. */
void gw_frame_range(const struct gw_encoder *enc, uint32_t n,
		    struct gw_frame_info *hdr);

/* ---- keys then fixed-width values (raw, bf16, int8) ----------------------
 * Frames of plen param bytes, then count keys (sparse frames), then one
 * value of vbytes per entry. The loops are templates: always inlined, with
 * the codec's value reader a constant, so each codec's loops compile as if
 * written out in its own file. */

/* Value i of a values section (ctx: what the codec's params say). */
typedef float (*gw_fixed_get_fn)(const uint8_t *vals, uint32_t i, const void *ctx);
/* Writes n values of v at dst. */
typedef void (*gw_fixed_put_fn)(uint8_t *dst, const float *v, uint32_t n);

/* Whether hdr has the lengths of such a frame. */
static inline int gw_fixed_lengths_ok(const struct gw_frame_info *h, unsigned plen,
				      unsigned vbytes)
{
	return h->param_len == plen &&
	       h->payload_len == (uint64_t)h->count * (vbytes + gw_hdr_key_bytes(h));
}

/* Adds alpha * get(i) to out[start + i] (dense) or to out[key i] (sparse,
 * after checking the keys). Returns the count or GW_E*. */
static inline __attribute__((always_inline)) int
gw_fixed_add(const struct gw_frame_info *h, const uint8_t *payload, float *out,
	     uint64_t out_len, float alpha, gw_fixed_get_fn get, const void *ctx)
{
	unsigned kb = gw_hdr_key_bytes(h);
	const uint8_t *vals = payload + (size_t)kb * h->count;
	if (!kb) {
		float *o = out + h->start;
		for (uint32_t i = 0; i < h->count; i++)
			o[i] += alpha * get(vals, i, ctx);
		return (int)h->count;
	}
	int rc = gw_keys_check(payload, h->count, kb, h->start, h->span, out_len);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < h->count; i++)
		out[gw_keys_get(payload, i, kb)] += alpha * get(vals, i, ctx);
	return (int)h->count;
}

/* encode for such a codec without params: as many entries as fit. */
static inline __attribute__((always_inline)) int
gw_fixed_encode(struct gw_encoder *enc, uint8_t *body, size_t cap,
		struct gw_frame_info *h, unsigned vbytes, gw_fixed_put_fn put)
{
	size_t kb = gw_enc_key_bytes(enc);
	uint32_t n = gw_frame_take(enc, cap, 0, vbytes + kb);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 0;
	if (kb)
		gw_keys_put(body, enc->t.keys, enc->pos, n, (unsigned)kb);
	put(body + kb * n, enc->src + enc->pos, n);
	enc->pos += n;
	return (int)((vbytes + kb) * n);
}

/* The min_body, encode and decode ops (name_min_body, name_encode,
 * name_decode) of a codec whose frames have no params and vbytes per
 * value, written by put and read by get (ctx NULL). */
#define GW_FIXED_CODEC_OPS(name, vbytes, put, get)                            \
	static size_t name##_min_body(const gw_encoder *enc, size_t kb)       \
	{                                                                     \
		(void)enc;                                                    \
		return (vbytes) + kb;                                         \
	}                                                                     \
	static int name##_encode(gw_encoder *enc, uint8_t *body, size_t cap,  \
				 struct gw_frame_info *h)                     \
	{                                                                     \
		return gw_fixed_encode(enc, body, cap, h, (vbytes), (put));   \
	}                                                                     \
	static int name##_decode(const struct gw_frame_info *h,               \
				 const uint8_t *params, const uint8_t *payload,\
				 float *out, uint64_t out_len, float alpha)   \
	{                                                                     \
		(void)params;                                                 \
		if (!gw_fixed_lengths_ok(h, 0, (vbytes)))                     \
			return GW_ERR(GW_ELENGTH);                            \
		return gw_fixed_add(h, payload, out, out_len, alpha, (get),   \
				    NULL);                                    \
	}

#endif /* GW_CODEC_INTERNAL_H */
