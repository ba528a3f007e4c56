/* Writes the seed corpora of the fuzz harnesses, one directory per harness:
 *
 *	make_corpus OUTDIR [NAME...]      seeds into OUTDIR/<name>/
 *	make_corpus --hostile OUTDIR      the golden hostile frames, as
 *	                                  committed in tests/fuzz/regress/
 *
 * NAME is a codec name (a decoder harness, fuzz_<codec>), "frame",
 * "roundtrip", "pkt", "libsvm", or another harness's name ("agg_rx",
 * "worker_rx": seeds_coll.c; the DeepReduce sections: seeds_dr_*.c);
 * without names, all of them.
 * Everything is built from synthetic tensors with a fixed seed, through the
 * public encoder, so the output is the same on every run and machine.
 *
 * This file only dispatches. Each family of harnesses has a seeder of its
 * own, and says there what its seeds are:
 *
 *	seeds_codec.c      the codec decoders, fuzz_<codec>.c
 *	seeds_frame.c      fuzz_frame.c, fuzz_roundtrip.c
 *	seeds_parts.c      fuzz_delta_binary.c, fuzz_quantile.c
 *	seeds_hq_kern.c    fuzz_hq_kern.c
 *	seeds_dr_index.c   fuzz_dr_{raw,bloom,rle,delta}.c
 *	seeds_dr_value.c   fuzz_dr_{f32,deflate,qsgd,poly,dexp}.c
 *	seeds_pkt.c        fuzz_pkt.c
 *	seeds_rdma.c       fuzz_rdma_rx.c
 *	seeds_coll.c       fuzz_agg_rx.c, fuzz_worker_rx.c, fuzz_ctrl.c
 *	seeds_libsvm.c     fuzz_libsvm.c
 *
 * and seeds_common.c holds what the first ones share (the generator, the
 * tensors, their frames, the writing of files).
 *
 * The hostile set (hostile_frame.c, hostile_pkt.c): each file is a frame
 * or a packet broken in one way, named after the code it must be rejected
 * with. Regenerate it only when the format changes, and review the diff. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "codec_internal.h"
#include "fuzz_coll.h"
#include "seeds_common.h"
#include "seeds_dr.h"

/* Seeders of one harness each, run in this order: the ones of codecs add
 * to what seeds_decoder() writes under the codec's name. */
static const struct {
	const char *name;
	void (*seed)(void);
} seeders[] = {
	{"countsketch", seeds_countsketch},
	{"deepreduce", seeds_deepreduce},
	{"hq", seeds_hq},
	{"frame", seeds_frame},
	{"roundtrip", seeds_roundtrip},
	{"pkt", seeds_pkt},
	{"libsvm", seeds_libsvm},
	{"delta_binary", seeds_delta_binary},
	{"quantile", seeds_quantile},
};

/* Seeders that match names themselves and write through mc_write_file():
 * 1 if the name was one of theirs (NULL: all of them). */
static int (*const named_seeders[])(const char *name, seed_write_fn write) = {
	seeds_dr_index, seeds_dr_value, seeds_coll, seeds_rdma, seeds_hq_kern,
};

/* Writes the seeds of harness name (NULL: every harness); false if no
 * harness is called that. */
static bool seed(const char *name)
{
	int ids[256];
	int n = gw_codec_list(ids, 256);
	bool known = !name || gw_codec_by_name(name) >= 0;
	for (int i = 0; i < n && i < 256; i++)
		if (!name || !strcmp(name, gw_codec_name(ids[i])))
			seeds_decoder(gw_codec_name(ids[i]), ids[i]);
	for (size_t s = 0; s < GW_ARRAY_SIZE(seeders); s++)
		if (!name || !strcmp(name, seeders[s].name)) {
			seeders[s].seed();
			known = true;
		}
	for (size_t s = 0; s < GW_ARRAY_SIZE(named_seeders); s++)
		if (named_seeders[s](name, mc_write_file))
			known = true;
	return known;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s OUTDIR [NAME...] | --hostile OUTDIR\n",
			argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "--hostile")) {
		if (argc != 3)
			return 2;
		mc_open_outdir(argv[2]);
		hostile_frames();
		hostile_pkt();
		hostile_hq();
		printf("make_corpus: %lu hostile inputs in %s\n", mc_written(), argv[2]);
		return 0;
	}
	mc_open_outdir(argv[1]);
	if (argc == 2)
		seed(NULL);
	for (int a = 2; a < argc; a++)
		if (!seed(argv[a])) {
			fprintf(stderr, "make_corpus: no harness called %s\n", argv[a]);
			return 1;
		}
	printf("make_corpus: %lu seeds in %s\n", mc_written(), argv[1]);
	return 0;
}
