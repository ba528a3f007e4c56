/* gradwire codec API: tensors in, self-contained frames out, and back.
 *
 * A frame is the payload of one packet (docs/wire-format.md). Every frame
 * carries its codec, tensor id, the element or key range it covers and all
 * parameters its decoder needs, so any subset of frames, in any order,
 * decodes correctly. Decoding is decode-accumulate: gw_decode() ADDS the
 * frame's contribution into the output, so aggregation and decompression are
 * the same call.
 *
 * Encoding is a pull loop that writes one frame per call straight into the
 * caller's buffer (a packet buffer, typically), never past its budget:
 *
 *	gw_encode_begin(enc, &tensor);
 *	while ((n = gw_encode_next(enc, pkt, budget)) > 0)
 *		send(pkt, n);
 *	if (n < 0) fail(gw_strerror(n));
 */
#ifndef GW_CODEC_H
#define GW_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <gw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- frame header ------------------------------------------------------ */

#define GW_FRAME_MAGIC 0x5747u   /* bytes 'G' 'W' on the wire */
#define GW_FRAME_VERSION 1u
#define GW_FRAME_HDR_LEN 36u     /* fixed header, before params and payload */
#define GW_FRAME_MAX 65535u      /* largest frame: fits one IPv4/UDP datagram */
#define GW_BUDGET_MIN 64u        /* smallest budget every codec accepts */

/* Bytes a packet spends around its frame, reserved for the dataplane:
 * IPv4 (20) + UDP (8) + gradwire packet header (up to 32) + MAC (16).
 * The budget of a frame in a packet of IP MTU mtu is mtu - GW_PKT_RESERVE. */
#define GW_PKT_RESERVE 76u

/* Frame flags (16 bits on the wire). Bits not named here are reserved: an
 * encoder writes 0 and a decoder rejects a frame with any of them set. */
#define GW_FF_SPARSE 0x0001u     /* payload holds keys + values */
#define GW_FF_KEY64 0x0002u      /* keys are 64-bit (only with GW_FF_SPARSE) */
#define GW_FF_KNOWN (GW_FF_SPARSE | GW_FF_KEY64)

/* What gw_frame_peek() reads out of a header. */
typedef struct gw_frame_info {
	uint8_t version;
	uint8_t codec;          /* gw_codec_id */
	uint16_t flags;         /* GW_FF_* */
	uint32_t tensor;        /* tensor id given to gw_encode_begin() */
	uint32_t count;         /* dense: elements; sparse: key/value entries */
	uint64_t start;         /* dense: first element; sparse: lowest key bound */
	uint32_t span;          /* covered range is [start, start + span) */
	uint32_t param_len;     /* bytes of codec parameters after the header */
	uint32_t payload_len;   /* bytes of payload after the parameters */
	uint32_t frame_len;     /* header + params + payload */
} gw_frame_info;

/* Validates the header of the frame in buf[0..len) — magic, version,
 * reserved bits, codec id, lengths — and fills *info. Does not read the
 * payload nor check the checksum: it is cheap enough for a receive path that
 * only routes frames. Returns 0 or a GW_E* code. */
GW_API int gw_frame_peek(const void *buf, size_t len, gw_frame_info *info);

/* Validates header and checksum (the whole frame is read). */
GW_API int gw_frame_verify(const void *buf, size_t len, gw_frame_info *info);

/* ---- codecs ------------------------------------------------------------ */

/* Wire ids: stable, never reused. 0 is invalid. */
typedef enum gw_codec_id {
	GW_CODEC_RAW = 1,     /* float32, bit-exact */
	GW_CODEC_BF16 = 2,    /* bfloat16, round to nearest even */
	GW_CODEC_INT8 = 3,    /* 255 levels in [-127,127], scale per frame */
	GW_CODEC_3LC = 4,     /* 3-value, base-3^5, zero-run (3LC, MLSys'19) */
	GW_CODEC_TERNGRAD = 5,/* stochastic 3-value, base-3^5, no feedback */
	GW_CODEC_ONEBIT = 6,  /* 1 bit per value, two magnitudes, feedback */
	GW_CODEC_TOPK = 7,    /* top-k sparsification, delta keys, float32 */
	GW_CODEC_SKETCHML = 8,/* quantile buckets + MinMaxSketch + delta-binary keys */
	GW_CODEC_COUNTSKETCH = 9, /* count-sketch table slices; key sets (gw/sketch.h) */
	GW_CODEC_DEEPREDUCE = 10, /* index codec + value codec per key range (DeepReduce) */
	GW_CODEC_HQ = 11,     /* b-bit codes on a shared scale after a randomised
			       * Hadamard rotation: a shard sums them as integers */
} gw_codec_id;

