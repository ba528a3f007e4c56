/* Shared parts of the gradwire fuzz harnesses (tests/fuzz/README.md).
 *
 * Every fuzz_<name>.c defines LLVMFuzzerTestOneInput and links with
 * fuzz_common.c; with libFuzzer it becomes fuzz_<name>, with regress_main.c
 * (any compiler, no libFuzzer) regress_<name>, which replays corpora.
 *
 * Checks never use assert(): release builds define NDEBUG. A failed check
 * prints what failed and aborts, which libFuzzer reports as a crash. */
#ifndef GW_FUZZ_COMMON_H
#define GW_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <gw/codec.h>

/* libFuzzer's entry point, defined by each harness. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(__GNUC__)
__attribute__((noreturn, format(printf, 3, 4)))
#endif
void gw_fuzz_fail(const char *file, int line, const char *fmt, ...);

/* Aborts unless cond holds. */
#define GW_FUZZ_CHECK(cond)                                                   \
	do {                                                                  \
		if (!(cond))                                                  \
			gw_fuzz_fail(__FILE__, __LINE__, "%s", #cond);        \
	} while (0)
/* Same, with a printf-style explanation. */
#define GW_FUZZ_CHECKF(cond, ...)                                             \
	do {                                                                  \
		if (!(cond))                                                  \
			gw_fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);        \
	} while (0)

/* What a decoder harness knows about its codec's frames. The shape fields
 * only help the harness build frames the decoder accepts (and let it check
 * accepted frames against them); a codec whose frames have no fixed shape
 * says -1 / 0 and is fuzzed with the other strategies. */
struct gw_fuzz_codec {
	const char *name;      /* registered name, e.g. "raw" */
	int id;                /* GW_CODEC_* */
	int param_len;         /* param bytes of every frame, or -1 if they vary */
	unsigned value_bytes;  /* payload bytes per value after the keys, or 0
				* if the payload is not keys + fixed-size values */
	/* Optional, for payloads of keys (sparse) then count fixed-size
	 * values: value i of an accepted frame as the spec decodes it, from
	 * the frame's params and its values section. The harness then checks
	 * that decoding added exactly that to each element. */
	float (*value)(const gw_frame_info *h, const uint8_t *params,
		       const uint8_t *vals, uint32_t i);
	/* Optional: aborts if an accepted frame breaks a rule of the codec's
	 * spec that the decoder must enforce (e.g. int8's q != -128). */
	void (*accepted)(const gw_frame_info *h, const uint8_t *params,
			 const uint8_t *payload);
	/* Optional: how many values gw_decode() says an accepted frame added,
	 * when that is not its count (countsketch: a key set without values
	 * adds 0). */
	uint32_t (*added)(const gw_frame_info *h, const uint8_t *params);
};

/* The whole decoder harness: decodes data as it is, then as a frame of
 * codec c made valid to the degree the input's control bits ask for (see
 * fuzz_common.c), and checks what every accepted or rejected frame promises. */
void gw_fuzz_decoder(const struct gw_fuzz_codec *c, const uint8_t *data,
		     size_t size);

/* The entry point of a harness that is gw_fuzz_decoder() and nothing
 * more; the arguments are the designated initializers of its
 * struct gw_fuzz_codec:
 *	GW_FUZZ_DECODER_HARNESS(.name = "topk", .id = GW_CODEC_TOPK,
 *				.param_len = 0, .value_bytes = 0)
 */
#define GW_FUZZ_DECODER_HARNESS(...)                                          \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)          \
	{                                                                     \
		static const struct gw_fuzz_codec c = {__VA_ARGS__};          \
		gw_fuzz_decoder(&c, data, size);                              \
		return 0;                                                     \
	}

/* rc is GW_OK, a count, or one of the GW_E* codes. */
void gw_fuzz_check_code(int rc);

/* What a successful gw_frame_peek() promises about info, for the frame in
 * buf[0..len): every field agrees with the wire bytes and the format rules. */
void gw_frame_fuzz_check_info(const uint8_t *buf, size_t len,
			      const gw_frame_info *info);

/* Peeks and verifies buf[0..len) and checks that the two agree with each
 * other and with the format; returns gw_frame_verify()'s result and leaves
 * the verified header in *info when it is 0. */
int gw_fuzz_peek_verify(const uint8_t *buf, size_t len, gw_frame_info *info);

/* The result of the "as is" step of the last input (gw_decode of the input
 * unchanged for decoder harnesses, gw_frame_verify for fuzz_frame); left at
 * GW_FUZZ_RC_NONE by harnesses without one. regress_main checks it against
 * the expectation a file name carries (foo.GW_ELENGTH, foo.ok). */
#define GW_FUZZ_RC_NONE 1
extern int gw_fuzz_last_rc;

/* Little-endian loads and stores for harness-built frames. */
static inline uint32_t gw_fuzz_ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}
static inline uint64_t gw_fuzz_ld64(const uint8_t *p)
{
	return (uint64_t)gw_fuzz_ld32(p) | (uint64_t)gw_fuzz_ld32(p + 4) << 32;
}
static inline void gw_fuzz_st32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}
static inline void gw_fuzz_st64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Header byte offsets (docs/wire-format.md §2; codec/frame.c). */
enum {
	GW_FUZZ_OFF_MAGIC = 0,
	GW_FUZZ_OFF_VERSION = 2,
	GW_FUZZ_OFF_CODEC = 3,
	GW_FUZZ_OFF_FLAGS = 4,
	GW_FUZZ_OFF_PARAM_LEN = 6,
	GW_FUZZ_OFF_RESERVED = 7,
	GW_FUZZ_OFF_TENSOR = 8,
	GW_FUZZ_OFF_COUNT = 12,
	GW_FUZZ_OFF_START = 16,
	GW_FUZZ_OFF_SPAN = 24,
	GW_FUZZ_OFF_PAYLOAD_LEN = 28,
	GW_FUZZ_OFF_CHECKSUM = 32,
};

#endif /* GW_FUZZ_COMMON_H */
