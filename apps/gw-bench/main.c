/* gw-bench: benchmarks of gradwire, one mode per subcommand. Human output
 * is a testpmd-style table; --json prints one object for machines. */
#include <stdio.h>
#include <string.h>

#include <gw/common.h>

#include "bench.h"

static const struct mode {
	const char *name;
	const char *help;
	int (*main)(int argc, char **argv);
} modes[] = {
	{"codec", "encode/decode speed, size and error of one codec", bench_codec_main},
	{"raw", "dataplane ceiling: fixed-size packets, no protocol (tx or rx)", bench_raw_main},
	{"stream", "codec frames over the reliable stream, tx to rx (Mpps, Gbit/s)", bench_stream_main},
	{"shard", "a shard's CPU per element: W frames summed into a result, per codec", bench_shard_main},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: gw-bench MODE [options]   (gradwire %s)\n\nmodes:\n",
		gw_version_string());
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		fprintf(f, "  %-8s %s\n", modes[i].name, modes[i].help);
	fprintf(f, "\ngw-bench MODE --help shows the options of a mode.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 2)
			fprintf(stderr, "gw-bench: no MODE given (codec, raw, stream or shard)\n");
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? BENCH_EUSAGE : 0;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (!strcmp(argv[1], modes[i].name))
			return modes[i].main(argc - 1, argv + 1);
	fprintf(stderr, "gw-bench: MODE: unknown mode '%s'\n", argv[1]);
	usage(stderr);
	return BENCH_EUSAGE;
}
