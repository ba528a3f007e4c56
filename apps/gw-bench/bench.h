/* gw-bench: shared pieces of its modes (argument parsing, timing, files). */
#ifndef GW_BENCH_H
#define GW_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Exit codes: 0 ok, 1 run failed, 2 bad command line. */
#define BENCH_EUSAGE 2

double bench_now(void);                       /* monotonic seconds */

/* Reads a whole file; returns NULL and prints why on failure. */
void *bench_read_file(const char *path, size_t *len);

/* Strict number parsing: the whole string must be a number in [lo, hi];
 * otherwise prints "gw-bench: --opt: ..." and returns false. */
bool bench_parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi,
		     uint64_t *out);
bool bench_parse_double(const char *opt, const char *s, double lo, double hi,
			double *out);

/* Runs fn(arg) repeatedly for at least min_s seconds (and at least once);
 * returns seconds per call, the best of several batches to shed noise. */
double bench_time(void (*fn)(void *), void *arg, double min_s);

/* memcpy throughput in GB/s for a buffer of bytes, measured now. */
double bench_memcpy_gbps(size_t bytes, double min_s);

int bench_codec_main(int argc, char **argv);
int bench_raw_main(int argc, char **argv);
int bench_stream_main(int argc, char **argv);

#endif
