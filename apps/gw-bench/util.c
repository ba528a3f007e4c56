/* gw-bench helpers: timing, file loading. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/dataplane.h>

#include "bench.h"

void *bench_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "gw-bench: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	void *buf = NULL;
	long sz = -1;
	if (fseek(f, 0, SEEK_END) == 0)
		sz = ftell(f);
	if (sz < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "gw-bench: %s: cannot size file\n", path);
		goto out;
	}
	buf = malloc(sz ? (size_t)sz : 1);
	if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
		fprintf(stderr, "gw-bench: %s: read failed\n", path);
		free(buf);
		buf = NULL;
		goto out;
	}
	*len = (size_t)sz;
out:
	fclose(f);
	return buf;
}

double bench_time(void (*fn)(void *), void *arg, double min_s)
{
	/* Five batches; each runs until it has taken min_s/5. The fastest
	 * batch is the one least disturbed by the other tenant of the core. */
	double best = 1e30;
	for (int b = 0; b < 5; b++) {
		long reps = 0;
		double t0 = app_now_s(), t;
		do {
			fn(arg);
			reps++;
			t = app_now_s() - t0;
		} while (t < min_s / 5);
		if (t / reps < best)
			best = t / reps;
	}
	return best;
}

struct memcpy_arg {
	void *dst;
	const void *src;
	size_t n;
};

static void do_memcpy(void *p)
{
	struct memcpy_arg *a = p;
	memcpy(a->dst, a->src, a->n);
	/* Keep the compiler from proving the copy dead. */
	__asm__ volatile("" : : "r"(a->dst) : "memory");
}

double bench_memcpy_gbps(size_t bytes, double min_s)
{
	struct memcpy_arg a = {malloc(bytes ? bytes : 1), malloc(bytes ? bytes : 1), bytes};
	if (!a.dst || !a.src) {
		free(a.dst);
		free((void *)a.src);
		return 0;
	}
	memset(a.dst, 1, bytes);
	memset((void *)a.src, 2, bytes);
	double s = bench_time(do_memcpy, &a, min_s);
	free(a.dst);
	free((void *)a.src);
	return bytes / s / 1e9;
}

int bench_backend_check(const char *name)
{
	for (const char *const *b = gw_dp_backends(); *b; b++)
		if (!strcmp(*b, name))
			return 0;
	char built[64];
	gw_dp_backends_text(built, sizeof(built));
	fprintf(stderr, "gw-bench: --backend: '%s' is not built into this gradwire (built: "
		"%s)\n", name, built);
	return app_backend_missing(name);
}
