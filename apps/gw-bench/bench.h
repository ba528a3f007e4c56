/* gw-bench: shared pieces of its modes (timing, files); the command line,
 * numbers and JSON are the apps' (app.h). */
#ifndef GW_BENCH_H
#define GW_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"

/* Exit codes: 0 ok, 1 run failed, 2 bad command line. */
#define BENCH_EUSAGE 2

/* Strict numbers under gw-bench's name: opt without "--" (app_opt_*). */
static inline bool bench_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
			     uint64_t *out)
{
	return app_opt_u64("gw-bench", opt, s, lo, hi, out);
}

static inline bool bench_num(const char *opt, const char *s, double lo, double hi,
			     double *out)
{
	return app_opt_double("gw-bench", opt, s, lo, hi, 0, out);
}

/* 0 when --backend name is built into this library; otherwise says so,
 * with the built ones, and returns app_backend_missing's exit code. */
int bench_backend_check(const char *name);

/* Reads a whole file; returns NULL and prints why on failure. */
void *bench_read_file(const char *path, size_t *len);

/* Runs fn(arg) repeatedly for at least min_s seconds (and at least once);
 * returns seconds per call, the best of several batches to shed noise. */
double bench_time(void (*fn)(void *), void *arg, double min_s);

/* memcpy throughput in GB/s for a buffer of bytes, measured now. */
double bench_memcpy_gbps(size_t bytes, double min_s);

int bench_codec_main(int argc, char **argv);
int bench_raw_main(int argc, char **argv);
int bench_stream_main(int argc, char **argv);
int bench_shard_main(int argc, char **argv);

#endif
