/* Fuzzes the frame header layer (codec/frame.c): gw_frame_peek() and
 * gw_frame_verify() on the input as it is, then on the input with magic
 * and version forced and lengths, flags and checksum fixed up as the
 * control word (the checksum field, bytes 32..35) asks:
 *
 *   bit 0  force magic and version     bit 3  seal the checksum
 *   bit 1  clear the reserved byte     bit 4  clear unknown flag bits
 *   bit 2  fit payload_len to the input
 *
 * The codec byte stays as the fuzzer wrote it, so unregistered ids and
 * kinds a codec does not produce are reached. Also checks that peek reads
 * the header only: it must give the same answer given a header-sized
 * buffer and the frame's full length. */
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "fuzz_common.h"

static void check_frame(const uint8_t *data, size_t len, int *verify_rc)
{
	uint8_t *b = malloc(len ? len : 1);
	GW_FUZZ_CHECK(b);
	memcpy(b, data, len);
	gw_frame_info info;
	int vrc = gw_fuzz_peek_verify(b, len, &info);
	if (verify_rc)
		*verify_rc = vrc;

	/* peek reads the header only */
	if (len >= GW_FRAME_HDR_LEN) {
		uint8_t *hdr = malloc(GW_FRAME_HDR_LEN);
		GW_FUZZ_CHECK(hdr);
		memcpy(hdr, b, GW_FRAME_HDR_LEN);
		gw_frame_info a, h;
		int arc = gw_frame_peek(b, len, &a);
		int hrc = gw_frame_peek(hdr, len, &h);
		GW_FUZZ_CHECKF(arc == hrc, "peek %d on the frame, %d on its header",
			       arc, hrc);
		if (arc == 0)
			GW_FUZZ_CHECK(a.frame_len == h.frame_len &&
				      a.start == h.start && a.count == h.count);
		free(hdr);
	}
	/* argument checks */
	GW_FUZZ_CHECK(gw_frame_peek(NULL, len, &info) == GW_EINVAL);
	GW_FUZZ_CHECK(gw_frame_peek(b, len, NULL) == GW_EINVAL);
	GW_FUZZ_CHECK(gw_frame_verify(NULL, len, &info) == GW_EINVAL);
	free(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_frame(data, size, &gw_fuzz_last_rc);

	size_t len = size < GW_FRAME_HDR_LEN ? GW_FRAME_HDR_LEN : size;
	uint8_t *f = calloc(1, len);
	GW_FUZZ_CHECK(f);
	memcpy(f, data, size);
	uint32_t ctrl = gw_fuzz_ld32(f + GW_FUZZ_OFF_CHECKSUM);
	if (ctrl & 1) {
		f[0] = 'G';
		f[1] = 'W';
		f[GW_FUZZ_OFF_VERSION] = GW_FRAME_VERSION;
	}
	if (ctrl & 2)
		f[GW_FUZZ_OFF_RESERVED] = 0;
	if (ctrl & 4) {
		size_t plen = f[GW_FUZZ_OFF_PARAM_LEN];
		if (plen > len - GW_FRAME_HDR_LEN)
			f[GW_FUZZ_OFF_PARAM_LEN] = (uint8_t)(plen = len - GW_FRAME_HDR_LEN);
		gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN,
			     (uint32_t)(len - GW_FRAME_HDR_LEN - plen));
	}
	if (ctrl & 16) {
		f[GW_FUZZ_OFF_FLAGS] &= GW_FF_KNOWN;
		f[GW_FUZZ_OFF_FLAGS + 1] = 0;
	}
	if (ctrl & 8)
		gw_frame_seal(f, len);
	check_frame(f, len, NULL);
	free(f);
	return 0;
}