/* Id of the codec called name ("raw", "bf16", "int8", …), or GW_ECODEC. */
GW_API int gw_codec_by_name(const char *name);
/* Name of codec id, or NULL if no such codec is registered. */
GW_API const char *gw_codec_name(int id);
/* Fills ids[0..cap) with the registered codec ids; returns how many exist. */
GW_API int gw_codec_list(int *ids, int cap);

#define GW_CODEC_DENSE 0x1u   /* accepts dense float32 tensors */
#define GW_CODEC_SPARSE 0x2u  /* accepts sparse key/value tensors */
#define GW_CODEC_LOSSY 0x4u   /* decode(encode(x)) may differ from x */
#define GW_CODEC_TABLE 0x8u   /* dense frames hold a sketch of the tensor
			       * (countsketch: r x c cells), not its elements */
/* GW_CODEC_* capability bits of codec id, or GW_ECODEC. */
GW_API int gw_codec_caps(int id);

/* ---- parameters ---------------------------------------------------------- */

/* One enum for every codec's parameters; a codec accepts a subset. */
typedef enum gw_param {
	/* Upper bound on elements (dense) or entries (sparse) per frame; 0 means
	 * only the budget limits a frame. Every codec accepts it: it lets the
	 * aggregator keep frames inside fixed chunk slots. Codecs that cut
	 * frames at groups of elements (3lc, terngrad: 5) refuse a limit below
	 * the group at gw_encode_begin() with GW_EBOUNDS. */
	GW_PARAM_MAX_FRAME_ELEMS = 0,
	GW_PARAM_SPARSITY = 1,       /* 3LC sparsity multiplier s, 1 <= s < 2 */
	GW_PARAM_SEED = 2,           /* RNG seed of stochastic codecs */
	GW_PARAM_FRACTION = 3,       /* top-k: fraction of elements sent */
	GW_PARAM_QUANTILES = 4,      /* sketchml: buckets per sign q (power of 2) */
	GW_PARAM_GROUPS = 5,         /* sketchml: MinMaxSketch groups r per sign */
	GW_PARAM_ROWS = 6,           /* sketchml: rows s of each MinMaxSketch */
	GW_PARAM_COL_RATIO = 7,      /* sketchml: columns t per key of a group */
	GW_PARAM_COLS = 8,           /* countsketch: columns c (rows: GW_PARAM_ROWS) */
	/* deepreduce. The enumerated ones also take names (gw_param_value). */
	GW_PARAM_INDEX = 9,          /* index codec: raw, bloom, rle, delta */
	GW_PARAM_POLICY = 10,        /* bloom policy: p0 (lossless), p1, p2 */
	GW_PARAM_FPR = 11,           /* bloom target false-positive rate */
	GW_PARAM_HASHES = 12,        /* bloom hash functions k; 0: from fpr */
	GW_PARAM_VALUE = 13,         /* value codec: f32, deflate, qsgd, poly, dexp */
	GW_PARAM_DEGREE = 14,        /* poly: polynomial degree */
	GW_PARAM_PIECES = 15,        /* poly: segments; 0: ceil(2 sqrt(M)) */
	GW_PARAM_LEVELS = 16,        /* qsgd: quantization levels s */
	GW_PARAM_BUCKET = 17,        /* qsgd: values per bucket */
	GW_PARAM_SPARSIFIER = 18,    /* dense input: none (nonzeros), topr, randr */
	GW_PARAM_ZLEVEL = 19,        /* deflate: zlib level */
	GW_PARAM_CLIP = 20,          /* terngrad: clip at clip * sigma; 0: off */
	GW_PARAM_BITS = 21,          /* hq: bits b per code, 2..8 */
	GW_PARAM_ROTATE = 22,        /* hq: 1 rotates each frame before quantising */
	GW_PARAM_ROUNDING = 23,      /* hq: nearest (with error feedback), stochastic */
	GW_PARAM_COUNT_
} gw_param;

