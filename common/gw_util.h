/* Small helpers every layer may use: little-endian access to unaligned wire
 * bytes, branch hints, and the error-raising macro. Private to gradwire. */
#ifndef GW_UTIL_H
#define GW_UTIL_H

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gw/common.h>

#define GW_LIKELY(x) __builtin_expect(!!(x), 1)
#define GW_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define GW_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GW_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Wire integers are little-endian and may sit at any alignment inside a
 * packet buffer; memcpy compiles to one load/store on x86 and ARM. */
static inline uint16_t gw_ld16(const uint8_t *p)
{
	return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}
static inline uint32_t gw_ld32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}
static inline uint64_t gw_ld64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}
static inline void gw_st16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}
static inline void gw_st32(uint8_t *p, uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	memcpy(p, &v, 4);
}
static inline void gw_st64(uint8_t *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	memcpy(p, &v, 8);
}
static inline float gw_ldf32(const uint8_t *p)
{
	uint32_t u = gw_ld32(p);
	float f;
	memcpy(&f, &u, 4);
	return f;
}
static inline void gw_stf32(uint8_t *p, float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	gw_st32(p, u);
}

/* The monotonic clock, every layer's and every test's: in ns, in s. (The
 * collective's fuzz harnesses replace clock_gettime() to make it virtual.) */
static inline uint64_t gw_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline double gw_now_s(void)
{
	return (double)gw_now_ns() * 1e-9;
}

/* Frees every pointer given, NULL ones too: the body of a destructor that
 * owns a list of buffers, GW_FREE_ALL(s->a, s->b, s). */
static inline void gw_free_all(void *const *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(p[i]);
}
#define GW_FREE_ALL(...)                                                       \
	gw_free_all((void *const[]){__VA_ARGS__},                              \
		    sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

/* Raise an error code: in GW_DEBUG builds also records where, so that
 * gw_error_site() can say which check refused a frame. */
int gw__raise(int err, const char *file, int line);
#ifdef GW_DEBUG
#define GW_ERR(e) gw__raise((e), __FILE__, __LINE__)
#else
#define GW_ERR(e) (e)
#endif

/* Error details (gw_error_detail()): a call that gives them clears the
 * detail when it starts (gw__detail_clear) and, failing, records what it
 * has to say beyond its code — which argument, field or parameter, and
 * why — with GW_ERRF, which raises the code as GW_ERR does. */
int gw__detail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gw__detailv(int err, const char *fmt, va_list ap);
void gw__detail_clear(void);
#define GW_ERRF(e, ...) gw__detail(GW_ERR(e), __VA_ARGS__)

#endif /* GW_UTIL_H */
