/* Runtime CPU feature detection for the SIMD kernels (x86-64: AVX2 and
 * AVX-512 F/BW/VL/VBMI), with an override for testing: the environment
 * variable GW_FORCE_ISA=scalar|avx2|avx512, read once, or gw_cpu_force_isa().
 * A forced level the CPU lacks is lowered to the best one it has, so forcing
 * never executes an unsupported instruction. Private to gradwire. */
#ifndef GW_CPU_H
#define GW_CPU_H

/* ISA levels, each implying the ones below it. */
enum gw_isa {
	GW_ISA_SCALAR = 0,   /* portable C */
	GW_ISA_AVX2 = 1,     /* AVX2 (x86-64) */
	GW_ISA_AVX512 = 2,   /* AVX-512 F + BW + VL + VBMI (x86-64) */
	GW_ISA_COUNT_
};

/* Highest level this CPU and OS support (ignores any override). */
int gw_cpu_best_isa(void);

/* Level the kernels dispatch on: the best supported one, or the override
 * (GW_FORCE_ISA, gw_cpu_force_isa) lowered to what is supported. */
int gw_cpu_isa(void);

/* Tests: force level isa from now on, or restore the default with -1
 * (the environment override is then read again). Returns 0, GW_EINVAL for
 * an unknown level, or GW_EUNSUPPORTED (nothing changed) if the CPU lacks
 * it. Not thread-safe against concurrent encoders switching paths midway,
 * which is harmless: every path gives the same bytes. */
int gw_cpu_force_isa(int isa);

/* "scalar", "avx2", "avx512"; NULL for an unknown level. */
const char *gw_cpu_isa_name(int isa);
/* Level called name, or -1. */
int gw_cpu_isa_by_name(const char *name);

/* A loop compiled for each ISA level from one body: NAME_body, a static
 * inline function taking ARGS (a parenthesised parameter list; CALL the
 * same names in parentheses), becomes NAME, which runs the AVX-512, AVX2
 * or baseline copy as gw_cpu_isa() says. The copies differ only in the
 * instructions the compiler may use: no fast-math, no contraction
 * (-ffp-contract=off), so each performs the same IEEE operations per
 * element and gives the same bits; GW_FORCE_ISA picks one for tests.
 * Meant for loops the compiler vectorizes well on its own. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GW_ISA_LOOP(name, params, call)                                        \
	__attribute__((target("avx2"))) static void name##_avx2 params          \
	{                                                                      \
		name##_body call;                                              \
	}                                                                      \
	__attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512dq")))     \
	static void name##_avx512 params                                        \
	{                                                                      \
		name##_body call;                                              \
	}                                                                      \
	static void name params                                                \
	{                                                                      \
		int isa_ = gw_cpu_isa();                                       \
		if (isa_ >= GW_ISA_AVX512)                                     \
			name##_avx512 call;                                    \
		else if (isa_ >= GW_ISA_AVX2)                                  \
			name##_avx2 call;                                      \
		else                                                           \
			name##_body call;                                      \
	}
#else
#define GW_ISA_LOOP(name, params, call)                                        \
	static void name params                                                \
	{                                                                      \
		name##_body call;                                              \
	}
#endif

#endif /* GW_CPU_H */