typedef struct gw_bounds {
	double lo, hi;   /* inclusive */
	double def;      /* value a new encoder starts with */
	int integer;     /* 1 if the value must be a whole number */
} gw_bounds;

/* Bounds of param p for codec id: 0, GW_ECODEC or GW_EPARAM. */
GW_API int gw_param_bounds(int id, gw_param p, gw_bounds *b);
/* Name of a parameter ("max_frame_elems"), or NULL. */
GW_API const char *gw_param_name(gw_param p);
/* Parameter called name, or GW_EPARAM. */
GW_API int gw_param_by_name(const char *name);

/* Value of an enumerated parameter given by name ("bloom" for index), or
 * a number ("0.001"): 0 with *v set, GW_EPARAM for an unknown parameter,
 * GW_EINVAL for text that is neither one of p's names nor a number. */
GW_API int gw_param_value(gw_param p, const char *text, double *v);
/* Name of value v of an enumerated parameter ("p2"), or NULL. */
GW_API const char *gw_param_value_name(gw_param p, double v);

/* ---- tensors ------------------------------------------------------------- */

typedef struct gw_tensor {
	uint32_t id;          /* carried in every frame */
	uint64_t dim;         /* dense length; sparse: keys must be < dim */
	const float *values;  /* dense: dim values; sparse: nnz values */
	const void *keys;     /* NULL for dense; else nnz strictly ascending keys */
	uint64_t nnz;         /* sparse entry count (ignored when keys == NULL) */
	unsigned key_bits;    /* 32 or 64 (sparse only) */
	/* Dense only: the index of values[0] in a larger tensor, so a slice
	 * (an aggregator's chunk) encodes to frames that name the elements
	 * they really cover: start = base + i. 0 for a whole tensor. Codecs
	 * that cut frames at groups of 5 (3lc, terngrad) need base % 5 == 0. */
	uint64_t base;
} gw_tensor;

/* ---- error feedback ------------------------------------------------------ */

/* Error-feedback (error accumulation) state over a tensor of dim elements:
 * each encode sends c = g + e and keeps e <- c - decode(encode(c)), so what a
 * lossy codec drops this round is sent in a later one and no gradient mass is
 * lost. Attach one to an encoder with gw_encoder_set_ef(). */
typedef struct gw_ef gw_ef;

GW_API gw_ef *gw_ef_create(uint64_t dim);
GW_API void gw_ef_free(gw_ef *ef);                 /* accepts NULL */
/* An error buffer over elements [off, off + n) of parent's, sharing its
 * memory: a slice encoded as a tensor of its own (a collective chunk with
 * chunk-relative keys) feeds back into the whole tensor's buffer. Free it
 * before parent. NULL if the range is not inside parent or on no memory. */
GW_API gw_ef *gw_ef_view(gw_ef *parent, uint64_t off, uint64_t n);
GW_API void gw_ef_reset(gw_ef *ef);                /* e <- 0 */
GW_API float *gw_ef_data(gw_ef *ef);               /* dim floats, caller may read */
GW_API uint64_t gw_ef_dim(const gw_ef *ef);

/* A frame encoded with ef attached was not delivered (lost, past its
 * deadline, abandoned): add its decoded values back into the error buffer
 * so they are sent in a later round and no gradient mass is lost. Returns
 * the number of values restored or GW_E*. */
GW_API int gw_ef_restore(gw_ef *ef, const void *frame, size_t len);

/* ---- encoding ------------------------------------------------------------ */

typedef struct gw_encoder gw_encoder;

/* NULL on unknown id or allocation failure (gw_error_detail says which). */
GW_API gw_encoder *gw_encoder_create(int codec_id);
GW_API void gw_encoder_free(gw_encoder *enc);      /* accepts NULL */

GW_API int gw_encoder_set_param(gw_encoder *enc, gw_param p, double v);
GW_API int gw_encoder_get_param(const gw_encoder *enc, gw_param p, double *v);

