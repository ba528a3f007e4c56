/* gw_frame_parts_of(): a sketchml frame's bytes split into header, params,
 * keys, tables and values that add up to the frame, with the key bytes of
 * a delta-binary block (a flag quarter-byte plus 1-4 bytes per key) — the
 * numbers gw-bench reports as bytes per key. Codecs that do not describe
 * their payload say so, and a damaged frame is refused, not measured. */
#include "gw_test.h"

static void test_sketchml_parts_add_up(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_sparse sp;
	gw_test_load_sparse(0, &sp);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_SKETCHML);
	gw_tensor t = gw_test_sparse_tensor(1, sp.dim, sp.keys, 32, sp.vals, sp.nnz);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 1424, &fr));
	uint64_t keys = 0, entries = 0;
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_parts p;
		gw_frame_info fi;
		GW_OK_CALL(gw_frame_peek(fr.f[j].data, fr.f[j].len, &fi));
		GW_OK_CALL(gw_frame_parts_of(fr.f[j].data, fr.f[j].len, &p));
		GW_CHECK((size_t)p.header + p.params + p.keys + p.tables + p.values == fr.f[j].len,
			 "frame %zu: parts %u+%u+%u+%u+%u != %zu bytes", j, p.header, p.params,
			 p.keys, p.tables, p.values, fr.f[j].len);
		GW_CHECK(p.keys >= fi.count + fi.count / 4 && p.keys <= 4 * fi.count + (fi.count + 3) / 4 + 16,
			 "frame %zu: %u key bytes for %u keys", j, p.keys, fi.count);
		GW_CHECK(p.values > 0 && p.tables > 0, "frame %zu: no cells or table", j);
		keys += p.keys;
		entries += fi.count;
	}
	GW_CHECK(entries == sp.nnz, "%llu of %zu entries framed", (unsigned long long)entries, sp.nnz);
	print_message("  %s: %.4f key bytes per key in %zu frames\n", sp.name,
		      (double)keys / (double)entries, fr.n);

	/* One flipped payload byte: the checksum refuses the frame. */
	fr.f[0].data[fr.f[0].len - 1] ^= 0x40;
	gw_frame_parts p;
	GW_CHECK(gw_frame_parts_of(fr.f[0].data, fr.f[0].len, &p) == GW_ECHECKSUM,
		 "damaged frame measured");
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	gw_test_sparse_free(&sp);
}

static void test_undescribed_codec(void **state)
{
	(void)state;
	float v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	gw_encoder *enc = gw_test_encoder(GW_CODEC_RAW);
	gw_tensor t = gw_test_dense_tensor(1, v, 8);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 1424, &fr));
	gw_frame_parts p;
	GW_CHECK(gw_frame_parts_of(fr.f[0].data, fr.f[0].len, &p) == GW_EUNSUPPORTED,
		 "raw frames are not described");
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

GW_TEST_MAIN("frame_parts", 0,
	     cmocka_unit_test(test_sketchml_parts_add_up),
	     cmocka_unit_test(test_undescribed_codec))
