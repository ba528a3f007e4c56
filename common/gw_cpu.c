/* Runtime CPU feature detection (gw_cpu.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gw_cpu.h"
#include "gw_util.h"

static const char *const names[GW_ISA_COUNT_] = {
	[GW_ISA_SCALAR] = "scalar",
	[GW_ISA_AVX2] = "avx2",
	[GW_ISA_AVX512] = "avx512",
};

const char *gw_cpu_isa_name(int isa)
{
	return isa >= 0 && isa < GW_ISA_COUNT_ ? names[isa] : NULL;
}

int gw_cpu_isa_by_name(const char *name)
{
	for (int i = 0; name && i < GW_ISA_COUNT_; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

static int detect(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
	/* __builtin_cpu_supports also checks (XGETBV) that the OS saves the
	 * YMM / ZMM state. */
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vbmi") &&
	    __builtin_cpu_supports("avx2"))
		return GW_ISA_AVX512;
	if (__builtin_cpu_supports("avx2"))
		return GW_ISA_AVX2;
#endif
	return GW_ISA_SCALAR;
}

/* -1: not computed yet. Races only compute the same value twice. */
static atomic_int best = -1;
static atomic_int chosen = -1;

int gw_cpu_best_isa(void)
{
	int b = atomic_load_explicit(&best, memory_order_relaxed);
	if (b < 0) {
		b = detect();
		atomic_store_explicit(&best, b, memory_order_relaxed);
	}
	return b;
}

int gw_cpu_isa(void)
{
	int c = atomic_load_explicit(&chosen, memory_order_relaxed);
	if (GW_LIKELY(c >= 0))
		return c;
	int b = gw_cpu_best_isa();
	c = b;
	const char *env = getenv("GW_FORCE_ISA");
	if (env && *env) {
		int f = gw_cpu_isa_by_name(env);
		if (f >= 0)
			c = GW_MIN(f, b);
	}
	atomic_store_explicit(&chosen, c, memory_order_relaxed);
	return c;
}

int gw_cpu_force_isa(int isa)
{
	if (isa == -1) {
		atomic_store_explicit(&chosen, -1, memory_order_relaxed);
		return GW_OK;
	}
	if (isa < 0 || isa >= GW_ISA_COUNT_)
		return GW_ERR(GW_EINVAL);
	if (isa > gw_cpu_best_isa())
		return GW_ERR(GW_EUNSUPPORTED);
	atomic_store_explicit(&chosen, isa, memory_order_relaxed);
	return GW_OK;
}