/* Applies "name=value,name=value,..." (values as gw_param_value() reads
 * them) to enc, left to right; stops at the first refusal. Returns 0 or
 * GW_E*, the detail (gw_error_detail) naming the offending parameter and
 * why (unknown, not a number, outside [lo, hi]). (GRADWIRE_0.2; 0.1 took
 * a message buffer, err and errlen, and still does for binaries built
 * against it.) */
GW_API int gw_encoder_set_params(gw_encoder *enc, const char *list);
/* Checks that the parameters set so far make a valid combination for the
 * codec (deepreduce: fpr only with index=bloom, degree only with
 * value=poly, ...); gw_encode_begin() refuses an invalid one with
 * GW_EPARAM. Returns 0, or GW_EPARAM with a detail naming the parameter.
 * (GRADWIRE_0.2, as gw_encoder_set_params.) */
GW_API int gw_encoder_check_params(const gw_encoder *enc);
/* An encoder for a codec string "name" or "name:param=value,...", e.g.
 * "deepreduce:index=bloom,policy=p2,fpr=0.001,value=poly". NULL on error,
 * with a detail saying what is wrong; the combination is checked
 * (gw_encoder_check_params). (GRADWIRE_0.2, as gw_encoder_set_params.) */
GW_API gw_encoder *gw_encoder_from_string(const char *spec);

/* Attach (or with NULL detach) error feedback; its dim must equal the
 * dim of every tensor encoded afterwards. The encoder does not own it.
 * GW_EUNSUPPORTED for codecs that keep no error buffer (countsketch). */
GW_API int gw_encoder_set_ef(gw_encoder *enc, gw_ef *ef);

/* Starts encoding t. The encoder keeps pointers into t (not a copy) until the
 * last gw_encode_next(). With error feedback attached, the error buffer is
 * folded in here or by the codec's fused encode pass. GW_ESTATE if the
 * previous tensor is not finished: finish it or gw_encode_abandon() it. */
GW_API int gw_encode_begin(gw_encoder *enc, const gw_tensor *t);

/* Writes the next frame into buf, at most budget bytes (budgets above
 * GW_FRAME_MAX act as GW_FRAME_MAX). Returns the frame length (> 0), 0 when
 * the tensor is done, or GW_E*: GW_EBUDGET if not even one element fits (the
 * encoder stays where it was, so a larger budget can retry). */
GW_API int gw_encode_next(gw_encoder *enc, void *buf, size_t budget);

/* Drops the rest of the current tensor. With error feedback attached, the
 * values not yet sent stay in the error buffer (nothing is lost); without,
 * they are gone. Returns 0 or GW_E*. */
GW_API int gw_encode_abandon(gw_encoder *enc);

/* Smallest budget for which this encoder can emit a frame for t. */
GW_API int gw_encode_min_budget(const gw_encoder *enc, const gw_tensor *t);

/* ---- decoding ------------------------------------------------------------ */

/* Verifies the frame in buf[0..len) and ADDS its decoded values into
 * out[0..out_len): dense element i of the frame goes to out[start + i],
 * sparse key k to out[k]. Returns the number of values added, or GW_E* —
 * in which case out is unchanged: frames are validated before writing. */
GW_API int gw_decode(const void *buf, size_t len, float *out, uint64_t out_len);

/* The same for a window of the tensor: out[0..n) holds elements
 * [base, base + n), and the frame's range must lie inside it (GW_ERANGE
 * otherwise). An aggregator accumulates one chunk's frames into a slot
 * this way. Sparse frames need base == 0 (GW_EUNSUPPORTED otherwise). */
GW_API int gw_decode_window(const void *buf, size_t len, float *out,
			    uint64_t base, uint64_t n);

/* Where a frame's bytes go, for benchmarks that compare a codec's key
 * encoding with plain key/value pairs. */
typedef struct gw_frame_parts {
	uint32_t header;   /* fixed header */
	uint32_t params;   /* codec parameters */
	uint32_t keys;     /* key encoding (sparse frames; 0 for dense ones) */
	uint32_t tables;   /* per-frame tables: bucket means, counts */
	uint32_t values;   /* per-entry value data: codes, sketch cells */
} gw_frame_parts;

/* The error bound a frame states: the largest |decoded - encoded| over
 * its values (deepreduce's curve fits and QSGD state one; 0 for its
 * lossless combinations). Verifies the frame as gw_decode() would.
 * Returns 0, GW_EUNSUPPORTED for codecs that state none, or GW_E*. */
GW_API int gw_frame_bound(const void *buf, size_t len, float *bound);

/* Verifies the frame and its payload as gw_decode() would, without
 * decoding, and splits its bytes. Returns 0, GW_EUNSUPPORTED for codecs
 * that do not describe their payload (sketchml does), or GW_E*. */
GW_API int gw_frame_parts_of(const void *buf, size_t len, gw_frame_parts *parts);

/* ---- summable frames (hq) ------------------------------------------------
 * hq's codes stand for multiples of a scale S that every worker of a round
 * shares, so a shard adds the integers of its workers' frames and sends
 * their exact sum down (a "sum frame") with no float in between and no
 * second quantisation (docs/wire-format.md §4.11). A worker sets the
 * shared scale and the rotation's seed before each frame; a sum frame
 * carries the next round's scale ("next": the largest of its
 * contributors' maxima). (GRADWIRE_0.7) */

typedef struct gw_sum_info {
	float scale;            /* the shared scale S the codes are on */
	float next;             /* a worker's frame: its max |rotated value|;
				 * a sum: the largest of its contributors' */
	uint32_t seed;          /* the rotation's seed (0 when not rotated) */
	uint32_t contributors;  /* frames summed (1 for a worker's) */
	uint8_t bits;           /* b: a worker's codes lie in [-(2^(b-1)-1), 2^(b-1)-1] */
	uint8_t width;          /* bits per code in the payload */
	uint8_t rotated;        /* 1 if the values were rotated */
	uint8_t poisoned;       /* 1 if a contributor held NaN or Inf */
} gw_sum_info;

/* The next frame gw_encode_next() writes quantises on scale (finite, >= 0;
 * 0 keeps every value in the error buffer) and rotates with seed. One
 * frame only: without it a frame is on its own max and a seed from the
 * encoder's. GW_EUNSUPPORTED for codecs other than hq, GW_EINVAL for a
 * scale that is not finite or is negative. */
GW_API int gw_encoder_set_shared(gw_encoder *enc, float scale, uint32_t seed);

/* Verifies the hq frame in buf[0..len) as gw_decode() would and ADDS its
 * integer codes into acc[0..n), which holds elements [base, base + n)
 * (GW_ERANGE if the frame's lie outside), modulo 2^32 (a shard's W x
 * 2^(b-1) never comes near). *si (if not NULL) gets its params. Returns the codes added or GW_E* (acc then unchanged);
 * GW_EUNSUPPORTED for another codec's frame. */
GW_API int gw_sum_add(const void *buf, size_t len, int32_t *acc, uint64_t base,
		      uint64_t n, gw_sum_info *si);

/* Writes a sum frame of the n (>= 1) codes acc for elements
 * [start, start + n) of tensor into buf (at most budget bytes), in the
 * fewest bits per code that hold the largest: scale, next, seed,
 * contributors, bits, rotated and poisoned from *si (width is chosen
 * here). Returns its length, GW_EBUDGET if it does not fit, GW_EINVAL for
 * n = 0, a code beyond what contributors can sum or 32 bits hold (-2^31),
 * or params no frame may carry. */
GW_API int gw_sum_encode(void *buf, size_t budget, uint32_t tensor, uint64_t start,
			 const int32_t *acc, uint32_t n, const gw_sum_info *si);

/* Largest length of a sum frame of n elements from contributors frames of
 * bits-bit codes (what a shard's downlink packet must hold), or GW_EINVAL. */
GW_API int gw_sum_frame_max(unsigned bits, uint32_t contributors, uint32_t n);

/* The params of the hq frame in buf[0..len), read after gw_decode() (or
 * gw_sum_add()) accepted it: the header and params are checked, the
 * checksum and payload are not read again. 0, GW_EUNSUPPORTED for another
 * codec's frame, or GW_E*. */
GW_API int gw_sum_info_of(const void *buf, size_t len, gw_sum_info *si);

#ifdef __cplusplus
}
#endif
#endif /* GW_CODEC_H */
